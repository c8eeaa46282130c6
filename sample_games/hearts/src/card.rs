//! A playing card of the 52-card deck and its names.

/// The four suits. Hearts score; the others only matter for following suit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suit {
    Clubs,
    Diamonds,
    Spades,
    Hearts,
}

impl Suit {
    /// Every suit, in the order cards are named and sorted.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Spades, Suit::Hearts];

    /// The suit's letter in a card name: `C`, `D`, `S`, `H`.
    pub fn letter(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
        }
    }

    fn from_letter(letter: &str) -> Option<Suit> {
        Suit::ALL
            .iter()
            .copied()
            .find(|suit| letter.len() == 1 && letter.starts_with(suit.letter()))
    }
}

/// A card: rank 2..=14 (11 jack, 12 queen, 13 king, 14 ace) and suit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card {
    pub suit: Suit,
    pub rank: u8,
}

/// The card that leads the first trick of every round.
pub const TWO_OF_CLUBS: Card = Card {
    suit: Suit::Clubs,
    rank: 2,
};
/// The card worth 13 points.
pub const QUEEN_OF_SPADES: Card = Card {
    suit: Suit::Spades,
    rank: 12,
};

const RANK_NAMES: [&str; 13] = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];

impl Card {
    /// The card of `rank` (2..=14) in `suit`.
    pub fn new(rank: u8, suit: Suit) -> Card {
        assert!((2..=14).contains(&rank), "no card of rank {}", rank);
        Card { suit, rank }
    }

    /// All 52 cards, clubs first, each suit from 2 up to the ace.
    pub fn deck() -> Vec<Card> {
        Suit::ALL
            .iter()
            .flat_map(|&suit| (2..=14).map(move |rank| Card::new(rank, suit)))
            .collect()
    }

    /// The card's name: rank then suit letter, `"10H"`, `"QS"`, `"2C"`. Used
    /// as the private kind of a card in hand and the public kind of a played one.
    pub fn face(self) -> String {
        format!("{}{}", RANK_NAMES[usize::from(self.rank - 2)], self.suit.letter())
    }

    /// The card named `face`, or None for anything else (a card back).
    pub fn parse(face: &str) -> Option<Card> {
        if face.len() < 2 || !face.is_char_boundary(face.len() - 1) {
            return None;
        }
        let (rank, suit) = face.split_at(face.len() - 1);
        let rank = RANK_NAMES.iter().position(|&name| name == rank)? as u8 + 2;
        Some(Card::new(rank, Suit::from_letter(suit)?))
    }

    /// The penalty points of a card taken in a trick: a heart 1, the Q♠ 13.
    pub fn points(self) -> u32 {
        if self.suit == Suit::Hearts {
            1
        } else if self == QUEEN_OF_SPADES {
            13
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_holds_52_cards_and_26_points() {
        let deck = Card::deck();
        assert_eq!(deck.len(), 52);
        assert_eq!(deck.iter().map(|c| c.points()).sum::<u32>(), 26);
    }

    #[test]
    fn names_round_trip() {
        for card in Card::deck() {
            assert_eq!(Card::parse(&card.face()), Some(card));
        }
        assert_eq!(Card::new(10, Suit::Hearts).face(), "10H");
        assert_eq!(Card::parse("QS"), Some(QUEEN_OF_SPADES));
        assert_eq!(Card::parse("back"), None);
        assert_eq!(Card::parse("1C"), None);
        assert_eq!(Card::parse("QX"), None);
    }
}
