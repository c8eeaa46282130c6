//! Many random full games: each ends, no card appears or vanishes, and no
//! viewer receives the face of a card hidden from them.

use std::collections::BTreeSet;

use hearts::layout::{card_of, PHASE};
use hearts::Hearts;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{new_match, play, Game, PlayerId, Rng, Table};

/// Far more moves than a game takes: at most 26 rounds (someone takes at
/// least 4 points a round) of 52 plays, plus the pass selections.
const MOVE_LIMIT: usize = 20_000;

#[test]
fn random_games_end_conserve_cards_and_hide_faces() {
    for seed in 0..5u64 {
        let players: Vec<PlayerId> = vec![11, 12, 13, 14];
        let mut table = new_match::<Hearts>(&players, seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut last_move = Vec::new();
        loop {
            check_cards_conserved(&table);
            assert_nothing_hidden_is_shown::<Hearts>(&table, &last_move);
            if Hearts::is_game_over(&table, &Hearts::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            // While passing all four are active: any of them may move next.
            let active = table.active_players();
            let player = active[bot.below(active.len())];
            let offered = Hearts::available_actions(&table, player);
            assert!(
                !offered.is_empty(),
                "seed {}: the active player has nothing to do",
                seed
            );
            let pick = &offered[bot.below(offered.len())];
            let played = play::<Hearts>(&mut table, player, &pick.action, bot.next_u64());
            last_move = played.patches;
            moves += 1;
        }
        assert_eq!(table.meta(PHASE), Some(&tablehost_sdk::json!("over")));
        assert!(Hearts::scores(&table).values().any(|s| s.public_points[0] >= 100.0));
        assert!(table.active_players().is_empty());
    }
}

/// Every card of the deck is on the table exactly once.
fn check_cards_conserved(table: &Table) {
    let faces: Vec<String> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| card_of(piece).expect("the rules see every card").name())
        .collect();
    let distinct: BTreeSet<&String> = faces.iter().collect();
    assert_eq!((faces.len(), distinct.len()), (52, 52));
}
