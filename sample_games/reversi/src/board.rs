//! The 8x8 board as two bitboards, and the placement rule on it.
//!
//! Bit `rank * 8 + file` stands for one square, with `a1` = bit 0, `h1` = bit 7
//! and `h8` = bit 63. Everything here is pure arithmetic on `u64`: the table is
//! read once into a [`Board`] and every rule question is answered from it.

/// The two disc colours. Dark moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Dark,
    Light,
}

impl Colour {
    /// The other colour.
    pub fn opponent(self) -> Colour {
        match self {
            Colour::Dark => Colour::Light,
            Colour::Light => Colour::Dark,
        }
    }

    /// The piece kind a disc of this colour shows: `"dark"` or `"light"`.
    pub fn kind(self) -> &'static str {
        match self {
            Colour::Dark => "dark",
            Colour::Light => "light",
        }
    }

    /// The colour a disc kind stands for; `None` for any other kind.
    pub fn from_kind(kind: &str) -> Option<Colour> {
        match kind {
            "dark" => Some(Colour::Dark),
            "light" => Some(Colour::Light),
            _ => None,
        }
    }
}

pub use tablehost_sdk::board::{parse_square, square_name, squares_of as squares, Direction, Square, DIRECTIONS};

/// Which squares hold a dark disc and which a light one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Board {
    pub dark: u64,
    pub light: u64,
}

impl Board {
    /// The standard four-disc opening: light on d4 and e5, dark on d5 and e4.
    pub fn opening() -> Board {
        let bit = |name| 1u64 << parse_square(name).expect("opening squares are valid");
        Board { dark: bit("d5") | bit("e4"), light: bit("d4") | bit("e5") }
    }

    /// The parallel opening (option `opening = "parallel"`): light on d4 and
    /// e4, dark on d5 and e5, side by side instead of crossed.
    pub fn parallel_opening() -> Board {
        let bit = |name| 1u64 << parse_square(name).expect("opening squares are valid");
        Board { dark: bit("d5") | bit("e5"), light: bit("d4") | bit("e4") }
    }

    /// The discs of `colour`.
    pub fn discs(&self, colour: Colour) -> u64 {
        match colour {
            Colour::Dark => self.dark,
            Colour::Light => self.light,
        }
    }

    /// The squares holding no disc.
    pub fn empty(&self) -> u64 {
        !(self.dark | self.light)
    }

    /// The colour of the disc on `square`, if any.
    pub fn colour_at(&self, square: Square) -> Option<Colour> {
        let bit = 1u64 << square;
        if self.dark & bit != 0 {
            Some(Colour::Dark)
        } else if self.light & bit != 0 {
            Some(Colour::Light)
        } else {
            None
        }
    }

    /// Puts a disc of `colour` on `square` (it must be empty).
    pub fn put(&mut self, square: Square, colour: Colour) {
        match colour {
            Colour::Dark => self.dark |= 1u64 << square,
            Colour::Light => self.light |= 1u64 << square,
        }
    }

    /// Number of discs of `colour` on the board (0..=64).
    pub fn count(&self, colour: Colour) -> u32 {
        self.discs(colour).count_ones()
    }

    /// Placement rule: the empty squares where `colour` may place a disc, i.e.
    /// where at least one straight line of opposing discs would be closed off
    /// by a disc of `colour` at its far end.
    pub fn legal_placements(&self, colour: Colour) -> u64 {
        let own = self.discs(colour);
        let opponent = self.discs(colour.opponent());
        let mut placements = 0;
        for direction in DIRECTIONS {
            // A run of opposing discs adjacent to one of ours, grown up to 6 long.
            let mut run = direction.shift(own) & opponent;
            for _ in 0..5 {
                run |= direction.shift(run) & opponent;
            }
            placements |= direction.shift(run);
        }
        placements & self.empty()
    }

    /// Whether `colour` has any legal placement.
    pub fn can_place(&self, colour: Colour) -> bool {
        self.legal_placements(colour) != 0
    }

    /// Flipping rule: the opposing discs a disc of `colour` on `square` turns
    /// over, along all eight lines at once. Empty when the placement is illegal
    /// (including when `square` is occupied).
    pub fn flips(&self, colour: Colour, square: Square) -> u64 {
        let placed = 1u64 << square;
        if self.empty() & placed == 0 {
            return 0;
        }
        let own = self.discs(colour);
        let opponent = self.discs(colour.opponent());
        let mut flipped = 0;
        for direction in DIRECTIONS {
            let mut line = 0;
            let mut cursor = direction.shift(placed);
            while cursor & opponent != 0 {
                line |= cursor;
                cursor = direction.shift(cursor);
            }
            if cursor & own != 0 {
                flipped |= line;
            }
        }
        flipped
    }

    /// The board after `colour` places on `square`, turning over `flipped`.
    pub fn after_placement(&self, colour: Colour, square: Square, flipped: u64) -> Board {
        let placed = 1u64 << square;
        match colour {
            Colour::Dark => Board { dark: self.dark | placed | flipped, light: self.light & !flipped },
            Colour::Light => Board { light: self.light | placed | flipped, dark: self.dark & !flipped },
        }
    }

