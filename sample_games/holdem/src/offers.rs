//! The buttons offered to the player to act, and the move each one means.
//!
//! Bet sizes are offered as buttons: the minimum, half the pot, three
//! quarters, the pot, twice the pot, and all in (those strictly between the
//! minimum and all in, without repeats). "The pot" for a raise is the pot
//! after calling: a pot-sized raise is to `current bet + pot + chips to call`.

use tablehost_sdk::{Action, AvailableAction, Button};

use crate::betting::{Betting, Move};

/// Button id of a fold.
pub const FOLD: &str = "fold";
/// Button id of a check.
pub const CHECK: &str = "check";
/// Button id of a call.
pub const CALL: &str = "call";
/// Prefix of a bet or raise button id: `raise-<total>`.
pub const RAISE_PREFIX: &str = "raise-";

/// Every action of the seat to act (empty when nobody is to act).
pub fn offers(betting: &Betting) -> Vec<AvailableAction> {
    if betting.to_act.is_none() {
        return Vec::new();
    }
    let choices = betting.choices();
    let seat = &betting.seats[betting.to_act.unwrap_or(0)];
    let mut offered = Vec::new();
    if choices.can_check {
        offered.push(button(CHECK.to_string(), "Check".to_string()));
    } else {
        offered.push(button(FOLD.to_string(), "Fold".to_string()));
        let all_in = if choices.call == seat.stack { " (all in)" } else { "" };
        offered.push(button(CALL.to_string(), format!("Call {}{}", choices.call, all_in)));
    }
    for (total, size) in bet_sizes(betting) {
        let label = if total == seat.bet + seat.stack {
            format!("All in ({})", total)
        } else if betting.current_bet == 0 {
            format!("Bet {} ({})", total, size)
        } else {
            format!("Raise to {} ({})", total, size)
        };
        offered.push(button(format!("{}{}", RAISE_PREFIX, total), label));
    }
    offered
}

/// The bet or raise totals offered, with their names, smallest first.
pub fn bet_sizes(betting: &Betting) -> Vec<(u64, &'static str)> {
    let choices = betting.choices();
    let (min_to, max_to) = match choices.raise {
        Some(range) => range,
        None => return Vec::new(),
    };
    let pot_after_call = betting.pot() + choices.call;
    let base = betting.current_bet;
    let mut sizes = vec![(min_to, "min")];
    let steps: [(u64, u64, &str); 4] = [(1, 2, "half pot"), (3, 4, "3/4 pot"), (1, 1, "pot"), (2, 1, "2x pot")];
    for (num, den, name) in steps.iter() {
        let total = base + pot_after_call * num / den;
        if total > min_to && total < max_to && sizes.iter().all(|(t, _)| *t != total) {
            sizes.push((total, name));
        }
    }
    if max_to > min_to {
        sizes.push((max_to, "all in"));
    }
    sizes
}

fn button(id: String, label: String) -> AvailableAction {
    let shown = label.clone();
    AvailableAction::confirm(Action::button_click(Button::new(id, label)), shown)
}

/// The move a button id stands for. Panics on an id hold'em never offers.
pub fn move_of(id: &str) -> Move {
    match id {
        FOLD => Move::Fold,
        CHECK => Move::Check,
        CALL => Move::Call,
        _ => match id.strip_prefix(RAISE_PREFIX).and_then(|total| total.parse().ok()) {
            Some(total) => Move::RaiseTo(total),
            None => panic!("hold'em has no button {:?}", id),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_between_the_minimum_and_all_in() {
        // Four players, blinds 5/10: the pot is 15, calling costs 10.
        let b = Betting::start(&[(1, 1000), (2, 1000), (3, 1000), (4, 1000)], 0, 5, 10);
        let sizes: Vec<u64> = bet_sizes(&b).into_iter().map(|(t, _)| t).collect();
        // Pot after the call 25: half 22, 3/4 28, pot 35, 2x 60; the minimum is 20.
        assert_eq!(sizes, vec![20, 22, 28, 35, 60, 1000]);
        let ids: Vec<String> = offers(&b)
            .into_iter()
            .map(|o| match o.action {
                Action::ButtonClick { button } => button.id,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(ids[..3], ["fold".to_string(), "call".to_string(), "raise-20".to_string()]);
        assert_eq!(move_of("raise-60"), Move::RaiseTo(60));
    }

    #[test]
    fn a_short_stack_is_offered_only_all_in() {
        // Button seat 1: seat 2 posts the small blind (13 left), seat 0 the big; seat 1 calls.
        let mut s = Betting::start(&[(1, 1000), (2, 1000), (3, 18)], 1, 5, 10);
        s.apply(Move::Call);
        assert_eq!(s.to_act, Some(2));
        assert_eq!(bet_sizes(&s), vec![(18, "min")]);
    }
}
