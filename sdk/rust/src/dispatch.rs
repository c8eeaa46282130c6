//! The dispatcher: one request (op code + JSON bytes) in, one JSON response
//! out (docs/abi.md, "Ops" and "Errors"). Safe code; `abi.rs` feeds it.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::action::{Action, AvailableAction};
use crate::cache::StateCache;
use crate::config::Scores;
use crate::game::{actions_of_active, play, start, Game};
use crate::patch::Patch;
use crate::printing::take_printed;
use crate::state::{Player, PlayerId, State};
use crate::table::Table;

pub const OP_SETUP: i32 = 1;
pub const OP_ACTIONS: i32 = 2;
pub const OP_STEP: i32 = 3;
pub const OP_SCORES: i32 = 4;
pub const OP_GAME_OVER: i32 = 5;

/// An error response's `code` and `message`.
#[derive(Debug)]
struct CallError {
    code: &'static str,
    message: String,
}

fn bad_request(message: impl Into<String>) -> CallError {
    CallError { code: "bad_request", message: message.into() }
}

/// (player id, actions) pairs, written as a JSON object keyed by the id in
/// decimal (a Vec instead of a BTreeMap keeps the wasm small).
struct ActionsByPlayer(Vec<(PlayerId, Vec<AvailableAction>)>);

impl Serialize for ActionsByPlayer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (player_id, actions) in &self.0 {
            map.serialize_entry(player_id, actions)?;
        }
        map.end()
    }
}

// ---- requests -------------------------------------------------------------

#[derive(Deserialize)]
struct Seat {
    player_id: PlayerId,
    #[serde(default)]
    username: String,
    #[serde(default)]
    color: String,
}

#[derive(Deserialize)]
struct SetupRequest {
    players: Vec<Seat>,
    seed: u64,
    #[serde(default)]
    next_ref: Option<String>,
}

/// `actions`, `scores` and `game_over` requests (`player_id` only for actions).
#[derive(Deserialize)]
struct ReadRequest {
    #[serde(default)]
    state: Option<State>,
    #[serde(default)]
    state_ref: Option<String>,
    #[serde(default)]
    player_id: Option<PlayerId>,
}

#[derive(Deserialize)]
struct StepRequest {
    #[serde(default)]
    state: Option<State>,
    #[serde(default)]
    state_ref: Option<String>,
    #[serde(default)]
    next_ref: Option<String>,
    player_id: PlayerId,
    action: Action,
    seed: u64,
    #[serde(default)]
    want_state: bool,
}

// ---- responses ------------------------------------------------------------

#[derive(Serialize)]
struct SetupResponse<'a> {
    state: &'a State,
    patches: &'a [Patch],
    rng_used: bool,
    score_labels: &'a [String],
    scores: &'a Scores,
    game_over: bool,
    actions: &'a ActionsByPlayer,
}

#[derive(Serialize)]
struct ActionsResponse<'a> {
    actions: &'a [AvailableAction],
}

#[derive(Serialize)]
struct StepResponse<'a> {
    patches: &'a [Patch],
    rng_used: bool,
    allow_undo: bool,
    scores: &'a Scores,
    game_over: bool,
    actions: &'a ActionsByPlayer,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a State>,
}

#[derive(Serialize)]
struct ScoresResponse<'a> {
    scores: &'a Scores,
}

#[derive(Serialize)]
struct GameOverResponse<'a> {
    game_over: bool,
    scores: &'a Scores,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct ErrorResponse<'a> {
    error: ErrorBody<'a>,
}

// ---- dispatch -------------------------------------------------------------

/// Run op `op` on the JSON `request` against `cache`; returns the response
/// JSON (UTF-8), with `printed` added when the game printed anything.
///
/// Never fails: bad input gives an error response (`bad_request`,
/// `unknown_op`, `state_miss`, `unknown_player`). A panic in the game is not
/// caught (in wasm it traps; see `abi.rs`).
pub fn dispatch<G: Game>(cache: &mut StateCache, op: i32, request: &[u8]) -> Vec<u8> {
    let result = match op {
        OP_SETUP => parse(request).and_then(|req| setup::<G>(cache, req)),
        OP_ACTIONS => parse(request).and_then(|req| actions::<G>(cache, req)),
        OP_STEP => parse(request).and_then(|req| step::<G>(cache, req)),
        OP_SCORES => parse(request).and_then(|req| scores::<G>(cache, req)),
        OP_GAME_OVER => parse(request).and_then(|req| game_over::<G>(cache, req)),
        other => Err(CallError { code: "unknown_op", message: format!("unknown op code {}", other) }),
    };
    let mut response = match result {
        Ok(body) => body,
        Err(err) => to_json(&ErrorResponse { error: ErrorBody { code: err.code, message: &err.message } }),
    };
    append_printed(&mut response, &take_printed());
    response
}

fn parse<'de, T: Deserialize<'de>>(request: &'de [u8]) -> Result<T, CallError> {
    serde_json::from_slice(request).map_err(|err| bad_request(format!("malformed request: {}", err)))
}

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("responses are always encodable")
}

