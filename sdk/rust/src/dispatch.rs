//! The dispatcher: one request (op code + JSON bytes) in, one JSON response
//! out (docs/abi.md, "Ops" and "Errors"). Safe code; `abi.rs` feeds it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::action::{Action, AvailableAction};
use crate::cache::StateCache;
use crate::config::Scores;
use crate::game::{initial_state, play, Game, Summary};
use crate::json_out::{name, write_player_key, write_str, write_u64, ObjectWriter, WriteJson};
use crate::printing::take_printed;
use crate::rng::Rng;
use crate::state::{Player, PlayerId, State};
use crate::table::Table;

pub const OP_SETUP: i32 = 1;
pub const OP_ACTIONS: i32 = 2;
pub const OP_STEP: i32 = 3;
pub const OP_SCORES: i32 = 4;
pub const OP_GAME_OVER: i32 = 5;
/// ABI v1.1: the game's metadata (no state needed).
pub const OP_METADATA: i32 = 6;
/// ABI v1.1: many games played to the end inside the guest (`playout`).
pub const OP_PLAYOUT: i32 = 7;
/// ABI v1.1: a search bot's decision on a seat's view (`search`).
pub const OP_SEARCH: i32 = 8;

/// An error response's `code` and `message`.
#[derive(Debug)]
pub(crate) struct CallError {
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

pub(crate) fn bad_request(message: impl Into<String>) -> CallError {
    CallError { code: "bad_request", message: message.into() }
}

/// (player id, actions) pairs, written as a JSON object keyed by the id in
/// decimal, in this order.
struct ActionsByPlayer(Vec<(PlayerId, Vec<AvailableAction>)>);

impl WriteJson for ActionsByPlayer {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (at, (player_id, actions)) in self.0.iter().enumerate() {
            write_player_key(out, *player_id, at == 0);
            actions.write_json(out);
        }
        out.push(b'}');
    }
}

/// Ranks keyed by player id, written as `{"<pid>": rank}`.
pub(crate) struct RanksByPlayer(pub(crate) BTreeMap<PlayerId, u32>);

impl WriteJson for RanksByPlayer {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (at, (player_id, rank)) in self.0.iter().enumerate() {
            write_player_key(out, *player_id, at == 0);
            write_u64(out, u64::from(*rank));
        }
        out.push(b'}');
    }
}

/// The `ranks` member of a response: the game's own ranks, only once the
/// game is over and only for games that return them (`Game::ranks`).
fn ranks_member<G: Game>(response: &mut ObjectWriter, table: &Table, scores: &Scores, game_over: bool) {
    if !game_over {
        return;
    }
    if let Some(ranks) = G::ranks(table, scores) {
        response.member(name!("ranks"), &RanksByPlayer(ranks));
    }
}

// ---- requests -------------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct Seat {
    pub(crate) player_id: PlayerId,
    #[serde(default)]
    pub(crate) username: String,
    #[serde(default)]
    pub(crate) color: String,
}

