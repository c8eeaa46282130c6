//! The pot and its side pots, and how a pot is split.
//!
//! Rules (no-limit table stakes):
//! - A player can win from each opponent at most what they put in
//!   themselves. When players are all in for different amounts, the chips
//!   are layered into a main pot and side pots: each layer holds, from every
//!   player, what they put in up to that layer's height, and only the
//!   players still in the hand who reached that height may win it.
//! - Folded players' chips stay in the pots they reached but win nothing.
//! - A layer only one player can win (a bet nobody called) goes back to them.
//! - A pot shared by several equal best hands is split evenly; chips that
//!   do not divide go one at a time to the winners in seat order starting
//!   from the first seat left of the button.

/// One pot: `amount` chips, won by the best hand among `eligible` (seat
/// indexes into the hand's seats, in seat order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pot {
    pub amount: u64,
    pub eligible: Vec<usize>,
}

/// The main pot then the side pots, from what each seat put in this hand.
///
/// `committed[i]`: chips seat `i` put in the pot over the whole hand;
/// `folded[i]`: whether seat `i` folded. Returns the pots from the lowest
/// layer (the main pot, every live player eligible) up; their amounts sum to
/// the total committed. Chips above the highest live player's total (only
/// possible from folded seats) join the top pot.
pub fn side_pots(committed: &[u64], folded: &[bool]) -> Vec<Pot> {
    assert_eq!(committed.len(), folded.len(), "one folded flag per seat");
    let seats = 0..committed.len();
    let mut pots: Vec<Pot> = Vec::new();
    let mut height = 0;
    loop {
        // The next layer tops out at the smallest live total above the last one.
        let level = seats.clone().filter(|&i| !folded[i] && committed[i] > height).map(|i| committed[i]).min();
        let level = match level {
            Some(level) => level,
            None => break,
        };
        let amount = committed.iter().map(|&c| c.min(level) - c.min(height)).sum();
        let eligible = seats.clone().filter(|&i| !folded[i] && committed[i] >= level).collect();
        pots.push(Pot { amount, eligible });
        height = level;
    }
    let dead: u64 = committed.iter().map(|&c| c - c.min(height)).sum();
    if dead > 0 {
        match pots.last_mut() {
            Some(top) => top.amount += dead,
            None => pots.push(Pot { amount: dead, eligible: Vec::new() }),
        }
    }
    pots
}

/// Shares `amount` among `winners` (seat indexes, in seat order starting from
/// the first seat left of the button): equal shares, then the odd chips one
/// each from the first winner on. Returns (seat, chips) pairs in that order.
pub fn split(amount: u64, winners: &[usize]) -> Vec<(usize, u64)> {
    assert!(!winners.is_empty(), "a pot needs a winner");
    let n = winners.len() as u64;
    let share = amount / n;
    let odd = (amount % n) as usize;
    winners.iter().enumerate().map(|(k, &seat)| (seat, share + u64::from(k < odd))).collect()
}

/// Seat indexes `0..seats` ordered from the first seat left of `button`
/// round to the button itself (the order odd chips go in).
pub fn left_of_button(seats: usize, button: usize) -> Vec<usize> {
    (1..=seats).map(|k| (button + k) % seats).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_all_ins_of_different_sizes_make_a_main_pot_and_two_side_pots() {
        // Seat 0 all in for 50, seat 1 for 120, seat 2 for 300, seat 3 calls 300.
        let pots = side_pots(&[50, 120, 300, 300], &[false; 4]);
        assert_eq!(
            pots,
            vec![
                Pot { amount: 200, eligible: vec![0, 1, 2, 3] },
                Pot { amount: 210, eligible: vec![1, 2, 3] },
                Pot { amount: 360, eligible: vec![2, 3] },
            ]
        );
    }

    #[test]
    fn folded_chips_stay_in_the_layers_they_reached() {
        // Seat 1 put in 80 then folded; seat 0 is all in for 50; seats 2, 3 put in 200.
        let pots = side_pots(&[50, 80, 200, 200], &[false, true, false, false]);
        assert_eq!(
            pots,
            vec![Pot { amount: 200, eligible: vec![0, 2, 3] }, Pot { amount: 330, eligible: vec![2, 3] }]
        );
    }

    #[test]
    fn an_uncalled_bet_is_a_layer_only_its_bettor_can_win() {
        let pots = side_pots(&[100, 400], &[false, false]);
        assert_eq!(pots, vec![Pot { amount: 200, eligible: vec![0, 1] }, Pot { amount: 300, eligible: vec![1] }]);
    }

    #[test]
    fn pots_hold_every_chip_committed() {
        let committed = [7, 0, 33, 33, 12, 90];
        let folded = [true, true, false, false, false, true];
        let pots = side_pots(&committed, &folded);
        assert_eq!(pots.iter().map(|p| p.amount).sum::<u64>(), committed.iter().sum::<u64>());
        assert_eq!(pots[0].eligible, vec![2, 3, 4]);
    }

    #[test]
    fn odd_chips_go_from_the_first_seat_left_of_the_button() {
        // Five seats, button at seat 3: the order is 4, 0, 1, 2, 3.
        let order = left_of_button(5, 3);
        assert_eq!(order, vec![4, 0, 1, 2, 3]);
        let winners: Vec<usize> = order.iter().copied().filter(|s| [1, 4].contains(s)).collect();
        assert_eq!(split(101, &winners), vec![(4, 51), (1, 50)]);
        assert_eq!(split(100, &[0, 2, 3]), vec![(0, 34), (2, 33), (3, 33)]);
    }
}
