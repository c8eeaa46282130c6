//! A viewer's view of a state, in state form: what the rules see when they run
//! in that viewer's browser (docs/abi.md, "Running the rules on a view").
//!
//! Every private part the viewer may not see is absent (`private_kind` None,
//! `private_state` empty), so `Piece::private` and friends answer None there.
//! A `collection` space lists the viewer's own pieces first, then the hidden
//! ones in an order that depends only on their public parts (the host sends them
//! as groups with a count; the page lays each group out as that many pieces).

use std::cmp::Ordering;

use crate::state::{Arrangement, LogEntry, Piece, PlayerId, Space, State};

/// The state as `viewer` (a player id, or None for a spectator) may see it, in
/// the form a step on a view receives.
///
/// Log lines become the viewer's own text with no `for_player` map.
pub fn view_of(state: &State, viewer: Option<PlayerId>) -> State {
    let own_key = viewer.map(|id| id.to_string());
    State {
        active_player_ids: state.active_player_ids.clone(),
        players: state
            .players
            .iter()
            .map(|player| {
                let mut player = player.clone();
                if Some(player.player_id) != viewer {
                    player.private_state.clear();
                }
                player
            })
            .collect(),
        spaces: state.spaces.iter().map(|space| space_view(space, viewer)).collect(),
        meta_data: state.meta_data.clone(),
        log: state
            .log
            .iter()
            .map(|entry| {
                let text = own_key.as_ref().and_then(|key| entry.for_player.get(key)).unwrap_or(&entry.text);
                LogEntry::new(text.clone())
            })
            .collect(),
    }
}

fn sees(piece: &Piece, space: &Space, viewer: Option<PlayerId>) -> bool {
    viewer.is_some() && piece.owner.or(space.owner) == viewer
}

fn public_part(piece: &Piece) -> Piece {
    Piece {
        public_kind: piece.public_kind.clone(),
        public_state: piece.public_state.clone(),
        private_kind: None,
        private_state: Default::default(),
        owner: piece.owner,
    }
}

fn by_public_part(a: &Piece, b: &Piece) -> Ordering {
    let key = |p: &Piece| serde_json::to_string(&(&p.public_kind, &p.public_state, p.owner)).unwrap_or_default();
    key(a).cmp(&key(b))
}

fn space_view(space: &Space, viewer: Option<PlayerId>) -> Space {
    let mut pieces: Vec<Piece> = Vec::with_capacity(space.pieces.len());
    if space.arrangement == Arrangement::Collection {
        let mut hidden: Vec<Piece> = Vec::new();
        for piece in &space.pieces {
            if sees(piece, space, viewer) {
                pieces.push(piece.clone());
            } else {
                hidden.push(public_part(piece));
            }
        }
        hidden.sort_by(by_public_part);
        pieces.extend(hidden);
    } else {
        for piece in &space.pieces {
            pieces.push(if sees(piece, space, viewer) { piece.clone() } else { public_part(piece) });
        }
    }
    let mut space = Space { pieces, ..space.clone() };
    if viewer.is_none() || space.owner != viewer {
        space.private_state.clear();
    }
    space
}
