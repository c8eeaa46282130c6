//! Tic-tac-toe for tablehost.
//!
//! Rules:
//! 1. Two players. The first seat plays X and moves first; the second plays O.
//! 2. On your turn, put your mark on an empty cell of the 3x3 board.
//! 3. Three of your marks in a row, column or diagonal win at once.
//! 4. A full board without a line is a draw.
//!
//! Option `misere` (default false): rule 3 reversed: the player who completes
//! a line of three loses at once.
//!
//! Table: nine ordered spaces of kind `cell`, `a1`..`c3` (column letter a-c
//! left to right, row number 1-3 top to bottom), each with public state
//! `{"column": 0-2, "row": 0-2}`; a mark is a piece of public kind `x` or `o`
//! owned by its player. `meta_data.marks` maps player id → mark; when the game
//! ends `meta_data.result` is `"win"` (with `meta_data.winner`) or `"draw"`.
//!
//! Scores (one column, "Points"): the winner 1 and the loser 0; 0.5 each for
//! a draw; 0 each while the game is on.

use tablehost_sdk::{
    json, Action, AvailableAction, Game, GameConfig, GameOption, LogEntry, Map, Metadata, Options, Piece, PlayerId,
    Rng, Score, Scores, Space, StartingPlayer, Table, Value,
};

mod display;

/// The option reversing rule 3: completing a line loses.
pub const MISERE: &str = "misere";

pub struct TicTacToe;

/// Cell ids by row, then column; static so the rules never format a string to look a cell up.
const CELL_IDS: [[&str; 3]; 3] = [["a1", "b1", "c1"], ["a2", "b2", "c2"], ["a3", "b3", "c3"]];

/// The eight lines of three cells that win.
const LINES: [[(usize, usize); 3]; 8] = [
    [(0, 0), (1, 0), (2, 0)],
    [(0, 1), (1, 1), (2, 1)],
    [(0, 2), (1, 2), (2, 2)],
    [(0, 0), (0, 1), (0, 2)],
    [(1, 0), (1, 1), (1, 2)],
    [(2, 0), (2, 1), (2, 2)],
    [(0, 0), (1, 1), (2, 2)],
    [(2, 0), (1, 1), (0, 2)],
];

/// The id of the cell at `column`, `row` (both 0-2): "a1" is top left.
pub fn cell_id(column: usize, row: usize) -> &'static str {
    CELL_IDS[row][column]
}

fn all_cells() -> impl Iterator<Item = &'static str> {
    CELL_IDS.iter().flat_map(|row| row.iter().copied())
}

/// Rule 1: the first seat plays `x`, the second `o`.
pub fn mark_of(table: &Table, player: PlayerId) -> &'static str {
    if table.seat_of(player) == 0 {
        "x"
    } else {
        "o"
    }
}

/// How logs and labels write a mark.
fn mark_name(mark: &str) -> &'static str {
    if mark == "x" {
        "X"
    } else {
        "O"
    }
}

/// The player whose mark is in `cell`, if any.
fn occupant(table: &Table, cell: &str) -> Option<PlayerId> {
    table.pieces(cell).first().and_then(|mark| mark.owner)
}

fn is_empty(table: &Table, cell: &str) -> bool {
    table.pieces(cell).is_empty()
}

/// Rule 3: the winner, if the game has one: the player holding a whole line,
/// or with option `misere` that player's opponent.
pub fn winner(table: &Table) -> Option<PlayerId> {
    let holder = line_holder(table)?;
    if table.options().0.get(MISERE).and_then(Value::as_bool) == Some(true) {
        Some(opponent(table, holder))
    } else {
        Some(holder)
    }
}

/// The player holding a whole line, if one does.
pub fn line_holder(table: &Table) -> Option<PlayerId> {
    LINES.iter().find_map(|line| {
        let first = occupant(table, cell_id(line[0].0, line[0].1))?;
        let holds_line = line.iter().all(|&(column, row)| occupant(table, cell_id(column, row)) == Some(first));
        if holds_line {
            Some(first)
        } else {
            None
        }
    })
}

/// Rule 4 precondition: no empty cell left.
pub fn board_full(table: &Table) -> bool {
    all_cells().all(|cell| !is_empty(table, cell))
}

fn opponent(table: &Table, player: PlayerId) -> PlayerId {
    let players = table.players();
    players[1 - table.seat_of(player)]
}

impl Game for TicTacToe {
    fn metadata() -> Metadata {
        Metadata::players(2, 2)
            .description("Three in a row on a 3x3 board; X moves first.")
            .option(GameOption::boolean(MISERE, false).describe("misère: whoever completes a line of three loses"))
    }

    fn config(players: &[PlayerId], _options: &Options) -> GameConfig {
        assert!(players.len() == 2, "tic-tac-toe needs exactly 2 players, got {}", players.len());
        let spaces = (0..3)
            .flat_map(|row| {
                (0..3).map(move |column| {
                    Space::new(cell_id(column, row), "cell").with_public("column", column).with_public("row", row)
                })
            })
            .collect();
        let mut marks = Map::new();
        marks.insert(players[0].to_string(), json!("x"));
        marks.insert(players[1].to_string(), json!("o"));
        let mut meta_data = Map::new();
        meta_data.insert("marks".to_string(), json!(marks));
        meta_data.insert("display".to_string(), display::hints(players));
        GameConfig {
            spaces,
            score_labels: vec!["Points".to_string()],
            meta_data,
            starting_player: StartingPlayer::Player(players[0]),
        }
    }

    /// Rule 2: the active player may mark any empty cell.
    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        let mark = mark_name(mark_of(table, player_id));
        all_cells()
            .filter(|cell| is_empty(table, cell))
            .map(|cell| {
                let label = format!("{} on {}", mark, cell);
                AvailableAction::confirm(Action::space_click(cell), label)
            })
            .collect()
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, _rng: &mut Rng) {
        let cell = match action {
            Action::SpaceClick { space_id } => space_id.as_str(),
            _ => panic!("tic-tac-toe only takes space clicks"),
        };
        assert!(is_empty(table, cell), "cell {} is already marked", cell);
        let mark = mark_of(table, player_id);
        table.add_piece(cell, Piece::new(mark).owned_by(player_id));
        let name = table.player(player_id).username.clone();
        table.log(LogEntry::new(format!("{} places {} on {}", name, mark_name(mark), cell)));

        if let Some(winner) = winner(table) {
            table.set_active_players(Vec::new());
            table.set_meta("result", "win");
            table.set_meta("winner", winner);
            let winner_name = table.player(winner).username.clone();
            table.log(LogEntry::new(format!("{} wins", winner_name)));
        } else if board_full(table) {
            table.set_active_players(Vec::new());
            table.set_meta("result", "draw");
            table.log(LogEntry::new("draw: the board is full"));
        } else {
            let next = opponent(table, player_id);
            table.set_active_players(vec![next]);
        }
    }

    fn scores(table: &Table) -> Scores {
        let won_by = winner(table);
        let draw = won_by.is_none() && board_full(table);
        table
            .players()
            .into_iter()
            .map(|player| {
                let points = match won_by {
                    Some(w) if w == player => 1.0,
                    Some(_) => 0.0,
                    None if draw => 0.5,
                    None => 0.0,
                };
                (player, Score::public(vec![points]))
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        winner(table).is_some() || board_full(table)
    }
}

tablehost_sdk::export_game!(TicTacToe);

#[cfg(test)]
mod tests;
