//! The compact state in-guest playouts and search run on (the SDK's
//! `SearchState`): the 32 playable squares as four 32-bit masks, the turn
//! and the result. A click costs a few hundred wasm instructions instead of
//! a pass over 32 JSON-shaped spaces and the turn's `meta_data` keys.
//!
//! The rules are those of [`crate::rules`] and [`crate::board`], on bit
//! masks and neighbour tables; moves are the same two clicks per hop (select
//! a piece, then a destination). `tests/compact.rs` plays random games both
//! ways and compares them click by click.

use tablehost_sdk::{Action, PlayerId, Rng, Score, Scores, SearchState, Table, Value};

use crate::board::{dark_squares, square_name, Colour, Square};
use crate::rules::{read_board, SQUARE_KIND};
use crate::turn::{quiet_plies_for_draw, read_outcome, Outcome, Turn, CHAIN};

/// No square that way (off the board).
const OFF: u8 = u8::MAX;

/// The four diagonals as (file step, rank step), in the order the rules
/// offer moves: north-west, north-east, south-west, south-east. Dark men
/// use the first two, light men the last two, kings all four.
const DIAGONALS: [(i8, i8); 4] = [(-1, 1), (1, 1), (-1, -1), (1, -1)];

/// The board square of playable square `index` (0..32, `a1`, `c1`, ... in
/// the rules' order: rank by rank, file by file).
const fn square_at(index: usize) -> u8 {
    let rank = index / 4;
    (rank * 8 + 2 * (index % 4) + rank % 2) as u8
}

/// `NEAR[d][i]` and `FAR[d][i]`: the playable square one and two steps
/// from `i` along diagonal `d`, or `OFF`.
const fn neighbours(distance: i8) -> [[u8; 32]; 4] {
    let mut table = [[OFF; 32]; 4];
    let mut d = 0;
    while d < 4 {
        let mut i = 0;
        while i < 32 {
            let square = square_at(i) as i8;
            let file = square % 8 + DIAGONALS[d].0 * distance;
            let rank = square / 8 + DIAGONALS[d].1 * distance;
            if file >= 0 && file < 8 && rank >= 0 && rank < 8 {
                table[d][i] = (rank * 4 + file / 2) as u8;
            }
            i += 1;
        }
        d += 1;
    }
    table
}

const NEAR: [[u8; 32]; 4] = neighbours(1);
const FAR: [[u8; 32]; 4] = neighbours(2);

/// One click: select the piece on a playable square, or send the selected
/// piece to one (indexes 0..32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckersMove {
    Select(u8),
    To(u8),
}

/// One hop: from, to, and the square jumped over (`OFF` for a plain move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hop {
    from: u8,
    to: u8,
    over: u8,
}

/// Every hop of one side: at most 4 for each of the 32 squares (a table
/// the rules never reach may hold more than 12 pieces a side).
struct Hops {
    list: [Hop; 128],
    len: usize,
}

impl Hops {
    fn new() -> Hops {
        Hops { list: [Hop { from: OFF, to: OFF, over: OFF }; 128], len: 0 }
    }

    fn push(&mut self, hop: Hop) {
        self.list[self.len] = hop;
        self.len += 1;
    }

    fn as_slice(&self) -> &[Hop] {
        &self.list[..self.len]
    }
}

/// A checkers table as the search sees it. Bit `i` of a mask is playable
/// square `i`; captured pieces stay in `dark`/`light` (they block) until
/// the move ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckersState {
    dark: u32,
    light: u32,
    kings: u32,
    captured: u32,
    /// Seat order: dark, light.
    players: [PlayerId; 2],
    /// The seat to move; None when nobody is active.
    to_move: Option<usize>,
    /// The selected piece, and whether it is mid multi-jump.
    selected: Option<u8>,
    chain: bool,
    quiet_plies: u64,
    draw_plies: u64,
    outcome: Option<Outcome>,
}

impl CheckersState {
    fn pieces(&self, colour: Colour) -> u32 {
        match colour {
            Colour::Dark => self.dark,
            Colour::Light => self.light,
        }
    }

    fn colour_at(&self, i: u8) -> Option<Colour> {
        let bit = 1u32 << i;
        if self.dark & bit != 0 {
            Some(Colour::Dark)
        } else if self.light & bit != 0 {
            Some(Colour::Light)
        } else {
            None
        }
    }

    /// The diagonals the piece on `i` (of `colour`) may move along.
    fn diagonals(&self, i: u8, colour: Colour) -> std::ops::Range<usize> {
        if self.kings & 1 << i != 0 {
            0..4
        } else {
            match colour {
                Colour::Dark => 0..2,
                Colour::Light => 2..4,
            }
        }
    }

    /// Capture rule (`Board::jumps_from`): the jumps of the piece on `i`.
    fn jumps_from(&self, i: u8, out: &mut Hops) {
        let colour = match self.colour_at(i) {
            Some(colour) => colour,
            None => return,
        };
        let victims = self.pieces(colour.opponent()) & !self.captured;
        let occupied = self.dark | self.light;
        for d in self.diagonals(i, colour) {
            let (over, to) = (NEAR[d][usize::from(i)], FAR[d][usize::from(i)]);
            if to != OFF && victims & 1 << over != 0 && occupied & 1 << to == 0 {
                out.push(Hop { from: i, to, over });
            }
        }
    }

