//! `SearchState`: an optional compact copy of a game's state that in-guest
//! playouts and search run on instead of the `Table` (docs/abi.md, "playout",
//! "search", and "Compact search states").
//!
//! Every game is played out and searched over the `Game` trait. That path
//! reads and writes JSON-shaped tables and builds every offer as an
//! `AvailableAction`: tens of thousands of wasm instructions a move. A game
//! may also describe its state as a small `Copy` value (bitboards, arrays)
//! with moves as small values, and declare it in `Game::search_state`; the
//! `playout` and `search` ops then run on that value, with the same rng
//! draws in the same order, so they give exactly the same games and the same
//! decisions, much faster. A game that declares none pays nothing: the
//! default `Game::search_state` returns `None` and the compact code is never
//! instantiated for it.

use std::collections::BTreeMap;

use crate::action::Action;
use crate::config::Scores;
use crate::game::Game;
use crate::mcts::{Budget, Decision, SearchError};
use crate::playout::{Outcome, Policy};
use crate::rng::Rng;
use crate::state::PlayerId;
use crate::table::Table;

/// A compact state of one game, for playouts and search.
///
/// What it must guarantee, for every table `from_table` accepts and every
/// state reached from it by `apply` (native tests should play many random
/// games both ways and compare, as the sample games' `tests/compact.rs` do):
///
/// - At most one seat is ever active, and only that seat (the *mover*) is
///   offered anything: a game with simultaneous moves cannot have one.
/// - `moves` lists exactly the mover's `choice` and `confirm` offers of
///   `Game::available_actions`, in that order, no two equal, and `action`
///   names each one's action: the search answers with the table's own offer
///   at the same position, after checking the actions agree at the root.
/// - `apply` does what `Game::apply_action` does to the table (given the
///   same move rng); `is_over`, `scores` and `ranks` answer as
///   `Game::is_game_over`, `Game::scores` and `Game::ranks` would.
/// - `from_table` never panics. It returns an error for any table it cannot
///   stand for exactly (missing spaces, unknown pieces, several active
///   players...); the ops then use the `Table` path, so an odd or hostile
///   table gets the same answer (or the same refusal) as before.
pub trait SearchState: Clone {
    /// One candidate move; equal exactly when the actions are.
    type Move: Copy + PartialEq;

    /// The compact state `table` stands for, or why there is none.
    fn from_table(table: &Table) -> Result<Self, String>;

    /// Whether the game is over (`Game::is_game_over`).
    fn is_over(&self) -> bool;

    /// The seat (0-based position in `players`) of the active player, or
    /// `None` when nobody is active.
    fn mover(&self) -> Option<usize>;

    /// The mover's candidates (`choice` and `confirm` offers, in offer
    /// order) into `out`, which is cleared first; empty when none.
    fn moves(&self, out: &mut Vec<Self::Move>);

    /// Carry out `mv` for the mover, `rng` being the move's own generator
    /// (what `Game::apply_action` receives).
    fn apply(&mut self, mv: Self::Move, rng: &mut Rng);

    /// The action `mv` stands for, in the addresses of the table.
    fn action(&self, mv: Self::Move) -> Action;

    /// Every seated player's score (`Game::scores`).
    fn scores(&self) -> Scores;

    /// The game's own ranks once over (`Game::ranks`); the default: none.
    fn ranks(&self) -> Option<BTreeMap<PlayerId, u32>> {
        None
    }

    /// Each seat's first public score in seat order (`seats`, the seated
    /// ids), 0 for a seat without one, into `out` (cleared first): what the
    /// search's rewards read. The default reads `scores`; override it when
    /// that is cheaper.
    fn first_points(&self, seats: &[PlayerId], out: &mut Vec<f64>) {
        let scores = self.scores();
        out.clear();
        out.extend(seats.iter().map(|p| scores.get(p).and_then(|s| s.public_points.first().copied()).unwrap_or(0.0)));
    }

    /// The candidate `policy` picks: exactly `moves`, then
    /// `policy.pick(count, rng)`; `None` (and no draw) when there is none.
    /// Override it when counting the moves is cheaper than listing them
    /// (`scratch` is a buffer to reuse).
    fn pick(&self, policy: Policy, rng: &mut Rng, scratch: &mut Vec<Self::Move>) -> Option<Self::Move> {
        self.moves(scratch);
        if scratch.is_empty() {
            None
        } else {
            Some(scratch[policy.pick(scratch.len(), rng)])
        }
    }
}

/// Plays games from a table on a compact state: one per generator in
/// `rngs` (each already past any setup draw), `None` when the table has no
/// compact state.
pub type PlayOutFn = fn(table: &Table, rngs: &mut [Rng], policies: &[Policy], max_plies: u32) -> Option<Vec<Outcome>>;

/// Searches a seat's view on a compact state (UCT, as `mcts::search` with
/// `Search::Mcts`), `None` when the view has no compact state or its moves
/// disagree with the table's offers.
pub type SearchFn = fn(view: &Table, player: PlayerId, budget: Budget, seed: u64) -> Option<Result<Decision, SearchError>>;

/// The playout and search entry points of one `SearchState`, as plain
/// function pointers: `Game::search_state` returns them, so the `Game` trait
/// needs no associated type (none can have a default on Rust 1.63).
#[derive(Clone, Copy)]
pub struct SearchStateOps {
    pub play_out: PlayOutFn,
    pub search: SearchFn,
}

impl SearchStateOps {
    /// The entry points for game `G` played on compact state `S`.
    pub fn of<G: Game, S: SearchState>() -> SearchStateOps {
        SearchStateOps { play_out: crate::playout::play_out_compact::<S>, search: crate::mcts_compact::search::<G, S> }
    }
}
