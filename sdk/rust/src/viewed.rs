//! A viewer's view read back into a state the rules can run on (docs/abi.md,
//! "search"). The host builds the view with `tablehost.view.view_state`: in a
//! `collection` space the pieces the viewer may not see arrive grouped, one
//! entry per group with a `count`. Expanding each group into `count` copies
//! of its public part gives an ordinary `State` whose hidden pieces show only
//! their public side; `ViewedState` remembers where each copy came from so an
//! action chosen on the expanded state can be named in view addresses again.

use serde::Deserialize;

use crate::action::Action;
use crate::state::State;

/// Most pieces a view may expand to (a guard against a count that would
/// exhaust the instance's memory; real tables hold a few hundred).
pub const MAX_EXPANDED_PIECES: usize = 100_000;

/// The `count` of every piece of a view, read beside the view's `State`
/// (whose reader ignores `count`).
#[derive(Deserialize)]
pub struct CountedView {
    #[serde(default)]
    spaces: Vec<CountedSpace>,
}

#[derive(Deserialize)]
struct CountedSpace {
    space_id: String,
    #[serde(default)]
    pieces: Vec<Counted>,
}

#[derive(Deserialize)]
struct Counted {
    #[serde(default)]
    count: Option<usize>,
}

/// An expanded view: the state, and per space with groups the view index of
/// every expanded piece.
#[derive(Clone, Debug)]
pub struct ViewedState {
    pub state: State,
    /// (space id, view index of each piece of the expanded space).
    view_index: Vec<(String, Vec<usize>)>,
}

impl ViewedState {
    /// Read a view (`view_state`'s JSON, as a `State` and its counts) into a state.
    ///
    /// Errors (a message for `bad_request`): the groups would expand past
    /// `MAX_EXPANDED_PIECES` pieces.
    pub fn expand(mut state: State, counted: CountedView) -> Result<ViewedState, String> {
        let mut total = 0usize;
        let mut view_index = Vec::new();
        for (space, counts) in state.spaces.iter_mut().zip(counted.spaces) {
            debug_assert_eq!(space.space_id, counts.space_id);
            total = total.saturating_add(space.pieces.len());
            if counts.pieces.iter().all(|piece| piece.count.is_none()) {
                continue;
            }
            let mut pieces = Vec::new();
            let mut index = Vec::new();
            for (at, (piece, counted)) in space.pieces.drain(..).zip(counts.pieces).enumerate() {
                let copies = counted.count.unwrap_or(1);
                total = total.saturating_add(copies);
                if total > MAX_EXPANDED_PIECES {
                    return Err(format!("the view expands to more than {} pieces", MAX_EXPANDED_PIECES));
                }
                for _ in 0..copies {
                    pieces.push(piece.clone());
                    index.push(at);
                }
            }
            space.pieces = pieces;
            view_index.push((counts.space_id, index));
        }
        Ok(ViewedState { state, view_index })
    }

    /// `action` (addressed in the expanded state) in view addresses: a click
    /// on a copy of a group becomes a click on the group.
    pub fn to_view_action(&self, action: &Action) -> Action {
        if let Action::PieceClick { space_id, index } = action {
            if let Some((_, map)) = self.view_index.iter().find(|(id, _)| id == space_id) {
                if let Some(&view_index) = map.get(*index) {
                    return Action::piece_click(space_id.clone(), view_index);
                }
            }
        }
        action.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{json, serde_json, Value};

    fn from_view(view: Value) -> Result<ViewedState, String> {
        let counted: CountedView = serde_json::from_value(view.clone()).unwrap();
        ViewedState::expand(serde_json::from_value(view).unwrap(), counted)
    }

    #[test]
    fn groups_expand_and_actions_map_back_to_the_group() {
        let view = json!({
            "players": [{"player_id": 1}],
            "spaces": [{"space_id": "hand", "kind": "hand", "arrangement": "collection", "pieces": [
                {"public_kind": "back", "private_kind": "7H"},
                {"public_kind": "back", "public_state": {}, "owner": null, "count": 3},
                {"public_kind": "chip", "public_state": {}, "owner": null, "count": 2}]}]
        });
        let viewed = from_view(view).unwrap();
        let kinds: Vec<&str> = viewed.state.spaces[0].pieces.iter().map(|p| p.public_kind.as_str()).collect();
        assert_eq!(kinds, ["back", "back", "back", "back", "chip", "chip"]);
        assert_eq!(viewed.state.spaces[0].pieces[1].private_kind, None);
        assert_eq!(viewed.to_view_action(&Action::piece_click("hand", 0)), Action::piece_click("hand", 0));
        assert_eq!(viewed.to_view_action(&Action::piece_click("hand", 3)), Action::piece_click("hand", 1));
        assert_eq!(viewed.to_view_action(&Action::piece_click("hand", 5)), Action::piece_click("hand", 2));
    }

    #[test]
    fn a_huge_count_is_refused() {
        let view = json!({"spaces": [{"space_id": "s", "kind": "k",
            "pieces": [{"public_kind": "x", "count": MAX_EXPANDED_PIECES + 1}]}]});
        assert!(from_view(view).is_err());
    }
}
