//! The 52 cards of hold'em: a rank 2..=14 (ace high) and a suit, named
//! `"2C"`, `"10H"`, `"QS"`, `"AD"` on the table.

/// Names of the ranks 2..=14, in order.
const RANK_NAMES: [&str; 13] = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
/// Suit letters, clubs, diamonds, hearts, spades.
const SUIT_LETTERS: [char; 4] = ['C', 'D', 'H', 'S'];

/// A card: `rank` 2..=14 (11 jack .. 14 ace), `suit` 0..=3 (clubs, diamonds, hearts, spades).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card {
    pub rank: u8,
    pub suit: u8,
}

impl Card {
    /// The card of `rank` (2..=14) and `suit` (0..=3). Panics outside those.
    pub fn new(rank: u8, suit: u8) -> Card {
        assert!((2..=14).contains(&rank) && suit < 4, "no card of rank {} suit {}", rank, suit);
        Card { rank, suit }
    }

    /// All 52 cards, clubs first, each suit from 2 to the ace.
    pub fn deck() -> Vec<Card> {
        (0..4u8).flat_map(|suit| (2..=14u8).map(move |rank| Card::new(rank, suit))).collect()
    }

    /// The card's name: rank then suit letter (`"10H"`).
    pub fn name(self) -> String {
        format!("{}{}", RANK_NAMES[usize::from(self.rank - 2)], SUIT_LETTERS[usize::from(self.suit)])
    }

    /// The card named `name`, or None for anything else (a card back).
    pub fn parse(name: &str) -> Option<Card> {
        let suit_letter = name.chars().last()?;
        let rank_name = &name[..name.len() - suit_letter.len_utf8()];
        let rank = RANK_NAMES.iter().position(|&r| r == rank_name)? as u8 + 2;
        let suit = SUIT_LETTERS.iter().position(|&s| s == suit_letter)? as u8;
        Some(Card::new(rank, suit))
    }
}

/// Cards named in a string such as `"AS KD 10H"` (tests and logs). Panics on a bad name.
pub fn cards(names: &str) -> Vec<Card> {
    names
        .split_whitespace()
        .map(|name| Card::parse(name).unwrap_or_else(|| panic!("no card named {:?}", name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_over_the_deck() {
        let deck = Card::deck();
        assert_eq!(deck.len(), 52);
        for card in deck {
            assert_eq!(Card::parse(&card.name()), Some(card));
        }
        assert_eq!(Card::parse("back"), None);
        assert_eq!(Card::parse("1C"), None);
        assert_eq!(Card::parse(""), None);
    }
}
