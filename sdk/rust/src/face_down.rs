//! Face-down pieces: one shared back, a face hidden in `private_kind`, and the
//! moves every card or tile game makes with them (deal at random, turn up,
//! turn down, read a hand).
//!
//! A face-down piece is `Piece::new(BACK).hiding(face)`: everyone sees a
//! `"back"`, its viewers (the piece's owner, else its space's owner) see the
//! face. A face-up piece has the face as public kind and no private kind.
//! Put hands in `collection` spaces owned by their holder so that neither the
//! faces nor the order of the hidden pieces reach anyone else.

use crate::rng::Rng;
use crate::state::{Piece, PlayerId};
use crate::table::Table;

/// The public kind of every face-down piece (card back, tile back).
pub const BACK: &str = "back";

/// Something with a printed face: a playing card, a domino tile. The face is
/// a short name that is a single word for `testing::words` (letters, digits
/// and `-`), e.g. `"QS"`, `"10H"`, `"6-4"`.
pub trait Face: Sized {
    /// The face name, used as the private kind of a hidden piece and the
    /// public kind of a face-up one.
    fn face(&self) -> String;
    /// The thing named `face`; `None` for anything else (a back).
    fn parse_face(face: &str) -> Option<Self>;
}

/// The space id of `player`'s hand: `"hand-<id>"`.
pub fn hand_of(player: PlayerId) -> String {
    format!("hand-{}", player)
}

/// `thing` lying face down: public kind [`BACK`], private kind its face.
pub fn face_down<F: Face>(thing: &F) -> Piece {
    Piece::new(BACK).hiding(thing.face())
}

/// What `piece` really is, if the code running may see it: its private
/// kind, else (face up) its public kind. `None` for a back seen from outside.
pub fn face_of<F: Face>(piece: &Piece) -> Option<F> {
    match &piece.private_kind {
        Some(face) => F::parse_face(face),
        None => F::parse_face(&piece.public_kind),
    }
}

/// The pieces of space `space_id` whose face is visible here, with their
/// indexes, in space order. Panics when the space is missing.
pub fn faces_in<F: Face>(table: &Table, space_id: &str) -> Vec<(usize, F)> {
    table
        .pieces(space_id)
        .iter()
        .enumerate()
        .filter_map(|(index, piece)| face_of::<F>(piece).map(|thing| (index, thing)))
        .collect()
}

/// Deals `per_hand` pieces to each space of `hands`, one at a time in the
/// order given, each from a uniformly random position of `from` (one
/// `rng.below(len)` draw per piece). A collection shows no order, so the
/// random positions are what make the deal random.
///
/// Panics when `from` runs out of pieces.
pub fn deal(table: &mut Table, rng: &mut Rng, from: &str, hands: &[String], per_hand: usize) {
    for _ in 0..per_hand {
        for hand in hands {
            let left = table.pieces(from).len();
            assert!(left > 0, "space \"{}\" ran out of pieces while dealing", from);
            let index = rng.below(left);
            table.move_piece(from, index, hand);
        }
    }
}

/// Turns the piece at `index` of `space_id` face up: its face becomes the
/// public kind and the private kind is removed (two patches, in that order).
/// Panics when the code running cannot see the face.
pub fn turn_face_up(table: &mut Table, space_id: &str, index: usize) -> String {
    let piece = table.piece(space_id, index);
    let face = match &piece.private_kind {
        Some(face) => face.clone(),
        None => panic!("the piece at {} of \"{}\" is not face down", index, space_id),
    };
    table.set_public_kind(space_id, index, face.clone());
    table.set_private_kind(space_id, index, None);
    face
}

/// Turns the face-up piece at `index` of `space_id` face down: the private
/// kind becomes its face, then the public kind becomes [`BACK`].
pub fn turn_face_down(table: &mut Table, space_id: &str, index: usize) {
    let face = table.piece(space_id, index).public_kind.clone();
    table.set_private_kind(space_id, index, Some(&face));
    table.set_public_kind(space_id, index, BACK);
}

