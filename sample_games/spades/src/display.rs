//! Display hints for the web table (docs/abi.md, "Display hints"): four
//! hands fanned around the table, each seat's taken tricks stacked beside
//! it, the trick in the middle with who played each card under it; cards
//! drawn by a rule on their name (rank, then suit letter), so no list of
//! faces is needed. Bids, tricks and bags are the scores; the sides' game
//! scores and bags, the round and the dealer are facts from meta data.
//! The same for every deal: nothing here is hidden. The hints are data
//! (`display.json`): a JSON value built in code costs several KiB of module.

use tablehost_sdk::{json, Map, PlayerId, Value};

use crate::layout::taken_by;

/// The hints that do not depend on who is seated.
const HINTS: &str = include_str!("display.json");

/// `meta_data.display` for the four seated `players`: each taken pile goes with its seat.
pub fn hints(players: &[PlayerId]) -> Value {
    let mut hints: Value = tablehost_sdk::serde_json::from_slice(HINTS.as_bytes()).expect("display.json is JSON");
    let spaces: Map<String, Value> = players.iter().map(|&p| (taken_by(p), json!({"seat": p}))).collect();
    hints["spaces"] = Value::Object(spaces);
    hints
}
