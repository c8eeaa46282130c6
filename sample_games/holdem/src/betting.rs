//! One hand's betting, as a pure value the game keeps in meta data
//! (`betting`): the seats dealt in with their chips, the blinds, whose turn
//! it is, and the no-limit rules of each betting round.
//!
//! Rules:
//! - Blinds: the seat left of the button posts the small blind, the next the
//!   big blind; heads up the button posts the small blind. A blind short of
//!   chips posts what it has and is all in; the bet to call is the largest
//!   blind actually posted.
//! - Order: before the flop the seat after the big blind acts first (heads up
//!   the button); after it the first seat still in left of the button.
//! - A player facing no bet may check or bet; facing a bet, fold, call or
//!   raise. A call for more than one's chips is a call all in.
//! - No-limit minimum raise: a bet is at least the big blind; a raise adds at
//!   least the size of the last full bet or raise of this round (the big
//!   blind before anyone raised). A player may always go all in for less.
//! - An all-in raise smaller than the minimum does not reopen the betting:
//!   a player who already acted this round may then only call or fold.
//! - A round ends when every player still able to act has acted since the
//!   last full raise and matched the bet (or is all in). Nobody acts when at
//!   most one player has chips behind and nothing is owed.

use serde::{Deserialize, Serialize};
use tablehost_sdk::PlayerId;

/// The four betting rounds of a hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Street {
    Preflop,
    Flop,
    Turn,
    River,
}

impl Street {
    /// The round after this one (None after the river).
    pub fn next(self) -> Option<Street> {
        match self {
            Street::Preflop => Some(Street::Flop),
            Street::Flop => Some(Street::Turn),
            Street::Turn => Some(Street::River),
            Street::River => None,
        }
    }

    /// Board cards dealt when this round starts (3 on the flop, 1 on turn and river).
    pub fn board_cards(self) -> usize {
        match self {
            Street::Preflop => 0,
            Street::Flop => 3,
            Street::Turn | Street::River => 1,
        }
    }

    /// The round's name in the log.
    pub fn name(self) -> &'static str {
        match self {
            Street::Preflop => "preflop",
            Street::Flop => "flop",
            Street::Turn => "turn",
            Street::River => "river",
        }
    }
}

/// A player dealt into the hand. Chips are whole chips.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    pub player: PlayerId,
    /// Chips behind (not yet put in).
    pub stack: u64,
    /// Chips put in during the current round.
    pub bet: u64,
    /// Chips put in during the whole hand (includes `bet`).
    pub committed: u64,
    pub folded: bool,
    pub all_in: bool,
    /// Acted in this round since the last full bet or raise.
    pub acted: bool,
}

impl Seat {
    /// A seat for `player` with `stack` chips and nothing put in.
    pub fn new(player: PlayerId, stack: u64) -> Seat {
        Seat { player, stack, bet: 0, committed: 0, folded: false, all_in: false, acted: false }
    }

    /// In the hand: not folded (all-in players are still in).
    pub fn is_live(&self) -> bool {
        !self.folded
    }

    /// Still has decisions to make: in the hand with chips behind.
    pub fn can_act(&self) -> bool {
        !self.folded && !self.all_in
    }

    /// Moves `chips` (at most the stack) from the stack into the pot.
    fn put_in(&mut self, chips: u64) {
        let chips = chips.min(self.stack);
        self.stack -= chips;
        self.bet += chips;
        self.committed += chips;
        if self.stack == 0 {
            self.all_in = true;
        }
    }
}

/// One decision of the player to act. `RaiseTo(total)` is a bet or raise
/// to `total` chips this round (going all in is a raise to bet + stack).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Fold,
    Check,
    Call,
    RaiseTo(u64),
}

/// What the player to act may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices {
    /// Chips needed to call (capped at the stack: a call all in).
    pub call: u64,
    /// Nothing is owed: check (and no fold is offered).
    pub can_check: bool,
    /// `(min_to, max_to)`: the allowed totals of a bet or raise this round;
    /// `max_to` is all in, and `min_to == max_to` when only all in is left.
    pub raise: Option<(u64, u64)>,
}

/// The betting of one hand (serialised into meta data `betting`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Betting {
    /// Players dealt in, in seat order.
    pub seats: Vec<Seat>,
    /// Index into `seats` of the button.
    pub button: usize,
    pub street: Street,
    /// The highest `bet` of this round.
    pub current_bet: u64,
    /// The size of the last full bet or raise this round (the big blind at first).
    pub min_raise: u64,
    pub big_blind: u64,
    /// Index of the seat to act; None when the round is over.
    pub to_act: Option<usize>,
    /// The last seat to bet or raise in this round.
    pub last_aggressor: Option<usize>,
}

