//! The cards of hearts: the SDK's 52-card deck, the two cards the rules name,
//! and what a card taken in a trick costs.

pub use tablehost_sdk::cards::{Card, Suit, QUEEN};

/// The card that leads the first trick of every round.
pub const TWO_OF_CLUBS: Card = Card { suit: Suit::Clubs, rank: 2 };
/// The card worth 13 points.
pub const QUEEN_OF_SPADES: Card = Card { suit: Suit::Spades, rank: QUEEN };

/// The deck as it lies before the first deal: clubs, diamonds, spades,
/// hearts, each from 2 up (the order hearts has always laid it out in, so a
/// seed deals the same hands as before the SDK had a deck).
pub fn deck() -> Vec<Card> {
    Card::deck_in(&[Suit::Clubs, Suit::Diamonds, Suit::Spades, Suit::Hearts])
}

/// The penalty points of a card taken in a trick: a heart 1, the Q♠ 13.
pub fn points(card: Card) -> u32 {
    if card.suit == Suit::Hearts {
        1
    } else if card == QUEEN_OF_SPADES {
        13
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_holds_52_cards_and_26_points() {
        let deck = deck();
        assert_eq!(deck.len(), 52);
        assert_eq!(deck.iter().map(|&c| points(c)).sum::<u32>(), 26);
        assert_eq!(deck[26].name(), "2S");
    }
}
