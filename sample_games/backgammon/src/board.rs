//! The backgammon position as plain numbers, and the movement rules on it.
//!
//! Each side counts the board from its own side: point 1 is the last point
//! of its home board (points 1..=6), point 24 the farthest; 25 stands for the
//! bar and 0 for borne off. A checker on point `p` moved by a die `d` goes to
//! `p - d`. The opponent's checker on my point `t` is on its point `25 - t`.

/// Checkers per side.
pub const CHECKERS: u8 = 15;
/// The bar, in a side's own numbering.
pub const BAR: usize = 25;
/// Borne off, in a side's own numbering.
pub const OFF: usize = 0;

/// The two sides. White moves first when the opening roll says so; seat 1 is white.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    White,
    Black,
}

impl Side {
    /// The other side.
    pub fn opponent(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// `"white"` or `"black"`: the checkers' piece kind and the name in the log.
    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    /// Position in [`Board::counts`]: white 0, black 1.
    pub fn index(self) -> usize {
        match self {
            Side::White => 0,
            Side::Black => 1,
        }
    }

    /// The side of a checker piece kind; `None` for any other kind.
    pub fn from_name(name: &str) -> Option<Side> {
        match name {
            "white" => Some(Side::White),
            "black" => Some(Side::Black),
            _ => None,
        }
    }
}

/// One checker move: from a point (or the bar) by one die.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Step {
    /// The mover's own point number, 1..=24, or [`BAR`].
    pub from: usize,
    /// The die used, 1..=6.
    pub die: u8,
}

impl Step {
    /// Where the checker lands in the mover's numbering: `from - die`, or
    /// [`OFF`] when that is 0 or less (bearing off).
    pub fn to(self) -> usize {
        self.from.saturating_sub(usize::from(self.die))
    }
}

/// How a finished game counts (before the cube multiplies it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Win {
    /// 1 point: the loser has borne off at least one checker.
    Single,
    /// 2 points: the loser has borne off none.
    Gammon,
    /// 3 points: the loser has borne off none and still has a checker on
    /// the bar or in the winner's home board.
    Backgammon,
}

impl Win {
    /// The points before the cube: 1, 2 or 3.
    pub fn points(self) -> u32 {
        match self {
            Win::Single => 1,
            Win::Gammon => 2,
            Win::Backgammon => 3,
        }
    }

    /// `"single game"`, `"gammon"` or `"backgammon"`.
    pub fn name(self) -> &'static str {
        match self {
            Win::Single => "single game",
            Win::Gammon => "gammon",
            Win::Backgammon => "backgammon",
        }
    }
}

/// Checkers per point, per side, each side in its own numbering
/// (`counts[side.index()][p]`, p = 0 off, 1..=24 points, 25 bar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Board {
    pub counts: [[u8; 26]; 2],
}

impl Board {
    /// The standard start, the same for each side in its own numbering: two
    /// on the 24-point, five on the 13, three on the 8, five on the 6.
    pub fn opening() -> Board {
        let mut board = Board::default();
        for side in [Side::White, Side::Black] {
            for (point, count) in [(24, 2), (13, 5), (8, 3), (6, 5)] {
                board.counts[side.index()][point] = count;
            }
        }
        board
    }

    /// `side`'s checkers on its own point `point` (0 off, 25 bar).
    pub fn at(&self, side: Side, point: usize) -> u8 {
        self.counts[side.index()][point]
    }

    /// The opponent's checkers on `side`'s point `point` (1..=24).
    pub fn opponent_at(&self, side: Side, point: usize) -> u8 {
        self.counts[side.opponent().index()][25 - point]
    }

    /// Whether every checker of `side` still in play is in its home board
    /// (points 1..=6): the condition for bearing off.
    pub fn all_home(&self, side: Side) -> bool {
        self.counts[side.index()][7..=BAR].iter().all(|&count| count == 0)
    }

    /// Whether `side` has a checker on a point above `point` (the
    /// higher-die rule looks for one before bearing off from `point` with a
    /// die larger than needed).
    fn has_checker_above(&self, side: Side, point: usize) -> bool {
        self.counts[side.index()][point + 1..=BAR].iter().any(|&count| count > 0)
    }

