//! The dispatcher as the host drives it: ops, state refs and the bounded
//! cache, error responses, and `printed`.

mod common;

use common::DrawGame;
use tablehost_sdk::dispatch::{dispatch, OP_ACTIONS, OP_GAME_OVER, OP_SCORES, OP_SETUP, OP_STEP};
use tablehost_sdk::{apply_patches, json, serde_json, Patch, State, StateCache, Value};

fn call(cache: &mut StateCache, op: i32, request: Value) -> Value {
    let bytes = serde_json::to_vec(&request).unwrap();
    serde_json::from_slice(&dispatch::<DrawGame>(cache, op, &bytes)).expect("responses are JSON")
}

fn setup(cache: &mut StateCache, next_ref: &str, seed: u64) -> Value {
    call(
        cache,
        OP_SETUP,
        json!({"players": [{"player_id": 1, "username": "ann", "color": "#d33"}, {"player_id": 2, "username": "bob", "color": "#33d"}],
               "seed": seed, "next_ref": next_ref}),
    )
}

fn error_code(response: &Value) -> &str {
    response["error"]["code"].as_str().unwrap_or("<no error>")
}

/// The starting state the host computes: setup's `state` + its `patches`.
fn started_state(response: &Value) -> State {
    let mut state: State = serde_json::from_value(response["state"].clone()).unwrap();
    let patches: Vec<Patch> = serde_json::from_value(response["patches"].clone()).unwrap();
    apply_patches(&mut state, &patches).unwrap();
    state
}

fn active(state: &State) -> u32 {
    state.active_player_ids[0]
}

const DRAW: &str = r#"{"type": "piece_click", "space_id": "deck", "index": 0}"#;

#[test]
fn setup_returns_the_config_state_prepare_patches_and_actions() {
    let mut cache = StateCache::new();
    let response = setup(&mut cache, "r0", 11);
    assert_eq!(response["state"]["players"][0]["username"], "ann");
    assert_eq!(response["patches"][0]["op"], "permute");
    assert_eq!(response["rng_used"], true);
    assert_eq!(response["score_labels"], json!(["Cards"]));
    assert_eq!(response["game_over"], false);
    assert_eq!(response["scores"]["1"], json!({"public_points": [0.0], "private_points": []}));
    assert_eq!(response["printed"], "shuffled 6 cards\n");
    let state = started_state(&response);
    let starter = active(&state).to_string();
    assert_eq!(response["actions"].as_object().unwrap().keys().collect::<Vec<_>>(), vec![&starter]);
    assert_eq!(response["actions"][&starter][0]["action"], json!({"type": "piece_click", "space_id": "deck", "index": 0}));
    assert!(cache.contains("r0"));
}

#[test]
fn a_step_by_ref_moves_the_cache_entry_and_matches_the_host_mirror() {
    let mut cache = StateCache::new();
    let setup_response = setup(&mut cache, "r0", 11);
    let mut mirror = started_state(&setup_response);
    let player = active(&mirror);
    let action: Value = serde_json::from_str(DRAW).unwrap();
    let response = call(
        &mut cache,
        OP_STEP,
        json!({"state_ref": "r0", "next_ref": "r1", "player_id": player, "action": action, "seed": 5, "want_state": true}),
    );
    assert_eq!(response["allow_undo"], true);
    assert_eq!(response["rng_used"], false);
    let patches: Vec<Patch> = serde_json::from_value(response["patches"].clone()).unwrap();
    apply_patches(&mut mirror, &patches).unwrap();
    let guest_state: State = serde_json::from_value(response["state"].clone()).unwrap();
    assert_eq!(guest_state, mirror);
    assert!(!cache.contains("r0") && cache.contains("r1"));
}

#[test]
fn a_step_with_the_full_state_gives_the_same_answer_as_by_ref() {
    let mut by_ref = StateCache::new();
    let response = setup(&mut by_ref, "r0", 3);
    let state = started_state(&response);
    let player = active(&state);
    let step = |cache: &mut StateCache, source: Value| {
        let mut request = json!({"next_ref": "r1", "player_id": player, "seed": 77,
                                 "action": {"type": "button_click", "button": {"id": "roll", "label": "Roll", "location": "", "disabled": false}}});
        request.as_object_mut().unwrap().extend(source.as_object().unwrap().clone());
        call(cache, OP_STEP, request)
    };
    let cached = step(&mut by_ref, json!({"state_ref": "r0"}));
    let mut empty = StateCache::new();
    let inline = step(&mut empty, json!({"state": state}));
    assert_eq!(cached, inline);
    assert_eq!(cached["rng_used"], true);
    assert_eq!(cached["allow_undo"], false);
    assert!(cached["printed"].as_str().unwrap().starts_with("rolled "));
}

#[test]
fn an_unknown_ref_is_a_state_miss_and_the_cache_keeps_16() {
    let mut cache = StateCache::new();
    for i in 0..17 {
        setup(&mut cache, &format!("r{}", i), i);
    }
    assert_eq!(cache.len(), 16);
    let miss = call(&mut cache, OP_SCORES, json!({"state_ref": "r0"}));
    assert_eq!(error_code(&miss), "state_miss");
    let hit = call(&mut cache, OP_SCORES, json!({"state_ref": "r16"}));
    assert_eq!(hit["scores"]["2"]["public_points"], json!([0.0]));
}

