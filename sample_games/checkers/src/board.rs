//! The draughts board as a plain array, and the movement rules on it.
//!
//! Square `rank * 8 + file` (`a1` = 0, `h8` = 63). Only the dark squares,
//! where file + rank is even (`a1`, `c1`, ..., `h8`), are ever used.

/// The two sides. Dark starts on ranks 1-3 and moves first; light starts on
/// ranks 6-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Dark,
    Light,
}

impl Colour {
    /// The other side.
    pub fn opponent(self) -> Colour {
        match self {
            Colour::Dark => Colour::Light,
            Colour::Light => Colour::Dark,
        }
    }

    /// `"dark"` or `"light"`.
    pub fn name(self) -> &'static str {
        match self {
            Colour::Dark => "dark",
            Colour::Light => "light",
        }
    }

    /// The rank step that is "forward" for this side's men: +1 for dark, -1 for light.
    pub fn forward(self) -> i8 {
        match self {
            Colour::Dark => 1,
            Colour::Light => -1,
        }
    }

    /// The far row, where this side's men are crowned: rank 8 for dark, rank 1 for light.
    pub fn crowning_rank(self) -> u8 {
        match self {
            Colour::Dark => 7,
            Colour::Light => 0,
        }
    }
}

/// A piece on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checker {
    pub colour: Colour,
    /// Kings move and capture backwards too.
    pub king: bool,
    /// Jumped earlier in the chain now in progress: it still blocks its square
    /// and cannot be jumped again, and leaves the board when the chain ends.
    pub captured: bool,
}

impl Checker {
    /// A man of `colour`.
    pub fn man(colour: Colour) -> Checker {
        Checker { colour, king: false, captured: false }
    }

    /// A king of `colour`.
    pub fn king(colour: Colour) -> Checker {
        Checker { colour, king: true, captured: false }
    }

    /// The piece kind on the table: `"dark-man"`, `"dark-king"`, `"light-man"`, `"light-king"`.
    pub fn kind(self) -> &'static str {
        match (self.colour, self.king) {
            (Colour::Dark, false) => "dark-man",
            (Colour::Dark, true) => "dark-king",
            (Colour::Light, false) => "light-man",
            (Colour::Light, true) => "light-king",
        }
    }

    /// The checker a piece kind stands for (not captured); `None` for other kinds.
    pub fn from_kind(kind: &str) -> Option<Checker> {
        match kind {
            "dark-man" => Some(Checker::man(Colour::Dark)),
            "dark-king" => Some(Checker::king(Colour::Dark)),
            "light-man" => Some(Checker::man(Colour::Light)),
            "light-king" => Some(Checker::king(Colour::Light)),
            _ => None,
        }
    }
}

use tablehost_sdk::board::{Direction, EIGHT_BY_EIGHT};
pub use tablehost_sdk::board::{square_name, Square};

/// The dark square named `name`; `None` for a light square or anything else.
pub fn parse_square(name: &str) -> Option<Square> {
    tablehost_sdk::board::parse_square(name).filter(|&square| is_dark(square))
}

/// Whether `square` is one of the 32 playable (dark) squares: file + rank even.
fn is_dark(square: Square) -> bool {
    (EIGHT_BY_EIGHT.file_of(square) + EIGHT_BY_EIGHT.rank_of(square)) % 2 == 0
}

/// The 32 playable squares, `a1` first, rank by rank.
pub fn dark_squares() -> impl Iterator<Item = Square> {
    EIGHT_BY_EIGHT.squares().filter(|&square| is_dark(square))
}

/// The rank of `square`, 0 (rank 1) ..= 7 (rank 8).
pub fn rank_of(square: Square) -> u8 {
    EIGHT_BY_EIGHT.rank_of(square)
}

/// One hop of a piece: a plain move, or a jump over `captures`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: Square,
    pub to: Square,
    pub captures: Option<Square>,
}

impl Step {
    /// How the step reads in a log or label: `c3-d4` for a move, `c3xe5` for a jump.
    pub fn notation(&self) -> String {
        let separator = if self.captures.is_some() { 'x' } else { '-' };
        format!("{}{}{}", square_name(self.from), separator, square_name(self.to))
    }
}

/// What stands on each square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub cells: [Option<Checker>; 64],
}

impl Default for Board {
    fn default() -> Self {
        Board { cells: [None; 64] }
    }
}

