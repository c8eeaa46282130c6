//! Seeded random full games: every game ends, and the rules' invariants hold
//! after every action, the way the host would see them.

use checkers::board::Colour;
use checkers::rules::read_board;
use checkers::turn::{Turn, QUIET_PLIES_FOR_DRAW};
use checkers::Checkers;
use tablehost_sdk::{apply_patches, new_match, play, Game, Intent, PlayerId, Rng};

const PLAYERS: [PlayerId; 2] = [5, 6];
const GAMES: u64 = 100;
/// Generous: a random bot also selects and cancels, but the draw rule and the
/// finite number of man moves and captures bound every game.
const MAX_ACTIONS: usize = 20_000;

#[test]
fn random_games_end_and_keep_the_rules_invariants() {
    let mut endings = [0usize; 2]; // wins, draws
    for seed in 0..GAMES {
        let mut table = new_match::<Checkers>(&PLAYERS, seed);
        let mut replayed = table.state().clone();
        let mut rng = Rng::new(seed ^ 0x5eed);
        let mut actions = 0;
        loop {
            let board = read_board(&table);
            let turn = Turn::read(&table);
            let scores = Checkers::scores(&table);
            let in_play = [board.count(Colour::Dark), board.count(Colour::Light)];
            assert!(turn.quiet_plies <= QUIET_PLIES_FOR_DRAW, "seed {}", seed);
            assert!(
                turn.chain || board.captured_squares().next().is_none(),
                "seed {}: captured pieces only wait during a chain",
                seed
            );
            if Checkers::is_game_over(&table, &scores) {
                let total: f64 = scores.values().map(|score| score.public_points[0]).sum();
                assert_eq!(total, 1.0, "seed {}: a win or two halves", seed);
                assert!(table.active_players().is_empty(), "seed {}", seed);
                endings[usize::from(table.meta("draw").is_some())] += 1;
                break;
            }
            assert_eq!(table.active_players().len(), 1, "seed {}", seed);
            let mover = table.active_players()[0];
            let waiting = PLAYERS.iter().copied().find(|&p| p != mover).unwrap();
            assert!(Checkers::available_actions(&table, waiting).is_empty(), "seed {}", seed);
            let offered = Checkers::available_actions(&table, mover);
            assert!(!offered.is_empty(), "seed {}: a player still in the game can act", seed);
            assert!(offered.iter().all(|a| a.intent != Intent::Undo), "seed {}: undo is the platform's", seed);

            let choice = offered[rng.below(offered.len())].clone();
            let played = play::<Checkers>(&mut table, mover, &choice.action, rng.next_u64());
            assert!(!played.rng_used, "seed {}", seed);
            assert_eq!(played.allow_undo, choice.intent != Intent::Confirm, "seed {}: only the ending hop is final", seed);
            apply_patches(&mut replayed, &played.patches).expect("recorded patches apply");
            actions += 1;
            assert!(actions <= MAX_ACTIONS, "seed {}: game did not end", seed);

            let after = read_board(&table);
            assert!(after.count(Colour::Dark) <= in_play[0] && after.count(Colour::Light) <= in_play[1]);
            if choice.intent == Intent::Choice && Turn::read(&table).chain {
                assert_eq!(table.active_players(), &[mover], "seed {}: the jumper goes on", seed);
            }
        }
        assert_eq!(&replayed, table.state(), "seed {}: patches replay to the same state", seed);
    }
    assert!(endings[0] > 0, "some random games end in a win");
}
