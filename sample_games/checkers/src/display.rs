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
        spaces.insert(square_name(square).to_string(), json!({"board": "board", "row": row, "col": square % 8}));
    }
    json!({
        "title": "Checkers",
        "boards": {"board": {"color": "#f0d9b5"}},
        "space_kinds": {"square": {"color": "#9c6b43"}},
        "spaces": spaces,
        "seat_kinds": {players[0].to_string(): "dark-man", players[1].to_string(): "light-man"},
        "kinds": {
            "dark-man": {"glyph": "", "color": "#262626", "shape": "disc"},
            "dark-king": {"glyph": "♛", "color": "#262626", "text_color": "#f5d76e", "shape": "disc"},
            "light-man": {"glyph": "", "color": "#c0392b", "shape": "disc"},
            "light-king": {"glyph": "♛", "color": "#c0392b", "text_color": "#f5d76e", "shape": "disc"}
        }
    })
}