    /// Movement rule (`Board::moves_from`): the plain moves of the piece on `i`.
    fn moves_from(&self, i: u8, colour: Colour, out: &mut Hops) {
        let occupied = self.dark | self.light;
        for d in self.diagonals(i, colour) {
            let to = NEAR[d][usize::from(i)];
            if to != OFF && occupied & 1 << to == 0 {
                out.push(Hop { from: i, to, over: OFF });
            }
        }
    }

    /// Mandatory capture (`Board::legal_steps`): jumps only, when any piece
    /// of `colour` can jump; only the chain piece's jumps mid multi-jump.
    fn legal_hops(&self, colour: Colour, chain: Option<u8>, out: &mut Hops) {
        out.len = 0;
        if let Some(i) = chain {
            self.jumps_from(i, out);
            return;
        }
        let own = self.pieces(colour) & !self.captured;
        let mut left = own;
        while left != 0 {
            self.jumps_from(left.trailing_zeros() as u8, out);
            left &= left - 1;
        }
        if out.len == 0 {
            let mut left = own;
            while left != 0 {
                self.moves_from(left.trailing_zeros() as u8, colour, out);
                left &= left - 1;
            }
        }
    }

    fn chain_square(&self) -> Option<u8> {
        if self.chain {
            self.selected
        } else {
            None
        }
    }

    fn colour_of_seat(seat: usize) -> Colour {
        if seat == 0 {
            Colour::Dark
        } else {
            Colour::Light
        }
    }

    /// `rules::step_selected_piece` for the hop from the selected piece to `to`.
    fn hop(&mut self, seat: usize, to: u8) {
        let colour = CheckersState::colour_of_seat(seat);
        let from = match self.selected {
            Some(from) => from,
            None => return,
        };
        let mut hops = Hops::new();
        self.legal_hops(colour, self.chain_square(), &mut hops);
        let hop = match hops.as_slice().iter().find(|hop| hop.from == from && hop.to == to) {
            Some(hop) => *hop,
            None => return,
        };
        let (from_bit, to_bit) = (1u32 << from, 1u32 << to);
        let piece = match self.colour_at(from) {
            Some(piece) => piece,
            None => return,
        };
        let man_moved = self.kings & from_bit == 0;
        let crowning_rank = match piece {
            Colour::Dark => 7,
            Colour::Light => 0,
        };
        let crowned = man_moved && usize::from(to) / 4 == crowning_rank;
        match piece {
            Colour::Dark => self.dark = self.dark & !from_bit | to_bit,
            Colour::Light => self.light = self.light & !from_bit | to_bit,
        }
        if self.kings & from_bit != 0 || crowned {
            self.kings = self.kings & !from_bit | to_bit;
        }
        if hop.over != OFF {
            self.captured |= 1 << hop.over;
            if !crowned {
                hops.len = 0;
                self.jumps_from(to, &mut hops);
                if hops.len > 0 {
                    self.selected = Some(to);
                    self.chain = true;
                    return;
                }
            }
        }
        self.end_move(seat, colour, man_moved);
    }

    /// `rules::end_move`: captured pieces leave, the selection clears, the
    /// quiet count moves on, then the no-move and draw rules, else the turn passes.
    fn end_move(&mut self, seat: usize, mover: Colour, man_moved: bool) {
        let captured_any = self.captured != 0;
        self.dark &= !self.captured;
        self.light &= !self.captured;
        self.kings &= !self.captured;
        self.captured = 0;
        self.selected = None;
        self.chain = false;
        self.quiet_plies = if captured_any || man_moved { 0 } else { self.quiet_plies.wrapping_add(1) };
        let mut hops = Hops::new();
        self.legal_hops(mover.opponent(), None, &mut hops);
        if hops.len == 0 {
            self.outcome = Some(Outcome::Win(self.players[seat]));
            self.to_move = None;
        } else if self.quiet_plies >= self.draw_plies {
            self.outcome = Some(Outcome::Draw);
            self.to_move = None;
        } else {
            self.to_move = Some(1 - seat);
        }
    }
}

impl SearchState for CheckersState {
    type Move = CheckersMove;

