//! The compact state (`compact::ReversiState`) plays exactly the table's
//! rules: random games compared move by move, in-guest playouts and searches
//! compared with the table path, and odd tables refused (never a panic).

use reversi::compact::ReversiState;
use reversi::Reversi;
use tablehost_sdk::mcts::Budget;
use tablehost_sdk::search_state_check::{assert_plays_like_the_table, assert_same_decision, assert_same_outcomes};
use tablehost_sdk::{
    json, new_match, new_match_with, play, Game, Map, Piece, Player, PlayerId, Policy, Rng, SearchState, Table,
};

const PLAYERS: [PlayerId; 2] = [3, 8];

fn seated() -> Vec<Player> {
    PLAYERS.iter().map(|&player_id| Player { player_id, ..Player::default() }).collect()
}

/// `table` after `plies` random moves drawn from `Rng::new(seed)`.
fn after_random_moves(mut table: Table, seed: u64, plies: usize) -> Table {
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let scores = Reversi::scores(&table);
        if Reversi::is_game_over(&table, &scores) {
            break;
        }
        let player = table.active_players()[0];
        let offers = Reversi::available_actions(&table, player);
        let action = offers[rng.below(offers.len())].action.clone();
        play::<Reversi>(&mut table, player, &action, rng.next_u64());
    }
    table
}

#[test]
fn random_games_agree_move_by_move_from_both_openings() {
    let mut plies = 0;
    for seed in 0..300 {
        plies += assert_plays_like_the_table::<Reversi, ReversiState>(&new_match::<Reversi>(&PLAYERS, seed), seed, 100);
    }
    let mut options = Map::new();
    options.insert("opening".to_owned(), json!("parallel"));
    for seed in 0..50 {
        let table = new_match_with::<Reversi>(&PLAYERS, seed, &options);
        plies += assert_plays_like_the_table::<Reversi, ReversiState>(&table, seed, 100);
    }
    assert!(plies > 350 * 50, "whole games were played: {} plies", plies);
}

#[test]
fn batches_of_playouts_give_the_table_path_outcomes() {
    let seeds: Vec<u64> = (0..40).map(|i| i * 7919 + 1).collect();
    let players = seated();
    assert_same_outcomes::<Reversi>(Some(&players), None, &seeds, &[Policy::Random], 10_000);
    assert_same_outcomes::<Reversi>(Some(&players), None, &seeds[..3], &[Policy::First, Policy::Random], 10_000);
    assert_same_outcomes::<Reversi>(Some(&players), None, &seeds[..5], &[Policy::Random], 9);
    let midgame = after_random_moves(new_match::<Reversi>(&PLAYERS, 5), 5, 20);
    assert_same_outcomes::<Reversi>(None, Some(&midgame), &seeds, &[Policy::Random], 10_000);
    let over = after_random_moves(new_match::<Reversi>(&PLAYERS, 6), 6, 100);
    assert_same_outcomes::<Reversi>(None, Some(&over), &seeds[..2], &[Policy::Random], 10_000);
}

#[test]
fn searches_decide_as_on_the_table() {
    let budget = Budget { iterations: 150, exploration: 1.0, max_playout_plies: 200 };
    for seed in 0..12u64 {
        let table = after_random_moves(new_match::<Reversi>(&PLAYERS, seed), seed, (seed as usize * 5) % 58);
        for &player in &PLAYERS {
            assert_same_decision::<Reversi>(&table, player, budget, seed * 31 + 1);
        }
    }
    let short = Budget { iterations: 40, exploration: 0.3, max_playout_plies: 4 };
    let table = after_random_moves(new_match::<Reversi>(&PLAYERS, 2), 2, 10);
    assert_same_decision::<Reversi>(&table, table.active_players()[0], short, 5);
}

/// Tables the rules never write: each is refused by `from_table`, and the
/// search still answers as on the table.
#[test]
fn odd_tables_have_no_compact_state() {
    let start = new_match::<Reversi>(&PLAYERS, 1);
    let mover = start.active_players()[0];
    let with = |change: &dyn Fn(&mut tablehost_sdk::State)| {
        let mut state = start.state().clone();
        change(&mut state);
        Table::new(state)
    };
    let odd = [
        with(&|s| s.spaces.retain(|space| space.space_id != "a1")),
        with(&|s| s.spaces[0].pieces = vec![Piece::new("dark"), Piece::new("light")]),
        with(&|s| s.spaces[27].pieces.push(Piece::new("dark"))),
        with(&|s| s.spaces[5].pieces.push(Piece::new("marker"))),
        with(&|s| s.active_player_ids = PLAYERS.to_vec()),
        with(&|s| s.active_player_ids = vec![99]),
        with(&|s| s.players.truncate(1)),
        with(&|s| s.players[1].player_id = s.players[0].player_id),
    ];
    for (at, table) in odd.iter().enumerate() {
        assert!(ReversiState::from_table(table).is_err(), "odd table {}", at);
    }
    // The rules can play on the marker table: the search answers as the table path does.
    let budget = Budget { iterations: 30, exploration: 1.0, max_playout_plies: 200 };
    let fast = tablehost_sdk::mcts::search::<Reversi>(odd[3].state(), mover, tablehost_sdk::mcts::Search::Mcts, budget, 3);
    let slow =
        tablehost_sdk::mcts::search_on_table::<Reversi>(odd[3].state(), mover, tablehost_sdk::mcts::Search::Mcts, budget, 3);
    assert_eq!(fast.unwrap().offer, slow.unwrap().offer);
    // Nobody active before the end: both paths agree the game is stuck.
    let idle = with(&|s| s.active_player_ids.clear());
    assert_same_outcomes::<Reversi>(None, Some(&idle), &[1, 2], &[Policy::Random], 100);
}
