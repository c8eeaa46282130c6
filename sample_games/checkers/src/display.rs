//! Display hints for the web table (docs/abi.md, "Display hints"): the 32
//! dark squares on an 8×8 board, rank 8 at the top so dark (the first seat)
//! plays up the board; men as discs, kings crowned. Static: nothing is hidden.

use tablehost_sdk::{json, Map, PlayerId, Value};

use crate::board::{dark_squares, rank_of, square_name};

/// `meta_data.display` for the two seated `players` (the first plays dark): every dark square by row and column, the checkers' looks.
pub fn hints(players: &[PlayerId]) -> Value {
    let mut spaces = Map::new();
    for square in dark_squares() {
        let row = 7 - rank_of(square);
        spaces.insert(square_name(square).to_string(), board_place(row, square % 8));
    }
    // `spaces` is moved in afterwards: as a `json!` value it would be serialised into a copy,
    // which cost most of a setup's wasm instructions.
    let mut hints = json!({
        "title": "Checkers",
        "boards": {"board": {"color": "#f0d9b5"}},
        "space_kinds": {"square": {"color": "#9c6b43"}},
        "seat_kinds": {players[0].to_string(): "dark-man", players[1].to_string(): "light-man"},
        "kinds": {
            "dark-man": {"glyph": "", "color": "#262626", "shape": "disc"},
            "dark-king": {"glyph": "♛", "color": "#262626", "text_color": "#f5d76e", "shape": "disc"},
            "light-man": {"glyph": "", "color": "#c0392b", "shape": "disc"},
            "light-king": {"glyph": "♛", "color": "#c0392b", "text_color": "#f5d76e", "shape": "disc"}
        }
    });
    hints["spaces"] = Value::Object(spaces);
    hints
}

/// `{"board": "board", "row": row, "col": col}`: where a square space sits on the board.
fn board_place(row: u8, col: u8) -> Value {
    let mut place = Map::new();
    place.insert("board".to_owned(), Value::from("board"));
    place.insert("row".to_owned(), Value::from(row));
    place.insert("col".to_owned(), Value::from(col));
    Value::Object(place)
}
