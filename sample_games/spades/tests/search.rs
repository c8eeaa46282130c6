//! Information-set search on spades: `sample_hidden` fits every seat's view,
//! and a search from a seat's view answers one of that seat's offers.

use spades::Spades;
use tablehost_sdk::mcts::{search, Budget, Search};
use tablehost_sdk::playout::candidates;
use tablehost_sdk::testing::{assert_sample_fits_view, random_midgame};
use tablehost_sdk::{view_of, Game};

const PLAYERS: &[u32] = &[1, 2, 3, 4];

#[test]
fn samples_fit_every_seats_view_along_random_games() {
    for seed in 0..6u64 {
        for plies in [0u32, 7, 40, 150] {
            let table = random_midgame::<Spades>(PLAYERS, seed, plies);
            for &viewer in PLAYERS {
                let first = assert_sample_fits_view::<Spades>(&table, viewer, seed);
                let again = assert_sample_fits_view::<Spades>(&table, viewer, seed);
                assert_eq!(first, again, "the same seed samples the same state");
            }
        }
    }
}

#[test]
fn ismcts_answers_one_of_the_seats_offers() {
    let mut searched = 0;
    for seed in 0..3u64 {
        let table = random_midgame::<Spades>(PLAYERS, seed, 25);
        let scores = Spades::scores(&table);
        if Spades::is_game_over(&table, &scores) {
            continue;
        }
        let player = table.active_players()[0];
        if candidates::<Spades>(&table, player).is_empty() {
            continue;
        }
        let view = view_of(table.state(), Some(player));
        let budget = Budget { iterations: 12, exploration: 1.0, max_playout_plies: 60 };
        let decision = search::<Spades>(&view, player, Search::Ismcts, budget, seed).expect("a decision");
        let offered = Spades::available_actions(&table, player);
        assert!(offered.iter().any(|offer| offer.action == decision.offer.action), "{:?}", decision.offer);
        let mcts = search::<Spades>(&view, player, Search::Mcts, budget, seed);
        assert!(mcts.is_err(), "plain mcts refuses a game that hides information");
        searched += 1;
    }
    assert!(searched > 0, "some midgame had a move to search");
}