/// Add `"printed": text` as the last member of the JSON object `response`.
fn append_printed(response: &mut Vec<u8>, printed: &str) {
    if printed.is_empty() {
        return;
    }
    debug_assert_eq!(response.last(), Some(&b'}'));
    response.pop();
    response.extend_from_slice(b",\"printed\":");
    response.extend_from_slice(&to_json(&printed));
    response.push(b'}');
}

fn ensure_seated(state: &State, player_id: PlayerId) -> Result<(), CallError> {
    if state.players.iter().any(|p| p.player_id == player_id) {
        Ok(())
    } else {
        Err(CallError { code: "unknown_player", message: format!("player {} is not seated", player_id) })
    }
}

fn state_miss(state_ref: &str) -> CallError {
    CallError { code: "state_miss", message: format!("state_ref \"{}\" is not cached; resend the state", state_ref) }
}

/// Run `read` on the request's inline state, else on the cached one.
fn with_table<R>(
    cache: &mut StateCache,
    state: Option<State>,
    state_ref: Option<String>,
    read: impl FnOnce(&Table) -> Result<R, CallError>,
) -> Result<R, CallError> {
    if let Some(state) = state {
        return read(&Table::try_new(state).map_err(bad_request)?);
    }
    let state_ref = state_ref.ok_or_else(|| bad_request("the request needs \"state\" or \"state_ref\""))?;
    match cache.get(&state_ref) {
        Some(table) => read(table),
        None => Err(state_miss(&state_ref)),
    }
}

fn setup<G: Game>(cache: &mut StateCache, req: SetupRequest) -> Result<Vec<u8>, CallError> {
    if req.players.is_empty() {
        return Err(bad_request("setup needs at least one player"));
    }
    for (seat, player) in req.players.iter().enumerate() {
        if req.players[..seat].iter().any(|p| p.player_id == player.player_id) {
            return Err(bad_request(format!("player id {} is seated twice", player.player_id)));
        }
    }
    let players = req
        .players
        .into_iter()
        .map(|seat| Player { player_id: seat.player_id, username: seat.username, color: seat.color, ..Player::default() })
        .collect();
    let mut started = start::<G>(players, req.seed);
    let patches = started.table.take_patches();
    let scores = G::scores(&started.table);
    let game_over = G::is_game_over(&started.table, &scores);
    let actions = ActionsByPlayer(actions_of_active::<G>(&started.table, game_over));
    let body = to_json(&SetupResponse {
        state: &started.initial,
        patches: &patches,
        rng_used: started.rng_used,
        score_labels: &started.score_labels,
        scores: &scores,
        game_over,
        actions: &actions,
    });
    if let Some(next_ref) = req.next_ref {
        cache.put(next_ref, started.table);
    }
    Ok(body)
}

fn actions<G: Game>(cache: &mut StateCache, req: ReadRequest) -> Result<Vec<u8>, CallError> {
    let player_id = req.player_id.ok_or_else(|| bad_request("actions needs \"player_id\""))?;
    with_table(cache, req.state, req.state_ref, |table| {
        ensure_seated(table.state(), player_id)?;
        let actions = G::available_actions(table, player_id);
        Ok(to_json(&ActionsResponse { actions: &actions }))
    })
}

fn step<G: Game>(cache: &mut StateCache, req: StepRequest) -> Result<Vec<u8>, CallError> {
    let mut table = match (req.state, &req.state_ref) {
        (Some(state), _) => Table::try_new(state).map_err(bad_request)?,
        (None, Some(state_ref)) => {
            // Check before taking, so a refused call leaves the entry cached.
            match cache.get(state_ref) {
                Some(table) => ensure_seated(table.state(), req.player_id)?,
                None => return Err(state_miss(state_ref)),
            }
            cache.take(state_ref).expect("entry found above")
        }
        (None, None) => return Err(bad_request("the request needs \"state\" or \"state_ref\"")),
    };
    ensure_seated(table.state(), req.player_id)?;
    let played = play::<G>(&mut table, req.player_id, &req.action, req.seed);
    let scores = G::scores(&table);
    let game_over = G::is_game_over(&table, &scores);
    let actions = ActionsByPlayer(actions_of_active::<G>(&table, game_over));
    let body = to_json(&StepResponse {
        patches: &played.patches,
        rng_used: played.rng_used,
        allow_undo: played.allow_undo,
        scores: &scores,
        game_over,
        actions: &actions,
        state: if req.want_state { Some(table.state()) } else { None },
    });
    if let Some(next_ref) = req.next_ref {
        cache.put(next_ref, table);
    }
    Ok(body)
}

fn scores<G: Game>(cache: &mut StateCache, req: ReadRequest) -> Result<Vec<u8>, CallError> {
    with_table(cache, req.state, req.state_ref, |table| {
        let scores = G::scores(table);
        Ok(to_json(&ScoresResponse { scores: &scores }))
    })
}

fn game_over<G: Game>(cache: &mut StateCache, req: ReadRequest) -> Result<Vec<u8>, CallError> {
    with_table(cache, req.state, req.state_ref, |table| {
        let scores = G::scores(table);
        let game_over = G::is_game_over(table, &scores);
        Ok(to_json(&GameOverResponse { game_over, scores: &scores }))
    })
}
