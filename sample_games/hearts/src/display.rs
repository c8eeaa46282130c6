//! Display hints for the web table (docs/abi.md, "Display hints"): cards as
//! cards (rank and suit symbol, hearts and diamonds red), hands fanned, taken
//! tricks stacked by their taker's seat, the trick in the middle. A card face
//! is drawn by a rule on its name (rank, then suit letter), so no list of
//! faces is needed: the hints are the same for every deal and tell nothing.

use tablehost_sdk::{json, Map, PlayerId, Value};

use crate::layout::taken_by;

/// `meta_data.display` for the seated `players`.
pub fn hints(players: &[PlayerId]) -> Value {
    let mut spaces = Map::new();
    for &player in players {
        spaces.insert(taken_by(player), json!({"seat": player}));
    }
    json!({
        "title": "Hearts",
        "space_kinds": {
            "deck": {"layout": "stack", "label": "Deck"},
            "hand": {"layout": "fan", "label": "Hand"},
            "pass": {"layout": "row", "label": "To pass"},
            "taken": {"layout": "stack", "label": "Taken"},
            "trick": {"layout": "row", "label": "Trick", "area": "center"}
        },
        "spaces": spaces,
        "kinds": {"back": {"glyph": "", "color": "#1f4e8c", "shape": "card"}},
        "kind_rules": [{
            "suffixes": {
                "H": {"glyph": "♥", "text_color": "#c0392b"},
                "D": {"glyph": "♦", "text_color": "#c0392b"},
                "S": {"glyph": "♠", "text_color": "#1d2327"},
                "C": {"glyph": "♣", "text_color": "#1d2327"}
            },
            "shape": "card"
        }]
    })
}
