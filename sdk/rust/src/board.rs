//! Square boards: coordinates, the names `a1`..`h8` (files are letters from
//! `a`, ranks numbers from `1`), and walking in the eight directions.
//!
//! A square is an index `rank * files + file` (0-based), so on the 8×8 board
//! `a1` = 0, `h1` = 7, `a2` = 8 and `h8` = 63 — the bit order of a `u64`
//! bitboard. Use the square's name as its space id; [`square_name`] gives the
//! 8×8 names without allocating, [`Grid`] any board up to 26 files × 99 ranks.

/// A square index, `rank * files + file`, 0-based.
pub type Square = u8;

/// The eight directions, as (file step, rank step): north is towards higher
/// ranks (rank 8 is "up" from white's or dark's side), east towards file h.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    North,
    South,
    East,
    West,
    NorthEast,
    NorthWest,
    SouthEast,
    SouthWest,
}

/// Every direction: the four orthogonal, then the four diagonal.
pub const DIRECTIONS: [Direction; 8] = [
    Direction::North,
    Direction::South,
    Direction::East,
    Direction::West,
    Direction::NorthEast,
    Direction::NorthWest,
    Direction::SouthEast,
    Direction::SouthWest,
];

/// The four orthogonal directions (rook lines).
pub const ORTHOGONAL: [Direction; 4] = [Direction::North, Direction::South, Direction::East, Direction::West];

/// The four diagonal directions (bishop lines, draughts moves).
pub const DIAGONAL: [Direction; 4] =
    [Direction::NorthEast, Direction::NorthWest, Direction::SouthEast, Direction::SouthWest];

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

impl Direction {
    /// The (file step, rank step) of one step, each -1, 0 or 1.
    pub fn delta(self) -> (i8, i8) {
        match self {
            Direction::North => (0, 1),
            Direction::South => (0, -1),
            Direction::East => (1, 0),
            Direction::West => (-1, 0),
            Direction::NorthEast => (1, 1),
            Direction::NorthWest => (-1, 1),
            Direction::SouthEast => (1, -1),
            Direction::SouthWest => (-1, -1),
        }
    }

    /// The direction of (file step, rank step), each -1, 0 or 1; `None` for (0, 0)
    /// or anything else.
    pub fn from_delta(file_step: i8, rank_step: i8) -> Option<Direction> {
        DIRECTIONS.iter().copied().find(|d| d.delta() == (file_step, rank_step))
    }

    /// The opposite direction.
    pub fn opposite(self) -> Direction {
        let (file_step, rank_step) = self.delta();
        Direction::from_delta(-file_step, -rank_step).expect("every direction has an opposite")
    }

    /// On an 8×8 bitboard (bit = square index): every square of `set` moved
    /// one step this way; steps off the board vanish (file masks stop a step
    /// east of file h from wrapping onto file a).
    pub fn shift(self, set: u64) -> u64 {
        match self {
            Direction::North => set << 8,
            Direction::South => set >> 8,
            Direction::East => (set << 1) & !FILE_A,
            Direction::West => (set >> 1) & !FILE_H,
            Direction::NorthEast => (set << 9) & !FILE_A,
            Direction::NorthWest => (set << 7) & !FILE_H,
            Direction::SouthEast => (set >> 7) & !FILE_A,
            Direction::SouthWest => (set >> 9) & !FILE_H,
        }
    }
}

/// A rectangular board of `files` × `ranks` squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    files: u8,
    ranks: u8,
}

/// The 8×8 board of chess, draughts and reversi.
pub const EIGHT_BY_EIGHT: Grid = Grid { files: 8, ranks: 8 };

impl Grid {
    /// A board of `files` (1..=26, named `a`..) by `ranks` (1..=99) squares
    /// with at most 256 squares (a [`Square`] is a u8). Panics otherwise.
    pub fn new(files: u8, ranks: u8) -> Grid {
        assert!((1..=26).contains(&files) && (1..=99).contains(&ranks), "no {}x{} board", files, ranks);
        assert!(usize::from(files) * usize::from(ranks) <= 256, "a {}x{} board has too many squares", files, ranks);
        Grid { files, ranks }
    }

    /// Number of files (columns).
    pub fn files(self) -> u8 {
        self.files
    }

    /// Number of ranks (rows).
    pub fn ranks(self) -> u8 {
        self.ranks
    }

    /// Number of squares, files × ranks.
    pub fn len(self) -> usize {
        usize::from(self.files) * usize::from(self.ranks)
    }

    /// Always false: a grid has at least one square.
    pub fn is_empty(self) -> bool {
        false
    }

    /// Every square, `a1` first, rank by rank.
    pub fn squares(self) -> impl Iterator<Item = Square> {
        (0..self.len()).map(|square| square as Square)
    }

    /// The square at 0-based `file` and `rank`; `None` off the board.
    pub fn at(self, file: i16, rank: i16) -> Option<Square> {
        if (0..i16::from(self.files)).contains(&file) && (0..i16::from(self.ranks)).contains(&rank) {
            Some((rank * i16::from(self.files) + file) as Square)
        } else {
            None
        }
    }

    /// The 0-based file of `square` (0 = `a`).
    pub fn file_of(self, square: Square) -> u8 {
        square % self.files
    }

    /// The 0-based rank of `square` (0 = rank `1`).
    pub fn rank_of(self, square: Square) -> u8 {
        square / self.files
    }

