//! The line of play: its two open ends and where a tile may be laid.

use tablehost_sdk::face_down::turn_face_up;
use tablehost_sdk::{json, PlayerId, Table, Value};

use crate::layout::{hand_of, LINE};
use crate::tile::Tile;

/// An end of the line of play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Left,
    Right,
}

impl End {
    /// The word used in button ids and labels: `"left"` or `"right"`.
    pub fn name(self) -> &'static str {
        match self {
            End::Left => "left",
            End::Right => "right",
        }
    }
}

/// The pips showing at the (left, right) open ends, or None before the first tile.
pub fn open_ends(table: &Table) -> Option<(u8, u8)> {
    let pieces = &table.space(LINE).pieces;
    match (pieces.first(), pieces.last()) {
        (Some(first), Some(last)) => Some((end_pips(first.public("left")), end_pips(last.public("right")))),
        _ => None,
    }
}

fn end_pips(value: Option<&Value>) -> u8 {
    let pips = value
        .and_then(Value::as_u64)
        .expect("every tile on the line records its ends");
    pips as u8
}

/// Where `tile` may be laid when the open ends are `ends`.
///
/// Rule: a tile is laid with a matching end against an open end. When both
/// open ends show the same number either end gives the same line, so only
/// the right is offered; a tile that fits two different ends gets both.
/// The first tile of the round (no ends yet) starts the line.
pub fn placements(tile: Tile, ends: Option<(u8, u8)>) -> Vec<End> {
    match ends {
        None => vec![End::Right],
        Some((left, right)) => {
            let mut found = Vec::new();
            if tile.matches(left) && left != right {
                found.push(End::Left);
            }
            if tile.matches(right) {
                found.push(End::Right);
            }
            found
        }
    }
}

/// Moves the tile at `index` of `player`'s hand onto `end` of the line, face
/// up, recording which pips face left and right. Returns the tile laid.
///
/// Panics when the piece is not a tile this code can see or does not fit `end`.
pub fn lay_tile(table: &mut Table, player: PlayerId, index: usize, end: End) -> Tile {
    let hand = hand_of(player);
    let tile = crate::layout::tile_of(table.piece(&hand, index)).expect("a tile the player can see");
    let (left, right) = match (open_ends(table), end) {
        (None, _) => (tile.high, tile.low),
        (Some((open, _)), End::Left) => (tile.other_end(open), open),
        (Some((_, open)), End::Right) => (open, tile.other_end(open)),
    };
    let at = match end {
        End::Left => {
            table.move_piece_to(&hand, index, LINE, 0);
            0
        }
        End::Right => table.move_piece(&hand, index, LINE),
    };
    turn_face_up(table, LINE, at);
    table.set_piece_public_state(LINE, at, "left", json!(left));
    table.set_piece_public_state(LINE, at, "right", json!(right));
    table.set_piece_public_state(LINE, at, "display", json!({"glyph": crate::display::glyph(left, right)}));
    tile
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_fitting_two_different_ends_may_go_either_way() {
        assert_eq!(placements(Tile::new(6, 4), Some((6, 4))), vec![End::Left, End::Right]);
    }

    #[test]
    fn equal_ends_are_offered_once() {
        assert_eq!(placements(Tile::new(5, 2), Some((5, 5))), vec![End::Right]);
    }

    #[test]
    fn a_tile_fitting_neither_end_has_no_place() {
        assert!(placements(Tile::new(3, 1), Some((6, 4))).is_empty());
    }

    #[test]
    fn one_matching_end_is_the_only_place() {
        assert_eq!(placements(Tile::new(3, 6), Some((6, 4))), vec![End::Left]);
        assert_eq!(placements(Tile::new(4, 0), Some((6, 4))), vec![End::Right]);
    }
}
