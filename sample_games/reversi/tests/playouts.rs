//! Seeded random full games: every game ends, and the rules' invariants hold
//! after every move, the way the host would see them.

use reversi::Reversi;
use tablehost_sdk::{apply_patches, new_match, play, Game, PlayerId, Rng, Scores};

const PLAYERS: [PlayerId; 2] = [3, 4];
const GAMES: u64 = 200;
/// 64 squares minus the four opening discs: no game can take more placements.
const MAX_PLACEMENTS: usize = 60;

fn points(scores: &Scores, player: PlayerId) -> u32 {
    scores[&player].public_points[0] as u32
}

#[test]
fn random_games_end_and_keep_the_disc_invariants() {
    for seed in 0..GAMES {
        let mut table = new_match::<Reversi>(&PLAYERS, seed);
        let mut replayed = table.state().clone();
        let mut rng = Rng::new(seed);
        let mut placements = 0;
        loop {
            let scores = Reversi::scores(&table);
            let total = points(&scores, PLAYERS[0]) + points(&scores, PLAYERS[1]);
            assert_eq!(total as usize, 4 + placements, "seed {}: one disc per placement", seed);
            if Reversi::is_game_over(&table, &scores) {
                assert!(table.active_players().is_empty(), "seed {}: nobody acts after the end", seed);
                break;
            }
            assert_eq!(table.active_players().len(), 1, "seed {}", seed);
            let mover = table.active_players()[0];
            let waiting = PLAYERS.iter().copied().find(|&p| p != mover).unwrap();
            assert!(Reversi::available_actions(&table, waiting).is_empty(), "seed {}", seed);
            let offered = Reversi::available_actions(&table, mover);
            assert!(!offered.is_empty(), "seed {}: the active player can always place", seed);

            let choice = &offered[rng.below(offered.len())];
            let played = play::<Reversi>(&mut table, mover, &choice.action, rng.next_u64());
            assert!(!played.rng_used && !played.allow_undo);
            apply_patches(&mut replayed, &played.patches).expect("recorded patches apply");
            placements += 1;
            assert!(placements <= MAX_PLACEMENTS, "seed {}: too many placements", seed);

            let after = Reversi::scores(&table);
            let turned = points(&scores, waiting) - points(&after, waiting);
            assert!(turned >= 1, "seed {}: a placement turns at least one disc", seed);
            assert_eq!(points(&after, mover), points(&scores, mover) + 1 + turned, "seed {}", seed);
        }
        assert_eq!(&replayed, table.state(), "seed {}: patches replay to the same state", seed);
    }
}
