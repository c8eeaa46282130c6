//! Patches: one recorded change each, and `apply_patch`, the single definition
//! of what each one does (docs/abi.md, "Patches"; the Python host mirrors it).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::space_index::SpaceIndex;
use crate::state::{LogEntry, Piece, PlayerId, State};

/// The state keeps at most this many log entries; older ones are dropped first.
pub const LOG_CAP: usize = 500;

/// One change to a `State`. JSON: an object with `"op"` naming the variant in
/// snake_case and the fields below; indexes are 0-based and refer to the state
/// as it is when the patch applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Patch {
    /// Append `piece` to the space.
    AddPiece { space_id: String, piece: Piece },
    /// Insert `piece` at `index` (0..=len); later pieces shift up.
    InsertPiece { space_id: String, index: usize, piece: Piece },
    /// Remove the piece at `index`; later pieces shift down.
    RemovePiece { space_id: String, index: usize },
    /// Remove from `from` at `index`, then insert into `to` at `to_index`
    /// (read after the removal, 0..=len) or append when `to_index` is absent.
    MovePiece {
        from: String,
        index: usize,
        to: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to_index: Option<usize>,
    },
    /// Reorder the space: `new[k] = old[order[k]]`; `order` is a permutation of 0..len.
    Permute { space_id: String, order: Vec<usize> },
    SetPublicKind { space_id: String, index: usize, kind: String },
    /// `kind: null` removes the private kind.
    SetPrivateKind { space_id: String, index: usize, kind: Option<String> },
    SetPieceOwner { space_id: String, index: usize, owner: Option<PlayerId> },
    /// `value: null` removes `key`.
    SetPiecePublicState { space_id: String, index: usize, key: String, value: Value },
    /// `value: null` removes `key`.
    SetPiecePrivateState { space_id: String, index: usize, key: String, value: Value },
    SetSpaceOwner { space_id: String, owner: Option<PlayerId> },
    /// `value: null` removes `key`.
    SetSpacePublicState { space_id: String, key: String, value: Value },
    /// `value: null` removes `key`.
    SetSpacePrivateState { space_id: String, key: String, value: Value },
    /// `value: null` removes `key`.
    SetPlayerPublicState { player_id: PlayerId, key: String, value: Value },
    /// `value: null` removes `key`.
    SetPlayerPrivateState { player_id: PlayerId, key: String, value: Value },
    SetActivePlayers { player_ids: Vec<PlayerId> },
    /// `value: null` removes `key`.
    SetMeta { key: String, value: Value },
    /// Append `entry`; then drop the oldest entries while the log is longer than 500.
    Log { entry: LogEntry },
}

/// A patch that does not fit the state (unknown space or player, index out of
/// range, `order` not a permutation). The state was left unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    pub message: String,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatchError {}

/// How `apply_patch_with` finds a space's position: by scanning, or through
/// a `Table`'s space-id index.
pub(crate) enum SpaceLookup<'a> {
    Scan,
    Index(&'a SpaceIndex),
}

/// Apply `patch` to `state` in place.
///
/// Errors: `PatchError` when the patch names a missing space or player, an
/// index out of range, or an `order` that is not a permutation; `state` is then
/// unchanged (every check runs before any change).
pub fn apply_patch(state: &mut State, patch: &Patch) -> Result<(), PatchError> {
    apply_patch_with(state, patch, &SpaceLookup::Scan)
}

/// Apply `patches` in order; stops at the first error (earlier ones stay applied).
pub fn apply_patches(state: &mut State, patches: &[Patch]) -> Result<(), PatchError> {
    for patch in patches {
        apply_patch(state, patch)?;
    }
    Ok(())
}

fn error(message: String) -> PatchError {
    PatchError { message }
}

fn find_space(state: &State, lookup: &SpaceLookup<'_>, space_id: &str) -> Result<usize, PatchError> {
    let found = match lookup {
        SpaceLookup::Scan => state.spaces.iter().position(|s| s.space_id == space_id),
        SpaceLookup::Index(index) => index.get(space_id),
    };
    found.ok_or_else(|| error(format!("no space with id \"{}\"", space_id)))
}

fn find_player(state: &State, player_id: PlayerId) -> Result<usize, PatchError> {
    state
        .players
        .iter()
        .position(|p| p.player_id == player_id)
        .ok_or_else(|| error(format!("no player with id {}", player_id)))
}

/// Position of the existing piece `index` in space `space_id` (`index < len`).
fn find_piece(
    state: &State,
    lookup: &SpaceLookup<'_>,
    space_id: &str,
    index: usize,
) -> Result<usize, PatchError> {
    let at = find_space(state, lookup, space_id)?;
    let len = state.spaces[at].pieces.len();
    if index >= len {
        return Err(error(format!(
            "piece index {} out of range in space \"{}\" holding {} pieces",
            index, space_id, len
        )));
    }
    Ok(at)
}

