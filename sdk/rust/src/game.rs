//! The `Game` trait a game author implements, and the two driver functions
//! (`start`, `play`) that run it the way the host does (also handy in tests).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::action::{Action, AvailableAction};
use crate::config::{GameConfig, Scores, StartingPlayer};
use crate::metadata::{Metadata, Options, OPTIONS_META_KEY};
use crate::patch::Patch;
use crate::rng::Rng;
use crate::search_state::SearchStateOps;
use crate::state::{Player, PlayerId, State};
use crate::table::Table;

/// The rules of one game. All associated functions: a module keeps nothing
/// between calls but the SDK's state cache.
pub trait Game {
    /// What the game declares about itself: player range, description,
    /// hidden information, result and resign rules, options (docs/abi.md
    /// "metadata"). The default: 1 to 64 players, highest score wins, no options.
    fn metadata() -> Metadata {
        Metadata::default()
    }

    /// The starting table for `players` (the seated ids, in seat order) with
    /// the chosen `options` (every declared option present; defaults filled in).
    fn config(players: &[PlayerId], options: &Options) -> GameConfig;

    /// Changes made once after seating, before the first move (shuffle, deal).
    /// Runs with the setup seed's rng, after any `StartingPlayer::Random` draw.
    fn prepare(table: &mut Table, rng: &mut Rng) {
        let _ = (table, rng);
    }

    /// Every legal action of `player_id` in this state (empty when none).
    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction>;

    /// Carry out `action` by `player_id`. The host has checked that it was
    /// offered; a panic refuses the move and leaves the match unchanged.
    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng);

    /// Every seated player's score, keyed by player id.
    fn scores(table: &Table) -> Scores;

    /// Whether the match has ended (no action is accepted afterwards).
    fn is_game_over(table: &Table, scores: &Scores) -> bool;

    /// All that `setup` and `step` report about a state at once: the scores,
    /// whether the game is over, and the actions of each active player in
    /// `active_player_ids` order (none when over).
    ///
    /// The default calls `scores`, `is_game_over` and `available_actions`
    /// (`summary_of_parts`). A game whose three answers come from one reading
    /// of the table (reversi reads its board once instead of three times)
    /// overrides it; the override must give exactly what the default gives
    /// (`testing::assert_summary_agrees` checks a game's states).
    fn summary(table: &Table) -> Summary {
        summary_of_parts::<Self>(table)
    }

    /// Optional, for games with hidden information: a full state that fits
    /// what `viewer` sees in `view`, drawn from `rng`.
    ///
    /// `view` is the viewer's view as a state (the host expands each group
    /// of hidden pieces into copies of its public part): every piece hidden
    /// from them shows only its public part, other players' private state is
    /// empty. The sample must keep every space, piece and
    /// index where the view has it and fill in only what is hidden, so that
    /// the rules can run on it (information-set search, `mcts`). The default
    /// returns None: the game cannot be searched with `ismcts`, which the
    /// guest then refuses with the error `no_sampler`. `hidden::deal_unseen`
    /// is this method for a set of distinct faces dealt face down.
    fn sample_hidden(view: &Table, viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        let _ = (view, viewer, rng);
        None
    }

    /// Each seat's rank once the game is over (1 = first; ties share a rank),
    /// for games whose metadata declares `ResultRule::Ranks`. Others keep
    /// the default `None` and the host ranks by score.
    fn ranks(table: &Table, scores: &Scores) -> Option<BTreeMap<PlayerId, u32>> {
        let _ = (table, scores);
        None
    }

    /// Optional, for speed: the compact state in-guest playouts and search
    /// run on instead of the table (`search_state::SearchState`, which says
    /// what it must guarantee): `Some(SearchStateOps::of::<Self, MyState>())`.
    /// The default `None` keeps every game on the table path.
    fn search_state() -> Option<SearchStateOps> {
        None
    }
}

/// A match just set up: the state `config` built, the table after `prepare`
/// (its patches still recorded), and what else the setup response carries.
#[derive(Clone, Debug)]
pub struct Started {
    /// The state before `prepare`: what the setup response sends as `state`.
    pub initial: State,
    /// The table after `prepare`; `table.patches()` are prepare's patches.
    pub table: Table,
    pub score_labels: Vec<String>,
    /// Whether the setup rng was drawn from (random starter or prepare).
    pub rng_used: bool,
}

/// What a state reports after setup or a move (`Game::summary`).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Every seated player's score (`Game::scores`).
    pub scores: Scores,
    /// Whether the match has ended (`Game::is_game_over`).
    pub game_over: bool,
    /// (player id, `Game::available_actions`) for each active player in
    /// `active_player_ids` order; empty when `game_over`.
    pub actions: Vec<(PlayerId, Vec<AvailableAction>)>,
}

