//! Display hints for the web table (docs/abi.md, "Display hints"): the nine
//! cells as a 3×3 board, X and O as marks. Static: nothing here is hidden.

use tablehost_sdk::{json, Map, PlayerId, Value};

use crate::cell_id;

/// `meta_data.display` for the seated `players`: the board's cells by row and
/// column, the marks' glyphs, and each seat's mark (rule 1: the first seat plays X).
pub fn hints(players: &[PlayerId]) -> Value {
    let mut spaces = Map::new();
    for row in 0..3 {
        for column in 0..3 {
            spaces.insert(cell_id(column, row).to_string(), json!({"board": "board", "row": row, "col": column}));
        }
    }
    json!({
        "title": "Tic-tac-toe",
        "boards": {"board": {"color": "#2c3338", "cell_px": 96}},
        "space_kinds": {"cell": {"color": "#f6f1e4"}},
        "spaces": spaces,
        "seat_kinds": {players[0].to_string(): "x", players[1].to_string(): "o"},
        "kinds": {
            "x": {"glyph": "✕", "text_color": "#c0392b", "shape": "token"},
            "o": {"glyph": "◯", "text_color": "#2471a3", "shape": "token"}
        }
    })
}