    /// The square `steps` steps from `square` towards `direction`; `None`
    /// when that leaves the board.
    pub fn step(self, square: Square, direction: Direction, steps: u8) -> Option<Square> {
        let (file_step, rank_step) = direction.delta();
        let file = i16::from(self.file_of(square)) + i16::from(file_step) * i16::from(steps);
        let rank = i16::from(self.rank_of(square)) + i16::from(rank_step) * i16::from(steps);
        self.at(file, rank)
    }

    /// The squares from `square` (not included) outwards towards `direction`,
    /// nearest first, up to the edge of the board.
    pub fn walk(self, square: Square, direction: Direction) -> impl Iterator<Item = Square> {
        let mut at = square;
        std::iter::from_fn(move || {
            at = self.step(at, direction, 1)?;
            Some(at)
        })
    }

    /// The name of `square`: file letter then rank number, `"a1"`, `"h8"`,
    /// `"c10"`. Panics when the square is off the board.
    pub fn name(self, square: Square) -> String {
        assert!(usize::from(square) < self.len(), "no square {} on a {}x{} board", square, self.files, self.ranks);
        let file = (b'a' + self.file_of(square)) as char;
        format!("{}{}", file, self.rank_of(square) + 1)
    }

    /// The square named `name` (`"a1"`, `"c10"`); `None` for anything else
    /// (off the board, leading zero, other characters).
    pub fn parse(self, name: &str) -> Option<Square> {
        let bytes = name.as_bytes();
        let file = *bytes.first()?;
        let digits = &name[1..];
        if !file.is_ascii_lowercase() || digits.is_empty() || digits.starts_with('0') || digits.len() > 2 {
            return None;
        }
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rank: i16 = digits.parse().ok()?;
        self.at(i16::from(file - b'a'), rank - 1)
    }
}

const SQUARE_NAMES: [&str; 64] = [
    "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", //
    "a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2", //
    "a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3", //
    "a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4", //
    "a5", "b5", "c5", "d5", "e5", "f5", "g5", "h5", //
    "a6", "b6", "c6", "d6", "e6", "f6", "g6", "h6", //
    "a7", "b7", "c7", "d7", "e7", "f7", "g7", "h7", //
    "a8", "b8", "c8", "d8", "e8", "f8", "g8", "h8", //
];

/// The name of 8×8 `square` (`"a1"` ..= `"h8"`), without allocating.
/// Panics when `square` > 63.
pub fn square_name(square: Square) -> &'static str {
    SQUARE_NAMES[usize::from(square)]
}

/// The 8×8 square named `name` (file `a`..`h` then rank `1`..`8`); `None` otherwise.
pub fn parse_square(name: &str) -> Option<Square> {
    match name.as_bytes() {
        [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => Some((rank - b'1') * 8 + (file - b'a')),
        _ => None,
    }
}

/// The squares set in 8×8 bitboard `set`, lowest first.
pub fn squares_of(mut set: u64) -> impl Iterator<Item = Square> {
    std::iter::from_fn(move || {
        if set == 0 {
            return None;
        }
        let square = set.trailing_zeros() as Square;
        set &= set - 1;
        Some(square)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_by_eight_names_round_trip_both_ways() {
        for square in EIGHT_BY_EIGHT.squares() {
            assert_eq!(parse_square(square_name(square)), Some(square));
            assert_eq!(EIGHT_BY_EIGHT.name(square), square_name(square));
            assert_eq!(EIGHT_BY_EIGHT.parse(square_name(square)), Some(square));
        }
        assert_eq!(square_name(0), "a1");
        assert_eq!(square_name(7), "h1");
        assert_eq!(square_name(63), "h8");
        for bad in ["i1", "a9", "a10", "", "a", "A1", "a0", "1a"] {
            assert_eq!(parse_square(bad), None, "{:?}", bad);
            assert_eq!(EIGHT_BY_EIGHT.parse(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn larger_boards_name_two_digit_ranks() {
        let board = Grid::new(10, 10);
        let j10 = board.parse("j10").unwrap();
        assert_eq!(j10, 99);
        assert_eq!(board.name(j10), "j10");
        assert_eq!(board.parse("a01"), None);
        assert_eq!(board.parse("k1"), None);
        assert_eq!(board.parse("a11"), None);
    }

    #[test]
    fn steps_stop_at_the_edge_without_wrapping() {
        let b = EIGHT_BY_EIGHT;
        let h1 = parse_square("h1").unwrap();
        assert_eq!(b.step(h1, Direction::East, 1), None);
        assert_eq!(b.step(h1, Direction::NorthWest, 2).map(square_name), Some("f3"));
        let walked: Vec<&str> = b.walk(parse_square("c3").unwrap(), Direction::SouthWest).map(square_name).collect();
        assert_eq!(walked, vec!["b2", "a1"]);
        assert_eq!(b.walk(h1, Direction::South).count(), 0);
    }

    #[test]
    fn bitboard_shifts_agree_with_coordinate_steps() {
        let b = EIGHT_BY_EIGHT;
        for square in b.squares() {
            for direction in DIRECTIONS {
                let shifted = direction.shift(1u64 << square);
                let stepped = b.step(square, direction, 1).map_or(0, |to| 1u64 << to);
                assert_eq!(shifted, stepped, "{} {:?}", square_name(square), direction);
            }
        }
    }

    #[test]
    fn directions_have_opposites_and_deltas() {
        for direction in DIRECTIONS {
            assert_eq!(direction.opposite().opposite(), direction);
            let (f, r) = direction.delta();
            assert_eq!(direction.opposite().delta(), (-f, -r));
        }
        assert_eq!(Direction::from_delta(0, 0), None);
        let lines: Vec<u64> = squares_of(0b1010_0001).map(u64::from).collect();
        assert_eq!(lines, vec![0, 5, 7]);
    }
}
