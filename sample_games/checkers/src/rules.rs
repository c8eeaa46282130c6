//! The rules of a turn, read from and written to the `Table`.
//!
//! A call reads the table once into a [`Board`] (one pass over the 32 square
//! spaces) and a [`Turn`] (three `meta_data` keys), and answers from those.

use tablehost_sdk::{
    Action, AvailableAction, Button, GameConfig, LogEntry, Map, Piece, PlayerId, Score, Scores,
    Space, StartingPlayer, Table, Value,
};

use crate::board::{dark_squares, parse_square, square_name, Board, Checker, Colour, Square, Step};
use crate::turn::{self, quiet_plies_for_draw, Outcome, Turn};

/// The kind of every square space.
pub const SQUARE_KIND: &str = "square";
/// The piece public-state key marking a piece jumped in the chain in progress.
pub const CAPTURED: &str = "captured";
/// The id of the button that drops the current selection.
pub const CANCEL: &str = "cancel";

/// Set-up rule: the 32 dark squares as spaces `a1`, `c1`, ..., `h8`, twelve
/// men a side; the first seat plays dark and moves first.
///
/// `players`: the two seated player ids in seat order.
/// Panics unless exactly two players are seated.
pub fn starting_table(players: &[PlayerId]) -> GameConfig {
    assert_eq!(players.len(), 2, "checkers is played by exactly two players, got {}", players.len());
    let opening = Board::opening();
    let spaces = dark_squares()
        .map(|square| {
            let space = Space::new(square_name(square), SQUARE_KIND);
            match opening.at(square) {
                Some(checker) => space.with_piece(Piece::new(checker.kind())),
                None => space,
            }
        })
        .collect();
    let mut meta_data = Map::new();
    meta_data.insert("dark".to_owned(), Value::from(players[0]));
    meta_data.insert("light".to_owned(), Value::from(players[1]));
    meta_data.insert(turn::QUIET_PLIES.to_owned(), Value::from(0));
    meta_data.insert("display".to_owned(), crate::display::hints(players));
    GameConfig {
        spaces,
        score_labels: vec!["Result".to_owned()],
        meta_data,
        starting_player: StartingPlayer::Player(players[0]),
    }
}

/// The board as the table shows it: a square's first piece (if any) is its
/// checker; `public_state.captured == true` marks one jumped mid-chain.
pub fn read_board(table: &Table) -> Board {
    let mut board = Board::default();
    for space in &table.state().spaces {
        if space.kind != SQUARE_KIND {
            continue;
        }
        let piece = match space.pieces.first() {
            Some(piece) => piece,
            None => continue,
        };
        if let (Some(square), Some(mut checker)) = (parse_square(&space.space_id), Checker::from_kind(&piece.public_kind)) {
            checker.captured = piece.public(CAPTURED).and_then(Value::as_bool) == Some(true);
            board.cells[square as usize] = Some(checker);
        }
    }
    board
}

/// Seating rule: the first seat plays dark, the second light.
pub fn colour_of(table: &Table, player: PlayerId) -> Colour {
    if table.seat_of(player) == 0 {
        Colour::Dark
    } else {
        Colour::Light
    }
}

/// The player who plays `colour`.
pub fn player_of(table: &Table, colour: Colour) -> PlayerId {
    let seat = match colour {
        Colour::Dark => 0,
        Colour::Light => 1,
    };
    table.state().players[seat].player_id
}

/// What the active player may do, in two clicks per hop:
///
/// * nothing selected: a `piece_click` (choice) on every piece with a legal
///   step (only pieces that can jump, when any can: capture is mandatory);
/// * a piece selected: a `space_click` on each square it may step to, a
///   `confirm` when that ends the move and a `choice` when the piece must jump
///   on; plus a "Cancel" button (cancel) unless a multi-jump is under way.
///
/// Nobody else may do anything.
pub fn legal_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    if !table.is_active(player) {
        return Vec::new();
    }
    let board = read_board(table);
    let turn = Turn::read(table);
    let steps = board.legal_steps(colour_of(table, player), turn.chain_square());
    match turn.selected {
        None => selectable_pieces(&steps),
        Some(selected) => {
            let mut actions: Vec<AvailableAction> = steps
                .iter()
                .filter(|step| step.from == selected)
                .map(|&step| destination_action(&board, step))
                .collect();
            if !turn.chain {
                actions.push(AvailableAction::cancel(Action::button_click(cancel_button()), "cancel"));
            }
            actions
        }
    }
}

/// One `piece_click` per distinct piece that has a legal step.
fn selectable_pieces(steps: &[Step]) -> Vec<AvailableAction> {
    let mut actions: Vec<AvailableAction> = Vec::new();
    let mut last_from = None;
    // legal_steps lists the steps of one piece together, so adjacent dedup suffices.
    for step in steps {
        if last_from != Some(step.from) {
            let name = square_name(step.from);
            actions.push(AvailableAction::choice(Action::piece_click(name, 0), format!("select {}", name)));
            last_from = Some(step.from);
        }
    }
    actions
}

/// The click on `step`'s destination: a choice when the piece must jump on, else a confirm.
fn destination_action(board: &Board, step: Step) -> AvailableAction {
    let click = Action::space_click(square_name(step.to));
    if board.chain_continues(step) {
        AvailableAction::choice(click, step.notation())
    } else {
        AvailableAction::confirm(click, step.notation())
    }
}

fn cancel_button() -> Button {
    Button::new(CANCEL, "Cancel")
}

