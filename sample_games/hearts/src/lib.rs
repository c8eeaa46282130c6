//! Hearts for four players, as a tablehost game.
//!
//! Rules:
//!
//! 1. Each round all 52 cards are dealt, thirteen each (`round::start_round`).
//! 2. Before play each player passes three cards: left in round 1, right in
//!    round 2, across in round 3, none in round 4, and so on (`passing`). The
//!    four choose at the same time.
//! 3. The holder of the 2♣ leads it to the first trick. Players follow the
//!    suit led if they can; the highest card of that suit takes the trick and
//!    its taker leads the next (`trick`).
//! 4. On the first trick nobody may play a heart or the Q♠ unless they hold
//!    nothing else; hearts may not be led until a heart has been played,
//!    unless the leader holds only hearts.
//! 5. Each heart taken is 1 point, the Q♠ 13. A player who takes all 26
//!    scores 0 and every other player 26 (`round::round_points`).
//! 6. The game ends when a round ends with someone at 100 or more (option
//!    `target_score`, 20 to 500); the lowest score wins (metadata result rule
//!    `lowest_score`).
//!
//! Hidden information: hands and pass piles are collections owned by their
//! holders, the deck a collection nobody owns, every hidden card a `back`
//! hiding its face (see `layout`). Played cards are turned face up. Scores are
//! public: `public_points` = [points from finished rounds, points taken this round].

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, ResultRule, Rng, Score,
    Scores, State, Table,
};

pub mod card;
mod display;
pub mod layout;
pub mod passing;
pub mod round;
pub mod trick;

use layout::{hand_of, pass_pile_of, phase, points_taken, score_of, Phase};

/// The hearts game, exported to the host by `export_game!`.
pub struct Hearts;

impl Game for Hearts {
    fn metadata() -> Metadata {
        Metadata::players(4, 4)
            .description("Hearts for four: pass three cards, follow suit, avoid hearts and the queen of spades.")
            .hidden_information(true)
            .result(ResultRule::LowestScore)
            .option(
                GameOption::integer(layout::TARGET_SCORE, i64::from(layout::GAME_END_POINTS), 20, 500)
                    .describe("a round ending with someone at or over this many points ends the game"),
            )
    }

    fn config(players: &[PlayerId], _options: &Options) -> GameConfig {
        layout::config(players)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        round::start_round(table, rng);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        match phase(table) {
            Phase::Passing => passing::passing_actions(table, player_id),
            Phase::Playing => trick::playing_actions(table, player_id),
            Phase::Over => Vec::new(),
        }
    }

    /// Panics on an action hearts never offers.
    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        match (phase(table), action) {
            (Phase::Passing, Action::PieceClick { space_id, index }) if *space_id == hand_of(player_id) => {
                passing::select(table, player_id, *index)
            }
            (Phase::Passing, Action::PieceClick { space_id, index }) if *space_id == pass_pile_of(player_id) => {
                passing::withdraw(table, player_id, *index)
            }
            (Phase::Passing, Action::ButtonClick { button }) if button.id == passing::PASS => {
                if passing::commit(table, player_id) {
                    passing::exchange(table);
                    round::start_play(table);
                }
            }
            (Phase::Playing, Action::PieceClick { space_id, index }) if *space_id == hand_of(player_id) => {
                play_to_trick(table, player_id, *index, rng)
            }
            (_, other) => panic!("hearts does not offer {:?} now", other),
        }
    }

    fn scores(table: &Table) -> Scores {
        table
            .players()
            .into_iter()
            .map(|player| {
                let points = vec![
                    f64::from(score_of(table, player)),
                    f64::from(points_taken(table, player)),
                ];
                (player, Score::public(points))
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        phase(table) == Phase::Over
    }

    /// The cards the viewer has not seen (not in their hand or pass pile,
    /// not played) dealt at random to the face-down cards of the other hands,
    /// pass piles and the deck. Only counts constrain the deal: a player who
    /// showed out of a suit may still be dealt one (a simplification).
    fn sample_hidden(view: &Table, _viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        use tablehost_sdk::face_down::Face;
        let faces: Vec<String> = card::deck().into_iter().map(|card| card.face()).collect();
        Some(tablehost_sdk::hidden::deal_unseen(view, layout::BACK, &faces, rng))
    }
}

/// Plays a card; a full trick goes to its taker, who leads next, and the
/// thirteenth trick ends the round.
fn play_to_trick(table: &mut Table, player: PlayerId, index: usize, rng: &mut Rng) {
    trick::play_card(table, player, index);
    if !trick::trick_is_complete(table) {
        let next = trick::next_to_play(table, player);
        table.set_active_players(vec![next]);
        return;
    }
    let taker = trick::collect_trick(table);
    if table.pieces(&hand_of(taker)).is_empty() {
        round::end_round(table, rng);
    } else {
        table.set_active_players(vec![taker]);
    }
}

tablehost_sdk::export_game!(Hearts);
