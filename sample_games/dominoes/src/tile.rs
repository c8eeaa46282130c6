//! A domino tile of the double-six set and its names.

use tablehost_sdk::face_down::Face;

/// The highest pip value on one end of a double-six tile.
pub const MAX_PIPS: u8 = 6;

/// A domino tile: two ends of 0..=6 pips, kept with the higher end first so
/// every tile has exactly one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tile {
    pub high: u8,
    pub low: u8,
}

impl Tile {
    /// The tile with ends `a` and `b` (either order), each 0..=6.
    pub fn new(a: u8, b: u8) -> Tile {
        assert!(
            a <= MAX_PIPS && b <= MAX_PIPS,
            "no tile {}-{} in a double-six set",
            a,
            b
        );
        Tile {
            high: a.max(b),
            low: a.min(b),
        }
    }

    /// Every tile of the double-six set: 28 tiles, each pair of ends once.
    pub fn double_six_set() -> Vec<Tile> {
        (0..=MAX_PIPS)
            .flat_map(|high| (0..=high).map(move |low| Tile::new(high, low)))
            .collect()
    }

    /// The tile's name, higher end first: `"6-4"`. Used as the private kind
    /// of a hidden tile and the public kind of a tile on the line.
    pub fn face(self) -> String {
        format!("{}-{}", self.high, self.low)
    }

    /// The tile named `face` (`"6-4"`, either order), or None for anything
    /// else (a tile back, or a hidden tile whose face this viewer lacks).
    pub fn parse(face: &str) -> Option<Tile> {
        let mut ends = face.split('-').map(|end| end.parse::<u8>());
        match (ends.next(), ends.next(), ends.next()) {
            (Some(Ok(a)), Some(Ok(b)), None) if a <= MAX_PIPS && b <= MAX_PIPS => Some(Tile::new(a, b)),
            _ => None,
        }
    }

    /// Both ends show the same number.
    pub fn is_double(self) -> bool {
        self.high == self.low
    }

    /// The pips on both ends together (what a tile counts at the end of a round).
    pub fn pips(self) -> u32 {
        u32::from(self.high) + u32::from(self.low)
    }

    /// One of the tile's ends shows `pips`, so it can be played against an open end of `pips`.
    pub fn matches(self, pips: u8) -> bool {
        self.high == pips || self.low == pips
    }

    /// The end left open after the end showing `pips` is laid against the line.
    /// Panics when the tile has no end of `pips`.
    pub fn other_end(self, pips: u8) -> u8 {
        if self.high == pips {
            self.low
        } else if self.low == pips {
            self.high
        } else {
            panic!("tile {} has no end of {}", self.face(), pips)
        }
    }

    /// How strongly this tile claims the lead: any double beats any other
    /// tile, higher doubles beat lower ones, and among the rest the higher pip
    /// total wins, then the higher end (so the order is total: no two tiles tie).
    pub fn lead_rank(self) -> (bool, u32, u8) {
        (self.is_double(), self.pips(), self.high)
    }
}

impl Face for Tile {
    fn face(&self) -> String {
        Tile::face(*self)
    }

    fn parse_face(face: &str) -> Option<Tile> {
        Tile::parse(face)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_has_28_distinct_tiles_and_7_doubles() {
        let set = Tile::double_six_set();
        let mut faces: Vec<String> = set.iter().map(|t| t.face()).collect();
        faces.sort();
        faces.dedup();
        assert_eq!(faces.len(), 28);
        assert_eq!(set.iter().filter(|t| t.is_double()).count(), 7);
        assert_eq!(set.iter().map(|t| t.pips()).sum::<u32>(), 168);
    }

    #[test]
    fn faces_round_trip_and_reject_backs() {
        for tile in Tile::double_six_set() {
            assert_eq!(Tile::parse(&tile.face()), Some(tile));
        }
        assert_eq!(Tile::parse("4-6"), Some(Tile::new(6, 4)));
        assert_eq!(Tile::parse("back"), None);
        assert_eq!(Tile::parse("7-1"), None);
        assert_eq!(Tile::parse("1-2-3"), None);
    }

    #[test]
    fn any_double_outranks_the_highest_plain_tile() {
        assert!(Tile::new(0, 0).lead_rank() > Tile::new(6, 5).lead_rank());
        assert!(Tile::new(6, 6).lead_rank() > Tile::new(5, 5).lead_rank());
        assert!(Tile::new(6, 3).lead_rank() > Tile::new(5, 4).lead_rank());
    }

    #[test]
    fn other_end_is_what_stays_open() {
        assert_eq!(Tile::new(6, 4).other_end(4), 6);
        assert_eq!(Tile::new(3, 3).other_end(3), 3);
    }
}
