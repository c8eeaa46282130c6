//! Display hints for the web table (docs/abi.md, "Display hints"): the board
//! as white (seat 1) sees it, two rows of twelve points with the bar between
//! the halves and the borne-off trays on the right. Top row, left to right:
//! points 13..18, bar, 19..24, black's tray; bottom row: 12..7, bar, 6..1,
//! white's tray (white's home board bottom right, black's top right). Black
//! sees the rows the other way up (`seat_flips`), so its own home board is at
//! its bottom right, as a player sits at a real board; spectators see white's side.
//! Checkers are discs stacked along their point; the dice, the dice left to
//! play and the cube are facts from meta data. Static: nothing is hidden.
//! The hints are data (`display.json`, parsed once per setup): a JSON value
//! built in code would cost several KiB of the module per hint.

use tablehost_sdk::{json, PlayerId, Value};

use crate::layout::point_space;

/// The hints that do not depend on who is seated.
const HINTS: &str = include_str!("display.json");

/// `meta_data.display` for the two seated `players` (the first plays white): who plays which
/// colour, and each point numbered as each side counts it (the rules' labels and the log say
/// "from 6" in the mover's own numbers: white's 6 is black's 19).
pub fn hints(players: &[PlayerId]) -> Value {
    let mut hints: Value = tablehost_sdk::serde_json::from_slice(HINTS.as_bytes()).expect("display.json is JSON");
    hints["seat_kinds"] = json!({players[0].to_string(): "white", players[1].to_string(): "black"});
    hints["boards"]["board"]["seat_flips"] = json!({players[1].to_string(): "rows"});
    for point in 1..=24 {
        let labels = json!({players[0].to_string(): point.to_string(), players[1].to_string(): (25 - point).to_string()});
        hints["spaces"][point_space(point)]["seat_labels"] = labels;
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_has_a_cell_of_its_own_in_two_rows_of_twelve_with_the_bar_between() {
        let hints = hints(&[1, 2]);
        let mut seen = std::collections::BTreeSet::new();
        for point in 1..=24 {
            let cell = &hints["spaces"][point_space(point)];
            let (row, col) = (cell["row"].as_u64().unwrap(), cell["col"].as_u64().unwrap());
            assert_eq!(row, if point >= 13 { 0 } else { 1 });
            assert!(col != 6 && col < 13, "point {} is off the points' columns", point);
            assert!(seen.insert((row, col)), "point {} shares a cell", point);
        }
        let at = |space: &str| (hints["spaces"][space]["row"].as_u64(), hints["spaces"][space]["col"].as_u64());
        assert_eq!(at("point-1"), (Some(1), Some(12)), "white's 1-point is bottom right");
        assert_eq!(at("point-24"), (Some(0), Some(12)));
        assert_eq!(at("bar-white").1, Some(6));
        assert_eq!(at("off-white").1, Some(13));
        assert_eq!(hints["seat_kinds"]["2"], "black");
        assert_eq!(hints["spaces"]["point-19"]["seat_labels"]["2"], "6", "black counts from its own home");
        assert_eq!(hints["spaces"]["point-19"]["seat_labels"]["1"], "19");
        assert_eq!(hints["boards"]["board"]["seat_flips"], json!({"2": "rows"}), "black's home is at its bottom right");
    }
}
