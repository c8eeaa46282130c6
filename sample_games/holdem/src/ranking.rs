//! Poker hand ranking: the best five of seven cards, compared by the standard
//! order (straight flush, four of a kind, full house, flush, straight, three
//! of a kind, two pair, one pair, high card). Suits never break ties.

use crate::cards::Card;

/// The kinds of five-card hand, weakest first (derived order is poker order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    HighCard,
    Pair,
    TwoPair,
    ThreeOfAKind,
    Straight,
    Flush,
    FullHouse,
    FourOfAKind,
    StraightFlush,
}

/// The value of a five-card hand: its category, then the ranks that decide
/// ties within it, most significant first (a full house K-K-K-7-7 is
/// `[13, 7, 0, 0, 0]`, a wheel straight A-2-3-4-5 `[5, 0, 0, 0, 0]`). The
/// derived order compares category first, then these ranks: a bigger value
/// wins, equal values split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandValue {
    pub category: Category,
    pub ranks: [u8; 5],
}

/// The value of exactly five cards.
///
/// Rules: a straight is five ranks in sequence; the ace plays high
/// (10-J-Q-K-A) or low (A-2-3-4-5, the lowest straight, "5 high"), never
/// round the corner. Pairs and sets rank by their rank first, then kickers.
pub fn value_of_five(cards: &[Card; 5]) -> HandValue {
    let mut counts = [0u8; 15];
    for card in cards {
        counts[usize::from(card.rank)] += 1;
    }
    // (count, rank), most copies first, then higher rank first.
    let mut groups: Vec<(u8, u8)> = (2..=14u8)
        .filter(|&rank| counts[usize::from(rank)] > 0)
        .map(|rank| (counts[usize::from(rank)], rank))
        .collect();
    groups.sort_by(|a, b| b.cmp(a));
    let flush = cards.iter().all(|card| card.suit == cards[0].suit);
    let straight_top = straight_top(&groups);
    let mut ranks = [0u8; 5];
    let category = match (straight_top, flush) {
        (Some(top), true) => {
            ranks[0] = top;
            Category::StraightFlush
        }
        (Some(top), false) => {
            ranks[0] = top;
            Category::Straight
        }
        (None, _) => {
            for (slot, (_, rank)) in ranks.iter_mut().zip(&groups) {
                *slot = *rank;
            }
            let shape: Vec<u8> = groups.iter().map(|(count, _)| *count).collect();
            match (shape.as_slice(), flush) {
                ([4, 1], _) => Category::FourOfAKind,
                ([3, 2], _) => Category::FullHouse,
                (_, true) => Category::Flush,
                ([3, 1, 1], _) => Category::ThreeOfAKind,
                ([2, 2, 1], _) => Category::TwoPair,
                ([2, 1, 1, 1], _) => Category::Pair,
                _ => Category::HighCard,
            }
        }
    };
    HandValue { category, ranks }
}

/// The top rank of a straight made by five distinct ranks (`groups` sorted
/// high first), or None. The wheel A-5-4-3-2 is 5 high.
fn straight_top(groups: &[(u8, u8)]) -> Option<u8> {
    if groups.len() != 5 {
        return None;
    }
    let high = groups[0].1;
    let low = groups[4].1;
    if high - low == 4 {
        Some(high)
    } else if high == 14 && groups[1].1 == 5 {
        Some(5)
    } else {
        None
    }
}

/// The best five-card value among `cards` (5 to 7 cards: two hole cards and
/// the board). Panics with fewer than five.
pub fn best_value(cards: &[Card]) -> HandValue {
    assert!(cards.len() >= 5, "a poker hand needs five cards, got {}", cards.len());
    let n = cards.len();
    let mut best: Option<HandValue> = None;
    // Every way to leave out n - 5 cards (at most 21 for seven).
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    for e in d + 1..n {
                        let value = value_of_five(&[cards[a], cards[b], cards[c], cards[d], cards[e]]);
                        if best.map_or(true, |b| value > b) {
                            best = Some(value);
                        }
                    }
                }
            }
        }
    }
    best.expect("at least one five-card choice")
}

/// A rank in words, plural: `"sevens"`, `"sixes"`, `"aces"`.
pub fn rank_plural(rank: u8) -> &'static str {
    const PLURALS: [&str; 13] = [
        "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens", "jacks", "queens", "kings",
        "aces",
    ];
    PLURALS[usize::from(rank - 2)]
}

