//! Nim for tablehost: the example of sdk/rust/README.md, "Write your own game".
//!
//! Rules:
//! 1. Two players share one pile of stones (option `stones`, default 12); the first seat starts.
//! 2. On your turn take 1, 2 or 3 stones, never more than are left.
//! 3. Whoever takes the last stone wins.
//!
//! Table: one ordered space `pile` holding a piece of kind `stone` per stone. When the
//! game ends `meta_data.winner` is the winner's id. Scores ("Points"): the winner 1, else 0.

use tablehost_sdk::{
    Action, AvailableAction, Button, Game, GameConfig, GameOption, LogEntry, Map, Metadata, Options, Piece, PlayerId,
    Rng, Score, Scores, Space, StartingPlayer, Table,
};

pub struct Nim;

const PILE: &str = "pile";
const STONES: &str = "stones";

fn stones_left(table: &Table) -> usize {
    table.pieces(PILE).len()
}

fn winner(table: &Table) -> Option<PlayerId> {
    table.meta("winner").and_then(|id| id.as_u64()).map(|id| id as PlayerId)
}

/// Rule 2: how many stones a button takes (its id is "take-N").
fn taken(action: &Action) -> usize {
    match action {
        Action::ButtonClick { button } => match button.id.strip_prefix("take-").and_then(|n| n.parse().ok()) {
            Some(count) => count,
            None => panic!("unknown button {}", button.id),
        },
        _ => panic!("nim only takes button clicks"),
    }
}

impl Game for Nim {
    fn metadata() -> Metadata {
        Metadata::players(2, 2)
            .description("Take 1 to 3 stones from the pile; whoever takes the last stone wins.")
            .option(GameOption::integer(STONES, 12, 1, 50).describe("stones in the pile at the start"))
    }

    /// Rule 1.
    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        let stones = options.integer(STONES) as usize;
        let pile = Space::new(PILE, "pile").with_pieces((0..stones).map(|_| Piece::new("stone")));
        GameConfig {
            spaces: vec![pile],
            score_labels: vec!["Points".to_string()],
            meta_data: Map::new(),
            starting_player: StartingPlayer::Player(players[0]),
        }
    }

    /// Rule 2.
    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        (1..=stones_left(table).min(3))
            .map(|count| {
                let button = Button::new(format!("take-{}", count), format!("take {}", count));
                AvailableAction::confirm(Action::button_click(button), format!("take {}", count))
            })
            .collect()
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, _rng: &mut Rng) {
        let count = taken(action);
        assert!((1..=3).contains(&count) && count <= stones_left(table), "cannot take {} stones", count);
        for _ in 0..count {
            table.remove_piece(PILE, stones_left(table) - 1);
        }
        let name = table.player_name(player_id);
        table.log(LogEntry::new(format!("{} takes {}, {} left", name, count, stones_left(table))));
        if stones_left(table) == 0 {
            // Rule 3.
            table.set_meta("winner", player_id);
            table.set_active_players(Vec::new());
            table.log(LogEntry::new(format!("{} takes the last stone and wins", name)));
        } else {
            let next = table.seat_after(player_id, 1);
            table.set_active_players(vec![next]);
        }
    }

    fn scores(table: &Table) -> Scores {
        let won_by = winner(table);
        let points = |player| if won_by == Some(player) { 1.0 } else { 0.0 };
        table.players().into_iter().map(|player| (player, Score::public(vec![points(player)]))).collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        winner(table).is_some()
    }
}

tablehost_sdk::export_game!(Nim);

#[cfg(test)]
mod tests {
    use tablehost_sdk::{new_match, play, Action, Button, Game};

    use super::Nim;

    fn take(count: usize) -> Action {
        Action::button_click(Button::new(format!("take-{}", count), format!("take {}", count)))
    }

    #[test]
    fn taking_the_last_stone_wins() {
        let mut table = new_match::<Nim>(&[1, 2], 0);
        for (player, count) in [(1, 3), (2, 3), (1, 3), (2, 3)] {
            play::<Nim>(&mut table, player, &take(count), 0);
        }
        let scores = Nim::scores(&table);
        assert!(Nim::is_game_over(&table, &scores));
        assert_eq!(scores[&2].public_points, vec![1.0]);
        assert!(Nim::available_actions(&table, 1).is_empty());
    }
}
