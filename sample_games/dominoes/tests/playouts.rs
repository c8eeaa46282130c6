//! Many random full rounds: each ends, no tile appears or vanishes, and no
//! viewer receives the face of a tile hidden from them.

use std::collections::BTreeSet;

use dominoes::layout::{tile_of, RESULT};
use dominoes::Dominoes;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{new_match, play, Game, PlayerId, Rng, Table};

/// More moves than any round can take: 28 plays, 28 draws, a pass each.
const MOVE_LIMIT: usize = 200;

#[test]
fn random_rounds_end_conserve_tiles_and_hide_faces() {
    for seed in 0..120u64 {
        let players: Vec<PlayerId> = (1..=(2 + seed % 3) as u32).collect();
        let mut table = new_match::<Dominoes>(&players, seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut last_move = Vec::new();
        loop {
            check_tiles_conserved(&table);
            assert_nothing_hidden_is_shown::<Dominoes>(&table, &last_move);
            if Dominoes::is_game_over(&table, &Dominoes::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            let player = table.active_players()[0];
            let offered = Dominoes::available_actions(&table, player);
            assert!(
                !offered.is_empty(),
                "seed {}: the active player has nothing to do",
                seed
            );
            let pick = &offered[bot.below(offered.len())];
            let played = play::<Dominoes>(&mut table, player, &pick.action, bot.next_u64());
            last_move = played.patches;
            moves += 1;
        }
        assert!(table.meta(RESULT).is_some());
        assert!(table.active_players().is_empty());
    }
}

/// Every tile of the set is on the table exactly once.
fn check_tiles_conserved(table: &Table) {
    let faces: Vec<String> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| tile_of(piece).expect("the rules see every tile").face())
        .collect();
    let distinct: BTreeSet<&String> = faces.iter().collect();
    assert_eq!((faces.len(), distinct.len()), (28, 28));
}