impl Board {
    /// The standard start: twelve men each, dark on the dark squares of ranks
    /// 1-3, light on those of ranks 6-8.
    pub fn opening() -> Board {
        let mut board = Board::default();
        for square in dark_squares() {
            match rank_of(square) {
                0..=2 => board.cells[square as usize] = Some(Checker::man(Colour::Dark)),
                5..=7 => board.cells[square as usize] = Some(Checker::man(Colour::Light)),
                _ => {}
            }
        }
        board
    }

    /// The piece on `square`, if any.
    pub fn at(&self, square: Square) -> Option<Checker> {
        self.cells[square as usize]
    }

    /// Number of pieces of `colour` still in play (captured ones excluded).
    pub fn count(&self, colour: Colour) -> usize {
        self.cells.iter().flatten().filter(|c| c.colour == colour && !c.captured).count()
    }

    /// The diagonals a piece may move along: forward only for a man, both
    /// ways for a king (forward first, west before east: the order moves are offered in).
    fn directions(checker: Checker) -> &'static [Direction] {
        use Direction::{NorthEast, NorthWest, SouthEast, SouthWest};
        match (checker.king, checker.colour) {
            (true, _) => &[NorthWest, NorthEast, SouthWest, SouthEast],
            (false, Colour::Dark) => &[NorthWest, NorthEast],
            (false, Colour::Light) => &[SouthWest, SouthEast],
        }
    }

    /// Capture rule: the jumps of the piece on `square` over an adjacent
    /// opposing piece (not already captured) to the empty square beyond, in
    /// the directions the piece may move. Appends them to `out`.
    pub fn jumps_from(&self, square: Square, out: &mut Vec<Step>) {
        let mover = match self.at(square) {
            Some(mover) => mover,
            None => return,
        };
        for &direction in Board::directions(mover) {
            let over = EIGHT_BY_EIGHT.step(square, direction, 1);
            let to = EIGHT_BY_EIGHT.step(square, direction, 2);
            if let (Some(over), Some(to)) = (over, to) {
                let victim = self.at(over);
                let capturable = matches!(victim, Some(v) if v.colour != mover.colour && !v.captured);
                if capturable && self.at(to).is_none() {
                    out.push(Step { from: square, to, captures: Some(over) });
                }
            }
        }
    }

    /// Movement rule: the plain one-square diagonal moves of the piece on
    /// `square` to empty squares. Appends them to `out`.
    pub fn moves_from(&self, square: Square, out: &mut Vec<Step>) {
        let mover = match self.at(square) {
            Some(mover) => mover,
            None => return,
        };
        for &direction in Board::directions(mover) {
            if let Some(to) = EIGHT_BY_EIGHT.step(square, direction, 1) {
                if self.at(to).is_none() {
                    out.push(Step { from: square, to, captures: None });
                }
            }
        }
    }

    /// Mandatory capture: every legal step for `colour`. When any of its
    /// pieces can jump, only jumps are legal; otherwise every plain move is.
    /// With `chain` set, only jumps of the piece on that square are legal
    /// (it is in the middle of a multi-jump).
    pub fn legal_steps(&self, colour: Colour, chain: Option<Square>) -> Vec<Step> {
        let mut steps = Vec::with_capacity(16);
        if let Some(square) = chain {
            self.jumps_from(square, &mut steps);
            return steps;
        }
        // One scan for the side's pieces (at most 12), then two cheap passes.
        let mut own = [0 as Square; 32];
        let mut count = 0;
        for square in dark_squares() {
            if matches!(self.at(square), Some(c) if c.colour == colour && !c.captured) {
                own[count] = square;
                count += 1;
            }
        }
        for &square in &own[..count] {
            self.jumps_from(square, &mut steps);
        }
        if steps.is_empty() {
            for &square in &own[..count] {
                self.moves_from(square, &mut steps);
            }
        }
        steps
    }

    /// Whether `colour` has any legal step (the losing condition is having none).
    pub fn has_legal_step(&self, colour: Colour) -> bool {
        !self.legal_steps(colour, None).is_empty()
    }

    /// The board after `step`: the piece moves, a jumped piece is marked
    /// captured (it stays until the chain ends), and a man reaching its far
    /// row is crowned. Returns the board and whether a crowning happened.
    pub fn after_step(&self, step: Step) -> (Board, bool) {
        let mut board = *self;
        let mut mover = board.cells[step.from as usize].take().expect("a step moves a piece");
        let crowned = !mover.king && rank_of(step.to) == mover.colour.crowning_rank();
        mover.king |= crowned;
        board.cells[step.to as usize] = Some(mover);
        if let Some(over) = step.captures {
            if let Some(victim) = board.cells[over as usize].as_mut() {
                victim.captured = true;
            }
        }
        (board, crowned)
    }

    /// Multi-jump rule: after `step`, the same piece must jump on when the step
    /// was a jump, did not crown it (crowning ends the move), and another jump
    /// is open from where it landed.
    pub fn chain_continues(&self, step: Step) -> bool {
        if step.captures.is_none() {
            return false;
        }
        let (after, crowned) = self.after_step(step);
        if crowned {
            return false;
        }
        let mut jumps = Vec::new();
        after.jumps_from(step.to, &mut jumps);
        !jumps.is_empty()
    }

    /// The squares of pieces captured in the chain in progress.
    pub fn captured_squares(&self) -> impl Iterator<Item = Square> + '_ {
        dark_squares().filter(move |&square| matches!(self.at(square), Some(c) if c.captured))
    }

    /// The board with every captured piece taken off (end of a move).
    pub fn without_captured(&self) -> Board {
        let mut board = *self;
        for cell in board.cells.iter_mut() {
            if matches!(cell, Some(c) if c.captured) {
                *cell = None;
            }
        }
        board
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Square {
        parse_square(name).unwrap_or_else(|| panic!("{} is not a dark square", name))
    }

    fn board(pieces: &[(&str, Checker)]) -> Board {
        let mut board = Board::default();
        for (name, checker) in pieces {
            board.cells[sq(name) as usize] = Some(*checker);
        }
        board
    }

    fn notations(steps: &[Step]) -> Vec<String> {
        let mut all: Vec<String> = steps.iter().map(Step::notation).collect();
        all.sort();
        all
    }

    const DARK_MAN: Checker = Checker { colour: Colour::Dark, king: false, captured: false };
    const DARK_KING: Checker = Checker { colour: Colour::Dark, king: true, captured: false };
    const LIGHT_MAN: Checker = Checker { colour: Colour::Light, king: false, captured: false };

    #[test]
    fn only_dark_squares_parse() {
        assert_eq!(dark_squares().count(), 32);
        for square in dark_squares() {
            assert_eq!(parse_square(square_name(square)), Some(square));
        }
        assert_eq!(parse_square("b1"), None);
        assert_eq!(parse_square("a2"), None);
        assert_eq!(parse_square("i1"), None);
    }

    #[test]
    fn opening_has_twelve_each_and_seven_dark_moves() {
        let board = Board::opening();
        assert_eq!(board.count(Colour::Dark), 12);
        assert_eq!(board.count(Colour::Light), 12);
        let steps = board.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4"]);
    }

    #[test]
    fn men_move_only_forward() {
        let board = board(&[("d4", DARK_MAN), ("e5", LIGHT_MAN)]);
        let mut dark = Vec::new();
        board.moves_from(sq("d4"), &mut dark);
        assert_eq!(notations(&dark), vec!["d4-c5"]); // e5 is occupied, no backward moves
        let mut light = Vec::new();
        board.moves_from(sq("e5"), &mut light);
        assert_eq!(notations(&light), vec!["e5-f4"]);
    }

    #[test]
    fn kings_move_and_capture_backwards() {
        let capturing = board(&[("d4", DARK_KING), ("c3", LIGHT_MAN)]);
        let steps = capturing.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["d4xb2"]);
        let lone_king = board(&[("d4", DARK_KING)]);
        let steps = lone_king.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["d4-c3", "d4-c5", "d4-e3", "d4-e5"]);
    }

    #[test]
    fn men_cannot_capture_backwards() {
        let board = board(&[("d4", DARK_MAN), ("c3", LIGHT_MAN)]);
        let steps = board.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["d4-c5", "d4-e5"]);
    }

    #[test]
    fn capture_is_mandatory_for_every_piece() {
        // a1 could move, but c3 can jump d4: only the jump is legal.
        let board = board(&[("a1", DARK_MAN), ("c3", DARK_MAN), ("d4", LIGHT_MAN)]);
        let steps = board.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["c3xe5"]);
    }

    #[test]
    fn a_jump_needs_an_empty_landing_square() {
        let board = board(&[("c3", DARK_MAN), ("d4", LIGHT_MAN), ("e5", LIGHT_MAN)]);
        let steps = board.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&steps), vec!["c3-b4"]);
    }

    #[test]
    fn a_chain_continues_while_jumps_remain() {
        let board = board(&[("a1", DARK_MAN), ("b2", LIGHT_MAN), ("d4", LIGHT_MAN)]);
        let first = board.legal_steps(Colour::Dark, None);
        assert_eq!(notations(&first), vec!["a1xc3"]);
        assert!(board.chain_continues(first[0]));
        let (after, crowned) = board.after_step(first[0]);
        assert!(!crowned);
        let second = after.legal_steps(Colour::Dark, Some(sq("c3")));
        assert_eq!(notations(&second), vec!["c3xe5"]);
        assert!(!after.chain_continues(second[0]));
    }

    #[test]
    fn a_captured_piece_blocks_and_cannot_be_jumped_twice() {
        // King jumps d4 (c3xe5); the captured d4 still blocks, so nothing can land on it.
        let board = board(&[("c3", DARK_KING), ("d4", LIGHT_MAN)]);
        let (after, _) = board.after_step(Step { from: sq("c3"), to: sq("e5"), captures: Some(sq("d4")) });
        let mut jumps = Vec::new();
        after.jumps_from(sq("e5"), &mut jumps);
        assert!(jumps.is_empty());
        assert_eq!(after.count(Colour::Light), 0);
        assert_eq!(after.captured_squares().collect::<Vec<_>>(), vec![sq("d4")]);
        assert_eq!(after.without_captured().at(sq("d4")), None);
    }

    #[test]
    fn crowning_ends_the_move_even_when_a_jump_follows() {
        // d6xf8 crowns; from f8 a king could go on to jump g7, but the move ends.
        let board = board(&[("d6", DARK_MAN), ("e7", LIGHT_MAN), ("g7", LIGHT_MAN)]);
        let jump = Step { from: sq("d6"), to: sq("f8"), captures: Some(sq("e7")) };
        assert!(board.legal_steps(Colour::Dark, None).contains(&jump));
        let (after, crowned) = board.after_step(jump);
        assert!(crowned);
        assert!(after.at(sq("f8")).unwrap().king);
        let mut as_king = Vec::new();
        after.jumps_from(sq("f8"), &mut as_king);
        assert_eq!(notations(&as_king), vec!["f8xh6"], "a king there could jump on");
        assert!(!board.chain_continues(jump), "but crowning ends the move");
    }

    /// A random position: each dark square empty, or a man or king of either side.
    fn random_board(rng: &mut tablehost_sdk::Rng) -> Board {
        let mut board = Board::default();
        for square in dark_squares() {
            board.cells[square as usize] = match rng.below(6u32) {
                0 => Some(DARK_MAN),
                1 => Some(DARK_KING),
                2 => Some(LIGHT_MAN),
                3 => Some(Checker::king(Colour::Light)),
                _ => None,
            };
        }
        board
    }

    #[test]
    fn legal_steps_obey_the_movement_rules_on_random_boards() {
        let mut rng = tablehost_sdk::Rng::new(7);
        for _ in 0..3000 {
            let board = random_board(&mut rng);
            for colour in [Colour::Dark, Colour::Light] {
                let steps = board.legal_steps(colour, None);
                let any_jump = steps.iter().any(|step| step.captures.is_some());
                for step in &steps {
                    let mover = board.at(step.from).expect("a step starts on a piece");
                    assert_eq!(mover.colour, colour);
                    assert_eq!(board.at(step.to), None, "steps land on empty squares");
                    assert_eq!(any_jump, step.captures.is_some(), "capture is mandatory");
                    let rank_step = rank_of(step.to) as i8 - rank_of(step.from) as i8;
                    let distance = if step.captures.is_some() { 2 } else { 1 };
                    assert_eq!(rank_step.abs(), distance);
                    if !mover.king {
                        assert_eq!(rank_step.signum(), colour.forward(), "men go forward only");
                    }
                    if let Some(over) = step.captures {
                        assert_eq!(board.at(over).map(|c| c.colour), Some(colour.opponent()));
                    }
                }
            }
        }
    }

    #[test]
    fn no_pieces_means_no_legal_step() {
        let board = board(&[("c3", DARK_MAN)]);
        assert!(!board.has_legal_step(Colour::Light));
    }

    #[test]
    fn a_blocked_side_has_no_legal_step() {
        // A light man on b2 faces dark men on a1 and c1, with no room behind them to jump.
        let board = board(&[("b2", LIGHT_MAN), ("a1", DARK_MAN), ("c1", DARK_MAN)]);
        assert!(!board.has_legal_step(Colour::Light));
    }
}
