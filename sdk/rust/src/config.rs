//! What a game declares at the start (`GameConfig`) and reports after every move (`Scores`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::state::{PlayerId, Space};

/// Who is active when the match starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartingPlayer {
    /// One player drawn with the setup seed: `players[rng.below(len)]`, the
    /// first draw of the setup rng (before `prepare`). The default.
    #[default]
    Random,
    /// Every seated player at once, in seat order.
    All,
    /// This player.
    Player(PlayerId),
}

/// The table a match starts from: its spaces (with any starting pieces), the
/// labels of the score columns, metadata every viewer receives, and who starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameConfig {
    pub spaces: Vec<Space>,
    pub score_labels: Vec<String>,
    pub meta_data: Map<String, Value>,
    pub starting_player: StartingPlayer,
}

/// One player's points: `public_points` line up with `score_labels` and
/// everyone sees them; `private_points` reach only that player.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Score {
    #[serde(default)]
    pub public_points: Vec<f64>,
    #[serde(default)]
    pub private_points: Vec<f64>,
}

impl Score {
    /// A score with only public points.
    pub fn public(points: Vec<f64>) -> Score {
        Score { public_points: points, private_points: Vec::new() }
    }
}

/// Scores keyed by player id (JSON object keys are the ids as decimal strings).
pub type Scores = BTreeMap<PlayerId, Score>;
