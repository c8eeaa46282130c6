//! Reversi through the `Table`, the way the host drives it: offered actions,
//! the patches a move records, passing, and the end of the game.

use reversi::board::{parse_square, Board, Colour};
use reversi::rules::read_board;
use reversi::Reversi;
use tablehost_sdk::{new_match, play, Action, Game, Intent, Piece, PlayerId, Table};

const DARK: PlayerId = 7;
const LIGHT: PlayerId = 9;

/// A match whose board is `board` and whose active player is `active`.
fn table_with(board: &Board, active: PlayerId) -> Table {
    let mut state = new_match::<Reversi>(&[DARK, LIGHT], 1).into_state();
    for space in state.spaces.iter_mut() {
        let square = parse_square(&space.space_id).expect("every space is a square");
        space.pieces = board.colour_at(square).map(|c| Piece::new(c.kind())).into_iter().collect();
    }
    state.active_player_ids = vec![active];
    Table::new(state)
}

fn bits(names: &[&str]) -> u64 {
    names.iter().map(|name| 1u64 << parse_square(name).unwrap()).fold(0, |a, b| a | b)
}

fn click(square: &str) -> Action {
    Action::space_click(square)
}

fn offered_squares(table: &Table, player: PlayerId) -> Vec<String> {
    Reversi::available_actions(table, player)
        .into_iter()
        .map(|offered| {
            assert_eq!(offered.intent, Intent::Confirm);
            match offered.action {
                Action::SpaceClick { space_id } => space_id,
                other => panic!("unexpected action {:?}", other),
            }
        })
        .collect()
}

fn discs(table: &Table, player: PlayerId) -> f64 {
    Reversi::scores(table)[&player].public_points[0]
}

#[test]
fn dark_opens_with_the_four_classic_placements_and_light_waits() {
    let table = new_match::<Reversi>(&[DARK, LIGHT], 1);
    assert_eq!(table.active_players(), &[DARK]);
    assert_eq!(offered_squares(&table, DARK), vec!["d3", "c4", "f5", "e6"]);
    assert!(offered_squares(&table, LIGHT).is_empty());
    assert_eq!((discs(&table, DARK), discs(&table, LIGHT)), (2.0, 2.0));
    assert_eq!(table.meta("dark"), Some(&DARK.into()));
    assert_eq!(table.meta("light"), Some(&LIGHT.into()));
}

#[test]
fn an_opening_move_turns_one_disc_hands_over_and_logs() {
    let mut table = new_match::<Reversi>(&[DARK, LIGHT], 1);
    let played = play::<Reversi>(&mut table, DARK, &click("d3"), 5);
    assert!(!played.rng_used);
    assert!(!played.allow_undo, "a placement ends the turn");
    assert_eq!(table.piece("d3", 0).public_kind, "dark");
    assert_eq!(table.piece("d4", 0).public_kind, "dark");
    assert_eq!(table.active_players(), &[LIGHT]);
    assert_eq!((discs(&table, DARK), discs(&table, LIGHT)), (4.0, 1.0));
    let log = &table.state().log;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].text, "player-7 places dark on d3 and turns over 1 disc");
    assert_eq!(offered_squares(&table, LIGHT), vec!["c3", "e3", "c5"]);
}

#[test]
fn a_placement_turns_lines_in_all_eight_directions_on_the_table() {
    let light = ["d5", "d3", "e4", "c4", "e5", "c5", "e3", "c3"];
    let dark = ["d6", "d2", "f4", "b4", "f6", "b6", "f2", "b2"];
    let mut table = table_with(&Board { dark: bits(&dark), light: bits(&light) }, DARK);
    play::<Reversi>(&mut table, DARK, &click("d4"), 0);
    for square in light.iter().chain(dark.iter()).chain(["d4"].iter()) {
        assert_eq!(table.piece(square, 0).public_kind, "dark", "{}", square);
    }
    assert_eq!(discs(&table, DARK), 17.0);
    assert_eq!(discs(&table, LIGHT), 0.0);
    assert!(table.state().log[0].text.ends_with("turns over 8 discs"));
}

#[test]
fn a_player_without_a_placement_passes_automatically() {
    // Dark c1 turns b1; light is left with b8 alone, which closes no line, so
    // light passes and dark, who can still take b8 via c8, goes again.
    let board = Board { dark: bits(&["a1", "a8"]), light: bits(&["b1", "b8"]) };
    let mut table = table_with(&board, DARK);
    play::<Reversi>(&mut table, DARK, &click("c1"), 0);
    assert_eq!(table.active_players(), &[DARK]);
    assert!(offered_squares(&table, LIGHT).is_empty());
    assert_eq!(offered_squares(&table, DARK), vec!["c8"]);
    assert_eq!(table.state().log[1].text, "player-9 has no legal placement and passes");
    let scores = Reversi::scores(&table);
    assert!(!Reversi::is_game_over(&table, &scores));
}