    /// End rule: the game is over when neither colour can place a disc.
    pub fn neither_can_place(&self) -> bool {
        !self.can_place(Colour::Dark) && !self.can_place(Colour::Light)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> u64 {
        names.iter().map(|name| 1u64 << parse_square(name).unwrap()).fold(0, |a, b| a | b)
    }

    fn names(set: u64) -> Vec<&'static str> {
        squares(set).map(square_name).collect()
    }

    #[test]
    fn square_names_round_trip() {
        for square in 0..64u8 {
            assert_eq!(parse_square(square_name(square)), Some(square));
        }
        assert_eq!(parse_square("i1"), None);
        assert_eq!(parse_square("a9"), None);
        assert_eq!(parse_square("a10"), None);
        assert_eq!(parse_square(""), None);
    }

    #[test]
    fn dark_opening_placements_are_the_four_classic_ones() {
        let board = Board::opening();
        assert_eq!(names(board.legal_placements(Colour::Dark)), vec!["d3", "c4", "f5", "e6"]);
        assert_eq!(names(board.legal_placements(Colour::Light)), vec!["e3", "f4", "c5", "d6"]);
    }

    #[test]
    fn opening_placement_flips_exactly_one_disc() {
        let board = Board::opening();
        let d3 = parse_square("d3").unwrap();
        assert_eq!(names(board.flips(Colour::Dark, d3)), vec!["d4"]);
        let after = board.after_placement(Colour::Dark, d3, board.flips(Colour::Dark, d3));
        assert_eq!(after.count(Colour::Dark), 4);
        assert_eq!(after.count(Colour::Light), 1);
    }

    #[test]
    fn a_placement_flips_lines_in_all_eight_directions() {
        // Dark on d4 surrounded by light at distance 1 and dark at distance 2, each way.
        let light = set(&["d5", "d3", "e4", "c4", "e5", "c5", "e3", "c3"]);
        let dark = set(&["d6", "d2", "f4", "b4", "f6", "b6", "f2", "b2"]);
        let board = Board { dark, light };
        let d4 = parse_square("d4").unwrap();
        assert_eq!(board.flips(Colour::Dark, d4), light);
        assert_ne!(board.legal_placements(Colour::Dark) & (1 << d4), 0);
    }

    #[test]
    fn each_direction_alone_flips_its_own_line() {
        let d4 = parse_square("d4").unwrap();
        let cases: [(&str, &str, Direction); 8] = [
            ("d5", "d6", Direction::North),
            ("d3", "d2", Direction::South),
            ("e4", "f4", Direction::East),
            ("c4", "b4", Direction::West),
            ("e5", "f6", Direction::NorthEast),
            ("c5", "b6", Direction::NorthWest),
            ("e3", "f2", Direction::SouthEast),
            ("c3", "b2", Direction::SouthWest),
        ];
        for (between, closer, direction) in cases {
            let board = Board { dark: set(&[closer]), light: set(&[between]) };
            assert_eq!(board.flips(Colour::Dark, d4), set(&[between]), "{:?}", direction);
            assert_eq!(board.legal_placements(Colour::Dark), 1 << d4, "{:?}", direction);
        }
    }

    #[test]
    fn a_line_without_a_closing_disc_flips_nothing() {
        // Light runs to the board edge: nothing to close it.
        let board = Board { dark: 0, light: set(&["b1", "c1"]) };
        assert_eq!(board.flips(Colour::Dark, parse_square("a1").unwrap()), 0);
        // An empty square breaks the line.
        let board = Board { dark: set(&["e1"]), light: set(&["b1", "c1"]) };
        assert_eq!(board.flips(Colour::Dark, parse_square("a1").unwrap()), 0);
    }

    #[test]
    fn lines_do_not_wrap_around_the_board_edge() {
        // h1 light, a2 dark: "east of h1" must not be a2.
        let board = Board { dark: set(&["a2"]), light: set(&["h1"]) };
        assert_eq!(board.flips(Colour::Dark, parse_square("g1").unwrap()), 0);
        assert_eq!(board.legal_placements(Colour::Dark), 0);
    }

    #[test]
    fn occupied_squares_are_never_legal() {
        let board = Board::opening();
        assert_eq!(board.flips(Colour::Dark, parse_square("d4").unwrap()), 0);
    }

    #[test]
    fn bulk_placements_agree_with_the_line_walker_on_random_boards() {
        let mut rng = tablehost_sdk::Rng::new(42);
        for round in 0..3000 {
            // Alternate dense (~1/2) and sparse (~1/4) boards.
            let occupied = if round % 2 == 0 { rng.next_u64() } else { rng.next_u64() & rng.next_u64() };
            let colours = rng.next_u64();
            let board = Board { dark: occupied & colours, light: occupied & !colours };
            for colour in [Colour::Dark, Colour::Light] {
                let legal = board.legal_placements(colour);
                for square in 0..64u8 {
                    let flipped = board.flips(colour, square);
                    assert_eq!(legal >> square & 1 == 1, flipped != 0, "{:?} {:?}", board, square);
                    assert_eq!(flipped & !board.discs(colour.opponent()), 0, "only opposing discs turn");
                }
            }
        }
    }

    #[test]
    fn full_board_means_neither_can_place() {
        let board = Board { dark: !0u64 << 32, light: !0u64 >> 32 };
        assert!(board.neither_can_place());
    }
}
