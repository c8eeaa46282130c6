//! The compact state in-guest playouts and search run on (the SDK's
//! `SearchState`): two bitboards, the seats, who is to move and where they
//! may place. A move costs about 500 wasm instructions instead of a pass
//! over 64 JSON-shaped spaces.
//!
//! The rules are those of [`crate::rules`], computed a faster way, on the
//! board and the board turned half a circle side by side ([`Boards`]: one
//! SIMD value in wasm), so that every line runs up on one of the two and a
//! run grows by left shifts only: the runs of opposing discs, by parallel
//! prefix (a run grown by one, then by two twice, covers the longest
//! possible run of six); the discs a placement turns, from a table of its
//! lines. `tests/compact.rs` plays random games both ways and compares
//! them move by move; the tests below compare these routines with
//! [`Board`]'s on random boards (natively, where `Boards` is two u64s:
//! tests/test_inguest.py compares the wasm build with the table path).

use tablehost_sdk::{Action, PlayerId, Policy, Rng, Score, Scores, SearchState, Table};

use crate::board::{square_name, squares, Board, Colour, Square};
use crate::lanes::Boards;
use crate::rules::{read_board, SQUARE_KIND};

/// Files b..g: a run of discs along a line with an east-west part never
/// includes files a or h (nothing lies beyond them), which also stops a
/// shift from wrapping onto the next rank.
const INNER_FILES: u64 = 0x7E7E_7E7E_7E7E_7E7E;

/// The bit shift of one step up a line and the squares a run may cross (the
/// same on the turned board), per pair of opposite directions: east/west,
/// north/south, north-west/south-east, north-east/south-west.
const LINES: [(u32, u64); 4] = [(1, INNER_FILES), (8, !0), (7, INNER_FILES), (9, INNER_FILES)];

/// Placement rule: the empty squares where the owner of `own` may place.
/// Equal to [`Board::legal_placements`].
///
/// Per line, the runs of opposing discs next to a disc of `own`, grown
/// up the line on the board and on the board turned (so down the line on
/// the board) at once; the squares just past them.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
pub fn placements(own: u64, opponent: u64) -> u64 {
    let (seeds, opponents) = Boards::turned(own, opponent);
    let mut beyond = Boards::splat(0);
    for &(shift, crossable) in &LINES {
        // A run of six at most: one disc, grown by one, then by two twice.
        let crossed = opponents.and(Boards::splat(crossable));
        let mut run = crossed.and(seeds.up(shift));
        run = run.or(crossed.and(run.up(shift)));
        let pairs = crossed.and(crossed.up(shift));
        run = run.or(pairs.and(run.up(shift * 2)));
        run = run.or(pairs.and(run.up(shift * 2)));
        beyond = beyond.or(run.up(shift));
    }
    beyond.merged() & !(own | opponent)
}

/// Flipping rule: the discs of `opponent` a disc of `own`'s owner placed on
/// the empty `square` turns over. Equal to [`Board::flips`] for an empty square.
///
/// Per line, from a table of the squares beyond `square` (up the line on
/// the board, and on the turned board, so down it on the board): the
/// nearest square that is not an opposing disc closes the line when it is
/// one of `own`, and the line turns the discs before it. No loop, no branch.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
pub fn flips(own: u64, opponent: u64, square: Square) -> u64 {
    let (mine, theirs) = Boards::turned(own, opponent);
    let mut flipped = Boards::splat(0);
    for &(up, turned) in &RAYS_UP[usize::from(square) & 63] {
        let ray = Boards::new(up, turned);
        let stops = ray.and_not(theirs);
        let closed = stops.lowest().and(mine).nonzero();
        flipped = flipped.or(ray.and(stops.below_lowest()).and(closed));
    }
    flipped.merged()
}

/// The four lines from a square towards higher square numbers as (file,
/// rank) steps: east, north-west, north, north-east.
const STEPS: [(i32, i32); 4] = [(1, 0), (-1, 1), (0, 1), (1, 1)];

/// Per square (rank * 8 + file), the squares beyond it along each of the
/// four lines of `STEPS` towards higher squares, on the board and (the
/// second of each pair) on the board turned half a circle, where the square
/// is 63 - square and its lines up are the board's lines down (4 KiB).
static RAYS_UP: [[(u64, u64); 4]; 64] = rays_up();

const fn rays_up() -> [[(u64, u64); 4]; 64] {
    let rays = rays();
    let mut table = [[(0u64, 0u64); 4]; 64];
    let mut square = 0;
    while square < 64 {
        let mut line = 0;
        while line < 4 {
            table[square][line] = (rays[square][line], rays[63 - square][line]);
            line += 1;
        }
        square += 1;
    }
    table
}

/// Per square, the squares beyond it along each line of `STEPS`, up to
/// the edge of the board.
const fn rays() -> [[u64; 4]; 64] {
    let mut table = [[0u64; 4]; 64];
    let mut square = 0;
    while square < 64 {
        let mut line = 0;
        while line < 4 {
            let (df, dr) = STEPS[line];
            let (mut file, mut rank) = (square as i32 % 8 + df, square as i32 / 8 + dr);
            while file >= 0 && file < 8 && rank >= 0 && rank < 8 {
                table[square][line] |= 1u64 << (rank * 8 + file);
                file += df;
                rank += dr;
            }
            line += 1;
        }
        square += 1;
    }
    table
}

/// A reversi table as the search sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReversiState {
    /// The discs of the colour to move (dark when nobody is active) and of
    /// the other colour: a move needs no match on colours.
    own: u64,
    other: u64,
    /// Seat order: dark, light.
    players: [PlayerId; 2],
    /// The seat to move (0 dark, 1 light); None when nobody is active.
    to_move: Option<usize>,
    /// Where the seat to move may place (0 when nobody is active).
    placements: u64,
    /// Neither colour can place.
    over: bool,
}