#[test]
fn reading_a_ref_marks_it_recently_used() {
    let mut cache = StateCache::new();
    for i in 0..16 {
        setup(&mut cache, &format!("r{}", i), i);
    }
    call(&mut cache, OP_GAME_OVER, json!({"state_ref": "r0"}));
    setup(&mut cache, "r16", 99);
    assert!(cache.contains("r0"), "r0 was used after r1");
    assert!(!cache.contains("r1"), "r1 was the least recently used");
}

#[test]
fn actions_and_game_over_read_the_state() {
    let mut cache = StateCache::new();
    let response = setup(&mut cache, "r0", 1);
    let player = active(&started_state(&response));
    let other = 3 - player;
    let mine = call(&mut cache, OP_ACTIONS, json!({"state_ref": "r0", "player_id": player}));
    assert_eq!(mine["actions"].as_array().unwrap().len(), 3);
    let theirs = call(&mut cache, OP_ACTIONS, json!({"state_ref": "r0", "player_id": other}));
    assert_eq!(theirs, json!({"actions": []}));
    let over = call(&mut cache, OP_GAME_OVER, json!({"state_ref": "r0"}));
    assert_eq!(over["game_over"], false);
}

#[test]
fn drawing_the_whole_deck_ends_the_game_with_no_actions() {
    let mut cache = StateCache::new();
    let response = setup(&mut cache, "r0", 8);
    let player = active(&started_state(&response));
    let action: Value = serde_json::from_str(DRAW).unwrap();
    let mut last = Value::Null;
    for i in 0..6 {
        last = call(
            &mut cache,
            OP_STEP,
            json!({"state_ref": format!("r{}", i), "next_ref": format!("r{}", i + 1), "player_id": player, "action": action, "seed": i}),
        );
    }
    assert_eq!(last["game_over"], true);
    assert_eq!(last["actions"], json!({}));
    assert_eq!(last["scores"][player.to_string()]["public_points"], json!([6.0]));
}

#[test]
fn error_responses() {
    let mut cache = StateCache::new();
    setup(&mut cache, "r0", 1);
    let raw = |cache: &mut StateCache, op: i32, bytes: &[u8]| -> Value {
        serde_json::from_slice(&dispatch::<DrawGame>(cache, op, bytes)).unwrap()
    };
    assert_eq!(error_code(&raw(&mut cache, OP_STEP, b"{not json")), "bad_request");
    assert_eq!(error_code(&raw(&mut cache, OP_STEP, b"")), "bad_request");
    assert_eq!(error_code(&raw(&mut cache, 99, b"{}")), "unknown_op");
    assert_eq!(error_code(&raw(&mut cache, 0, b"{}")), "unknown_op");
    // A required field missing, or a field of the wrong type.
    assert_eq!(error_code(&call(&mut cache, OP_STEP, json!({"state_ref": "r0", "player_id": 1, "seed": 1}))), "bad_request");
    assert_eq!(error_code(&call(&mut cache, OP_SETUP, json!({"players": [], "seed": 1}))), "bad_request");
    assert_eq!(error_code(&call(&mut cache, OP_SETUP, json!({"players": [{"player_id": 1}, {"player_id": 1}], "seed": 1}))), "bad_request");
    assert_eq!(error_code(&call(&mut cache, OP_SETUP, json!({"players": [{"player_id": 1}], "seed": -1}))), "bad_request");
    assert_eq!(error_code(&call(&mut cache, OP_SCORES, json!({}))), "bad_request");
    assert_eq!(error_code(&call(&mut cache, OP_ACTIONS, json!({"state_ref": "r0"}))), "bad_request");
    let unknown_type = json!({"state_ref": "r0", "player_id": 1, "seed": 1, "action": {"type": "wave"}});
    assert_eq!(error_code(&call(&mut cache, OP_STEP, unknown_type)), "bad_request");
    let error = call(&mut cache, OP_ACTIONS, json!({"state_ref": "r0", "player_id": 7}));
    assert_eq!(error_code(&error), "unknown_player");
    assert!(error["error"]["message"].as_str().unwrap().contains('7'));
    let step = json!({"state_ref": "r0", "next_ref": "r1", "player_id": 7, "seed": 1, "action": serde_json::from_str::<Value>(DRAW).unwrap()});
    assert_eq!(error_code(&call(&mut cache, OP_STEP, step)), "unknown_player");
    assert!(cache.contains("r0"), "a refused step keeps its state cached");
}

#[test]
fn seeds_are_read_as_exact_u64() {
    let mut cache = StateCache::new();
    let a = setup(&mut cache, "a", u64::MAX);
    let b = setup(&mut cache, "b", u64::MAX - 1);
    assert_ne!(a["patches"], b["patches"], "adjacent large seeds shuffle differently");
}
