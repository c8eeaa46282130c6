//! The compact state in-guest playouts and search run on (the SDK's
//! `SearchState`): two bitboards, the seats, who is to move and where they
//! may place. A move costs a few hundred wasm instructions instead of a pass
//! over 64 JSON-shaped spaces.
//!
//! The rules are those of [`crate::rules`], computed a faster way: every
//! line of opposing discs in one direction pair at once, by parallel prefix
//! (a run grown by one, then by two twice, covers the longest possible run
//! of six); the discs a placement turns, from a table of its eight lines.
//! `tests/compact.rs` plays random games both ways and compares
//! them move by move; the tests below compare these routines with
//! [`Board`]'s on random boards.

use tablehost_sdk::{Action, PlayerId, Policy, Rng, Score, Scores, SearchState, Table};

use crate::board::{square_name, squares, Board, Colour, Square};
use crate::rules::{read_board, SQUARE_KIND};

/// Files b..g: a run of discs along a line with an east-west part never
/// includes files a or h (nothing lies beyond them), which also stops a
/// shift from wrapping onto the next rank.
const INNER_FILES: u64 = 0x7E7E_7E7E_7E7E_7E7E;

/// The bit shift of one step and the squares a run may cross, per pair of
/// opposite directions: east/west, north/south, north-west/south-east,
/// north-east/south-west (a left shift is the first of each pair).
const LINES: [(u32, u64); 4] = [(1, INNER_FILES), (8, !0), (7, INNER_FILES), (9, INNER_FILES)];

/// The discs of `opponent` in runs that start next to a disc of `seeds`
/// along the line of `shift` (both ways), each way apart: `(left, right)`.
#[inline(always)]
fn runs(seeds: u64, opponent: u64, shift: u32, crossable: u64) -> (u64, u64) {
    let m = opponent & crossable;
    let mut left = m & (seeds << shift);
    let mut right = m & (seeds >> shift);
    left |= m & (left << shift);
    right |= m & (right >> shift);
    let pairs_left = m & (m << shift);
    let pairs_right = pairs_left >> shift;
    let double = shift * 2;
    left |= pairs_left & (left << double);
    right |= pairs_right & (right >> double);
    left |= pairs_left & (left << double);
    right |= pairs_right & (right >> double);
    (left, right)
}

/// Placement rule: the empty squares where the owner of `own` may place.
/// Equal to [`Board::legal_placements`].
pub fn placements(own: u64, opponent: u64) -> u64 {
    let mut beyond = 0;
    for &(shift, crossable) in &LINES {
        let (left, right) = runs(own, opponent, shift, crossable);
        beyond |= (left << shift) | (right >> shift);
    }
    beyond & !(own | opponent)
}

/// Flipping rule: the discs of `opponent` a disc of `own`'s owner placed on
/// the empty `square` turns over. Equal to [`Board::flips`] for an empty square.
///
/// Per line, from a table of the squares beyond `square`: the nearest square
/// that is not an opposing disc closes the line when it is one of `own`, and
/// the line turns the discs before it. No loop and no branch, about 25 wasm
/// instructions a line whatever it holds.
pub fn flips(own: u64, opponent: u64, square: Square) -> u64 {
    let rays = &RAYS[usize::from(square) & 63];
    let open = !opponent;
    let mut flipped = 0;
    // Lines towards higher squares: the nearest closer is the lowest bit.
    for &ray in &rays[..4] {
        let stops = ray & open;
        let nearest = stops & stops.wrapping_neg();
        flipped |= if nearest & own != 0 { ray & nearest.wrapping_sub(1) } else { 0 };
    }
    // Lines towards lower squares: the highest bit (none: bit 63, which is
    // never on such a line, so the line turns nothing).
    for &ray in &rays[4..] {
        let stops = ray & open;
        let nearest = (1u64 << 63).wrapping_shr(stops.leading_zeros());
        flipped |= if nearest & own != 0 { ray & (nearest.wrapping_neg() << 1) } else { 0 };
    }
    flipped
}

/// The eight lines from a square as (file, rank) steps: four towards higher
/// square numbers (east, north-west, north, north-east), then their opposites.
const STEPS: [(i32, i32); 8] = [(1, 0), (-1, 1), (0, 1), (1, 1), (-1, 0), (1, -1), (0, -1), (-1, -1)];

/// Per square (rank * 8 + file), the squares beyond it along each line of
/// `STEPS`, up to the edge of the board (4 KiB).
static RAYS: [[u64; 8]; 64] = rays();

const fn rays() -> [[u64; 8]; 64] {
    let mut table = [[0u64; 8]; 64];
    let mut square = 0;
    while square < 64 {
        let mut line = 0;
        while line < 8 {
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