impl ReversiState {
    /// The discs of dark and of light.
    fn board(&self) -> Board {
        if self.to_move == Some(1) {
            Board { dark: self.other, light: self.own }
        } else {
            Board { dark: self.own, light: self.other }
        }
    }
}

impl SearchState for ReversiState {
    /// The square placed on.
    type Move = Square;

    /// The state of a table this module's rules wrote: exactly two distinct
    /// seats, all 64 square spaces (the rules place into them by name), each
    /// empty or holding one disc, and at most one active player, seated.
    /// Anything else is refused, never a panic.
    fn from_table(table: &Table) -> Result<ReversiState, String> {
        let seated = &table.state().players;
        if seated.len() != 2 || seated[0].player_id == seated[1].player_id {
            return Err("reversi needs two distinct seats".to_string());
        }
        let players = [seated[0].player_id, seated[1].player_id];
        for square in 0..64u8 {
            let name = square_name(square);
            if !table.has_space(name) {
                return Err(format!("no {} space {}", SQUARE_KIND, name));
            }
            match table.pieces(name) {
                [] => {}
                [disc] if Colour::from_kind(&disc.public_kind).is_some() => {}
                _ => return Err(format!("{} holds something other than one disc", name)),
            }
        }
        let to_move = match table.active_players() {
            [] => None,
            [active] => match players.iter().position(|p| p == active) {
                Some(seat) => Some(seat),
                None => return Err("the active player is not seated".to_string()),
            },
            _ => return Err("reversi has one active player at most".to_string()),
        };
        let board = read_board(table);
        let (own, other) = if to_move == Some(1) { (board.light, board.dark) } else { (board.dark, board.light) };
        let placements = if to_move.is_some() { placements(own, other) } else { 0 };
        Ok(ReversiState { own, other, players, to_move, placements, over: board.neither_can_place() })
    }

    fn is_over(&self) -> bool {
        self.over
    }

    fn mover(&self) -> Option<usize> {
        self.to_move
    }

    fn moves(&self, out: &mut Vec<Square>) {
        out.clear();
        out.extend(squares(self.placements));
    }

    /// `rules::place_disc` and its turn rule: the opponent moves next if
    /// they can place, else the mover again if they can, else nobody.
    fn apply(&mut self, square: Square, _rng: &mut Rng) {
        let seat = match self.to_move {
            Some(seat) => seat,
            None => return,
        };
        let flipped = flips(self.own, self.other, square);
        debug_assert!(flipped != 0, "{} flips nothing", square_name(square));
        let own = self.own | 1u64 << square | flipped;
        let other = self.other & !flipped;
        let theirs = placements(other, own);
        if theirs != 0 {
            *self = ReversiState { own: other, other: own, to_move: Some(1 - seat), placements: theirs, ..*self };
            return;
        }
        let ours = placements(own, other);
        if ours != 0 {
            *self = ReversiState { own, other, placements: ours, ..*self };
        } else {
            let (own, other) = if seat == 1 { (other, own) } else { (own, other) };
            *self = ReversiState { own, other, to_move: None, placements: 0, over: true, ..*self };
        }
    }

    fn action(&self, square: Square) -> Action {
        Action::space_click(square_name(square))
    }

    /// `rules::disc_counts`.
    fn scores(&self) -> Scores {
        let board = self.board();
        [(self.players[0], board.dark), (self.players[1], board.light)]
            .iter()
            .map(|&(player, discs)| (player, Score::public(vec![f64::from(discs.count_ones())])))
            .collect()
    }

    fn first_points(&self, _seats: &[PlayerId], out: &mut Vec<f64>) {
        let board = self.board();
        out.clear();
        out.extend([f64::from(board.dark.count_ones()), f64::from(board.light.count_ones())]);
    }

    /// Counts the placements instead of listing them.
    fn pick(&self, policy: Policy, rng: &mut Rng, _scratch: &mut Vec<Square>) -> Option<Square> {
        let count = self.placements.count_ones() as usize;
        if count == 0 {
            return None;
        }
        let mut left = self.placements;
        for _ in 0..policy.pick(count, rng) {
            left &= left - 1;
        }
        Some(left.trailing_zeros() as Square)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_runs_agree_with_the_board_on_random_boards() {
        let mut rng = Rng::new(7);
        for round in 0..20_000 {
            let occupied = match round % 3 {
                0 => rng.next_u64(),
                1 => rng.next_u64() | rng.next_u64(),
                _ => rng.next_u64() & rng.next_u64(),
            };
            let colours = rng.next_u64();
            let board = Board { dark: occupied & colours, light: occupied & !colours };
            for colour in [Colour::Dark, Colour::Light] {
                let (own, opponent) = (board.discs(colour), board.discs(colour.opponent()));
                assert_eq!(placements(own, opponent), board.legal_placements(colour), "{:?}", board);
                for square in squares(!occupied) {
                    assert_eq!(flips(own, opponent, square), board.flips(colour, square), "{:?} {}", board, square);
                }
            }
        }
    }

    #[test]
    fn long_runs_up_to_six_discs_are_closed_off() {
        // a1 dark, b1..g1 light: dark on h1 turns all six.
        let light: u64 = 0b0111_1110;
        let board = Board { dark: 1, light };
        assert_eq!(placements(board.dark, board.light), 1 << 7);
        assert_eq!(flips(board.dark, board.light, 7), light);
    }
}