/// `Game::summary` from its parts: `scores`, then `is_game_over` on them,
/// then `actions_of_active`. What every game's summary must equal.
pub fn summary_of_parts<G: Game + ?Sized>(table: &Table) -> Summary {
    let scores = G::scores(table);
    let game_over = G::is_game_over(table, &scores);
    let actions = actions_of_active::<G>(table, game_over);
    Summary { scores, game_over, actions }
}

/// What one move produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    pub patches: Vec<Patch>,
    pub rng_used: bool,
    pub allow_undo: bool,
}

/// Run setup as the host does with the default options (see `start_with`).
///
/// Panics when `players` is empty or a given starting player is not seated.
pub fn start<G: Game>(players: Vec<Player>, seed: u64) -> Started {
    start_with::<G>(players, seed, &Map::new())
}

/// Run setup as the host does: resolve `options` against the metadata,
/// `config`, seat `players`, pick the starting player(s), then `prepare`, all
/// with one `Rng` seeded by `seed`.
///
/// Panics when `players` is empty, a given starting player is not seated, or
/// an option is unknown or not allowed.
pub fn start_with<G: Game>(players: Vec<Player>, seed: u64, options: &Map<String, Value>) -> Started {
    let options = G::metadata().resolve(options).unwrap_or_else(|err| panic!("{}", err));
    let mut rng = Rng::new(seed);
    let (initial, score_labels) = initial_state::<G>(players, &options, &mut rng);
    let mut table = Table::new(initial.clone());
    G::prepare(&mut table, &mut rng);
    Started { initial, table, score_labels, rng_used: rng.used() }
}

/// Setup before `prepare`: the state `config` builds for `players` and
/// `options`, with the starting player(s) drawn from `rng`, and the score
/// labels. A non-empty `options` is recorded in `meta_data.options`. (The
/// dispatcher writes this state out, then moves it into the table instead
/// of cloning it as `start` does.)
///
/// Panics when `players` is empty or a given starting player is not seated.
pub(crate) fn initial_state<G: Game>(players: Vec<Player>, options: &Options, rng: &mut Rng) -> (State, Vec<String>) {
    assert!(!players.is_empty(), "a match needs at least one player");
    let ids: Vec<PlayerId> = players.iter().map(|p| p.player_id).collect();
    let mut config = G::config(&ids, options);
    if !options.0.is_empty() {
        config.meta_data.insert(OPTIONS_META_KEY.to_owned(), Value::Object(options.0.clone()));
    }
    let active_player_ids = match config.starting_player {
        StartingPlayer::Random => vec![ids[rng.below(ids.len())]],
        StartingPlayer::All => ids.clone(),
        StartingPlayer::Player(id) => {
            assert!(ids.contains(&id), "starting player {} is not seated", id);
            vec![id]
        }
    };
    let initial = State {
        active_player_ids,
        players,
        spaces: config.spaces,
        meta_data: config.meta_data,
        log: Vec::new(),
    };
    (initial, config.score_labels)
}

/// Set up a match for `player_ids` (usernames `player-<id>`, no colours) and
/// return the starting table with nothing recorded. For tests and tools.
pub fn new_match<G: Game>(player_ids: &[PlayerId], seed: u64) -> Table {
    new_match_with::<G>(player_ids, seed, &Map::new())
}

/// `new_match` with chosen `options` (the rest take their defaults).
///
/// Panics when an option is unknown or not allowed.
pub fn new_match_with<G: Game>(player_ids: &[PlayerId], seed: u64, options: &Map<String, Value>) -> Table {
    let players = player_ids
        .iter()
        .map(|&player_id| Player { player_id, username: format!("player-{}", player_id), ..Player::default() })
        .collect();
    let mut table = start_with::<G>(players, seed, options).table;
    table.take_patches();
    table
}

/// Apply one move as the host does: a fresh `Rng` from `seed`, then
/// `apply_action`; returns the recorded patches (cleared from `table`).
pub fn play<G: Game>(table: &mut Table, player_id: PlayerId, action: &Action, seed: u64) -> Played {
    table.take_patches();
    let mut rng = Rng::new(seed);
    G::apply_action(table, player_id, action, &mut rng);
    let allow_undo = table.undo_allowed();
    Played { patches: table.take_patches(), rng_used: rng.used(), allow_undo }
}

/// The actions of every active player in `active_player_ids` order, as
/// (player id, actions) pairs; empty when `game_over`.
pub fn actions_of_active<G: Game + ?Sized>(table: &Table, game_over: bool) -> Vec<(PlayerId, Vec<AvailableAction>)> {
    if game_over {
        return Vec::new();
    }
    table
        .active_players()
        .iter()
        .map(|&player_id| (player_id, G::available_actions(table, player_id)))
        .collect()
}
