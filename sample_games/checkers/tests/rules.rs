//! Checkers through the `Table`, the way the host drives it: selection and
//! cancel, mandatory capture, multi-jumps hop by hop, crowning, kings, the
//! no-move loss and the 80-ply draw.

use checkers::board::{parse_square, Board, Checker, Colour};
use checkers::rules::read_board;
use checkers::turn::QUIET_PLIES;
use checkers::Checkers;
use tablehost_sdk::{new_match, play, Action, AvailableAction, Button, Game, Intent, Piece, PlayerId, Table, Value};

const DARK: PlayerId = 11;
const LIGHT: PlayerId = 12;

const DARK_MAN: Checker = Checker { colour: Colour::Dark, king: false, captured: false };
const DARK_KING: Checker = Checker { colour: Colour::Dark, king: true, captured: false };
const LIGHT_MAN: Checker = Checker { colour: Colour::Light, king: false, captured: false };
const LIGHT_KING: Checker = Checker { colour: Colour::Light, king: true, captured: false };

/// A match with only `pieces` on the board, `active` to move, and
/// `quiet_plies` quiet plies behind it.
fn table_with(pieces: &[(&str, Checker)], active: PlayerId, quiet_plies: u64) -> Table {
    let mut state = new_match::<Checkers>(&[DARK, LIGHT], 1).into_state();
    for space in state.spaces.iter_mut() {
        space.pieces = pieces
            .iter()
            .filter(|(name, _)| *name == space.space_id)
            .map(|(_, checker)| Piece::new(checker.kind()))
            .collect();
    }
    state.active_player_ids = vec![active];
    state.meta_data.insert(QUIET_PLIES.to_owned(), Value::from(quiet_plies));
    Table::new(state)
}

fn select(square: &str) -> Action {
    Action::piece_click(square, 0)
}

fn to(square: &str) -> Action {
    Action::space_click(square)
}

fn cancel() -> Action {
    Action::button_click(Button::new("cancel", "Cancel"))
}

fn offered(table: &Table, player: PlayerId) -> Vec<(String, Intent)> {
    Checkers::available_actions(table, player)
        .into_iter()
        .map(|AvailableAction { action, intent, .. }| {
            let target = match action {
                Action::PieceClick { space_id, index: 0 } => format!("select {}", space_id),
                Action::SpaceClick { space_id } => format!("to {}", space_id),
                Action::ButtonClick { button } => format!("button {}", button.id),
                other => panic!("unexpected action {:?}", other),
            };
            (target, intent)
        })
        .collect()
}

fn pairs(items: &[(&str, Intent)]) -> Vec<(String, Intent)> {
    items.iter().map(|(text, intent)| (text.to_string(), *intent)).collect()
}

fn kind_at(table: &Table, square: &str) -> Option<String> {
    table.pieces(square).first().map(|piece| piece.public_kind.clone())
}

fn result(table: &Table) -> (f64, f64, bool) {
    let scores = Checkers::scores(table);
    let over = Checkers::is_game_over(table, &scores);
    (scores[&DARK].public_points[0], scores[&LIGHT].public_points[0], over)
}

#[test]
fn the_opening_offers_the_four_movable_dark_men() {
    let table = new_match::<Checkers>(&[DARK, LIGHT], 1);
    assert_eq!(table.active_players(), &[DARK]);
    assert_eq!(
        offered(&table, DARK),
        pairs(&[
            ("select a3", Intent::Choice),
            ("select c3", Intent::Choice),
            ("select e3", Intent::Choice),
            ("select g3", Intent::Choice),
        ])
    );
    assert!(offered(&table, LIGHT).is_empty());
    assert_eq!(read_board(&table), Board::opening());
    assert_eq!(result(&table), (0.0, 0.0, false));
}

#[test]
fn selecting_offers_destinations_and_cancel_and_both_are_undoable() {
    let mut table = new_match::<Checkers>(&[DARK, LIGHT], 1);
    let selected = play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    assert!(selected.allow_undo);
    assert_eq!(
        offered(&table, DARK),
        pairs(&[("to b4", Intent::Confirm), ("to d4", Intent::Confirm), ("button cancel", Intent::Cancel)])
    );
    let cancelled = play::<Checkers>(&mut table, DARK, &cancel(), 0);
    assert!(cancelled.allow_undo);
    assert_eq!(table.meta("selected"), None);
    assert_eq!(offered(&table, DARK).len(), 4);
}