    /// Whether `step` is legal for `side` on its own, ignoring the other dice.
    ///
    /// Rules: a checker on the bar must enter before any other moves; a
    /// checker may land on a point holding at most one opposing checker;
    /// bearing off needs every checker home, and a die larger than the
    /// checker's point may bear it off only when no checker of the side
    /// stands on a higher point.
    pub fn is_legal(&self, side: Side, step: Step) -> bool {
        let own = &self.counts[side.index()];
        if own[step.from] == 0 || (own[BAR] > 0 && step.from != BAR) {
            return false;
        }
        let die = usize::from(step.die);
        if step.from > die {
            return self.opponent_at(side, step.from - die) <= 1;
        }
        if !self.all_home(side) {
            return false;
        }
        step.from == die || !self.has_checker_above(side, step.from)
    }

    /// Every legal single step of `side` with `die`, lowest source first.
    pub fn steps_with(&self, side: Side, die: u8) -> Vec<Step> {
        (1..=BAR).map(|from| Step { from, die }).filter(|&step| self.is_legal(side, step)).collect()
    }

    /// The board after `side` makes `step` (legal): a lone opposing checker
    /// on the landing point is hit and goes to its bar. Returns whether one was hit.
    pub fn apply(&mut self, side: Side, step: Step) -> bool {
        let to = step.to();
        self.counts[side.index()][step.from] -= 1;
        self.counts[side.index()][to] += 1;
        if to != OFF && self.opponent_at(side, to) == 1 {
            let opponent = side.opponent().index();
            self.counts[opponent][25 - to] = 0;
            self.counts[opponent][BAR] += 1;
            return true;
        }
        false
    }

    /// The most dice of `dice` that `side` can use in sequence (in any order).
    pub fn max_dice_usable(&self, side: Side, dice: &[u8]) -> usize {
        if dice.is_empty() {
            return 0;
        }
        let mut best = 0;
        for die in distinct(dice) {
            let rest = without_one(dice, die);
            for step in self.steps_with(side, die) {
                let mut after = *self;
                after.apply(side, step);
                best = best.max(1 + after.max_dice_usable(side, &rest));
                if best == dice.len() {
                    return best;
                }
            }
        }
        best
    }

    /// The steps `side` may take now with `dice` left to play.
    ///
    /// Rules: a player must use as many of the dice as any legal sequence
    /// allows (both, or all four of a double); when only one of two
    /// different dice can be used, the larger must be used if it can be.
    /// So a step is legal when some sequence starting with it uses the most
    /// dice possible; taken one at a time, the rule is applied afresh to the
    /// dice left after each step.
    pub fn legal_steps(&self, side: Side, dice: &[u8]) -> Vec<Step> {
        let most = self.max_dice_usable(side, dice);
        if most == 0 {
            return Vec::new();
        }
        let mut steps = Vec::new();
        for die in distinct(dice) {
            let rest = without_one(dice, die);
            for step in self.steps_with(side, die) {
                let mut after = *self;
                after.apply(side, step);
                if 1 + after.max_dice_usable(side, &rest) == most {
                    steps.push(step);
                }
            }
        }
        let two_different = dice.len() == 2 && dice[0] != dice[1];
        if most == 1 && two_different {
            let larger = dice[0].max(dice[1]);
            if steps.iter().any(|step| step.die == larger) {
                steps.retain(|step| step.die == larger);
            }
        }
        steps.sort();
        steps
    }

    /// Checkers `side` has borne off.
    pub fn borne_off(&self, side: Side) -> u8 {
        self.at(side, OFF)
    }

    /// `side`'s pip count: the sum over its checkers of the points each has
    /// still to travel (the bar counts 25).
    pub fn pips(&self, side: Side) -> u32 {
        self.counts[side.index()].iter().enumerate().map(|(point, &count)| point as u32 * u32::from(count)).sum()
    }

    /// How `winner`'s win counts, once it has borne off all 15.
    ///
    /// Rule: a gammon when the loser has borne off none; a backgammon when,
    /// besides, the loser has a checker on the bar or in the winner's home
    /// board (the loser's points 19..=24).
    pub fn win_kind(&self, winner: Side) -> Win {
        let loser = winner.opponent();
        if self.borne_off(loser) > 0 {
            Win::Single
        } else if self.counts[loser.index()][19..=BAR].iter().any(|&count| count > 0) {
            Win::Backgammon
        } else {
            Win::Gammon
        }
    }
}

