//! The compact state (`compact::CheckersState`) plays exactly the table's
//! rules: random games compared click by click, in-guest playouts and
//! searches compared with the table path, and odd tables refused (never a panic).

use checkers::compact::CheckersState;
use checkers::Checkers;
use tablehost_sdk::mcts::Budget;
use tablehost_sdk::search_state_check::{assert_plays_like_the_table, assert_same_decision, assert_same_outcomes};
use tablehost_sdk::{
    json, new_match, new_match_with, play, Game, Intent, Map, Piece, Player, PlayerId, Policy, Rng, SearchState,
    State, Table,
};

const PLAYERS: [PlayerId; 2] = [5, 6];

fn seated() -> Vec<Player> {
    PLAYERS.iter().map(|&player_id| Player { player_id, ..Player::default() }).collect()
}

/// `table` after `clicks` random choice/confirm clicks drawn from `Rng::new(seed)`.
fn after_random_clicks(mut table: Table, seed: u64, clicks: usize) -> Table {
    let mut rng = Rng::new(seed);
    for _ in 0..clicks {
        let scores = Checkers::scores(&table);
        if Checkers::is_game_over(&table, &scores) {
            break;
        }
        let player = table.active_players()[0];
        let mut offers = Checkers::available_actions(&table, player);
        offers.retain(|offer| offer.intent != Intent::Cancel);
        let action = offers[rng.below(offers.len())].action.clone();
        play::<Checkers>(&mut table, player, &action, rng.next_u64());
    }
    table
}

#[test]
fn random_games_agree_click_by_click() {
    let mut plies = 0;
    for seed in 0..150 {
        plies += assert_plays_like_the_table::<Checkers, CheckersState>(&new_match::<Checkers>(&PLAYERS, seed), seed, 2000);
    }
    let mut options = Map::new();
    options.insert("draw_plies".to_owned(), json!(20));
    for seed in 0..40 {
        let table = new_match_with::<Checkers>(&PLAYERS, seed, &options);
        plies += assert_plays_like_the_table::<Checkers, CheckersState>(&table, seed, 2000);
    }
    assert!(plies > 190 * 60, "whole games were played: {} plies", plies);
}

#[test]
fn batches_of_playouts_give_the_table_path_outcomes() {
    let seeds: Vec<u64> = (0..30).map(|i| i * 104_729 + 3).collect();
    let players = seated();
    assert_same_outcomes::<Checkers>(Some(&players), None, &seeds, &[Policy::Random], 10_000);
    assert_same_outcomes::<Checkers>(Some(&players), None, &seeds[..3], &[Policy::First, Policy::Random], 10_000);
    assert_same_outcomes::<Checkers>(Some(&players), None, &seeds[..5], &[Policy::Random], 7);
    for clicks in [1, 21, 60] {
        let midgame = after_random_clicks(new_match::<Checkers>(&PLAYERS, clicks as u64), 9, clicks);
        assert_same_outcomes::<Checkers>(None, Some(&midgame), &seeds, &[Policy::Random], 10_000);
    }
}

#[test]
fn searches_decide_as_on_the_table() {
    let budget = Budget { iterations: 80, exploration: 1.0, max_playout_plies: 200 };
    for seed in 0..10u64 {
        let table = after_random_clicks(new_match::<Checkers>(&PLAYERS, seed), seed, (seed as usize * 13) % 90);
        for &player in &PLAYERS {
            assert_same_decision::<Checkers>(&table, player, budget, seed * 17 + 2);
        }
    }
}

/// Tables the rules never write: each is refused by `from_table`.
#[test]
fn odd_tables_have_no_compact_state() {
    let start = new_match::<Checkers>(&PLAYERS, 1);
    let with = |change: &dyn Fn(&mut State)| {
        let mut state = start.state().clone();
        change(&mut state);
        Table::new(state)
    };
    let odd = [
        with(&|s| s.spaces.retain(|space| space.space_id != "c3")),
        with(&|s| s.spaces[0].kind = "hole".to_string()),
        with(&|s| s.spaces[0].pieces.push(Piece::new("dark-man"))),
        with(&|s| s.spaces[20].pieces.push(Piece::new("queen"))),
        with(&|s| s.active_player_ids = PLAYERS.to_vec()),
        with(&|s| s.active_player_ids = vec![77]),
        with(&|s| s.players.truncate(1)),
        with(&|s| {
            s.meta_data.insert("chain".to_owned(), json!(true));
        }),
        with(&|s| {
            // A chain of the opponent's piece.
            s.meta_data.insert("selected".to_owned(), json!("b6"));
            s.meta_data.insert("chain".to_owned(), json!(true));
        }),
    ];
    for (at, table) in odd.iter().enumerate() {
        assert!(CheckersState::from_table(table).is_err(), "odd table {}", at);
    }
    assert!(CheckersState::from_table(&start).is_ok());
}

/// A table the rules never reach: 16 dark kings on ranks 1, 3, 5 and 7
/// with 49 moves between them (more than 12 pieces could have), nothing
/// else. The compact state plays it exactly like the table.
#[test]
fn crowded_odd_boards_play_like_the_table() {
    let start = new_match::<Checkers>(&PLAYERS, 3);
    let mut state = start.state().clone();
    for (at, space) in state.spaces.iter_mut().enumerate() {
        space.pieces = if at / 4 % 2 == 0 { vec![Piece::new("dark-king")] } else { Vec::new() };
    }
    let table = Table::new(state);
    let mut moves = Vec::new();
    let compact = CheckersState::from_table(&table).unwrap();
    compact.moves(&mut moves);
    assert_eq!(moves.len(), 16, "every king can move");
    for seed in 0..20 {
        assert_plays_like_the_table::<Checkers, CheckersState>(&table, seed, 300);
    }
}
