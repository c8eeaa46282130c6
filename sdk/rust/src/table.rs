//! `Table`: the state a game reads, and the only way it changes it. Every
//! mutator applies one `Patch` and records it for the host.

use serde_json::Value;

use crate::patch::{apply_patch_with, Patch, SpaceLookup};
use crate::rng::Rng;
use crate::space_index::SpaceIndex;
use crate::state::{LogEntry, Piece, Player, PlayerId, Space, State};

/// A state plus the patches recorded since the last `take_patches`, whether
/// the current move allows undo, and a space-id → position index.
#[derive(Clone, Debug)]
pub struct Table {
    state: State,
    space_positions: SpaceIndex,
    patches: Vec<Patch>,
    undo_allowed: bool,
}

impl Table {
    /// A table over `state` with nothing recorded.
    ///
    /// Panics when two spaces share an id (no valid state has that).
    pub fn new(state: State) -> Table {
        match Table::try_new(state) {
            Ok(table) => table,
            Err(message) => panic!("{}", message),
        }
    }

    /// A table over `state`, or an error message when two spaces share an id.
    pub fn try_new(state: State) -> Result<Table, String> {
        let space_positions = SpaceIndex::build(&state.spaces)
            .map_err(|id| format!("two spaces share the id \"{}\"", id))?;
        Ok(Table { state, space_positions, patches: Vec::new(), undo_allowed: false })
    }

    /// The whole state, read-only.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The table's state, consuming the table.
    pub fn into_state(self) -> State {
        self.state
    }

    /// The patches recorded since the last call (in order), clearing them and
    /// the undo permission.
    pub fn take_patches(&mut self) -> Vec<Patch> {
        self.undo_allowed = false;
        std::mem::take(&mut self.patches)
    }

    /// The patches recorded so far, in order.
    pub fn patches(&self) -> &[Patch] {
        &self.patches
    }

    /// Whether `allow_undo` was called since the last `take_patches`.
    pub fn undo_allowed(&self) -> bool {
        self.undo_allowed
    }

    // ---- reading -------------------------------------------------------

    /// Position of space `space_id` in `state().spaces`. Panics when missing.
    pub fn space_index(&self, space_id: &str) -> usize {
        match self.space_positions.get(space_id) {
            Some(position) => position,
            None => panic!("no space with id \"{}\"", space_id),
        }
    }

    /// Whether a space with id `space_id` exists.
    pub fn has_space(&self, space_id: &str) -> bool {
        self.space_positions.get(space_id).is_some()
    }

    /// The space named `space_id`. Panics when missing.
    pub fn space(&self, space_id: &str) -> &Space {
        &self.state.spaces[self.space_index(space_id)]
    }

    /// The spaces whose `kind` is `kind`, in state order.
    pub fn spaces_of_kind(&self, kind: &str) -> Vec<&Space> {
        self.state.spaces.iter().filter(|space| space.kind == kind).collect()
    }

    /// The pieces of space `space_id`, in order. Panics when the space is missing.
    pub fn pieces(&self, space_id: &str) -> &[Piece] {
        &self.space(space_id).pieces
    }

    /// The piece at `index` of space `space_id`. Panics when either is missing.
    pub fn piece(&self, space_id: &str, index: usize) -> &Piece {
        let pieces = self.pieces(space_id);
        match pieces.get(index) {
            Some(piece) => piece,
            None => panic!(
                "no piece at index {} of space \"{}\" holding {} pieces",
                index,
                space_id,
                pieces.len()
            ),
        }
    }

    /// The seated player ids, in seat order.
    pub fn players(&self) -> Vec<PlayerId> {
        self.state.players.iter().map(|p| p.player_id).collect()
    }

    /// The player with id `player_id`. Panics when not seated.
    pub fn player(&self, player_id: PlayerId) -> &Player {
        self.state.player(player_id)
    }