/// The distinct values of `dice`, in first-seen order.
fn distinct(dice: &[u8]) -> Vec<u8> {
    let mut values: Vec<u8> = Vec::with_capacity(2);
    for &die in dice {
        if !values.contains(&die) {
            values.push(die);
        }
    }
    values
}

/// `dice` with one `die` taken out.
pub fn without_one(dice: &[u8], die: u8) -> Vec<u8> {
    let mut rest = dice.to_vec();
    if let Some(at) = rest.iter().position(|&d| d == die) {
        rest.remove(at);
    }
    rest
}

/// The dice a roll gives to play: both, or four of a double.
pub fn dice_to_play(a: u8, b: u8) -> Vec<u8> {
    if a == b {
        vec![a; 4]
    } else {
        vec![a, b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board from (point, count) lists in each side's own numbering.
    fn board(white: &[(usize, u8)], black: &[(usize, u8)]) -> Board {
        let mut board = Board::default();
        for &(point, count) in white {
            board.counts[0][point] = count;
        }
        for &(point, count) in black {
            board.counts[1][point] = count;
        }
        let placed: u8 = board.counts[0].iter().sum();
        board.counts[0][OFF] += CHECKERS - placed;
        let placed: u8 = board.counts[1].iter().sum();
        board.counts[1][OFF] += CHECKERS - placed;
        board
    }

    fn steps(board: &Board, dice: &[u8]) -> Vec<(usize, u8)> {
        board.legal_steps(Side::White, dice).into_iter().map(|s| (s.from, s.die)).collect()
    }

    /// Black's prime on white's 18..=23 (black's 2..=7): white's 24s cannot move.
    const PRIME: [(usize, u8); 6] = [(2, 2), (3, 2), (4, 2), (5, 2), (6, 2), (7, 2)];

    fn with(extra: &[(usize, u8)], base: &[(usize, u8)]) -> Vec<(usize, u8)> {
        base.iter().chain(extra.iter()).copied().collect()
    }

    #[test]
    fn the_opening_has_fifteen_each_and_167_pips() {
        let board = Board::opening();
        for side in [Side::White, Side::Black] {
            assert_eq!(board.counts[side.index()].iter().map(|&c| u32::from(c)).sum::<u32>(), 15);
            assert_eq!(board.pips(side), 167);
        }
        assert_eq!(board.opponent_at(Side::White, 1), 2, "black's back checkers sit on white's 1");
        assert_eq!(board.opponent_at(Side::White, 12), 5, "black's 13 is white's 12");
    }

    #[test]
    fn a_point_with_two_opposing_checkers_is_closed_and_a_blot_is_hit() {
        // Black holds white's 7 (its 18) with two and has a blot on white's 8 (its 17).
        let mut board = board(&[(10, 1)], &[(18, 2), (17, 1)]);
        assert!(!board.is_legal(Side::White, Step { from: 10, die: 3 }));
        assert!(board.is_legal(Side::White, Step { from: 10, die: 2 }));
        assert!(board.apply(Side::White, Step { from: 10, die: 2 }));
        assert_eq!(board.at(Side::Black, BAR), 1);
        assert_eq!(board.at(Side::Black, 17), 0);
    }

    #[test]
    fn a_checker_on_the_bar_enters_before_anything_else() {
        // Black's 1 is white's 24: entering with a 1 lands there, and it is closed.
        let board = board(&[(BAR, 1), (13, 2)], &[(1, 2)]);
        assert_eq!(steps(&board, &[1, 3]), vec![(BAR, 3)]);
    }

    #[test]
    fn a_step_that_strands_the_other_die_is_refused() {
        // White on 13 and 7 (the rest home on 1), dice 6-1; black holds white's 12 (its 13).
        // 7-6 is legal alone, but then no 1 can be played (13-1 = 12 is closed, and
        // nothing bears off with a checker outside). 13-6 then 7-1, or 7-1 then 13-6,
        // use both dice, so those are the legal first steps.
        let board = board(&[(13, 1), (7, 1), (1, 13)], &[(13, 2)]);
        assert!(board.is_legal(Side::White, Step { from: 7, die: 6 }));
        assert_eq!(steps(&board, &[6, 1]), vec![(7, 1), (13, 6)]);
    }

    #[test]
    fn when_either_die_alone_can_be_played_the_larger_must_be() {
        // One white checker on 10, the others stuck on 24 behind the prime; black also
        // holds white's 2 (its 23). 10-5 = 5 then 5-3 = 2 is closed; 10-3 = 7 then
        // 7-5 = 2 is closed: only one die can be used, so it must be the 5.
        let board = board(&[(10, 1), (24, 14)], &with(&[(23, 2)], &PRIME));
        assert!(board.is_legal(Side::White, Step { from: 10, die: 3 }));
        assert_eq!(steps(&board, &[5, 3]), vec![(10, 5)]);
        assert_eq!(steps(&board, &[3, 5]), vec![(10, 5)], "die order does not matter");
    }

    #[test]
    fn when_only_the_smaller_die_can_be_played_it_is() {
        // White on 8 (the rest stuck on 24), dice 6-4: 8-6 = 2 is closed; after 8-4 the 6
        // cannot be used (no bearing off with checkers outside): the 4 alone.
        let board = board(&[(8, 1), (24, 14)], &with(&[(23, 2)], &PRIME));
        assert_eq!(steps(&board, &[6, 4]), vec![(8, 4)]);
    }

    #[test]
    fn doubles_give_four_moves_and_must_use_as_many_as_possible() {
        let open = board(&[(13, 2)], &[]);
        assert_eq!(open.max_dice_usable(Side::White, &dice_to_play(3, 3)), 4);
        // Black holds white's 7 (its 18): 13-3 = 10, then 10-3 = 7 is closed.
        let board = board(&[(13, 1), (1, 14)], &[(18, 2)]);
        assert_eq!(board.max_dice_usable(Side::White, &dice_to_play(3, 3)), 1);
        assert_eq!(steps(&board, &[3, 3, 3, 3]), vec![(13, 3)]);
        assert_eq!(Board::default().legal_steps(Side::White, &[3, 3]), vec![], "no checkers, no steps");
    }

    #[test]
    fn bearing_off_needs_every_checker_home() {
        let board1 = board(&[(7, 1), (3, 2)], &[]);
        assert!(!board1.is_legal(Side::White, Step { from: 3, die: 3 }));
        let board2 = board(&[(6, 1), (3, 2)], &[]);
        assert!(board2.is_legal(Side::White, Step { from: 3, die: 3 }));
    }

    #[test]
    fn a_higher_die_bears_off_only_from_the_highest_point() {
        // Checkers on 5 and 3, die 6: only the 5 comes off.
        let board = board(&[(5, 1), (3, 1)], &[]);
        assert!(board.is_legal(Side::White, Step { from: 5, die: 6 }));
        assert!(!board.is_legal(Side::White, Step { from: 3, die: 6 }));
        assert!(!board.is_legal(Side::White, Step { from: 3, die: 4 }), "a checker stands on 5");
        assert!(board.is_legal(Side::White, Step { from: 3, die: 3 }));
        // A 4 bears nothing off: the 5 must move down to 1.
        assert_eq!(steps(&board, &[4]), vec![(5, 4)]);
    }

    #[test]
    fn bearing_off_with_both_dice_in_either_order() {
        // Checkers on 2 and 1, dice 6-5: the 1 may not go first (a checker stands above it).
        let board = board(&[(2, 1), (1, 1)], &[]);
        assert_eq!(steps(&board, &[6, 5]), vec![(2, 5), (2, 6)]);
        let mut after = board;
        after.apply(Side::White, Step { from: 2, die: 6 });
        assert_eq!(after.legal_steps(Side::White, &[5]), vec![Step { from: 1, die: 5 }]);
        after.apply(Side::White, Step { from: 1, die: 5 });
        assert_eq!(after.borne_off(Side::White), 15);
    }

    #[test]
    fn gammon_and_backgammon() {
        let single = board(&[], &[(3, 1)]);
        assert_eq!(single.win_kind(Side::White), Win::Single);
        let gammon = board(&[], &[(13, 15)]);
        assert_eq!(gammon.win_kind(Side::White), Win::Gammon);
        let backgammon = board(&[], &[(13, 14), (20, 1)]);
        assert_eq!(backgammon.win_kind(Side::White), Win::Backgammon);
        let on_bar = board(&[], &[(13, 14), (BAR, 1)]);
        assert_eq!(on_bar.win_kind(Side::White), Win::Backgammon);
    }
}
