//! Running a step on a viewer's view (docs/abi.md, "Running the rules on a
//! view"): hidden parts are absent, the rules still run, `private` reads give
//! None, and a move that draws randomness says so (a browser never shows it).

mod common;

use common::{hand, DrawGame};
use tablehost_sdk::dispatch::{dispatch, OP_SETUP, OP_STEP};
use tablehost_sdk::{apply_patches, json, serde_json, view_of, Patch, State, StateCache, Value};

fn call(op: i32, request: Value) -> Value {
    let mut cache = StateCache::new();
    let bytes = serde_json::to_vec(&request).unwrap();
    serde_json::from_slice(&dispatch::<DrawGame>(&mut cache, op, &bytes)).unwrap()
}

fn started() -> State {
    let response = call(
        OP_SETUP,
        json!({"players": [{"player_id": 1, "username": "ann", "color": ""}, {"player_id": 2, "username": "bob", "color": ""}],
               "seed": 11, "next_ref": "s"}),
    );
    let mut state: State = serde_json::from_value(response["state"].clone()).unwrap();
    let patches: Vec<Patch> = serde_json::from_value(response["patches"].clone()).unwrap();
    apply_patches(&mut state, &patches).unwrap();
    state
}

fn step(state: &State, player: u32, action: Value) -> Value {
    call(OP_STEP, json!({"state": state, "next_ref": "n", "player_id": player, "action": action, "seed": 0, "want_state": true}))
}

fn pass() -> Value {
    json!({"type": "button_click", "button": {"id": "pass", "label": "Pass", "location": "", "disabled": false}})
}

#[test]
fn a_view_hides_every_private_part_of_others() {
    let state = started();
    let active = state.active_player_ids[0];
    let other = if active == 1 { 2 } else { 1 };
    let mut full = state.clone();
    full.players[0].private_state.insert("secret".into(), json!(1));
    full.players[1].private_state.insert("secret".into(), json!(2));
    let view = view_of(&full, Some(active));
    for space in &view.spaces {
        for piece in &space.pieces {
            if piece.owner.or(space.owner) != Some(active) {
                assert_eq!(piece.private_kind, None, "{} shows a hidden kind", space.space_id);
                assert_eq!(piece.private("anything"), None);
            }
        }
    }
    assert_eq!(view.players.iter().find(|p| p.player_id == other).unwrap().private("secret"), None);
    assert_eq!(view.players.iter().find(|p| p.player_id == active).unwrap().private("secret"), Some(&json!(active)));
    // The deck is nobody's: on the view every card is a back.
    assert!(view.space("deck").pieces.iter().all(|card| card.private_kind.is_none()));
}

#[test]
fn a_step_on_a_view_gives_the_same_patches_when_nothing_hidden_is_involved() {
    let state = started();
    let active = state.active_player_ids[0];
    let on_server = step(&state, active, pass());
    let on_view = step(&view_of(&state, Some(active)), active, pass());
    assert!(on_view.get("error").is_none(), "{}", on_view);
    assert_eq!(on_view["patches"], on_server["patches"]);
    assert_eq!(on_view["rng_used"], json!(false));
    assert_eq!(on_view["state"]["active_player_ids"], on_server["state"]["active_player_ids"]);
}

#[test]
fn a_step_that_moves_a_hidden_piece_runs_and_the_piece_stays_hidden() {
    let state = started();
    let active = state.active_player_ids[0];
    let draw = json!({"type": "piece_click", "space_id": "deck", "index": 0});
    let on_view = step(&view_of(&state, Some(active)), active, draw.clone());
    assert!(on_view.get("error").is_none(), "{}", on_view);
    let predicted: State = serde_json::from_value(on_view["state"].clone()).unwrap();
    let drawn = predicted.space(&hand(active)).pieces.last().unwrap().clone();
    // The browser knows a card came to its hand, not which: the server's answer tells.
    assert_eq!(drawn.public_kind, "back");
    assert_eq!(drawn.private_kind, None);
    let on_server = step(&state, active, draw);
    let actual: State = serde_json::from_value(on_server["state"].clone()).unwrap();
    assert!(actual.space(&hand(active)).pieces.last().unwrap().private_kind.is_some());
    assert_eq!(on_view["patches"][0], on_server["patches"][0], "the same move_piece");
}

#[test]
fn a_step_that_draws_randomness_says_so() {
    let state = started();
    let active = state.active_player_ids[0];
    let roll = json!({"type": "button_click", "button": {"id": "roll", "label": "Roll", "location": "", "disabled": false}});
    let on_view = step(&view_of(&state, Some(active)), active, roll);
    assert_eq!(on_view["rng_used"], json!(true), "a browser must not show this move before the server");
}

#[test]
fn a_spectator_view_runs_too() {
    let state = started();
    let view = view_of(&state, None);
    assert!(view.spaces.iter().flat_map(|s| &s.pieces).all(|p| p.private_kind.is_none()));
    let active = state.active_player_ids[0];
    let on_view = step(&view, active, pass());
    assert!(on_view.get("error").is_none(), "{}", on_view);
}