/// A rank in words, singular: `"seven"`, `"ace"`.
pub fn rank_word(rank: u8) -> &'static str {
    const WORDS: [&str; 13] = [
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace",
    ];
    WORDS[usize::from(rank - 2)]
}

/// The hand in words for the log: `"a full house, kings over sevens"`.
/// Names ranks only, never a card, so it reveals nothing a shown hand does not.
pub fn describe(value: &HandValue) -> String {
    let r = value.ranks;
    match value.category {
        Category::StraightFlush if r[0] == 14 => "a royal flush".to_string(),
        Category::StraightFlush => format!("a straight flush, {} high", rank_word(r[0])),
        Category::FourOfAKind => format!("four {}", rank_plural(r[0])),
        Category::FullHouse => format!("a full house, {} over {}", rank_plural(r[0]), rank_plural(r[1])),
        Category::Flush => format!("a flush, {} high", rank_word(r[0])),
        Category::Straight => format!("a straight, {} high", rank_word(r[0])),
        Category::ThreeOfAKind => format!("three {}", rank_plural(r[0])),
        Category::TwoPair => format!("two pair, {} and {}", rank_plural(r[0]), rank_plural(r[1])),
        Category::Pair => format!("a pair of {}", rank_plural(r[0])),
        Category::HighCard => format!("{} high", rank_word(r[0])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::cards;

    fn best(names: &str) -> HandValue {
        best_value(&cards(names))
    }

    #[test]
    fn categories_in_order() {
        let hands = [
            "2C 5D 9H JS KC 3D 7H",  // high card
            "2C 2D 9H JS KC 3D 7H",  // pair
            "2C 2D 9H 9S KC 3D 7H",  // two pair
            "2C 2D 2H 9S KC 3D 7H",  // three of a kind
            "AC 2D 3H 4S 5C 9D JH",  // wheel straight
            "2C 6C 9C JC KC 3D 7H",  // flush
            "2C 2D 2H 9S 9C 3D 7H",  // full house
            "2C 2D 2H 2S KC 3D 7H",  // four of a kind
            "9C 10C JC QC KC 3D 7H", // straight flush
        ];
        let values: Vec<HandValue> = hands.iter().map(|h| best(h)).collect();
        for pair in values.windows(2) {
            assert!(pair[0].category < pair[1].category, "{:?}", pair);
        }
    }

    #[test]
    fn the_wheel_is_the_lowest_straight_and_no_wrap_round() {
        let wheel = best("AC 2D 3H 4S 5C KD KH");
        assert_eq!((wheel.category, wheel.ranks[0]), (Category::Straight, 5));
        assert!(best("2C 3D 4H 5S 6C KD KH") > wheel);
        assert_eq!(best("QC KD AH 2S 3C 8D 8H").category, Category::Pair);
    }

    #[test]
    fn kickers_decide_a_pair_and_the_fifth_card_a_two_pair() {
        // Both pair aces; 7-card kickers K Q 9 against K Q 8.
        assert!(best("AC AD KH QS 9C 2D 3H") > best("AS AH KD QC 8C 2S 3D"));
        // Two pair kings and sevens: the kicker queen beats the jack.
        assert!(best("KC KD 7H 7S QC 2D 3H") > best("KS KH 7C 7D JC 2S 3S"));
        // Kickers beyond the best five do not count: both play A A K Q J.
        assert_eq!(best("AC AD KH QS JC 3D 2H"), best("AS AH KD QC JD 4S 3C"));
    }

    #[test]
    fn a_board_that_plays_ties() {
        let board = "10C JD QH KS AC";
        assert_eq!(best(&format!("{} 2D 3H", board)), best(&format!("{} 4S 5C", board)));
    }

    #[test]
    fn the_best_five_of_seven_picks_the_flush_over_the_straight() {
        let value = best("4H 5H 6C 7H 8D 9H KH");
        assert_eq!(value.category, Category::Flush);
        assert_eq!(value.ranks, [13, 9, 7, 5, 4]);
    }

    #[test]
    fn descriptions_name_ranks_only() {
        assert_eq!(describe(&best("KC KD KH 7S 7C 2D 3H")), "a full house, kings over sevens");
        assert_eq!(describe(&best("AC 2D 3H 4S 5C KD QH")), "a straight, five high");
        assert_eq!(describe(&best("10C JC QC KC AC 2D 3H")), "a royal flush");
    }
}
