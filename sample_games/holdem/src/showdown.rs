//! The showdown: who must show their cards, in what order, and who wins each pot.
//!
//! Showing rule (the order used by most card rooms):
//! 1. Only hands still contesting a pot with another hand take part; a pot
//!    only one player can win (an uncalled bet) goes back without a show.
//! 2. The first to show is the last player who bet or raised on the river;
//!    if nobody did, the first player still in left of the button.
//! 3. When a player is all in, every hand contesting a pot is turned face up
//!    (the tournament rule for all-ins: once the betting is over nobody may
//!    hide a hand that was all in or called one).
//! 4. Otherwise, going left from the first, each player shows when their
//!    hand is at least as good as every hand already shown among the players
//!    contesting some pot they contest too; otherwise they muck unseen.
//!
//! So every pot's winners are shown (nobody shown before a winner beats it),
//! and without an all-in a hand that could not win anything is never revealed.

use crate::pots::{left_of_button, split, Pot};
use crate::ranking::HandValue;

/// What a showdown decided: who showed (in showing order), who mucked, and
/// the chips each pot gave to whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub shown: Vec<usize>,
    pub mucked: Vec<usize>,
    /// One entry per pot, in pot order: (seat, chips) pairs.
    pub awards: Vec<Vec<(usize, u64)>>,
}

/// Decides the showdown.
///
/// `values[i]`: the hand value of seat `i` (None for a folded seat);
/// `pots`: from `side_pots`; `first`: the seat that shows first (rule 2);
/// `button`: the button's seat (odd chips go from the first seat left of it);
/// `all_in`: whether a live player is all in (rule 3: every contesting hand shows).
pub fn decide(values: &[Option<HandValue>], pots: &[Pot], first: usize, button: usize, all_in: bool) -> Outcome {
    let seats = values.len();
    let contested: Vec<&Pot> = pots.iter().filter(|pot| pot.eligible.len() >= 2).collect();
    let contests = |seat: usize| contested.iter().any(|pot| pot.eligible.contains(&seat));
    let mut shown: Vec<usize> = Vec::new();
    let mut mucked: Vec<usize> = Vec::new();
    for seat in (0..seats).map(|k| (first + k) % seats) {
        let value = match values[seat] {
            Some(value) if contests(seat) => value,
            _ => continue,
        };
        let could_win = all_in
            || contested.iter().filter(|pot| pot.eligible.contains(&seat)).any(|pot| {
            shown
                .iter()
                .filter(|other| pot.eligible.contains(other))
                .all(|&other| values[other].map_or(true, |v| value >= v))
        });
        if could_win {
            shown.push(seat);
        } else {
            mucked.push(seat);
        }
    }
    let order = left_of_button(seats, button);
    let awards = pots
        .iter()
        .map(|pot| {
            if pot.eligible.len() == 1 {
                return vec![(pot.eligible[0], pot.amount)];
            }
            let best = pot.eligible.iter().filter_map(|&s| values[s]).max();
            let winners: Vec<usize> =
                order.iter().copied().filter(|s| pot.eligible.contains(s) && values[*s] == best).collect();
            if winners.is_empty() || pot.amount == 0 {
                Vec::new()
            } else {
                split(pot.amount, &winners)
            }
        })
        .collect();
    Outcome { shown, mucked, awards }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::cards;
    use crate::pots::side_pots;
    use crate::ranking::best_value;

    const BOARD: &str = "2C 7D 9H JS KC";

    fn value(hole: &str) -> Option<HandValue> {
        Some(best_value(&cards(&format!("{} {}", BOARD, hole))))
    }

    #[test]
    fn three_all_ins_the_short_stack_wins_the_main_pot_only() {
        // Seat 0 all in for 50 with the best hand, seat 1 for 120 with the
        // second best, seat 2 covers them with the worst.
        let values = vec![value("KD KH"), value("JC JD"), value("3S 4S")];
        let pots = side_pots(&[50, 120, 300], &[false; 3]);
        let outcome = decide(&values, &pots, 0, 2, false);
        assert_eq!(outcome.awards, vec![vec![(0, 150)], vec![(1, 140)], vec![(2, 180)]]);
        assert_eq!(outcome.shown, vec![0, 1]);
        assert_eq!(outcome.mucked, vec![2]);
    }

    #[test]
    fn a_beaten_hand_mucks_but_a_hand_that_wins_a_side_pot_shows() {
        // Seat 1 shows first (the river aggressor) with the best hand; seat 2
        // loses the main pot but is the best of the side pot with seat 0.
        let values = vec![value("3S 4S"), value("KD KH"), value("JC JD")];
        let pots = side_pots(&[300, 50, 300], &[false; 3]);
        let outcome = decide(&values, &pots, 1, 0, false);
        assert_eq!(outcome.shown, vec![1, 2]);
        assert_eq!(outcome.mucked, vec![0]);
        assert_eq!(outcome.awards, vec![vec![(1, 150)], vec![(2, 500)]]);
    }

    #[test]
    fn a_tie_shows_and_splits_with_the_odd_chip_left_of_the_button() {
        // Both hold a nine and a three: a pair of nines with the same kickers.
        let values = vec![value("9C 3D"), value("9D 3H"), None];
        let pots = side_pots(&[55, 55, 15], &[false, false, true]);
        let outcome = decide(&values, &pots, 0, 0, false);
        assert_eq!(outcome.shown, vec![0, 1]);
        // 125 chips: 63 to seat 1 (first left of the button at 0), 62 to seat 0.
        assert_eq!(outcome.awards, vec![vec![(1, 63), (0, 62)]]);
    }

    #[test]
    fn a_kicker_decides_and_the_loser_mucks() {
        let values = vec![value("KD 8C"), value("KH QC")];
        let pots = side_pots(&[100, 100], &[false; 2]);
        let outcome = decide(&values, &pots, 0, 1, false);
        assert_eq!(outcome.shown, vec![0, 1]);
        assert_eq!(outcome.awards, vec![vec![(1, 200)]]);
        let reversed = decide(&values, &pots, 1, 1, false);
        assert_eq!((reversed.shown, reversed.mucked), (vec![1], vec![0]));
    }

    #[test]
    fn an_uncalled_bet_comes_back_unseen() {
        let values = vec![value("KD 8C"), value("KH QC")];
        let pots = side_pots(&[100, 400], &[false; 2]);
        let outcome = decide(&values, &pots, 1, 0, false);
        assert_eq!(outcome.awards, vec![vec![(1, 200)], vec![(1, 300)]]);
    }

    #[test]
    fn with_a_player_all_in_every_contesting_hand_is_shown() {
        let values = vec![value("KD KH"), value("JC JD"), value("3S 4S")];
        let pots = side_pots(&[50, 120, 300], &[false; 3]);
        let outcome = decide(&values, &pots, 0, 2, true);
        assert_eq!((outcome.shown, outcome.mucked), (vec![0, 1, 2], vec![]));
    }
}
