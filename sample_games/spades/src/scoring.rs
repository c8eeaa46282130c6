//! Partnership scoring of a round (pure arithmetic, tested on its own).
//!
//! Rules, for each side:
//! - The contract is the sum of the partners' bids that are not nil.
//! - Made (the non-nil partners took at least the contract together): 10 ×
//!   contract, plus 1 per overtrick. Each overtrick is also a bag; every time
//!   a side's bags reach 10 it loses 100 and 10 bags are taken off.
//! - Set (fewer tricks than the contract): −10 × contract.
//! - A nil bidder who takes no trick wins 100 for the side, else loses 100.
//!   Tricks a nil bidder takes do not help the partner's contract; they
//!   count as bags for the side (a point each, like overtricks).
//! - A side whose partners both bid nil has no contract: only the nil
//!   results and the bags (every trick taken) count.

/// One partner's part in a round: their bid (0 = nil) and the tricks they took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partner {
    pub bid: u8,
    pub tricks: u8,
}

/// What a round did to one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundResult {
    /// Points won (negative when lost) this round, bag penalties included.
    pub points: i64,
    /// The side's bags after this round (0..=9).
    pub bags: i64,
    /// Whether the contract was made (true when there was none).
    pub made: bool,
}

/// Points won or lost per nil bid.
pub const NIL_POINTS: i64 = 100;
/// Bags that cost a side [`BAG_PENALTY`].
pub const BAGS_PER_PENALTY: i64 = 10;
/// What [`BAGS_PER_PENALTY`] bags cost.
pub const BAG_PENALTY: i64 = 100;

/// Scores one side's round: its two `partners` and the bags it carried in
/// (`bags_before`, 0..=9).
pub fn score_side(partners: [Partner; 2], bags_before: i64) -> RoundResult {
    let mut points = 0;
    let mut new_bags = 0;
    let mut contract = 0;
    let mut toward_contract = 0;
    for partner in partners {
        if partner.bid == 0 {
            points += if partner.tricks == 0 { NIL_POINTS } else { -NIL_POINTS };
            new_bags += i64::from(partner.tricks);
        } else {
            contract += i64::from(partner.bid);
            toward_contract += i64::from(partner.tricks);
        }
    }
    let made = toward_contract >= contract;
    if made {
        points += 10 * contract;
        new_bags += toward_contract - contract;
    } else {
        points -= 10 * contract;
    }
    // Every bag is worth a point, and every tenth costs a hundred.
    points += new_bags;
    let mut bags = bags_before + new_bags;
    while bags >= BAGS_PER_PENALTY {
        bags -= BAGS_PER_PENALTY;
        points -= BAG_PENALTY;
    }
    RoundResult { points, bags, made }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(bid: u8, tricks: u8) -> Partner {
        Partner { bid, tricks }
    }

    #[test]
    fn a_made_contract_scores_ten_a_trick_and_one_a_bag() {
        assert_eq!(score_side([p(4, 3), p(3, 5)], 0), RoundResult { points: 71, bags: 1, made: true });
        assert_eq!(score_side([p(4, 4), p(3, 3)], 2), RoundResult { points: 70, bags: 2, made: true });
    }

    #[test]
    fn a_set_contract_loses_ten_a_trick_bid() {
        assert_eq!(score_side([p(5, 2), p(4, 3)], 3), RoundResult { points: -90, bags: 3, made: false });
    }

    #[test]
    fn the_tenth_bag_costs_a_hundred() {
        // 8 bags carried, 3 overtricks: 11 bags -> -100 and 1 bag left.
        assert_eq!(score_side([p(2, 4), p(2, 3)], 8), RoundResult { points: 40 + 3 - 100, bags: 1, made: true });
        // Exactly ten.
        assert_eq!(score_side([p(3, 4), p(3, 3)], 9).bags, 0);
    }

    #[test]
    fn nil_made_and_failed() {
        // Nil made, partner makes 4 exactly.
        assert_eq!(score_side([p(0, 0), p(4, 4)], 0), RoundResult { points: 140, bags: 0, made: true });
        // Nil failed with 2 tricks: they do not help the partner (set), and are bags.
        assert_eq!(score_side([p(0, 2), p(4, 3)], 0), RoundResult { points: -100 - 40 + 2, bags: 2, made: false });
        // Both nil, one fails with 1 trick: +100 - 100 + 1 bag point.
        assert_eq!(score_side([p(0, 0), p(0, 1)], 0), RoundResult { points: 1, bags: 1, made: true });
    }
}