#[test]
fn a_plain_move_ends_the_turn_and_is_logged() {
    let mut table = new_match::<Checkers>(&[DARK, LIGHT], 1);
    play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    let moved = play::<Checkers>(&mut table, DARK, &to("d4"), 0);
    assert!(!moved.allow_undo, "the move that ends the turn cannot be taken back");
    assert_eq!(kind_at(&table, "c3"), None);
    assert_eq!(kind_at(&table, "d4").as_deref(), Some("dark-man"));
    assert_eq!(table.active_players(), &[LIGHT]);
    assert_eq!(table.meta("selected"), None);
    assert_eq!(table.state().log.last().unwrap().text, "player-11 plays c3-d4");
}

#[test]
fn capture_is_mandatory() {
    // a1 could move, but c3 can jump d4: only c3 is selectable, only the jump offered.
    let mut table = table_with(&[("a1", DARK_MAN), ("c3", DARK_MAN), ("d4", LIGHT_MAN), ("h8", LIGHT_MAN)], DARK, 0);
    assert_eq!(offered(&table, DARK), pairs(&[("select c3", Intent::Choice)]));
    play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    assert_eq!(offered(&table, DARK), pairs(&[("to e5", Intent::Confirm), ("button cancel", Intent::Cancel)]));
    play::<Checkers>(&mut table, DARK, &to("e5"), 0);
    assert_eq!(kind_at(&table, "d4"), None, "the captured man leaves when the move ends");
    assert_eq!(table.active_players(), &[LIGHT]);
    assert_eq!(table.state().log.last().unwrap().text, "player-11 plays c3xe5");
}

#[test]
fn a_multi_jump_continues_hop_by_hop_with_the_same_piece() {
    let mut table = table_with(&[("a1", DARK_MAN), ("b2", LIGHT_MAN), ("d4", LIGHT_MAN), ("h8", LIGHT_MAN)], DARK, 0);
    play::<Checkers>(&mut table, DARK, &select("a1"), 0);
    assert_eq!(
        offered(&table, DARK),
        pairs(&[("to c3", Intent::Choice), ("button cancel", Intent::Cancel)]),
        "a hop the piece must continue from is a choice"
    );
    let hop = play::<Checkers>(&mut table, DARK, &to("c3"), 0);
    assert!(hop.allow_undo, "a hop inside the chain is a step of the turn");
    assert_eq!(table.active_players(), &[DARK], "the jumper stays active");
    assert!(offered(&table, LIGHT).is_empty());
    assert_eq!(table.meta("selected"), Some(&Value::from("c3")));
    assert_eq!(table.meta("chain"), Some(&Value::Bool(true)));
    assert_eq!(table.piece("b2", 0).public("captured"), Some(&Value::Bool(true)), "jumped pieces wait");
    assert_eq!(offered(&table, DARK), pairs(&[("to e5", Intent::Confirm)]), "no cancel mid-chain");

    play::<Checkers>(&mut table, DARK, &to("e5"), 0);
    assert_eq!(kind_at(&table, "b2"), None);
    assert_eq!(kind_at(&table, "d4"), None);
    assert_eq!(kind_at(&table, "e5").as_deref(), Some("dark-man"));
    assert_eq!(table.meta("chain"), None);
    assert_eq!(table.active_players(), &[LIGHT]);
}

#[test]
fn crowning_ends_the_move_even_if_the_new_king_could_jump_on() {
    let mut table = table_with(&[("d6", DARK_MAN), ("e7", LIGHT_MAN), ("g7", LIGHT_MAN), ("a7", LIGHT_MAN)], DARK, 0);
    play::<Checkers>(&mut table, DARK, &select("d6"), 0);
    assert_eq!(offered(&table, DARK)[0], ("to f8".to_owned(), Intent::Confirm));
    play::<Checkers>(&mut table, DARK, &to("f8"), 0);
    assert_eq!(kind_at(&table, "f8").as_deref(), Some("dark-king"));
    assert_eq!(kind_at(&table, "e7"), None);
    assert_eq!(kind_at(&table, "g7").as_deref(), Some("light-man"), "not jumped");
    assert_eq!(table.active_players(), &[LIGHT]);
    assert_eq!(table.state().log.last().unwrap().text, "player-11's man on f8 is crowned");
}

#[test]
fn kings_move_backwards() {
    let mut table = table_with(&[("d4", DARK_KING), ("h8", LIGHT_MAN)], DARK, 0);
    play::<Checkers>(&mut table, DARK, &select("d4"), 0);
    let destinations: Vec<String> = offered(&table, DARK).into_iter().map(|(target, _)| target).collect();
    assert_eq!(destinations, vec!["to c5", "to e5", "to c3", "to e3", "button cancel"]);
    play::<Checkers>(&mut table, DARK, &to("c3"), 0);
    assert_eq!(kind_at(&table, "c3").as_deref(), Some("dark-king"));
}

