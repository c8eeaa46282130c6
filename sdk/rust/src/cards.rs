//! The standard 52-card deck: suits, ranks, names and ids.
//!
//! A card's face (its name on the table) is the rank then the suit letter:
//! `"2C"`, `"10H"`, `"QS"`, `"AD"`. Its id is `suit index * 13 + rank - 2`,
//! 0 (`2C`) ..= 51 (`AS`), with suits in [`Suit::ALL`] order. Deal cards face
//! down with `face_down::face_down(&card)` (they implement [`Face`]).

use crate::face_down::Face;

/// The four suits, in bridge order (clubs lowest, spades highest); `Ord`
/// follows that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suit {
    Clubs,
    Diamonds,
    Hearts,
    Spades,
}

impl Suit {
    /// Every suit, clubs, diamonds, hearts, spades.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit's letter in a card's face: `C`, `D`, `H`, `S`.
    pub fn letter(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    /// The suit whose letter is `letter`; `None` for any other character.
    pub fn from_letter(letter: char) -> Option<Suit> {
        Suit::ALL.iter().copied().find(|suit| suit.letter() == letter)
    }

    /// The plural English name: `"clubs"`, `"diamonds"`, `"hearts"`, `"spades"`.
    pub fn name(self) -> &'static str {
        match self {
            Suit::Clubs => "clubs",
            Suit::Diamonds => "diamonds",
            Suit::Hearts => "hearts",
            Suit::Spades => "spades",
        }
    }

    /// Position in [`Suit::ALL`], 0..=3.
    pub fn index(self) -> u8 {
        self as u8
    }
}

/// The lowest rank, the two.
pub const TWO: u8 = 2;
/// Rank of the jack.
pub const JACK: u8 = 11;
/// Rank of the queen.
pub const QUEEN: u8 = 12;
/// Rank of the king.
pub const KING: u8 = 13;
/// Rank of the ace, the highest rank (games where the ace is low compare
/// ranks themselves).
pub const ACE: u8 = 14;

const RANK_NAMES: [&str; 13] = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
const RANK_WORDS: [&str; 13] =
    ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace"];

/// A card: rank 2..=14 (11 jack, 12 queen, 13 king, 14 ace) and suit.
/// `Ord` compares suit first, then rank (the order of [`Card::deck`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card {
    pub suit: Suit,
    pub rank: u8,
}

impl Card {
    /// The card of `rank` (2..=14) in `suit`. Panics on any other rank.
    pub fn new(rank: u8, suit: Suit) -> Card {
        assert!((TWO..=ACE).contains(&rank), "no card of rank {}", rank);
        Card { suit, rank }
    }

    /// All 52 cards, suit by suit in [`Suit::ALL`] order, each from 2 up to the ace.
    pub fn deck() -> Vec<Card> {
        Card::deck_in(&Suit::ALL)
    }

    /// The cards of `suits`, in the order given, each suit from 2 up to the
    /// ace (a game that laid its deck out in another suit order keeps it).
    pub fn deck_in(suits: &[Suit]) -> Vec<Card> {
        suits.iter().flat_map(|&suit| (TWO..=ACE).map(move |rank| Card::new(rank, suit))).collect()
    }

    /// The card's id, 0..=51: `suit.index() * 13 + rank - 2`.
    pub fn id(self) -> u8 {
        self.suit.index() * 13 + self.rank - TWO
    }

    /// The card with id `id`; `None` for 52 and above.
    pub fn from_id(id: u8) -> Option<Card> {
        let suit = *Suit::ALL.get(usize::from(id / 13))?;
        Some(Card::new(id % 13 + TWO, suit))
    }

    /// The rank's short name: `"2"` ..= `"10"`, `"J"`, `"Q"`, `"K"`, `"A"`.
    pub fn rank_name(self) -> &'static str {
        RANK_NAMES[usize::from(self.rank - TWO)]
    }

    /// The card's English name: `"queen of spades"`, `"ten of hearts"`.
    pub fn long_name(self) -> String {
        format!("{} of {}", RANK_WORDS[usize::from(self.rank - TWO)], self.suit.name())
    }

    /// The card's face: rank then suit letter, `"10H"`, `"QS"`, `"2C"`.
    pub fn name(self) -> String {
        let mut name = String::with_capacity(3);
        name.push_str(self.rank_name());
        name.push(self.suit.letter());
        name
    }

    /// The card whose face is `face`; `None` for anything else (a back).
    pub fn parse(face: &str) -> Option<Card> {
        let suit = Suit::from_letter(face.chars().last()?)?;
        let rank = &face[..face.len() - 1];
        let rank = RANK_NAMES.iter().position(|&name| name == rank)? as u8 + TWO;
        Some(Card::new(rank, suit))
    }
}

impl Face for Card {
    fn face(&self) -> String {
        self.name()
    }

    fn parse_face(face: &str) -> Option<Card> {
        Card::parse(face)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_holds_52_distinct_cards_with_ids_in_order() {
        let deck = Card::deck();
        assert_eq!(deck.len(), 52);
        for (position, card) in deck.iter().enumerate() {
            assert_eq!(usize::from(card.id()), position);
            assert_eq!(Card::from_id(card.id()), Some(*card));
        }
        assert_eq!(Card::from_id(52), None);
        let mut sorted = deck.clone();
        sorted.sort();
        assert_eq!(sorted, deck, "Ord is the deck order");
    }

    #[test]
    fn names_round_trip_and_reject_the_rest() {
        for card in Card::deck() {
            assert_eq!(Card::parse(&card.name()), Some(card));
        }
        assert_eq!(Card::new(10, Suit::Hearts).name(), "10H");
        assert_eq!(Card::new(QUEEN, Suit::Spades).long_name(), "queen of spades");
        assert_eq!(Card::parse("AS"), Some(Card::new(ACE, Suit::Spades)));
        for bad in ["back", "1C", "QX", "", "S", "11H", "10", "é"] {
            assert_eq!(Card::parse(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn deck_in_keeps_the_suit_order_given() {
        let deck = Card::deck_in(&[Suit::Spades, Suit::Clubs]);
        assert_eq!(deck.len(), 26);
        assert_eq!(deck[0].name(), "2S");
        assert_eq!(deck[13].name(), "2C");
    }

    #[test]
    #[should_panic(expected = "no card of rank 15")]
    fn a_rank_above_the_ace_is_refused() {
        Card::new(15, Suit::Clubs);
    }
}
