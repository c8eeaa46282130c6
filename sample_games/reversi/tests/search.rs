//! UCT over the SDK's `Game` trait, played natively: it beats random play,
//! and the same seed gives the same decision.

use reversi::Reversi;
use tablehost_sdk::mcts::{search, Budget, Search, SearchError};
use tablehost_sdk::playout::{play_from_setup, Policy};
use tablehost_sdk::{new_match, play, Game, Player, PlayerId, Rng};

const PLAYERS: [PlayerId; 2] = [1, 2];
const BUDGET: Budget = Budget { iterations: 60, exploration: 1.0, max_playout_plies: 200 };

#[test]
fn mcts_beats_random_play() {
    let mut wins = 0;
    for seed in 0..3u64 {
        let mut table = new_match::<Reversi>(&PLAYERS, seed);
        let mut rng = Rng::new(seed);
        let searcher = PLAYERS[(seed % 2) as usize];
        loop {
            let scores = Reversi::scores(&table);
            if Reversi::is_game_over(&table, &scores) {
                let other = PLAYERS.iter().copied().find(|&p| p != searcher).unwrap();
                if scores[&searcher].public_points[0] > scores[&other].public_points[0] {
                    wins += 1;
                }
                break;
            }
            let player = table.active_players()[0];
            let offered = Reversi::available_actions(&table, player);
            let action = if player == searcher {
                search::<Reversi>(table.state(), player, Search::Mcts, BUDGET, rng.next_u64()).unwrap().offer.action
            } else {
                offered[rng.below(offered.len())].action.clone()
            };
            play::<Reversi>(&mut table, player, &action, rng.next_u64());
        }
    }
    assert!(wins >= 2, "mcts won {} of 3", wins);
}

#[test]
fn a_search_repeats_for_the_same_seed_and_needs_a_sampler_for_ismcts() {
    let table = new_match::<Reversi>(&PLAYERS, 4);
    let player = table.active_players()[0];
    let first = search::<Reversi>(table.state(), player, Search::Mcts, BUDGET, 9).unwrap();
    let again = search::<Reversi>(table.state(), player, Search::Mcts, BUDGET, 9).unwrap();
    assert_eq!(first.offer, again.offer);
    assert_eq!(first.visits, again.visits);
    let err = search::<Reversi>(table.state(), player, Search::Ismcts, BUDGET, 9).unwrap_err();
    assert_eq!(err, SearchError::NoSampler);
    let idle = PLAYERS.iter().copied().find(|&p| p != player).unwrap();
    assert_eq!(search::<Reversi>(table.state(), idle, Search::Mcts, BUDGET, 9).unwrap_err(), SearchError::NoAction);
}

#[test]
fn playouts_from_setup_depend_on_their_seed_only() {
    let players: Vec<Player> = PLAYERS.iter().map(|&player_id| Player { player_id, ..Player::default() }).collect();
    let a = play_from_setup::<Reversi>(&players, 77, &[Policy::Random], 1000);
    let b = play_from_setup::<Reversi>(&players, 77, &[Policy::Random], 1000);
    assert_eq!((a.plies, &a.scores), (b.plies, &b.scores));
    assert!(a.game_over && a.cut.is_none());
    let cut = play_from_setup::<Reversi>(&players, 77, &[Policy::First], 5);
    assert_eq!((cut.plies, cut.game_over), (5, false));
}
