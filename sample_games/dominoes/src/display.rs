//! Display hints for the web table (docs/abi.md, "Display hints"): tiles as
//! tiles (a face-down back, or the two ends' pips), the boneyard as a stack,
//! the line of play in the middle. A face ("6-4") is drawn by a rule on its
//! name, so no list of faces is needed: the hints tell nothing about a deal.

use tablehost_sdk::{json, Value};

/// The glyph of a tile on the line showing `left` then `right`.
pub fn glyph(left: u8, right: u8) -> String {
    format!("{}│{}", left, right)
}

/// `meta_data.display`: the spaces' layouts and the tiles' looks.
pub fn hints() -> Value {
    json!({
        "title": "Dominoes",
        "space_kinds": {
            "boneyard": {"layout": "stack", "label": "Boneyard"},
            "hand": {"layout": "row", "label": "Hand"},
            "line": {"layout": "line", "label": "Line of play", "area": "center"}
        },
        "kinds": {"back": {"glyph": "", "color": "#2c3e50", "shape": "tile"}},
        "kind_rules": [{"separator": "-", "joiner": "│", "shape": "tile"}]
    })
}
