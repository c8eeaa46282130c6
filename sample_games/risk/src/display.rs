//! Display hints for the web table (docs/abi.md, "Display hints"): the 42
//! territories on one world board laid out like the classic map (North and
//! South America on the left, Europe and Africa in the middle, Asia and
//! Australia on the right), each coloured by its continent, showing its
//! holder's colour and army count; each seat's cards beside it (faces for
//! their holder only), the deck and the discard pile in the middle; the
//! round, phase, armies to place and the territories chosen for an attack or
//! a fortify as facts, and the continents' colours and bonuses (meta
//! `continent_bonus`) as a legend. The same for every deal: nothing here is
//! hidden. The hints are data (`display.json`): a JSON value built in code
//! costs several KiB of module.

use tablehost_sdk::Value;

/// The hints, the same for any number of seats.
const HINTS: &str = include_str!("display.json");

/// `meta_data.display` (the same for any number of seats).
pub fn hints() -> Value {
    tablehost_sdk::serde_json::from_slice(HINTS.as_bytes()).expect("display.json is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::{CONTINENTS, TERRITORIES};

    #[test]
    fn every_territory_has_a_cell_of_its_own_in_its_continents_colour() {
        let hints = hints();
        let mut seen = std::collections::BTreeSet::new();
        let mut colours = vec![None; CONTINENTS.len()];
        for territory in TERRITORIES.iter() {
            let cell = &hints["spaces"][territory.id];
            let (row, col) = (cell["row"].as_u64().unwrap(), cell["col"].as_u64().unwrap());
            assert!(seen.insert((row, col)), "{} shares a cell", territory.id);
            assert!(!cell["label"].as_str().unwrap().is_empty());
            let colour = cell["color"].as_str().unwrap();
            assert_eq!(*colours[territory.continent].get_or_insert(colour), colour, "{}", territory.id);
        }
        assert_eq!(hints["spaces"].as_object().unwrap().len(), TERRITORIES.len());
        for continent in CONTINENTS.iter() {
            assert!(hints["table_facts"].as_array().unwrap().iter().any(|f| f["path"][1] == continent.id));
        }
    }
}