#[test]
fn the_game_ends_when_neither_can_place() {
    let board = Board { dark: bits(&["a1", "a8"]), light: bits(&["b1", "b8"]) };
    let mut table = table_with(&board, DARK);
    play::<Reversi>(&mut table, DARK, &click("c1"), 0);
    play::<Reversi>(&mut table, DARK, &click("c8"), 0);
    assert!(table.active_players().is_empty());
    let scores = Reversi::scores(&table);
    assert!(Reversi::is_game_over(&table, &scores));
    assert_eq!((discs(&table, DARK), discs(&table, LIGHT)), (6.0, 0.0));
    assert_eq!(
        table.state().log.last().unwrap().text,
        "Neither player can place: game over, dark 6 to light 0"
    );
}

#[test]
fn a_full_board_is_game_over_even_with_discs_of_both_colours() {
    let table = table_with(&Board { dark: !0u64 << 32, light: !0u64 >> 32 }, DARK);
    let scores = Reversi::scores(&table);
    assert!(Reversi::is_game_over(&table, &scores));
    assert_eq!((discs(&table, DARK), discs(&table, LIGHT)), (32.0, 32.0));
}

#[test]
#[should_panic(expected = "flips no disc")]
fn a_placement_that_turns_nothing_is_refused() {
    let mut table = new_match::<Reversi>(&[DARK, LIGHT], 1);
    play::<Reversi>(&mut table, DARK, &click("a1"), 0);
}

#[test]
#[should_panic(expected = "exactly two players")]
fn reversi_needs_two_players() {
    Reversi::config(&[1, 2, 3], &tablehost_sdk::Options::default());
}

#[test]
fn read_board_sees_what_config_built() {
    let table = new_match::<Reversi>(&[DARK, LIGHT], 1);
    assert_eq!(read_board(&table), Board::opening());
    assert_eq!(Board::opening().count(Colour::Dark), 2);
}

#[test]
fn option_parallel_opening_sets_the_discs_side_by_side() {
    let mut options = tablehost_sdk::Map::new();
    options.insert("opening".to_owned(), tablehost_sdk::json!("parallel"));
    let table = tablehost_sdk::new_match_with::<Reversi>(&[DARK, LIGHT], 1, &options);
    assert_eq!(read_board(&table), Board::parallel_opening());
    assert!(!Reversi::available_actions(&table, DARK).is_empty(), "dark can open from the parallel start");
}

#[test]
fn the_one_read_summary_agrees_with_scores_game_over_and_actions() {
    // Whole random games: every state from setup to the end (passes included).
    let mut ended = 0;
    for seed in 0..60 {
        let plies = tablehost_sdk::testing::assert_summary_agrees::<Reversi>(&[DARK, LIGHT], seed, 100);
        assert!(plies > 0);
        ended += 1;
    }
    assert_eq!(ended, 60);
    // A pass (light has nothing, dark goes again), the end, and an active player
    // without a placement (a state the host may send, e.g. a view).
    let board = Board { dark: bits(&["a1", "a8"]), light: bits(&["b1", "b8"]) };
    let mut table = table_with(&board, DARK);
    play::<Reversi>(&mut table, DARK, &click("c1"), 0);
    assert_eq!(Reversi::summary(&table), tablehost_sdk::summary_of_parts::<Reversi>(&table));
    play::<Reversi>(&mut table, DARK, &click("c8"), 0);
    let summary = Reversi::summary(&table);
    assert!(summary.game_over && summary.actions.is_empty());
    assert_eq!(summary, tablehost_sdk::summary_of_parts::<Reversi>(&table));
    let table = table_with(&Board { dark: bits(&["a1"]), light: bits(&["b1", "c1"]) }, LIGHT);
    assert_eq!(Reversi::summary(&table), tablehost_sdk::summary_of_parts::<Reversi>(&table));
    let both = {
        let mut state = table_with(&Board::opening(), DARK).into_state();
        state.active_player_ids = vec![LIGHT, DARK];
        Table::new(state)
    };
    let summary = Reversi::summary(&both);
    assert_eq!(summary.actions.iter().map(|(p, a)| (*p, a.len())).collect::<Vec<_>>(), vec![(LIGHT, 4), (DARK, 4)]);
    assert_eq!(summary, tablehost_sdk::summary_of_parts::<Reversi>(&both));
}