#[test]
fn a_player_left_without_a_move_loses() {
    // The light man on b2 faces dark men on a1 and c1 with a3 and c3 covered.
    let mut table = table_with(
        &[("a1", DARK_MAN), ("c1", DARK_MAN), ("a3", DARK_MAN), ("c3", DARK_MAN), ("b2", LIGHT_MAN)],
        DARK,
        0,
    );
    play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    play::<Checkers>(&mut table, DARK, &to("d4"), 0);
    assert!(table.active_players().is_empty());
    assert_eq!(table.meta("winner"), Some(&Value::from(DARK)));
    assert_eq!(result(&table), (1.0, 0.0, true));
    assert_eq!(table.state().log.last().unwrap().text, "player-12 cannot move: player-11 wins");
}

#[test]
fn capturing_the_last_piece_wins() {
    let mut table = table_with(&[("c3", DARK_MAN), ("d4", LIGHT_MAN)], DARK, 0);
    play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    play::<Checkers>(&mut table, DARK, &to("e5"), 0);
    assert_eq!(result(&table), (1.0, 0.0, true));
}

#[test]
fn eighty_quiet_plies_draw() {
    let mut table = table_with(&[("a1", DARK_KING), ("h8", LIGHT_KING)], DARK, 79);
    play::<Checkers>(&mut table, DARK, &select("a1"), 0);
    play::<Checkers>(&mut table, DARK, &to("b2"), 0);
    assert_eq!(table.meta(QUIET_PLIES), Some(&Value::from(80)));
    assert!(table.active_players().is_empty());
    assert_eq!(result(&table), (0.5, 0.5, true));
}

#[test]
fn a_quiet_king_move_counts_towards_the_draw() {
    let mut table = table_with(&[("a1", DARK_KING), ("h8", LIGHT_KING)], DARK, 10);
    play::<Checkers>(&mut table, DARK, &select("a1"), 0);
    play::<Checkers>(&mut table, DARK, &to("b2"), 0);
    assert_eq!(table.meta(QUIET_PLIES), Some(&Value::from(11)));
    assert_eq!(result(&table), (0.0, 0.0, false));
}

#[test]
fn a_man_moving_resets_the_quiet_count() {
    let mut table = table_with(&[("a1", DARK_MAN), ("h8", LIGHT_KING)], DARK, 79);
    play::<Checkers>(&mut table, DARK, &select("a1"), 0);
    play::<Checkers>(&mut table, DARK, &to("b2"), 0);
    assert_eq!(table.meta(QUIET_PLIES), Some(&Value::from(0)));
    assert_eq!(table.active_players(), &[LIGHT]);
}

#[test]
fn a_capture_by_a_king_resets_the_quiet_count() {
    let mut table = table_with(&[("c3", DARK_KING), ("d4", LIGHT_KING), ("h8", LIGHT_KING)], DARK, 79);
    play::<Checkers>(&mut table, DARK, &select("c3"), 0);
    play::<Checkers>(&mut table, DARK, &to("e5"), 0);
    assert_eq!(table.meta(QUIET_PLIES), Some(&Value::from(0)));
    assert_eq!(result(&table), (0.0, 0.0, false));
}

#[test]
fn light_squares_are_not_spaces() {
    let table = new_match::<Checkers>(&[DARK, LIGHT], 1);
    assert_eq!(table.state().spaces.len(), 32);
    assert!(table.state().spaces.iter().all(|space| parse_square(&space.space_id).is_some()));
}

#[test]
fn option_draw_plies_moves_the_draw() {
    let mut table = table_with(&[("a1", DARK_KING), ("h8", LIGHT_KING)], DARK, 29);
    let mut options = tablehost_sdk::Map::new();
    options.insert(checkers::turn::DRAW_PLIES.to_owned(), Value::from(30));
    table.set_meta(tablehost_sdk::OPTIONS_META_KEY, Value::Object(options));
    table.take_patches();
    play::<Checkers>(&mut table, DARK, &select("a1"), 0);
    play::<Checkers>(&mut table, DARK, &to("b2"), 0);
    assert_eq!(table.meta(QUIET_PLIES), Some(&Value::from(30)));
    assert_eq!(result(&table), (0.5, 0.5, true), "30 quiet plies draw under draw_plies = 30");
}
