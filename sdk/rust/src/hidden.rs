//! Helpers for `Game::sample_hidden`: fill in what a viewer cannot see with
//! one of the ways the table could really be.

use crate::rng::Rng;
use crate::state::State;
use crate::table::Table;

/// A copy of `view`'s state in which every face-down piece the viewer cannot
/// see (public kind `back`, no private kind) gets a private kind drawn at
/// random, without replacement, from the faces of `full_set` that appear
/// nowhere else in the view (as a private kind or a public kind).
///
/// This is the right sampler for a game whose hidden pieces are one set of
/// distinct faces dealt face down (cards, tiles) and whose hidden faces are
/// constrained by nothing but where the others are; it keeps every space,
/// piece and index where it is.
///
/// Panics when the unseen faces and the face-down pieces do not number the
/// same (the view is not one this game's rules could have produced).
pub fn deal_unseen(view: &Table, back: &str, full_set: &[String], rng: &mut Rng) -> State {
    let mut state = view.state().clone();
    let mut unseen: Vec<&String> = full_set.iter().collect();
    let mut face_down = 0usize;
    for space in &state.spaces {
        for piece in &space.pieces {
            let face = match &piece.private_kind {
                Some(face) => face,
                None if piece.public_kind == back => {
                    face_down += 1;
                    continue;
                }
                None => &piece.public_kind,
            };
            if let Some(at) = unseen.iter().position(|f| *f == face) {
                unseen.swap_remove(at);
            }
        }
    }
    assert_eq!(
        unseen.len(),
        face_down,
        "{} faces are unseen but {} pieces lie face down",
        unseen.len(),
        face_down
    );
    // Sorted first: the sample must not depend on where faces sat in the view.
    let mut unseen: Vec<String> = unseen.into_iter().cloned().collect();
    unseen.sort();
    rng.shuffle(&mut unseen);
    let mut faces = unseen.into_iter();
    for space in &mut state.spaces {
        for piece in &mut space.pieces {
            if piece.private_kind.is_none() && piece.public_kind == back {
                piece.private_kind = faces.next();
            }
        }
    }
    state
}
