//! Dice: roll with the move's `Rng` and say in the log what was rolled, so a
//! player reading the log (and a replay) sees every die.
//!
//! A roll draws randomness, so the move that rolls can never be undone.

use crate::rng::Rng;
use crate::state::LogEntry;
use crate::table::Table;

/// The dice of one roll, in the order they were drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roll {
    /// Faces per die (6 for ordinary dice).
    pub sides: u8,
    /// Each die's value, 1..=sides, in draw order.
    pub values: Vec<u8>,
}

impl Roll {
    /// Rolls `count` dice of `sides` faces: `count` calls of `rng.roll(sides)`.
    /// Panics when `sides` is 0.
    pub fn new(rng: &mut Rng, count: usize, sides: u8) -> Roll {
        let values = (0..count).map(|_| rng.roll(sides)).collect();
        Roll { sides, values }
    }

    /// The sum of the dice.
    pub fn total(&self) -> u32 {
        self.values.iter().map(|&v| u32::from(v)).sum()
    }

    /// Whether there are at least two dice and all show the same value.
    pub fn is_doubles(&self) -> bool {
        self.values.len() >= 2 && self.values.iter().all(|&v| v == self.values[0])
    }

    /// The values from highest to lowest (how Risk compares dice).
    pub fn highest_first(&self) -> Vec<u8> {
        let mut values = self.values.clone();
        values.sort_unstable_by(|a, b| b.cmp(a));
        values
    }

    /// The values for a log line: `"5"`, `"3 and 5"`, `"6, 6 and 2"`.
    pub fn describe(&self) -> String {
        let words: Vec<String> = self.values.iter().map(u8::to_string).collect();
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {}", rest.join(", "), last),
            Some((last, _)) => last.clone(),
            None => "nothing".to_string(),
        }
    }
}

/// Rolls `count` dice of `sides` faces and logs `"<who> rolled 3 and 5"`,
/// a line every viewer reads. Returns the roll. Panics when `sides` is 0.
pub fn roll_logged(table: &mut Table, rng: &mut Rng, who: &str, count: usize, sides: u8) -> Roll {
    let roll = Roll::new(rng, count, sides);
    table.log(LogEntry::new(format!("{} rolled {}", who, roll.describe())));
    roll
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;

    #[test]
    fn a_roll_draws_one_value_per_die_in_range() {
        let mut rng = Rng::new(42);
        let mut check = Rng::new(42);
        let roll = Roll::new(&mut rng, 5, 6);
        let expected: Vec<u8> = (0..5).map(|_| check.roll(6u8)).collect();
        assert_eq!(roll.values, expected);
        assert!(roll.values.iter().all(|&v| (1..=6).contains(&v)));
        assert!(rng.used());
    }

    #[test]
    fn doubles_totals_and_order() {
        let roll = Roll { sides: 6, values: vec![4, 4] };
        assert!(roll.is_doubles());
        assert_eq!(roll.total(), 8);
        let roll = Roll { sides: 6, values: vec![2, 6, 3] };
        assert!(!roll.is_doubles());
        assert_eq!(roll.highest_first(), vec![6, 3, 2]);
        assert_eq!(roll.describe(), "2, 6 and 3");
        assert!(!Roll { sides: 6, values: vec![4] }.is_doubles());
    }

    #[test]
    fn the_log_names_every_die() {
        let mut table = Table::new(State::default());
        let roll = roll_logged(&mut table, &mut Rng::new(7), "Ann", 2, 6);
        let line = &table.state().log[0].text;
        assert_eq!(*line, format!("Ann rolled {} and {}", roll.values[0], roll.values[1]));
        assert_eq!(table.patches().len(), 1);
    }
}
