//! The `playout` (7) and `search` (8) ops (docs/abi.md, ABI v1.1): decode,
//! check, run `playout` / `mcts`, encode. `dispatch.rs` routes to them.

use serde::Deserialize;

use crate::cache::StateCache;
use crate::dispatch::{bad_request, ensure_seated, with_table, CallError, Seat};
use crate::game::Game;
use crate::json_out::{name, ObjectWriter, WriteJson};
use crate::mcts::{search as run_search, Budget, Search, SearchError};
use crate::playout::{play_batch, Outcome, Policy, Start};
use crate::state::{Player, PlayerId};
use crate::table::Table;

/// Most games one playout call may ask for.
pub const MAX_GAMES_PER_CALL: usize = 4096;
/// Most iterations one search call may ask for.
pub const MAX_ITERATIONS: u32 = 10_000_000;
/// Moves a playout plays before it is cut, unless the request says otherwise.
pub const DEFAULT_MAX_PLIES: u32 = 10_000;
/// Random moves after the search tree, unless the request says otherwise.
pub const DEFAULT_PLAYOUT_PLIES: u32 = 200;
/// UCB1's exploration constant, unless the request says otherwise.
pub const DEFAULT_EXPLORATION: f64 = 1.0;

#[derive(Deserialize)]
pub(crate) struct PlayoutRequest {
    #[serde(default)]
    state: Option<crate::state::State>,
    #[serde(default)]
    state_ref: Option<String>,
    #[serde(default)]
    players: Option<Vec<Seat>>,
    seeds: Vec<u64>,
    policies: Vec<String>,
    #[serde(default)]
    max_plies: Option<u32>,
}

#[derive(Deserialize)]
pub(crate) struct SearchRequest {
    view: crate::state::State,
    player_id: PlayerId,
    algorithm: String,
    iterations: u32,
    seed: u64,
    #[serde(default)]
    exploration: Option<f64>,
    #[serde(default)]
    max_playout_plies: Option<u32>,
}

struct Game1<'a>(&'a Outcome);

impl WriteJson for Game1<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let outcome = self.0;
        let mut game = ObjectWriter::begin(out);
        game.member(name!("plies"), &outcome.plies)
            .member(name!("game_over"), &outcome.game_over)
            .member(name!("cut"), &outcome.cut.map(|cut| cut.name().to_string()))
            .member(name!("scores"), &outcome.scores);
        if let Some(ranks) = &outcome.ranks {
            game.member(name!("ranks"), &crate::dispatch::RanksByPlayer(ranks.clone()));
        }
        game.end();
    }
}

fn policies(names: &[String]) -> Result<Vec<Policy>, CallError> {
    if names.is_empty() {
        return Err(bad_request("playout needs at least one policy"));
    }
    names
        .iter()
        .map(|name| Policy::parse(name).ok_or_else(|| bad_request(format!("unknown policy \"{}\" (random, first)", name))))
        .collect()
}

/// `playout`: one game per seed, from the request's state (or ref) or from setup
/// with `players`; `{"games": [{"plies", "game_over", "cut", "scores", "ranks"?}]}` in seed order
/// (`ranks` at game over, for a game whose `Game::ranks` gives them).
pub(crate) fn playout<G: Game>(cache: &mut StateCache, req: PlayoutRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
    if req.seeds.is_empty() || req.seeds.len() > MAX_GAMES_PER_CALL {
        return Err(bad_request(format!("playout needs 1 to {} seeds", MAX_GAMES_PER_CALL)));
    }
    let policies = policies(&req.policies)?;
    let max_plies = req.max_plies.unwrap_or(DEFAULT_MAX_PLIES);
    let outcomes: Vec<Outcome> = match req.players {
        Some(seats) if req.state.is_none() && req.state_ref.is_none() => {
            if seats.is_empty() {
                return Err(bad_request("playout from setup needs at least one player"));
            }
            for (at, seat) in seats.iter().enumerate() {
                if seats[..at].iter().any(|s| s.player_id == seat.player_id) {
                    return Err(bad_request(format!("player id {} is seated twice", seat.player_id)));
                }
            }
            let players: Vec<Player> = seats
                .into_iter()
                .map(|s| Player { player_id: s.player_id, username: s.username, color: s.color, ..Player::default() })
                .collect();
            play_batch::<G>(Start::Setup(&players), &req.seeds, &policies, max_plies)
        }
        _ => with_table(cache, req.state, req.state_ref, |table: &Table| {
            Ok(play_batch::<G>(Start::Table(table), &req.seeds, &policies, max_plies))
        })?,
    };
    let games: Vec<Game1> = outcomes.iter().map(Game1).collect();
    let mut response = ObjectWriter::begin(out);
    response.member(name!("games"), &games);
    response.end();
    Ok(())
}

/// `search`: the seat's next action chosen by MCTS or ISMCTS on its view;
/// `{"action": AvailableAction, "visits", "iterations"}`. The host sends the view with its
/// hidden groups expanded (`tablehost.search_view`), so the action is in that state's addresses.
pub(crate) fn search<G: Game>(req: SearchRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
    let kind = match req.algorithm.as_str() {
        "mcts" => Search::Mcts,
        "ismcts" => Search::Ismcts,
        other => return Err(bad_request(format!("unknown search algorithm \"{}\" (mcts, ismcts)", other))),
    };
    if req.iterations == 0 || req.iterations > MAX_ITERATIONS {
        return Err(bad_request(format!("iterations must be 1 to {}", MAX_ITERATIONS)));
    }
    let exploration = req.exploration.unwrap_or(DEFAULT_EXPLORATION);
    if !(exploration.is_finite() && exploration >= 0.0) {
        return Err(bad_request("exploration must be a finite number >= 0"));
    }
    let view = Table::try_new(req.view).map_err(bad_request)?;
    ensure_seated(view.state(), req.player_id)?;
    let budget = Budget {
        iterations: req.iterations,
        exploration,
        max_playout_plies: req.max_playout_plies.unwrap_or(DEFAULT_PLAYOUT_PLIES),
    };
    let decision = run_search::<G>(view.state(), req.player_id, kind, budget, req.seed).map_err(|err| match err {
        SearchError::NoAction => CallError {
            code: "no_action",
            message: format!("player {} is offered no choice or confirm in this view", req.player_id),
        },
        SearchError::NoSampler => CallError {
            code: "no_sampler",
            message: "this game does not implement sample_hidden, so it cannot be searched with ismcts".to_string(),
        },
        SearchError::HiddenInformation => CallError {
            code: "hidden_information",
            message: "this game hides information: search it with ismcts".to_string(),
        },
    })?;
    let offer = decision.offer;
    let mut response = ObjectWriter::begin(out);
    response
        .member(name!("action"), &offer)
        .member(name!("visits"), &decision.visits)
        .member(name!("iterations"), &decision.iterations);
    response.end();
    Ok(())
}

