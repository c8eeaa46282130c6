//! The table state as the host and the guest exchange it (docs/abi.md, "State").
//!
//! Readers accept the short form (any field holding its default may be omitted);
//! writers always produce the full form so the host never has to guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A seated player's id, chosen by the host (JSON unsigned integer, u32).
pub type PlayerId = u32;

/// The whole table: who may act, the seats, the spaces with their pieces,
/// metadata every viewer receives, and the newest log lines (at most 500).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    #[serde(default)]
    pub active_player_ids: Vec<PlayerId>,
    #[serde(default)]
    pub players: Vec<Player>,
    #[serde(default)]
    pub spaces: Vec<Space>,
    #[serde(default)]
    pub meta_data: Map<String, Value>,
    #[serde(default)]
    pub log: Vec<LogEntry>,
}

impl State {
    /// The space named `space_id`.
    ///
    /// Linear search; `Table::space` is the indexed version.
    /// Panics when no space has that id.
    pub fn space(&self, space_id: &str) -> &Space {
        match self.spaces.iter().find(|space| space.space_id == space_id) {
            Some(space) => space,
            None => panic!("no space with id \"{}\"", space_id),
        }
    }

    /// The player with `player_id`. Panics when nobody in `players` has it.
    pub fn player(&self, player_id: PlayerId) -> &Player {
        match self.players.iter().find(|p| p.player_id == player_id) {
            Some(player) => player,
            None => panic!("no player with id {}", player_id),
        }
    }
}

/// One seat: id, display colour and name, and per-player state keys.
/// `private_state` reaches only this player.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Player {
    pub player_id: PlayerId,
    #[serde(default)]
    pub color: String,
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub public_state: Map<String, Value>,
    #[serde(default)]
    pub private_state: Map<String, Value>,
}

impl Player {
    /// The value of public state key `key`, if set.
    pub fn public(&self, key: &str) -> Option<&Value> {
        self.public_state.get(key)
    }

    /// The value of private state key `key`, if set (and visible to the code running).
    pub fn private(&self, key: &str) -> Option<&Value> {
        self.private_state.get(key)
    }
}

/// How a space shows the pieces a viewer may not see (docs/architecture.md, "Views").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrangement {
    /// Every piece in order; hidden ones show only their public part. The default.
    #[default]
    Ordered,
    /// Visible pieces, then the hidden ones grouped by public part, no order.
    Collection,
}

/// A place on the table holding an ordered list of pieces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Space {
    pub space_id: String,
    pub kind: String,
    /// The player who sees the private part of this space and of its unowned pieces.
    #[serde(default)]
    pub owner: Option<PlayerId>,
    #[serde(default)]
    pub arrangement: Arrangement,
    #[serde(default)]
    pub public_state: Map<String, Value>,
    #[serde(default)]
    pub private_state: Map<String, Value>,
    #[serde(default)]
    pub pieces: Vec<Piece>,
}

impl Space {
    /// An empty, ordered, unowned space with id `space_id` and kind `kind`.
    pub fn new(space_id: impl Into<String>, kind: impl Into<String>) -> Space {
        Space {
            space_id: space_id.into(),
            kind: kind.into(),
            owner: None,
            arrangement: Arrangement::Ordered,
            public_state: Map::new(),
            private_state: Map::new(),
            pieces: Vec::new(),
        }
    }

    /// The same space with `arrangement: collection` (hands, decks, bags).
    pub fn collection(mut self) -> Space {
        self.arrangement = Arrangement::Collection;
        self
    }

    /// The same space owned by `player`: they see its private parts.
    pub fn owned_by(mut self, player: PlayerId) -> Space {
        self.owner = Some(player);
        self
    }

    /// The same space with `pieces` appended after any it holds.
    pub fn with_pieces(mut self, pieces: impl IntoIterator<Item = Piece>) -> Space {
        self.pieces.extend(pieces);
        self
    }

    /// The same space with one more piece at the end.
    pub fn with_piece(mut self, piece: Piece) -> Space {
        self.pieces.push(piece);
        self
    }

    /// The same space with public state `key` set to `value`.
    pub fn with_public(mut self, key: impl Into<String>, value: impl Into<Value>) -> Space {
        self.public_state.insert(key.into(), value.into());
        self
    }

    /// The same space with private state `key` set to `value`.
    pub fn with_private(mut self, key: impl Into<String>, value: impl Into<Value>) -> Space {
        self.private_state.insert(key.into(), value.into());
        self
    }

    /// The value of public state key `key`, if set.
    pub fn public(&self, key: &str) -> Option<&Value> {
        self.public_state.get(key)
    }

    /// The value of private state key `key`, if set (and visible to the code running).
    pub fn private(&self, key: &str) -> Option<&Value> {
        self.private_state.get(key)
    }
}

/// A piece: what everyone sees (`public_kind`, `public_state`) and what only
/// its viewers see (`private_kind`, `private_state`). Its viewers are its
/// owner, else its space's owner, else nobody.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Piece {
    pub public_kind: String,
    #[serde(default)]
    pub public_state: Map<String, Value>,
    #[serde(default)]
    pub private_kind: Option<String>,
    #[serde(default)]
    pub private_state: Map<String, Value>,
    #[serde(default)]
    pub owner: Option<PlayerId>,
}

impl Piece {
    /// A piece that looks like `public_kind`, hides nothing and has no owner.
    pub fn new(public_kind: impl Into<String>) -> Piece {
        Piece {
            public_kind: public_kind.into(),
            public_state: Map::new(),
            private_kind: None,
            private_state: Map::new(),
            owner: None,
        }
    }

    /// The same piece hiding `private_kind` (what it really is) from non-viewers.
    pub fn hiding(mut self, private_kind: impl Into<String>) -> Piece {
        self.private_kind = Some(private_kind.into());
        self
    }

    /// The same piece with public state `key` set to `value`.
    pub fn with_public(mut self, key: impl Into<String>, value: impl Into<Value>) -> Piece {
        self.public_state.insert(key.into(), value.into());
        self
    }

    /// The same piece with private state `key` set to `value`.
    pub fn with_private(mut self, key: impl Into<String>, value: impl Into<Value>) -> Piece {
        self.private_state.insert(key.into(), value.into());
        self
    }

    /// The same piece owned by `player`: they see its private part wherever it sits.
    pub fn owned_by(mut self, player: PlayerId) -> Piece {
        self.owner = Some(player);
        self
    }

    /// The value of public state key `key`, if set.
    pub fn public(&self, key: &str) -> Option<&Value> {
        self.public_state.get(key)
    }

    /// The value of private state key `key`; None when unset or not visible here.
    pub fn private(&self, key: &str) -> Option<&Value> {
        self.private_state.get(key)
    }
}

/// One line of the game log. `for_player` maps a player id (decimal string)
/// to the text that player reads instead of `text`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub for_player: BTreeMap<String, String>,
}

impl LogEntry {
    /// A line every viewer reads as `text`.
    pub fn new(text: impl Into<String>) -> LogEntry {
        LogEntry { text: text.into(), for_player: BTreeMap::new() }
    }

    /// The same line, read by `player` as `text` instead.
    pub fn for_player(mut self, player: PlayerId, text: impl Into<String>) -> LogEntry {
        self.for_player.insert(player.to_string(), text.into());
        self
    }
}