    /// The seat (0-based position in `players`) of `player_id`. Panics when not seated.
    pub fn seat_of(&self, player_id: PlayerId) -> usize {
        match self.state.players.iter().position(|p| p.player_id == player_id) {
            Some(seat) => seat,
            None => panic!("no player with id {}", player_id),
        }
    }

    /// The player `steps` seats after `player` in seat order, wrapping round
    /// (to the left at a card table). Panics when `player` is not seated.
    pub fn seat_after(&self, player: PlayerId, steps: usize) -> PlayerId {
        let players = &self.state.players;
        players[(self.seat_of(player) + steps) % players.len()].player_id
    }

    /// How `player` is named in log lines: their username, or `"player <id>"`
    /// when it is empty. Panics when `player` is not seated.
    pub fn player_name(&self, player: PlayerId) -> String {
        let username = &self.player(player).username;
        if username.is_empty() {
            format!("player {}", player)
        } else {
            username.clone()
        }
    }

    /// The players who may act now.
    pub fn active_players(&self) -> &[PlayerId] {
        &self.state.active_player_ids
    }

    /// Whether `player_id` may act now.
    pub fn is_active(&self, player_id: PlayerId) -> bool {
        self.state.active_player_ids.contains(&player_id)
    }

    /// The value of meta_data key `key`, if set.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.state.meta_data.get(key)
    }

    // ---- changing ------------------------------------------------------

    /// Apply `patch` and record it. Panics with the patch error when it does
    /// not fit the state (a bug in the game).
    fn record(&mut self, patch: Patch) {
        let lookup = SpaceLookup::Index(&self.space_positions);
        if let Err(err) = apply_patch_with(&mut self.state, &patch, &lookup) {
            panic!("invalid table change: {}", err);
        }
        if self.patches.capacity() == 0 {
            // A move records a handful of patches: one allocation instead of growing 4 -> 8.
            self.patches.reserve(8);
        }
        self.patches.push(patch);
    }

    /// Append `piece` to space `space_id`; returns its index.
    pub fn add_piece(&mut self, space_id: &str, piece: Piece) -> usize {
        let index = self.pieces(space_id).len();
        self.record(Patch::AddPiece { space_id: space_id.to_owned(), piece });
        index
    }

    /// Insert `piece` at `index` (0..=len) of space `space_id`; later pieces shift up.
    pub fn insert_piece(&mut self, space_id: &str, index: usize, piece: Piece) {
        self.record(Patch::InsertPiece { space_id: space_id.to_owned(), index, piece });
    }

    /// Remove and return the piece at `index` of `space_id`; later pieces shift down.
    pub fn remove_piece(&mut self, space_id: &str, index: usize) -> Piece {
        let piece = self.piece(space_id, index).clone();
        self.record(Patch::RemovePiece { space_id: space_id.to_owned(), index });
        piece
    }

    /// Move the piece at `index` of `from` to the end of `to`; returns its new index.
    pub fn move_piece(&mut self, from: &str, index: usize, to: &str) -> usize {
        self.piece(from, index);
        let new_index = self.pieces(to).len() - usize::from(from == to);
        self.record(Patch::MovePiece {
            from: from.to_owned(),
            index,
            to: to.to_owned(),
            to_index: None,
        });
        new_index
    }

    /// Move the piece at `index` of `from` to position `to_index` of `to`,
    /// counted after the removal (0..=len).
    pub fn move_piece_to(&mut self, from: &str, index: usize, to: &str, to_index: usize) {
        self.record(Patch::MovePiece {
            from: from.to_owned(),
            index,
            to: to.to_owned(),
            to_index: Some(to_index),
        });
    }

    /// Shuffle space `space_id` with `rng`, recording the resulting order as a
    /// `permute` patch (`new[k] = old[order[k]]`).
    pub fn shuffle(&mut self, space_id: &str, rng: &mut Rng) {
        let mut order: Vec<usize> = (0..self.pieces(space_id).len()).collect();
        rng.shuffle(&mut order);
        self.record(Patch::Permute { space_id: space_id.to_owned(), order });
    }

    /// Change what the piece looks like to everyone (e.g. turn a card face up).
    pub fn set_public_kind(&mut self, space_id: &str, index: usize, kind: impl Into<String>) {
        self.record(Patch::SetPublicKind { space_id: space_id.to_owned(), index, kind: kind.into() });
    }

    /// Change, or with `None` remove, what the piece hides.
    pub fn set_private_kind(&mut self, space_id: &str, index: usize, kind: Option<&str>) {
        self.record(Patch::SetPrivateKind {
            space_id: space_id.to_owned(),
            index,
            kind: kind.map(str::to_owned),
        });
    }

    /// Give the piece's private part to `owner` wherever it sits (`None`: nobody).
    pub fn set_piece_owner(&mut self, space_id: &str, index: usize, owner: Option<PlayerId>) {
        self.record(Patch::SetPieceOwner { space_id: space_id.to_owned(), index, owner });
    }

    /// Set public state `key` of a piece; `Value::Null` removes it.
    pub fn set_piece_public_state(
        &mut self,
        space_id: &str,
        index: usize,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) {
        self.record(Patch::SetPiecePublicState {
            space_id: space_id.to_owned(),
            index,
            key: key.into(),
            value: value.into(),
        });
    }

    /// Set private state `key` of a piece; `Value::Null` removes it.
    pub fn set_piece_private_state(
        &mut self,
        space_id: &str,
        index: usize,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) {
        self.record(Patch::SetPiecePrivateState {
            space_id: space_id.to_owned(),
            index,
            key: key.into(),
            value: value.into(),
        });
    }

    /// Give space `space_id` to `owner`, or back to the table with `None`.
    pub fn set_space_owner(&mut self, space_id: &str, owner: Option<PlayerId>) {
        self.record(Patch::SetSpaceOwner { space_id: space_id.to_owned(), owner });
    }

    /// Set public state `key` of a space; `Value::Null` removes it.
    pub fn set_space_public_state(&mut self, space_id: &str, key: impl Into<String>, value: impl Into<Value>) {
        self.record(Patch::SetSpacePublicState {
            space_id: space_id.to_owned(),
            key: key.into(),
            value: value.into(),
        });
    }

    /// Set private state `key` of a space; `Value::Null` removes it.
    pub fn set_space_private_state(&mut self, space_id: &str, key: impl Into<String>, value: impl Into<Value>) {
        self.record(Patch::SetSpacePrivateState {
            space_id: space_id.to_owned(),
            key: key.into(),
            value: value.into(),
        });
    }

    /// Set public state `key` of a player; `Value::Null` removes it.
    pub fn set_player_public_state(&mut self, player_id: PlayerId, key: impl Into<String>, value: impl Into<Value>) {
        self.record(Patch::SetPlayerPublicState { player_id, key: key.into(), value: value.into() });
    }

    /// Set private state `key` of a player; `Value::Null` removes it.
    pub fn set_player_private_state(&mut self, player_id: PlayerId, key: impl Into<String>, value: impl Into<Value>) {
        self.record(Patch::SetPlayerPrivateState { player_id, key: key.into(), value: value.into() });
    }

    /// Set who may act next (empty: nobody, e.g. when the game is over).
    pub fn set_active_players(&mut self, player_ids: Vec<PlayerId>) {
        self.record(Patch::SetActivePlayers { player_ids });
    }

    /// Set meta_data `key` (every viewer receives it); `Value::Null` removes it.
    pub fn set_meta(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.record(Patch::SetMeta { key: key.into(), value: value.into() });
    }

    /// Append a log line; the state keeps the newest 500.
    pub fn log(&mut self, entry: LogEntry) {
        self.record(Patch::Log { entry });
    }

    /// Let the acting player take this move back (unless it drew randomness).
    pub fn allow_undo(&mut self) {
        self.undo_allowed = true;
    }
}
