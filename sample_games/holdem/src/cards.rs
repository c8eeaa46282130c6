//! The 52 cards of hold'em come from the SDK (`tablehost_sdk::cards`):
//! named `"2C"`, `"10H"`, `"QS"`, `"AD"` on the table. This module only adds
//! the short way to write several cards that tests and logs use.

pub use tablehost_sdk::cards::{Card, Suit};

/// Cards named in a string such as `"AS KD 10H"`. Panics on a bad name.
pub fn cards(names: &str) -> Vec<Card> {
    names
        .split_whitespace()
        .map(|name| Card::parse(name).unwrap_or_else(|| panic!("no card named {:?}", name)))
        .collect()
}

/// Cards as a log phrase: `"AS KD"` (a hand reads better without commas).
pub fn list_cards(cards: &[Card]) -> String {
    cards.iter().map(|card| card.name()).collect::<Vec<_>>().join(" ")
}
