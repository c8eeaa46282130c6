//! Rules tests, played the way the host plays them (`new_match` + `play`).

use tablehost_sdk::{json, new_match, play, Action, Game, Intent, Table};

use super::{cell_id, TicTacToe};

const ANN: u32 = 7;
const BOB: u32 = 9;

fn fresh() -> Table {
    new_match::<TicTacToe>(&[ANN, BOB], 1)
}

/// Play `cells` alternately starting with whoever is active.
fn play_cells(table: &mut Table, cells: &[&str]) {
    for cell in cells {
        let player = table.active_players()[0];
        play::<TicTacToe>(table, player, &Action::space_click(*cell), 0);
    }
}

fn points(table: &Table) -> (f64, f64) {
    let scores = TicTacToe::scores(table);
    (scores[&ANN].public_points[0], scores[&BOB].public_points[0])
}

fn over(table: &Table) -> bool {
    TicTacToe::is_game_over(table, &TicTacToe::scores(table))
}

#[test]
fn board_is_nine_empty_cells_and_first_seat_starts() {
    let table = fresh();
    assert_eq!(table.spaces_of_kind("cell").len(), 9);
    assert!(table.state().spaces.iter().all(|s| s.pieces.is_empty()));
    assert_eq!(table.active_players(), &[ANN]);
    assert_eq!(cell_id(0, 0), "a1");
    assert_eq!(cell_id(2, 2), "c3");
    assert_eq!(table.meta("marks"), Some(&json!({"7": "x", "9": "o"})));
}

#[test]
fn active_player_is_offered_every_empty_cell_as_a_confirm() {
    let mut table = fresh();
    play_cells(&mut table, &["b2"]);
    let offered = TicTacToe::available_actions(&table, BOB);
    assert_eq!(offered.len(), 8);
    assert!(offered.iter().all(|a| a.intent == Intent::Confirm));
    assert!(!offered.iter().any(|a| a.action == Action::space_click("b2")));
    assert!(TicTacToe::available_actions(&table, ANN).is_empty());
}

#[test]
fn marks_alternate_between_x_and_o() {
    let mut table = fresh();
    play_cells(&mut table, &["a1", "b1"]);
    assert_eq!(table.piece("a1", 0).public_kind, "x");
    assert_eq!(table.piece("a1", 0).owner, Some(ANN));
    assert_eq!(table.piece("b1", 0).public_kind, "o");
    assert_eq!(table.active_players(), &[ANN]);
}

#[test]
fn a_row_wins_and_ends_the_game() {
    let mut table = fresh();
    play_cells(&mut table, &["a1", "a2", "b1", "b2", "c1"]);
    assert!(over(&table));
    assert_eq!(points(&table), (1.0, 0.0));
    assert!(table.active_players().is_empty());
    assert_eq!(table.meta("winner"), Some(&json!(ANN)));
    assert!(TicTacToe::available_actions(&table, BOB).is_empty());
}

#[test]
fn a_diagonal_wins_for_the_second_player() {
    let mut table = fresh();
    play_cells(&mut table, &["a1", "c1", "a2", "b2", "c3", "a3"]);
    assert!(over(&table));
    assert_eq!(points(&table), (0.0, 1.0));
}

#[test]
fn a_full_board_without_a_line_is_a_draw() {
    let mut table = fresh();
    // X O X / X O O / O X X
    play_cells(&mut table, &["a1", "b1", "c1", "b2", "a2", "c2", "b3", "a3", "c3"]);
    assert!(over(&table));
    assert_eq!(points(&table), (0.5, 0.5));
    assert_eq!(table.meta("result"), Some(&json!("draw")));
}

#[test]
fn a_win_on_the_last_cell_is_a_win_not_a_draw() {
    let mut table = fresh();
    // X O X / O X O / O X X  -- the ninth mark completes the a1-c3 diagonal
    play_cells(&mut table, &["c1", "b1", "b3", "a2", "a1", "c2", "b2", "a3", "c3"]);
    assert!(super::board_full(&table));
    assert_eq!(points(&table), (1.0, 0.0));
    assert_eq!(table.meta("result"), Some(&json!("win")));
}

#[test]
fn scores_are_zero_while_the_game_is_on() {
    let mut table = fresh();
    play_cells(&mut table, &["a1"]);
    assert!(!over(&table));
    assert_eq!(points(&table), (0.0, 0.0));
}

#[test]
fn a_move_draws_no_randomness_and_is_not_undoable() {
    let mut table = fresh();
    let played = play::<TicTacToe>(&mut table, ANN, &Action::space_click("b2"), 42);
    assert!(!played.rng_used);
    assert!(!played.allow_undo);
    assert_eq!(played.patches.len(), 3); // mark, log line, next player
}

#[test]
#[should_panic(expected = "already marked")]
fn marking_a_taken_cell_panics() {
    let mut table = fresh();
    play_cells(&mut table, &["b2", "b2"]);
}

#[test]
fn misere_gives_the_game_to_the_opponent_of_the_line_maker() {
    let mut options = tablehost_sdk::Map::new();
    options.insert(super::MISERE.to_string(), json!(true));
    let mut table = tablehost_sdk::new_match_with::<TicTacToe>(&[ANN, BOB], 1, &options);
    play_cells(&mut table, &["a1", "a2", "b1", "b2", "c1"]);
    assert!(over(&table));
    assert_eq!(points(&table), (0.0, 1.0), "ann completed the row, so bob wins");
    assert_eq!(table.meta("winner"), Some(&json!(BOB)));
}

#[test]
fn metadata_declares_two_players_and_the_misere_option() {
    let metadata = TicTacToe::metadata();
    assert_eq!((metadata.min_players, metadata.max_players), (2, 2));
    assert_eq!(metadata.options[0].name, super::MISERE);
    assert!(fresh().options().0.get(super::MISERE) == Some(&json!(false)), "setup records the default");
}
