//! The turn in progress and the match result, as kept in `meta_data`.
//!
//! Keys (all public, every viewer receives them):
//!
//! | key | value | meaning |
//! | --- | --- | --- |
//! | `dark`, `light` | player id | who plays which side (fixed at set-up) |
//! | `selected` | square id or absent | the piece the active player picked |
//! | `chain` | `true` or absent | the selected piece is mid multi-jump and must jump on |
//! | `quiet_plies` | integer ≥ 0 | completed moves in a row without a capture or a man moving |
//! | `winner` | player id or absent | set when the game ends with a win |
//! | `draw` | `true` or absent | set when the game ends drawn |

use tablehost_sdk::{PlayerId, Table, Value};

use crate::board::{parse_square, square_name, Square};

pub const SELECTED: &str = "selected";
pub const CHAIN: &str = "chain";
pub const QUIET_PLIES: &str = "quiet_plies";
pub const WINNER: &str = "winner";
pub const DRAW: &str = "draw";

/// Draw rule: this many consecutive quiet plies (no capture, no man moving) draw the game
/// (the default of option [`DRAW_PLIES`]).
pub const QUIET_PLIES_FOR_DRAW: u64 = 80;
/// The option setting the draw rule's count of quiet plies (20 to 400).
pub const DRAW_PLIES: &str = "draw_plies";

/// The draw rule's count for this match: option `draw_plies`, else 80.
pub fn quiet_plies_for_draw(table: &Table) -> u64 {
    table.options().0.get(DRAW_PLIES).and_then(Value::as_u64).unwrap_or(QUIET_PLIES_FOR_DRAW)
}

/// How the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win(PlayerId),
    Draw,
}

/// The part of the state that is not the board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Turn {
    /// The piece the active player selected, if any.
    pub selected: Option<Square>,
    /// Whether `selected` is in the middle of a multi-jump.
    pub chain: bool,
    /// Consecutive completed plies without a capture or a man moving.
    pub quiet_plies: u64,
}

impl Turn {
    /// The turn as `meta_data` records it (missing keys read as their defaults).
    pub fn read(table: &Table) -> Turn {
        let selected = table.meta(SELECTED).and_then(Value::as_str).and_then(parse_square);
        Turn {
            selected,
            chain: selected.is_some() && table.meta(CHAIN).and_then(Value::as_bool).unwrap_or(false),
            quiet_plies: table.meta(QUIET_PLIES).and_then(Value::as_u64).unwrap_or(0),
        }
    }

    /// The square whose piece must jump on, when a chain is in progress.
    pub fn chain_square(&self) -> Option<Square> {
        if self.chain {
            self.selected
        } else {
            None
        }
    }
}

/// Records `square` as the selected piece (or clears the selection).
pub fn write_selection(table: &mut Table, square: Option<Square>) {
    let value = match square {
        Some(square) => Value::from(square_name(square)),
        None => Value::Null,
    };
    set_if_changed(table, SELECTED, value);
}

/// Records whether a multi-jump is in progress.
pub fn write_chain(table: &mut Table, chain: bool) {
    set_if_changed(table, CHAIN, if chain { Value::Bool(true) } else { Value::Null });
}

/// Records the quiet-ply count.
pub fn write_quiet_plies(table: &mut Table, plies: u64) {
    set_if_changed(table, QUIET_PLIES, Value::from(plies));
}

/// Records the result of the game.
pub fn write_outcome(table: &mut Table, outcome: Outcome) {
    match outcome {
        Outcome::Win(player) => table.set_meta(WINNER, player),
        Outcome::Draw => table.set_meta(DRAW, true),
    }
}

/// The result, once the game has ended.
pub fn read_outcome(table: &Table) -> Option<Outcome> {
    if let Some(winner) = table.meta(WINNER).and_then(Value::as_u64) {
        return Some(Outcome::Win(winner as PlayerId));
    }
    if table.meta(DRAW).and_then(Value::as_bool) == Some(true) {
        return Some(Outcome::Draw);
    }
    None
}

/// Sets meta key `key` only when it changes, so no move records a no-op patch
/// (a null value removes the key).
fn set_if_changed(table: &mut Table, key: &str, value: Value) {
    let current = table.meta(key).unwrap_or(&Value::Null);
    if *current != value {
        table.set_meta(key, value);
    }
}