    /// The state of a table this module's rules wrote: two distinct seats,
    /// all 32 playable squares as `square` spaces (the rules move pieces
    /// into them by name) holding no piece or one checker, at most one
    /// active player, seated, and no chain without a selected piece of the
    /// mover's. Anything else is refused, never a panic.
    fn from_table(table: &Table) -> Result<CheckersState, String> {
        let seated = &table.state().players;
        if seated.len() != 2 || seated[0].player_id == seated[1].player_id {
            return Err("checkers needs two distinct seats".to_string());
        }
        let players = [seated[0].player_id, seated[1].player_id];
        for square in dark_squares() {
            let name = square_name(square);
            if !table.has_space(name) || table.space(name).kind != SQUARE_KIND {
                return Err(format!("no {} space {}", SQUARE_KIND, name));
            }
            match table.pieces(name) {
                [] => {}
                [piece] if crate::board::Checker::from_kind(&piece.public_kind).is_some() => {}
                _ => return Err(format!("{} holds something other than one checker", name)),
            }
        }
        let to_move = match table.active_players() {
            [] => None,
            [active] => match players.iter().position(|p| p == active) {
                Some(seat) => Some(seat),
                None => return Err("the active player is not seated".to_string()),
            },
            _ => return Err("checkers has one active player at most".to_string()),
        };
        let board = read_board(table);
        let mut state = CheckersState {
            dark: 0,
            light: 0,
            kings: 0,
            captured: 0,
            players,
            to_move,
            selected: None,
            chain: false,
            quiet_plies: 0,
            draw_plies: quiet_plies_for_draw(table),
            outcome: read_outcome(table),
        };
        for (i, square) in dark_squares().enumerate() {
            if let Some(checker) = board.at(square) {
                let bit = 1u32 << i;
                match checker.colour {
                    Colour::Dark => state.dark |= bit,
                    Colour::Light => state.light |= bit,
                }
                if checker.king {
                    state.kings |= bit;
                }
                if checker.captured {
                    state.captured |= bit;
                }
            }
        }
        let turn = Turn::read(table);
        state.selected = turn.selected.map(index_of);
        state.chain = turn.chain;
        state.quiet_plies = turn.quiet_plies;
        if turn.selected.is_none() && table.meta(CHAIN).and_then(Value::as_bool) == Some(true) {
            return Err("a chain without a selected piece".to_string());
        }
        if let (Some(i), true) = (state.selected, state.chain) {
            let own = to_move.map_or(0, |seat| state.pieces(CheckersState::colour_of_seat(seat)) & !state.captured);
            if own & 1 << i == 0 {
                return Err("a chain of a piece that is not the mover's".to_string());
            }
        }
        Ok(state)
    }

    fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    fn mover(&self) -> Option<usize> {
        self.to_move
    }

    /// `rules::legal_actions` without the cancel button: the pieces that
    /// can step, or the selected piece's destinations.
    fn moves(&self, out: &mut Vec<CheckersMove>) {
        out.clear();
        let seat = match self.to_move {
            Some(seat) => seat,
            None => return,
        };
        let mut hops = Hops::new();
        self.legal_hops(CheckersState::colour_of_seat(seat), self.chain_square(), &mut hops);
        match self.selected {
            None => {
                for (at, hop) in hops.as_slice().iter().enumerate() {
                    if at == 0 || hops.list[at - 1].from != hop.from {
                        out.push(CheckersMove::Select(hop.from));
                    }
                }
            }
            Some(selected) => {
                out.extend(hops.as_slice().iter().filter(|hop| hop.from == selected).map(|hop| CheckersMove::To(hop.to)));
            }
        }
    }

    fn apply(&mut self, mv: CheckersMove, _rng: &mut Rng) {
        let seat = match self.to_move {
            Some(seat) => seat,
            None => return,
        };
        match mv {
            CheckersMove::Select(i) => self.selected = Some(i),
            CheckersMove::To(i) => self.hop(seat, i),
        }
    }

    fn action(&self, mv: CheckersMove) -> Action {
        match mv {
            CheckersMove::Select(i) => Action::piece_click(square_name(square_at(usize::from(i))), 0),
            CheckersMove::To(i) => Action::space_click(square_name(square_at(usize::from(i)))),
        }
    }

    /// `rules::result_points`.
    fn scores(&self) -> Scores {
        self.players
            .iter()
            .map(|&player| {
                let points = match self.outcome {
                    Some(Outcome::Win(winner)) if winner == player => 1.0,
                    Some(Outcome::Draw) => 0.5,
                    _ => 0.0,
                };
                (player, Score::public(vec![points]))
            })
            .collect()
    }

    fn first_points(&self, _seats: &[PlayerId], out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.players.iter().map(|&player| match self.outcome {
            Some(Outcome::Win(winner)) if winner == player => 1.0,
            Some(Outcome::Draw) => 0.5,
            _ => 0.0,
        }));
    }
}

/// The playable-square index of board square `square` (a dark square).
fn index_of(square: Square) -> u8 {
    (square / 8) * 4 + (square % 8) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_the_rules_square_order() {
        for (i, square) in dark_squares().enumerate() {
            assert_eq!(square_at(i), square);
            assert_eq!(usize::from(index_of(square)), i);
        }
        // c3 (index 9): north-west b4 (12), north-east d4 (13); two steps a5 (16), e5 (18).
        assert_eq!((NEAR[0][9], NEAR[1][9], FAR[0][9], FAR[1][9]), (12, 13, 16, 18));
        // a1 (index 0) has only north-east neighbours.
        assert_eq!((NEAR[0][0], NEAR[1][0], NEAR[2][0], NEAR[3][0]), (OFF, 4, OFF, OFF));
    }
}
