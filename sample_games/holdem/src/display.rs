//! Display hints for the web table (docs/abi.md, "Display hints"): each
//! seat with its hole cards (face up only to their holder, and to everyone
//! at a showdown), its stack, bet and status; the community cards in the
//! middle beside the deck and the muck; the pot, the street, the bet to
//! match and the button as facts from meta data. Cards are drawn by a rule
//! on their name (rank, then suit letter), so no face is listed: the same for
//! every deal, nothing here is hidden. The hints are data (`display.json`):
//! a JSON value built in code costs several KiB of module.

use tablehost_sdk::Value;

/// The hints, the same for any number of seats.
const HINTS: &str = include_str!("display.json");

/// `meta_data.display` (the same for any number of seats).
pub fn hints() -> Value {
    tablehost_sdk::serde_json::from_slice(HINTS.as_bytes()).expect("display.json is JSON")
}
