//! Many random full games: each ends, no card appears or vanishes, and no
//! viewer receives the face of a card hidden from them.

use std::collections::BTreeSet;

use spades::layout::{card_of, PHASE};
use spades::Spades;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{new_match, play, Game, Rng, Table};

/// More moves than a game can take: 25 rounds (the round limit, plus a few
/// tied ones) of 4 bids and 52 plays.
const MOVE_LIMIT: usize = 50 * 56;

#[test]
fn random_games_end_conserve_cards_and_hide_faces() {
    for seed in 0..2u64 {
        let mut table = new_match::<Spades>(&[11, 12, 13, 14], seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut last_move = Vec::new();
        loop {
            check_cards_conserved(&table);
            assert_nothing_hidden_is_shown::<Spades>(&table, &last_move);
            if Spades::is_game_over(&table, &Spades::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            assert_eq!(table.active_players().len(), 1);
            let player = table.active_players()[0];
            let offered = Spades::available_actions(&table, player);
            assert!(!offered.is_empty(), "seed {}: the active player has nothing to do", seed);
            let pick = &offered[bot.below(offered.len())];
            last_move = play::<Spades>(&mut table, player, &pick.action, bot.next_u64()).patches;
            moves += 1;
        }
        assert_eq!(table.meta(PHASE), Some(&tablehost_sdk::json!("over")));
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
