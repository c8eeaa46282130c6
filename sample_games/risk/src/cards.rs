//! Risk cards: one per territory with a symbol (infantry, cavalry or
//! artillery, 14 of each) and two wild cards; sets and what they are worth.
//!
//! A card's face is `"<territory>-<symbol>"` (`"alaska-infantry"`) or
//! `"wild-1"`, `"wild-2"`: one word for the leak checks, and never a space id.

use tablehost_sdk::face_down::Face;

use crate::map::{index_of, TERRITORIES};

/// The picture on a card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Symbol {
    Infantry,
    Cavalry,
    Artillery,
    Wild,
}

impl Symbol {
    /// The symbol's word in a card's face.
    pub fn word(self) -> &'static str {
        match self {
            Symbol::Infantry => "infantry",
            Symbol::Cavalry => "cavalry",
            Symbol::Artillery => "artillery",
            Symbol::Wild => "wild",
        }
    }

    fn from_word(word: &str) -> Option<Symbol> {
        [Symbol::Infantry, Symbol::Cavalry, Symbol::Artillery].iter().copied().find(|s| s.word() == word)
    }
}

/// A card: a territory's card with its symbol, or wild card 1 or 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RiskCard {
    Territory(usize),
    Wild(u8),
}

impl RiskCard {
    /// The 44 cards: the 42 territories (symbols in turn infantry, cavalry,
    /// artillery down the map: 14 each), then the two wilds.
    pub fn deck() -> Vec<RiskCard> {
        (0..TERRITORIES.len()).map(RiskCard::Territory).chain([RiskCard::Wild(1), RiskCard::Wild(2)]).collect()
    }

    /// The card's symbol.
    pub fn symbol(self) -> Symbol {
        match self {
            RiskCard::Territory(index) => [Symbol::Infantry, Symbol::Cavalry, Symbol::Artillery][index % 3],
            RiskCard::Wild(_) => Symbol::Wild,
        }
    }
}

impl Face for RiskCard {
    fn face(&self) -> String {
        match *self {
            RiskCard::Territory(index) => format!("{}-{}", TERRITORIES[index].id, self.symbol().word()),
            RiskCard::Wild(number) => format!("wild-{}", number),
        }
    }

    fn parse_face(face: &str) -> Option<RiskCard> {
        if let Some(number) = face.strip_prefix("wild-") {
            return match number {
                "1" => Some(RiskCard::Wild(1)),
                "2" => Some(RiskCard::Wild(2)),
                _ => None,
            };
        }
        let (territory, word) = face.rsplit_once('-')?;
        let card = RiskCard::Territory(index_of(territory)?);
        if card.symbol() == Symbol::from_word(word)? {
            Some(card)
        } else {
            None
        }
    }
}

/// Rule: three cards form a set when they show the same symbol, three
/// different symbols, or when one of them is wild.
pub fn is_set(cards: &[RiskCard; 3]) -> bool {
    let symbols: Vec<Symbol> = cards.iter().map(|c| c.symbol()).collect();
    symbols.contains(&Symbol::Wild)
        || (symbols[0] == symbols[1] && symbols[1] == symbols[2])
        || (symbols[0] != symbols[1] && symbols[1] != symbols[2] && symbols[0] != symbols[2])
}

/// Rule: armies for the `nth` set traded in the game (1-based): 4, 6, 8,
/// 10, 12, 15, then 5 more for each set after that.
pub fn set_value(nth: u32) -> u32 {
    match nth {
        0 => panic!("sets are counted from 1"),
        1..=5 => 2 + 2 * nth,
        _ => 15 + 5 * (nth - 6),
    }
}

/// The sets that can be made from `hand`, one per kind (the sorted symbols),
/// each the first such set in face order: at most a dozen offers however
/// many cards are held.
pub fn sets_in(hand: &[RiskCard]) -> Vec<[RiskCard; 3]> {
    let mut cards = hand.to_vec();
    cards.sort_by_key(|card| card.face());
    let mut kinds: Vec<Vec<Symbol>> = Vec::new();
    let mut sets = Vec::new();
    for a in 0..cards.len() {
        for b in a + 1..cards.len() {
            for c in b + 1..cards.len() {
                let set = [cards[a], cards[b], cards[c]];
                if !is_set(&set) {
                    continue;
                }
                let mut kind: Vec<Symbol> = set.iter().map(|card| card.symbol()).collect();
                kind.sort();
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                    sets.push(set);
                }
            }
        }
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_has_fourteen_of_each_symbol_and_two_wilds() {
        let deck = RiskCard::deck();
        assert_eq!(deck.len(), 44);
        for symbol in [Symbol::Infantry, Symbol::Cavalry, Symbol::Artillery] {
            assert_eq!(deck.iter().filter(|c| c.symbol() == symbol).count(), 14);
        }
        for card in deck {
            assert_eq!(RiskCard::parse_face(&card.face()), Some(card));
        }
        assert_eq!(RiskCard::parse_face("alaska-cavalry"), None, "alaska is infantry");
        assert_eq!(RiskCard::parse_face("alaska"), None);
        assert_eq!(RiskCard::parse_face("back"), None);
    }

    #[test]
    fn set_values_run_4_6_8_10_12_15_then_up_by_5() {
        let values: Vec<u32> = (1..=9).map(set_value).collect();
        assert_eq!(values, vec![4, 6, 8, 10, 12, 15, 20, 25, 30]);
    }

    #[test]
    fn sets_are_three_alike_three_different_or_any_with_a_wild() {
        let inf = [RiskCard::Territory(0), RiskCard::Territory(3), RiskCard::Territory(6)];
        assert!(is_set(&inf));
        let mixed = [RiskCard::Territory(0), RiskCard::Territory(1), RiskCard::Territory(2)];
        assert!(is_set(&mixed));
        let two_and_one = [RiskCard::Territory(0), RiskCard::Territory(3), RiskCard::Territory(1)];
        assert!(!is_set(&two_and_one));
        let wild = [RiskCard::Territory(0), RiskCard::Territory(3), RiskCard::Wild(1)];
        assert!(is_set(&wild));
    }

    #[test]
    fn five_cards_always_hold_a_set_and_offers_are_one_per_kind() {
        // Pigeonhole: with three symbols, five cards hold three alike or one of each.
        for start in 0..10 {
            let hand: Vec<RiskCard> = (0..5).map(|k| RiskCard::Territory(start + k * 4)).collect();
            assert!(!sets_in(&hand).is_empty(), "{:?}", hand);
        }
        let hand: Vec<RiskCard> = (0..9).map(RiskCard::Territory).chain([RiskCard::Wild(1)]).collect();
        let sets = sets_in(&hand);
        assert!(sets.len() <= 14);
        assert!(sets.iter().all(is_set));
        assert!(sets_in(&[RiskCard::Territory(0), RiskCard::Territory(3)]).is_empty());
    }
}
