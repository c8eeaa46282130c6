//! Display hints for the web table (docs/abi.md, "Display hints"): an 8×8
//! green board (row 1 at the top, as Othello boards are labelled), black and
//! white discs. Static: nothing here is hidden.

use tablehost_sdk::{json, Map, PlayerId, Value};

use crate::board::square_name;

/// `meta_data.display` for the two seated `players` (the first plays dark): every square by row and column, the discs' colours.
pub fn hints(players: &[PlayerId]) -> Value {
    let mut spaces = Map::new();
    for square in 0..64u8 {
        spaces.insert(square_name(square).to_string(), board_place(square / 8, square % 8));
    }
    // `spaces` is moved in afterwards: as a `json!` value it would be serialised into a copy,
    // which cost most of a setup's wasm instructions.
    let mut hints = json!({
        "title": "Reversi",
        "boards": {"board": {"color": "#123d27"}},
        "space_kinds": {"square": {"color": "#2e8b57"}},
        "seat_kinds": {players[0].to_string(): "dark", players[1].to_string(): "light"},
        "kinds": {
            "dark": {"glyph": "", "color": "#1c1c1c", "shape": "disc"},
            "light": {"glyph": "", "color": "#f4f4f4", "shape": "disc"}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_every_square_by_row_and_column() {
        let hints = hints(&[3, 4]);
        let spaces = hints["spaces"].as_object().expect("spaces is an object");
        assert_eq!(spaces.len(), 64);
        for square in 0..64u8 {
            let expected = json!({"board": "board", "row": square / 8, "col": square % 8});
            assert_eq!(spaces[square_name(square)], expected, "{}", square_name(square));
        }
        assert_eq!(hints["seat_kinds"], json!({"3": "dark", "4": "light"}));
        assert_eq!(hints["title"], "Reversi");
    }
}