/// Set `key` to `value` in `map`; JSON null removes the key instead.
fn set_key(map: &mut Map<String, Value>, key: &str, value: &Value) {
    if value.is_null() {
        map.remove(key);
    } else {
        map.insert(key.to_owned(), value.clone());
    }
}

fn is_permutation(order: &[usize], len: usize) -> bool {
    if order.len() != len {
        return false;
    }
    let mut seen = vec![false; len];
    for &k in order {
        if k >= len || seen[k] {
            return false;
        }
        seen[k] = true;
    }
    true
}

pub(crate) fn apply_patch_with(
    state: &mut State,
    patch: &Patch,
    lookup: &SpaceLookup<'_>,
) -> Result<(), PatchError> {
    match patch {
        Patch::AddPiece { space_id, piece } => {
            let at = find_space(state, lookup, space_id)?;
            state.spaces[at].pieces.push(piece.clone());
        }
        Patch::InsertPiece { space_id, index, piece } => {
            let at = find_space(state, lookup, space_id)?;
            let len = state.spaces[at].pieces.len();
            if *index > len {
                return Err(error(format!(
                    "insert index {} out of range in space \"{}\" holding {} pieces",
                    index, space_id, len
                )));
            }
            state.spaces[at].pieces.insert(*index, piece.clone());
        }
        Patch::RemovePiece { space_id, index } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            state.spaces[at].pieces.remove(*index);
        }
        Patch::MovePiece { from, index, to, to_index } => {
            let from_at = find_piece(state, lookup, from, *index)?;
            let to_at = find_space(state, lookup, to)?;
            let len_after_removal = state.spaces[to_at].pieces.len() - usize::from(from_at == to_at);
            let target = to_index.unwrap_or(len_after_removal);
            if target > len_after_removal {
                return Err(error(format!(
                    "move to_index {} out of range in space \"{}\" holding {} pieces after the removal",
                    target, to, len_after_removal
                )));
            }
            let piece = state.spaces[from_at].pieces.remove(*index);
            state.spaces[to_at].pieces.insert(target, piece);
        }
        Patch::Permute { space_id, order } => {
            let at = find_space(state, lookup, space_id)?;
            let pieces = &mut state.spaces[at].pieces;
            if !is_permutation(order, pieces.len()) {
                return Err(error(format!(
                    "permute order of {} entries is not a permutation of 0..{} for space \"{}\"",
                    order.len(),
                    pieces.len(),
                    space_id
                )));
            }
            let old = std::mem::take(pieces);
            let mut slots: Vec<Option<Piece>> = old.into_iter().map(Some).collect();
            *pieces = order.iter().map(|&k| slots[k].take().expect("checked permutation")).collect();
        }
        Patch::SetPublicKind { space_id, index, kind } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            state.spaces[at].pieces[*index].public_kind = kind.clone();
        }
        Patch::SetPrivateKind { space_id, index, kind } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            state.spaces[at].pieces[*index].private_kind = kind.clone();
        }
        Patch::SetPieceOwner { space_id, index, owner } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            state.spaces[at].pieces[*index].owner = *owner;
        }
        Patch::SetPiecePublicState { space_id, index, key, value } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            set_key(&mut state.spaces[at].pieces[*index].public_state, key, value);
        }
        Patch::SetPiecePrivateState { space_id, index, key, value } => {
            let at = find_piece(state, lookup, space_id, *index)?;
            set_key(&mut state.spaces[at].pieces[*index].private_state, key, value);
        }
        Patch::SetSpaceOwner { space_id, owner } => {
            let at = find_space(state, lookup, space_id)?;
            state.spaces[at].owner = *owner;
        }
        Patch::SetSpacePublicState { space_id, key, value } => {
            let at = find_space(state, lookup, space_id)?;
            set_key(&mut state.spaces[at].public_state, key, value);
        }
        Patch::SetSpacePrivateState { space_id, key, value } => {
            let at = find_space(state, lookup, space_id)?;
            set_key(&mut state.spaces[at].private_state, key, value);
        }
        Patch::SetPlayerPublicState { player_id, key, value } => {
            let at = find_player(state, *player_id)?;
            set_key(&mut state.players[at].public_state, key, value);
        }
        Patch::SetPlayerPrivateState { player_id, key, value } => {
            let at = find_player(state, *player_id)?;
            set_key(&mut state.players[at].private_state, key, value);
        }
        Patch::SetActivePlayers { player_ids } => {
            state.active_player_ids = player_ids.clone();
        }
        Patch::SetMeta { key, value } => {
            set_key(&mut state.meta_data, key, value);
        }
        Patch::Log { entry } => {
            state.log.push(entry.clone());
            if state.log.len() > LOG_CAP {
                let excess = state.log.len() - LOG_CAP;
                state.log.drain(..excess);
            }
        }
    }
    Ok(())
}