impl Betting {
    /// A new hand: `players` with their chips (seat order, at least two,
    /// each with chips), the button's index, and the blinds posted.
    pub fn start(players: &[(PlayerId, u64)], button: usize, small_blind: u64, big_blind: u64) -> Betting {
        assert!(players.len() >= 2, "a hand needs two players");
        assert!(button < players.len(), "the button is a seat");
        let seats = players.iter().map(|&(player, stack)| Seat::new(player, stack)).collect();
        let mut betting = Betting {
            seats,
            button,
            street: Street::Preflop,
            current_bet: 0,
            min_raise: big_blind,
            big_blind,
            to_act: None,
            last_aggressor: None,
        };
        let (small, big) = betting.blind_seats();
        betting.seats[small].put_in(small_blind);
        betting.seats[big].put_in(big_blind);
        betting.current_bet = betting.seats.iter().map(|s| s.bet).max().unwrap_or(0);
        betting.to_act = betting.first_to_act_from(betting.after(big));
        betting
    }

    /// The seats that post the small and the big blind.
    pub fn blind_seats(&self) -> (usize, usize) {
        if self.seats.len() == 2 {
            (self.button, self.after(self.button))
        } else {
            let small = self.after(self.button);
            (small, self.after(small))
        }
    }

    /// The seat index after `seat`, wrapping round.
    pub fn after(&self, seat: usize) -> usize {
        (seat + 1) % self.seats.len()
    }

    /// Chips in the pot so far (every seat's `committed`).
    pub fn pot(&self) -> u64 {
        self.seats.iter().map(|s| s.committed).sum()
    }

    /// The seats still in the hand.
    pub fn live_seats(&self) -> Vec<usize> {
        (0..self.seats.len()).filter(|&i| self.seats[i].is_live()).collect()
    }

    /// Whether someone other than `seat` can still act (so betting means anything).
    fn others_can_act(&self, seat: usize) -> bool {
        self.seats.iter().enumerate().any(|(i, s)| i != seat && s.can_act())
    }

    /// Whether `seat` must still act this round.
    pub fn needs_to_act(&self, seat: usize) -> bool {
        let s = &self.seats[seat];
        s.can_act() && (s.bet < self.current_bet || (!s.acted && self.others_can_act(seat)))
    }

    /// The first seat from `start` on (wrapping) that must act.
    fn first_to_act_from(&self, start: usize) -> Option<usize> {
        (0..self.seats.len()).map(|k| (start + k) % self.seats.len()).find(|&i| self.needs_to_act(i))
    }

    /// What the seat to act may do. Panics when nobody is to act.
    pub fn choices(&self) -> Choices {
        let seat = self.to_act.expect("a seat is to act");
        let s = &self.seats[seat];
        let owed = self.current_bet - s.bet;
        let reopened = !s.acted && self.others_can_act(seat);
        let raise = if s.stack > owed && reopened {
            let max_to = s.bet + s.stack;
            let min_to = (self.current_bet + self.min_raise).min(max_to);
            Some((min_to, max_to))
        } else {
            None
        };
        Choices { call: owed.min(s.stack), can_check: owed == 0, raise }
    }

    /// Whether `mv` is allowed for the seat to act.
    pub fn allows(&self, mv: Move) -> bool {
        let choices = self.choices();
        match mv {
            Move::Fold | Move::Call => !choices.can_check,
            Move::Check => choices.can_check,
            Move::RaiseTo(total) => match choices.raise {
                Some((min_to, max_to)) => total >= min_to && total <= max_to,
                None => false,
            },
        }
    }

    /// Carries out `mv` for the seat to act and passes the turn on.
    /// Panics on a move `allows` refuses.
    pub fn apply(&mut self, mv: Move) {
        assert!(self.allows(mv), "{:?} is not allowed now", mv);
        let seat = self.to_act.expect("a seat is to act");
        match mv {
            Move::Fold => self.seats[seat].folded = true,
            Move::Check => {}
            Move::Call => {
                let owed = self.current_bet - self.seats[seat].bet;
                self.seats[seat].put_in(owed);
            }
            Move::RaiseTo(total) => {
                let raise = total - self.current_bet;
                let before = self.seats[seat].bet;
                self.seats[seat].put_in(total - before);
                if raise >= self.min_raise {
                    // A full raise reopens the betting for everyone else.
                    self.min_raise = raise;
                    for other in self.seats.iter_mut() {
                        other.acted = false;
                    }
                }
                self.current_bet = total;
                self.last_aggressor = Some(seat);
            }
        }
        self.seats[seat].acted = true;
        self.to_act = if self.live_seats().len() < 2 { None } else { self.first_to_act_from(self.after(seat)) };
    }