/// Carries out one offered action: select a piece, drop the selection, or
/// step the selected piece.
///
/// Panics on an action that was not offered (the host never forwards one).
pub fn apply(table: &mut Table, player: PlayerId, action: &Action) {
    match action {
        Action::PieceClick { space_id, .. } => select_piece(table, square_named(space_id)),
        Action::ButtonClick { button } if button.id == CANCEL => cancel_selection(table),
        Action::SpaceClick { space_id } => step_selected_piece(table, player, square_named(space_id)),
        other => panic!("checkers does not take {:?}", other),
    }
}

fn square_named(space_id: &str) -> Square {
    match parse_square(space_id) {
        Some(square) => square,
        None => panic!("{:?} is not a playable square", space_id),
    }
}

/// Selecting a piece is a step of the decision, so it may be taken back.
fn select_piece(table: &mut Table, square: Square) {
    turn::write_selection(table, Some(square));
    table.allow_undo();
}

/// Cancelling returns to before the selection; also undoable.
fn cancel_selection(table: &mut Table) {
    turn::write_selection(table, None);
    table.allow_undo();
}

/// Moves the selected piece to `to`: a plain move or one hop of a jump. A
/// jumped piece is marked captured and stays until the move ends. A man
/// reaching the far row is crowned, which ends the move. After a jump with
/// another jump open the same player continues with the same piece.
fn step_selected_piece(table: &mut Table, player: PlayerId, to: Square) {
    let board = read_board(table);
    let turn = Turn::read(table);
    let colour = colour_of(table, player);
    let from = turn.selected.expect("a step needs a selected piece");
    let step = board
        .legal_steps(colour, turn.chain_square())
        .into_iter()
        .find(|step| step.from == from && step.to == to)
        .unwrap_or_else(|| panic!("{} to {} is not a legal step", square_name(from), square_name(to)));
    let man_moved = !board.at(from).map_or(false, |checker| checker.king);
    let (after, crowned) = board.after_step(step);

    table.move_piece(square_name(step.from), 0, square_name(step.to));
    if let Some(over) = step.captures {
        table.set_piece_public_state(square_name(over), 0, CAPTURED, true);
    }
    let name = display_name(table, player);
    table.log(LogEntry::new(format!("{} plays {}", name, step.notation())));
    if crowned {
        table.set_public_kind(square_name(step.to), 0, Checker::king(colour).kind());
        table.log(LogEntry::new(format!("{}'s man on {} is crowned", name, square_name(step.to))));
    }

    if board.chain_continues(step) {
        turn::write_selection(table, Some(step.to));
        turn::write_chain(table, true);
        table.allow_undo();
    } else {
        end_move(table, &after, colour, turn.quiet_plies, man_moved);
    }
}

/// End of a move: captured pieces leave the board, the selection is cleared,
/// the quiet-ply count advances or resets, and the turn passes, unless the
/// game is over:
///
/// * No-move rule: the opponent, with no legal step, loses.
/// * Draw rule: after 80 (option `draw_plies`) consecutive plies with no capture and no man moving
///   the game is drawn. The no-move rule is checked first: the ply that
///   blocks the opponent wins even if it is the 80th quiet one.
fn end_move(table: &mut Table, after: &Board, mover: Colour, quiet_plies: u64, man_moved: bool) {
    let captured_any = after.captured_squares().next().is_some();
    for square in after.captured_squares() {
        table.remove_piece(square_name(square), 0);
    }
    turn::write_selection(table, None);
    turn::write_chain(table, false);
    let quiet_plies = if captured_any || man_moved { 0 } else { quiet_plies + 1 };
    turn::write_quiet_plies(table, quiet_plies);

    let board = after.without_captured();
    let next = mover.opponent();
    if !board.has_legal_step(next) {
        finish(table, Outcome::Win(player_of(table, mover)));
    } else if quiet_plies >= quiet_plies_for_draw(table) {
        finish(table, Outcome::Draw);
    } else {
        table.set_active_players(vec![player_of(table, next)]);
    }
}

/// Records the outcome, logs it, and leaves nobody active.
fn finish(table: &mut Table, outcome: Outcome) {
    let line = match outcome {
        Outcome::Win(winner) => {
            let loser = player_of(table, colour_of(table, winner).opponent());
            format!("{} cannot move: {} wins", display_name(table, loser), display_name(table, winner))
        }
        Outcome::Draw => format!(
            "{} plies without a capture or a man moving: the game is drawn",
            quiet_plies_for_draw(table)
        ),
    };
    turn::write_outcome(table, outcome);
    table.set_active_players(Vec::new());
    table.log(LogEntry::new(line));
}

/// Scoring rule: 1 for the winner and 0 for the loser, 0.5 each on a draw,
/// 0 each while the game is on.
pub fn result_points(table: &Table) -> Scores {
    let outcome = turn::read_outcome(table);
    table
        .players()
        .into_iter()
        .map(|player| {
            let points = match outcome {
                Some(Outcome::Win(winner)) if winner == player => 1.0,
                Some(Outcome::Draw) => 0.5,
                _ => 0.0,
            };
            (player, Score::public(vec![points]))
        })
        .collect()
}

/// The game is over once a result is recorded.
pub fn has_result(table: &Table) -> bool {
    turn::read_outcome(table).is_some()
}

/// How the log names a player: their username, else `player <id>`.
fn display_name(table: &Table, player: PlayerId) -> String {
    let username = &table.player(player).username;
    if username.is_empty() {
        format!("player {}", player)
    } else {
        username.clone()
    }
}
