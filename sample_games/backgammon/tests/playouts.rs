//! Many random full games: each ends, every checker stays on the table, and
//! each move's undo and randomness flags follow the rules.

use backgammon::board::{Side, CHECKERS};
use backgammon::layout::board;
use backgammon::Backgammon;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{new_match, play, Action, Game, Rng};

const MOVE_LIMIT: usize = 20_000;

#[test]
fn random_games_end_and_keep_fifteen_checkers_a_side() {
    for seed in 0..20u64 {
        let mut table = new_match::<Backgammon>(&[7, 9], seed);
        let mut bot = Rng::new(seed ^ 0xB6);
        let mut moves = 0;
        let mut last = Vec::new();
        while !Backgammon::is_game_over(&table, &Backgammon::scores(&table)) {
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            assert_nothing_hidden_is_shown::<Backgammon>(&table, &last);
            let position = board(&table);
            for side in [Side::White, Side::Black] {
                let total: u32 = position.counts[side.index()].iter().map(|&c| u32::from(c)).sum();
                assert_eq!(total, u32::from(CHECKERS));
            }
            assert_eq!(table.active_players().len(), 1);
            let player = table.active_players()[0];
            let offered = Backgammon::available_actions(&table, player);
            assert!(!offered.is_empty(), "seed {}: nothing offered", seed);
            let pick = offered[bot.below(offered.len())].action.clone();
            let played = play::<Backgammon>(&mut table, player, &pick, bot.next_u64());
            let is_roll = matches!(&pick, Action::ButtonClick { button } if button.id == "roll");
            if is_roll {
                assert!(played.rng_used && !played.allow_undo);
            }
            if played.rng_used {
                assert!(!played.allow_undo, "a move that drew randomness is never undoable");
            }
            last = played.patches;
            moves += 1;
        }
        assert!(table.active_players().is_empty());
    }
}