#[derive(Deserialize)]
struct SetupRequest {
    players: Vec<Seat>,
    seed: u64,
    #[serde(default)]
    next_ref: Option<String>,
    /// ABI v1.1: the chosen options (absent: every default).
    #[serde(default)]
    options: Map<String, Value>,
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

// ---- dispatch -------------------------------------------------------------

/// Run op `op` on the JSON `request` against `cache`; returns the response
/// JSON (UTF-8), with `printed` added when the game printed anything.
///
/// Never fails: bad input gives an error response (`bad_request`,
/// `unknown_op`, `state_miss`, `unknown_player`). A panic in the game is not
/// caught (in wasm it traps; see `abi.rs`).
pub fn dispatch<G: Game>(cache: &mut StateCache, op: i32, request: &[u8]) -> Vec<u8> {
    let mut response = Vec::new();
    dispatch_into::<G>(cache, op, request, &mut response);
    response
}

/// `dispatch`, writing the response into `response` (cleared first, its
/// capacity reused: the module keeps one buffer for every call).
pub fn dispatch_into<G: Game>(cache: &mut StateCache, op: i32, request: &[u8], response: &mut Vec<u8>) {
    response.clear();
    let result = match op {
        OP_SETUP => parse(request).and_then(|req| setup::<G>(cache, req, response)),
        OP_ACTIONS => parse(request).and_then(|req| actions::<G>(cache, req, response)),
        OP_STEP => parse(request).and_then(|req| step::<G>(cache, req, response)),
        OP_SCORES => parse(request).and_then(|req| scores::<G>(cache, req, response)),
        OP_GAME_OVER => parse(request).and_then(|req| game_over::<G>(cache, req, response)),
        OP_METADATA => metadata::<G>(response),
        OP_PLAYOUT => parse(request).and_then(|req| crate::dispatch_search::playout::<G>(cache, req, response)),
        OP_SEARCH => parse(request).and_then(|req| crate::dispatch_search::search::<G>(req, response)),
        other => Err(CallError { code: "unknown_op", message: format!("unknown op code {}", other) }),
    };
    if let Err(err) = result {
        // Ops write only after their last check, but start clean all the same.
        response.clear();
        write_error(response, &err);
    }
    append_printed(response, &take_printed());
}

pub(crate) fn parse<'de, T: Deserialize<'de>>(request: &'de [u8]) -> Result<T, CallError> {
    serde_json::from_slice(request).map_err(|err| bad_request(format!("malformed request: {}", err)))
}

/// `{"error": {"code", "message"}}`.
fn write_error(out: &mut Vec<u8>, err: &CallError) {
    let mut response = ObjectWriter::begin(out);
    let mut error = ObjectWriter::begin(response.key(name!("error")));
    error.member(name!("code"), err.code).member(name!("message"), &err.message);
    error.end();
    response.end();
}

/// Add `"printed": text` as the last member of the JSON object `response`.
fn append_printed(response: &mut Vec<u8>, printed: &str) {
    if printed.is_empty() {
        return;
    }
    debug_assert_eq!(response.last(), Some(&b'}'));
    response.pop();
    response.extend_from_slice(b",\"printed\":");
    write_str(response, printed);
    response.push(b'}');
}

pub(crate) fn ensure_seated(state: &State, player_id: PlayerId) -> Result<(), CallError> {
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
pub(crate) fn with_table<R>(
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

fn setup<G: Game>(cache: &mut StateCache, req: SetupRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
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
    let options = G::metadata().resolve(&req.options).map_err(bad_request)?;
    let mut rng = Rng::new(req.seed);
    let (initial, score_labels) = initial_state::<G>(players, &options, &mut rng);
    let mut response = ObjectWriter::begin(out);
    response.member(name!("state"), &initial);
    let mut table = Table::new(initial);
    G::prepare(&mut table, &mut rng);
    let patches = table.take_patches();
    let Summary { scores, game_over, actions } = G::summary(&table);
    let actions = ActionsByPlayer(actions);
    response
        .member(name!("patches"), &patches)
        .member(name!("rng_used"), &rng.used())
        .member(name!("score_labels"), &score_labels)
        .member(name!("scores"), &scores)
        .member(name!("game_over"), &game_over)
        .member(name!("actions"), &actions);
    ranks_member::<G>(&mut response, &table, &scores, game_over);
    response.end();
    if let Some(next_ref) = req.next_ref {
        cache.put(next_ref, table);
    }
    Ok(())
}

fn actions<G: Game>(cache: &mut StateCache, req: ReadRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
    let player_id = req.player_id.ok_or_else(|| bad_request("actions needs \"player_id\""))?;
    with_table(cache, req.state, req.state_ref, |table| {
        ensure_seated(table.state(), player_id)?;
        let actions = G::available_actions(table, player_id);
        let mut response = ObjectWriter::begin(out);
        response.member(name!("actions"), &actions);
        response.end();
        Ok(())
    })
}

fn step<G: Game>(cache: &mut StateCache, req: StepRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
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
    let Summary { scores, game_over, actions } = G::summary(&table);
    let actions = ActionsByPlayer(actions);
    let mut response = ObjectWriter::begin(out);
    response
        .member(name!("patches"), &played.patches)
        .member(name!("rng_used"), &played.rng_used)
        .member(name!("allow_undo"), &played.allow_undo)
        .member(name!("scores"), &scores)
        .member(name!("game_over"), &game_over)
        .member(name!("actions"), &actions);
    ranks_member::<G>(&mut response, &table, &scores, game_over);
    if req.want_state {
        response.member(name!("state"), table.state());
    }
    response.end();
    if let Some(next_ref) = req.next_ref {
        cache.put(next_ref, table);
    }
    Ok(())
}

fn scores<G: Game>(cache: &mut StateCache, req: ReadRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
    with_table(cache, req.state, req.state_ref, |table| {
        let scores = G::scores(table);
        let mut response = ObjectWriter::begin(out);
        response.member(name!("scores"), &scores);
        response.end();
        Ok(())
    })
}

fn game_over<G: Game>(cache: &mut StateCache, req: ReadRequest, out: &mut Vec<u8>) -> Result<(), CallError> {
    with_table(cache, req.state, req.state_ref, |table| {
        let scores = G::scores(table);
        let game_over = G::is_game_over(table, &scores);
        let mut response = ObjectWriter::begin(out);
        response.member(name!("game_over"), &game_over).member(name!("scores"), &scores);
        ranks_member::<G>(&mut response, table, &scores, game_over);
        response.end();
        Ok(())
    })
}

/// `{"metadata": Metadata}` (docs/abi.md "metadata"); needs no state.
fn metadata<G: Game>(out: &mut Vec<u8>) -> Result<(), CallError> {
    let metadata = G::metadata().to_json();
    let mut response = ObjectWriter::begin(out);
    response.member(name!("metadata"), &metadata);
    response.end();
    Ok(())
}