/// Names a list for a log line: `"2C, 5H and QS"` (empty for none).
pub fn list_faces<F: Face>(things: &[F]) -> String {
    let faces: Vec<String> = things.iter().map(Face::face).collect();
    match faces.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {}", rest.join(", "), last),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::{Card, Suit};
    use crate::state::{Player, Space, State};

    fn table_with_deck() -> Table {
        let players = (1..=2).map(|player_id| Player { player_id, ..Player::default() }).collect();
        let deck = Space::new("deck", "deck").collection().with_pieces(Card::deck().iter().map(face_down));
        let hands = (1..=2).map(|p| Space::new(hand_of(p), "hand").collection().owned_by(p));
        let spaces = std::iter::once(deck).chain(hands).chain(std::iter::once(Space::new("pile", "pile"))).collect();
        Table::new(State { players, spaces, ..State::default() })
    }

    #[test]
    fn a_deal_moves_random_pieces_round_robin_with_one_draw_each() {
        let mut table = table_with_deck();
        let mut rng = Rng::new(9);
        deal(&mut table, &mut rng, "deck", &[hand_of(1), hand_of(2)], 5);
        assert_eq!(table.pieces("hand-1").len(), 5);
        assert_eq!(table.pieces("hand-2").len(), 5);
        assert_eq!(table.pieces("deck").len(), 42);
        // The same draws by hand give the same hands.
        let mut again = table_with_deck();
        let mut check = Rng::new(9);
        for _ in 0..5 {
            for hand in ["hand-1", "hand-2"] {
                let index = check.below(again.pieces("deck").len());
                again.move_piece("deck", index, hand);
            }
        }
        assert_eq!(again.state(), table.state());
        let held: Vec<(usize, Card)> = faces_in(&table, "hand-1");
        assert_eq!(held.len(), 5);
        assert!(table.pieces("hand-1").iter().all(|p| p.public_kind == BACK));
    }

    #[test]
    #[should_panic(expected = "ran out of pieces")]
    fn dealing_more_than_the_deck_holds_panics() {
        let mut table = table_with_deck();
        deal(&mut table, &mut Rng::new(1), "deck", &[hand_of(1), hand_of(2)], 27);
    }

    #[test]
    fn turning_up_and_down_swaps_public_and_private_kind() {
        let mut table = table_with_deck();
        let face = turn_face_up(&mut table, "deck", 0);
        assert_eq!(face, "2C");
        assert_eq!(table.piece("deck", 0).public_kind, "2C");
        assert_eq!(table.piece("deck", 0).private_kind, None);
        assert_eq!(face_of::<Card>(table.piece("deck", 0)), Some(Card::new(2, Suit::Clubs)));
        turn_face_down(&mut table, "deck", 0);
        assert_eq!(table.piece("deck", 0), &face_down(&Card::new(2, Suit::Clubs)));
        assert_eq!(face_of::<Card>(&Piece::new(BACK)), None);
    }

    #[test]
    fn lists_read_like_a_sentence() {
        let cards: Vec<Card> = ["2C", "5H", "QS"].iter().map(|f| Card::parse(f).unwrap()).collect();
        assert_eq!(list_faces(&cards), "2C, 5H and QS");
        assert_eq!(list_faces(&cards[..1]), "2C");
        assert_eq!(list_faces::<Card>(&[]), "");
    }

    #[test]
    fn seats_wrap_and_players_have_names() {
        let mut table = table_with_deck();
        assert_eq!(table.seat_after(2, 1), 1);
        assert_eq!(table.seat_after(1, 4), 1);
        assert_eq!(table.player_name(1), "player 1");
        table = Table::new(State {
            players: vec![Player { player_id: 5, username: "ann".into(), ..Player::default() }],
            ..State::default()
        });
        assert_eq!(table.player_name(5), "ann");
    }
}
