//! Checks for game authors' native tests: a `SearchState` plays exactly the
//! game the `Game` trait does (the contract in `search_state`). Each panics
//! with the first difference it finds.

use std::fmt::Debug;

use crate::game::{play, Game};
use crate::mcts::{search, search_on_table, Budget, Search};
use crate::playout::{candidates, play_batch, play_from_setup, play_from_state, Policy, Start};
use crate::rng::Rng;
use crate::search_state::SearchState;
use crate::state::{Player, PlayerId};
use crate::table::Table;

/// Play one random game from `table` on the table and on its compact state
/// side by side (moves drawn from `Rng::new(seed)`, at most `max_plies`),
/// asserting before every move that both agree on everything the contract
/// names: game over, scores, ranks, who moves, every seat's candidates as
/// actions in order, what `pick` picks, and that the state read afresh from
/// the table equals the one moved along. Returns the plies played.
///
/// Panics when `S::from_table` refuses a table reached by the rules, or at
/// the first disagreement.
pub fn assert_plays_like_the_table<G: Game, S: SearchState + Debug + PartialEq>(
    table: &Table,
    seed: u64,
    max_plies: u32,
) -> u32 {
    let mut table = table.clone();
    let mut state = S::from_table(&table).unwrap_or_else(|err| panic!("seed {}: no compact state: {}", seed, err));
    let mut rng = Rng::new(seed);
    let mut moves = Vec::new();
    let mut scratch = Vec::new();
    let seats = table.players();
    for ply in 0..=max_plies {
        let at = |what: &str| format!("seed {} ply {}: {}", seed, ply, what);
        let fresh = S::from_table(&table).unwrap_or_else(|err| panic!("{}", at(&err)));
        assert_eq!(fresh, state, "{}", at("state read from the table"));
        let scores = G::scores(&table);
        assert_eq!(state.scores(), scores, "{}", at("scores"));
        let mut points = Vec::new();
        state.first_points(&seats, &mut points);
        let expected: Vec<f64> =
            seats.iter().map(|p| scores.get(p).and_then(|s| s.public_points.first().copied()).unwrap_or(0.0)).collect();
        assert_eq!(points, expected, "{}", at("first points"));
        let over = G::is_game_over(&table, &scores);
        assert_eq!(state.is_over(), over, "{}", at("game over"));
        if over {
            assert_eq!(state.ranks(), G::ranks(&table, &scores), "{}", at("ranks"));
            return ply;
        }
        let mover = state.mover();
        let active: Vec<usize> = table.active_players().iter().map(|&p| table.seat_of(p)).collect();
        assert_eq!(active, mover.into_iter().collect::<Vec<_>>(), "{}", at("active seat"));
        let mut offers = Vec::new();
        for (seat, &player) in seats.iter().enumerate() {
            let offered = candidates::<G>(&table, player);
            if Some(seat) == mover {
                offers = offered;
            } else {
                assert!(offered.is_empty(), "{}", at("a seat other than the mover is offered something"));
            }
        }
        state.moves(&mut moves);
        let actions: Vec<_> = moves.iter().map(|&mv| state.action(mv)).collect();
        let offered: Vec<_> = offers.iter().map(|offer| offer.action.clone()).collect();
        assert_eq!(actions, offered, "{}", at("candidates"));
        for (i, mv) in moves.iter().enumerate() {
            assert!(!moves[..i].contains(mv), "{}", at("two equal moves"));
        }
        for policy in [Policy::First, Policy::Random] {
            let (mut a, mut b) = (rng.clone(), rng.clone());
            let picked = state.pick(policy, &mut a, &mut scratch);
            let expected = if moves.is_empty() { None } else { Some(moves[policy.pick(moves.len(), &mut b)]) };
            assert!(picked == expected && a.next_u64() == b.next_u64(), "{}", at("pick"));
        }
        if moves.is_empty() || ply == max_plies {
            return ply;
        }
        let k = rng.below(moves.len());
        let move_seed = rng.next_u64();
        let player = seats[mover.expect("moves have a mover")];
        play::<G>(&mut table, player, &offers[k].action, move_seed);
        state.apply(moves[k], &mut Rng::new(move_seed));
    }
    max_plies
}

/// `play_batch` (on the compact state when the game has one) gives, seed
/// for seed, the outcome `play_from_setup` (`players`) or `play_from_state`
/// (`table`) gives on the table. Exactly one of `players` and `table`.
pub fn assert_same_outcomes<G: Game>(
    players: Option<&[Player]>,
    table: Option<&Table>,
    seeds: &[u64],
    policies: &[Policy],
    max_plies: u32,
) {
    let start = match (players, table) {
        (Some(players), None) => Start::Setup(players),
        (None, Some(table)) => Start::Table(table),
        _ => panic!("give players or a table"),
    };
    let batch = play_batch::<G>(start, seeds, policies, max_plies);
    assert_eq!(batch.len(), seeds.len());
    for (outcome, &seed) in batch.iter().zip(seeds) {
        let alone = match start {
            Start::Setup(players) => play_from_setup::<G>(players, seed, policies, max_plies),
            Start::Table(table) => play_from_state::<G>(table, seed, policies, max_plies),
        };
        let got = (outcome.plies, &outcome.scores, outcome.game_over, outcome.cut, &outcome.ranks);
        let want = (alone.plies, &alone.scores, alone.game_over, alone.cut, &alone.ranks);
        assert_eq!(got, want, "seed {}", seed);
    }
}

/// `mcts::search` (on the compact state) decides for `player` on `view`
/// exactly as `mcts::search_on_table` does: the same offer, visits and
/// error. Panics also when the game has no compact state for `view`.
pub fn assert_same_decision<G: Game>(view: &Table, player: PlayerId, budget: Budget, seed: u64) {
    let ops = G::search_state().expect("the game declares a compact state");
    assert!((ops.search)(view, player, budget, seed).is_some(), "no compact search for this view");
    let fast = search::<G>(view.state(), player, Search::Mcts, budget, seed);
    let slow = search_on_table::<G>(view.state(), player, Search::Mcts, budget, seed);
    match (fast, slow) {
        (Ok(fast), Ok(slow)) => {
            assert_eq!((&fast.offer, fast.visits), (&slow.offer, slow.visits), "seed {}", seed);
        }
        (fast, slow) => assert_eq!(fast.err(), slow.err(), "seed {}", seed),
    }
}