    /// Ends the round and starts the next: bets join the pot, the minimum
    /// raise is the big blind again, the first seat left of the button acts.
    /// Panics after the river.
    pub fn next_street(&mut self) {
        self.street = self.street.next().expect("no round after the river");
        for seat in self.seats.iter_mut() {
            seat.bet = 0;
            seat.acted = false;
        }
        self.current_bet = 0;
        self.min_raise = self.big_blind;
        self.last_aggressor = None;
        self.to_act = self.first_to_act_from(self.after(self.button));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(stacks: &[u64], button: usize) -> Betting {
        let players: Vec<(PlayerId, u64)> = stacks.iter().enumerate().map(|(i, &s)| (i as PlayerId + 1, s)).collect();
        Betting::start(&players, button, 5, 10)
    }

    #[test]
    fn blinds_and_first_to_act() {
        let b = table(&[1000, 1000, 1000, 1000], 0);
        assert_eq!((b.seats[1].bet, b.seats[2].bet), (5, 10));
        assert_eq!(b.to_act, Some(3));
        // Heads up the button posts the small blind and acts first before the flop.
        let mut h = table(&[1000, 1000], 1);
        assert_eq!((h.seats[1].bet, h.seats[0].bet, h.to_act), (5, 10, Some(1)));
        h.apply(Move::Call);
        assert_eq!(h.to_act, Some(0), "the big blind has the option");
        h.apply(Move::Check);
        assert_eq!(h.to_act, None);
        h.next_street();
        assert_eq!(h.to_act, Some(0), "after the flop the big blind acts first heads up");
    }

    #[test]
    fn a_raise_must_add_at_least_the_last_full_raise() {
        let mut b = table(&[1000, 1000, 1000, 1000], 0);
        assert_eq!(b.choices().raise, Some((20, 1000)));
        assert!(!b.allows(Move::RaiseTo(19)));
        b.apply(Move::RaiseTo(35)); // a raise of 25
        assert_eq!(b.choices().raise, Some((60, 1000)), "the next raise adds at least 25");
        b.apply(Move::RaiseTo(100)); // a raise of 65
        assert_eq!(b.choices().raise, Some((165, 1000)), "the small blind has 995 behind");
    }

    #[test]
    fn a_short_all_in_raise_does_not_reopen_the_betting() {
        // Seat 3 raises to 100, seat 0 goes all in for 150 (a raise of 50 < 90).
        let mut b = table(&[1000, 1000, 1000, 1000], 1);
        // Button 1: blinds 2 and 3, seat 0 first to act.
        b.apply(Move::RaiseTo(100));
        assert_eq!(b.to_act, Some(1));
        b.apply(Move::Call);
        let mut short = table(&[1000, 1000, 1000, 1000], 1);
        short.seats[1].stack = 150; // all in is a total of 150
        short.apply(Move::RaiseTo(100)); // seat 0 raises by 90
        short.apply(Move::RaiseTo(150)); // seat 1 all in: a raise of 50 only
        assert!(short.seats[1].all_in);
        short.apply(Move::Call); // seat 2 (small blind) had not acted: may call
        short.apply(Move::Fold); // seat 3 folds
        assert_eq!(short.to_act, Some(0));
        let choices = short.choices();
        assert_eq!(choices.call, 50);
        assert_eq!(choices.raise, None, "seat 0 already acted and faced no full raise");
    }

    #[test]
    fn a_full_raise_reopens_the_betting() {
        let mut b = table(&[1000, 1000, 1000], 0);
        // Button 0, blinds 1 and 2, seat 0 acts first.
        b.apply(Move::Call);
        b.apply(Move::Call);
        b.apply(Move::RaiseTo(30)); // the big blind raises by 20
        assert_eq!(b.to_act, Some(0));
        assert_eq!(b.choices().raise, Some((50, 1000)));
    }

    #[test]
    fn nobody_acts_when_everyone_else_is_all_in() {
        let mut b = table(&[1000, 50], 0);
        b.apply(Move::RaiseTo(1000)); // button all in
        b.apply(Move::Call); // big blind calls all in for 50
        assert_eq!(b.to_act, None);
        b.next_street();
        assert_eq!(b.to_act, None, "no betting with one player holding chips");
    }

    #[test]
    fn a_short_blind_is_all_in_and_sets_the_bet() {
        let b = table(&[1000, 3, 1000], 0);
        assert!(b.seats[1].all_in);
        assert_eq!(b.current_bet, 10);
        let c = table(&[1000, 1000, 7], 0);
        assert_eq!(c.current_bet, 7);
        assert_eq!(c.to_act, Some(0));
    }

    #[test]
    fn a_bet_on_a_new_street_is_at_least_the_big_blind() {
        let mut b = table(&[1000, 1000], 0);
        b.apply(Move::Call);
        b.apply(Move::Check);
        b.next_street();
        assert_eq!(b.choices().raise, Some((10, 990)));
        b.apply(Move::RaiseTo(40));
        assert_eq!(b.choices().raise, Some((80, 990)));
        assert_eq!(b.last_aggressor, Some(1));
    }
}
