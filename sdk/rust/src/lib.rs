//! tablehost-sdk: write a turn-based game's rules once, compile them to a
//! wasm module the tablehost host runs (ABI v1, docs/abi.md).
//!
//! Implement [`Game`], then `tablehost_sdk::export_game!(MyGame);`.
//! Read the state through [`Table`], change it only through `Table`'s
//! mutators (each records a [`Patch`]), draw randomness only from [`Rng`],
//! and print with `tablehost_sdk::println!` (the host receives it as `printed`).

#[doc(hidden)]
pub mod abi;
mod action;
pub mod board;
mod cache;
pub mod cards;
mod config;
pub mod dice;
pub mod dispatch;
mod dispatch_search;
pub mod face_down;
mod game;
pub mod hidden;
mod json_out;
pub mod mcts;
mod mcts_compact;
mod metadata;
mod patch;
pub mod playout;
#[doc(hidden)]
pub mod printing;
mod rng;
pub mod search_state;
pub mod search_state_check;
mod space_index;
mod state;
mod table;
pub mod testing;
mod view;

pub use action::{Action, AvailableAction, Button, Intent};
pub use cache::StateCache;
pub use config::{GameConfig, Score, Scores, StartingPlayer};
pub use game::{
    actions_of_active, new_match, new_match_with, play, start, start_with, summary_of_parts, Game, Played, Started, Summary,
};
pub use metadata::{GameOption, Metadata, OptionKind, Options, ResignRule, ResultRule, OPTIONS_META_KEY};
pub use patch::{apply_patch, apply_patches, Patch, PatchError, LOG_CAP};
pub use playout::Policy;
pub use rng::{Bound, Rng};
pub use search_state::{SearchState, SearchStateOps};
pub use state::{Arrangement, LogEntry, Piece, Player, PlayerId, Space, State};
pub use table::Table;
pub use view::view_of;

pub use serde_json::{self, json, Map, Value};
