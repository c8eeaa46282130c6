//! Every Table mutator records exactly one patch with the documented JSON,
//! and replaying the recorded patches onto the starting state (with the
//! public `apply_patch`) reproduces the table's final state.

use tablehost_sdk::{
    apply_patch, apply_patches, json, serde_json, LogEntry, Patch, Piece, Player, Rng, Space, State, Table, Value,
    LOG_CAP,
};

fn start_state() -> State {
    State {
        active_player_ids: vec![1],
        players: vec![
            Player { player_id: 1, username: "ann".into(), ..Player::default() },
            Player { player_id: 2, username: "bob".into(), ..Player::default() },
        ],
        spaces: vec![
            Space::new("a", "row").with_pieces((0..4).map(|i| Piece::new(format!("p{}", i)))),
            Space::new("b", "row"),
            Space::new("hand", "hand").collection().owned_by(2),
        ],
        ..State::default()
    }
}

fn kinds(table: &Table, space_id: &str) -> Vec<String> {
    table.pieces(space_id).iter().map(|p| p.public_kind.clone()).collect()
}

/// Run `change` on a fresh table; check it recorded exactly `expected` (as
/// JSON) and that replaying that patch onto the start state gives the same state.
fn records(change: impl FnOnce(&mut Table), expected: Value) -> Table {
    let mut table = Table::new(start_state());
    change(&mut table);
    let patches = table.take_patches();
    assert_eq!(serde_json::to_value(&patches).unwrap(), json!([expected]));
    let mut replayed = start_state();
    apply_patches(&mut replayed, &patches).unwrap();
    assert_eq!(&replayed, table.state());
    table
}

#[test]
fn add_piece_appends_and_returns_its_index() {
    let mut index = 0;
    let table = records(
        |t| index = t.add_piece("a", Piece::new("x")),
        json!({"op": "add_piece", "space_id": "a", "piece": {"public_kind": "x", "public_state": {}, "private_kind": null, "private_state": {}, "owner": null}}),
    );
    assert_eq!(index, 4);
    assert_eq!(kinds(&table, "a"), ["p0", "p1", "p2", "p3", "x"]);
}

#[test]
fn insert_piece_shifts_later_pieces_up() {
    let table = records(
        |t| t.insert_piece("a", 1, Piece::new("x").owned_by(2)),
        json!({"op": "insert_piece", "space_id": "a", "index": 1, "piece": {"public_kind": "x", "public_state": {}, "private_kind": null, "private_state": {}, "owner": 2}}),
    );
    assert_eq!(kinds(&table, "a"), ["p0", "x", "p1", "p2", "p3"]);
}

#[test]
fn remove_piece_returns_it_and_shifts_later_pieces_down() {
    let mut removed = None;
    let table = records(|t| removed = Some(t.remove_piece("a", 1)), json!({"op": "remove_piece", "space_id": "a", "index": 1}));
    assert_eq!(removed.unwrap().public_kind, "p1");
    assert_eq!(kinds(&table, "a"), ["p0", "p2", "p3"]);
}

#[test]
fn move_piece_appends_without_to_index() {
    let mut at = 9;
    let table = records(|t| at = t.move_piece("a", 0, "b"), json!({"op": "move_piece", "from": "a", "index": 0, "to": "b"}));
    assert_eq!(at, 0);
    assert_eq!(kinds(&table, "a"), ["p1", "p2", "p3"]);
    assert_eq!(kinds(&table, "b"), ["p0"]);
}

#[test]
fn move_piece_within_a_space_counts_after_the_removal() {
    let mut at = 9;
    let table = records(|t| at = t.move_piece("a", 1, "a"), json!({"op": "move_piece", "from": "a", "index": 1, "to": "a"}));
    assert_eq!(at, 3);
    assert_eq!(kinds(&table, "a"), ["p0", "p2", "p3", "p1"]);
    let table = records(
        |t| t.move_piece_to("a", 3, "a", 0),
        json!({"op": "move_piece", "from": "a", "index": 3, "to": "a", "to_index": 0}),
    );
    assert_eq!(kinds(&table, "a"), ["p3", "p0", "p1", "p2"]);
}

#[test]
fn shuffle_records_the_permutation_it_made() {
    let mut table = Table::new(start_state());
    let mut rng = Rng::new(7);
    table.shuffle("a", &mut rng);
    assert!(rng.used());
    let patches = table.take_patches();
    let order = match &patches[..] {
        [Patch::Permute { space_id, order }] if space_id == "a" => order.clone(),
        other => panic!("expected one permute patch, got {:?}", other),
    };
    let mut expected: Vec<usize> = (0..4).collect();
    Rng::new(7).shuffle(&mut expected);
    assert_eq!(order, expected);
    let after: Vec<String> = order.iter().map(|k| format!("p{}", k)).collect();
    assert_eq!(kinds(&table, "a"), after, "new[k] = old[order[k]]");
}

#[test]
fn piece_kind_and_owner_setters() {
    let table = records(|t| t.set_public_kind("a", 2, "face"), json!({"op": "set_public_kind", "space_id": "a", "index": 2, "kind": "face"}));
    assert_eq!(table.piece("a", 2).public_kind, "face");
    let table = records(
        |t| t.set_private_kind("a", 0, Some("ace")),
        json!({"op": "set_private_kind", "space_id": "a", "index": 0, "kind": "ace"}),
    );
    assert_eq!(table.piece("a", 0).private_kind.as_deref(), Some("ace"));
    records(|t| t.set_private_kind("a", 0, None), json!({"op": "set_private_kind", "space_id": "a", "index": 0, "kind": null}));
    let table = records(
        |t| t.set_piece_owner("a", 1, Some(2)),
        json!({"op": "set_piece_owner", "space_id": "a", "index": 1, "owner": 2}),
    );
    assert_eq!(table.piece("a", 1).owner, Some(2));
}

#[test]
fn piece_state_setters_and_null_removes() {
    let table = records(
        |t| t.set_piece_public_state("a", 0, "tapped", true),
        json!({"op": "set_piece_public_state", "space_id": "a", "index": 0, "key": "tapped", "value": true}),
    );
    assert_eq!(table.piece("a", 0).public("tapped"), Some(&json!(true)));
    let table = records(
        |t| t.set_piece_private_state("a", 0, "note", 3),
        json!({"op": "set_piece_private_state", "space_id": "a", "index": 0, "key": "note", "value": 3}),
    );
    assert_eq!(table.piece("a", 0).private("note"), Some(&json!(3)));
    let mut table = Table::new(start_state());
    table.set_piece_public_state("a", 0, "tapped", true);
    table.set_piece_public_state("a", 0, "tapped", Value::Null);
    assert_eq!(table.piece("a", 0).public("tapped"), None);
}

#[test]
fn space_setters() {
    let table = records(|t| t.set_space_owner("b", Some(1)), json!({"op": "set_space_owner", "space_id": "b", "owner": 1}));
    assert_eq!(table.space("b").owner, Some(1));
    records(|t| t.set_space_owner("hand", None), json!({"op": "set_space_owner", "space_id": "hand", "owner": null}));
    let table = records(
        |t| t.set_space_public_state("b", "lit", "yes"),
        json!({"op": "set_space_public_state", "space_id": "b", "key": "lit", "value": "yes"}),
    );
    assert_eq!(table.space("b").public("lit"), Some(&json!("yes")));
    let table = records(
        |t| t.set_space_private_state("hand", "seen", json!([1, 2])),
        json!({"op": "set_space_private_state", "space_id": "hand", "key": "seen", "value": [1, 2]}),
    );
    assert_eq!(table.space("hand").private("seen"), Some(&json!([1, 2])));
}

#[test]
fn player_setters() {
    let table = records(
        |t| t.set_player_public_state(2, "bid", 4),
        json!({"op": "set_player_public_state", "player_id": 2, "key": "bid", "value": 4}),
    );
    assert_eq!(table.player(2).public("bid"), Some(&json!(4)));
    let table = records(
        |t| t.set_player_private_state(1, "peek", "ace"),
        json!({"op": "set_player_private_state", "player_id": 1, "key": "peek", "value": "ace"}),
    );
    assert_eq!(table.player(1).private("peek"), Some(&json!("ace")));
}

#[test]
fn active_players_meta_and_log() {
    let table = records(|t| t.set_active_players(vec![2, 1]), json!({"op": "set_active_players", "player_ids": [2, 1]}));
    assert_eq!(table.active_players(), &[2, 1]);
    let table = records(|t| t.set_meta("round", 3), json!({"op": "set_meta", "key": "round", "value": 3}));
    assert_eq!(table.meta("round"), Some(&json!(3)));
    let table = records(
        |t| t.log(LogEntry::new("bob drew").for_player(2, "you drew the ace")),
        json!({"op": "log", "entry": {"text": "bob drew", "for_player": {"2": "you drew the ace"}}}),
    );
    assert_eq!(table.state().log.len(), 1);
}

#[test]
fn the_log_keeps_the_newest_500_entries() {
    let mut table = Table::new(start_state());
    for i in 0..LOG_CAP + 3 {
        table.log(LogEntry::new(format!("line {}", i)));
    }
    let log = &table.state().log;
    assert_eq!(log.len(), LOG_CAP);
    assert_eq!(log[0].text, "line 3");
    assert_eq!(log[LOG_CAP - 1].text, format!("line {}", LOG_CAP + 2));
}

#[test]
fn undo_permission_is_per_move() {
    let mut table = Table::new(start_state());
    assert!(!table.undo_allowed());
    table.allow_undo();
    assert!(table.undo_allowed());
    assert!(table.take_patches().is_empty(), "allow_undo records no patch");
    assert!(!table.undo_allowed());
}

/// A long pseudo-random sequence of every mutator; the replay must agree.
#[test]
fn replaying_recorded_patches_reproduces_the_final_state() {
    let mut rng = Rng::new(2024);
    let mut table = Table::new(start_state());
    for step in 0..400u32 {
        let a_len = table.pieces("a").len();
        let b_len = table.pieces("b").len();
        match rng.below(10u32) {
            0 => {
                table.add_piece("b", Piece::new(format!("n{}", step)).hiding("secret"));
            }
            1 if a_len > 0 => {
                let index = rng.below(a_len);
                table.move_piece("a", index, "b");
            }
            2 if b_len > 0 => {
                let index = rng.below(b_len);
                let to_index = rng.below(a_len + 1);
                table.move_piece_to("b", index, "a", to_index);
            }
            3 => table.shuffle("a", &mut rng),
            4 if b_len > 0 => {
                table.remove_piece("b", rng.below(b_len));
            }
            5 if a_len > 0 => table.set_piece_public_state("a", rng.below(a_len), "k", rng.below(3u32)),
            6 => table.insert_piece("a", rng.below(a_len + 1), Piece::new("ins")),
            7 => table.set_meta("step", step),
            8 => table.log(LogEntry::new(format!("step {}", step))),
            _ => table.set_active_players(vec![1 + step % 2]),
        }
    }
    let patches = table.take_patches();
    assert!(patches.len() > 300);
    // Through JSON, as the host receives them.
    let wire = serde_json::to_string(&patches).unwrap();
    let decoded: Vec<Patch> = serde_json::from_str(&wire).unwrap();
    let mut replayed = start_state();
    apply_patches(&mut replayed, &decoded).unwrap();
    assert_eq!(&replayed, table.state());
}

#[test]
fn a_bad_patch_is_an_error_and_changes_nothing() {
    let bad = [
        json!({"op": "remove_piece", "space_id": "a", "index": 4}),
        json!({"op": "insert_piece", "space_id": "a", "index": 5, "piece": {"public_kind": "x"}}),
        json!({"op": "move_piece", "from": "a", "index": 0, "to": "a", "to_index": 4}),
        json!({"op": "move_piece", "from": "a", "index": 0, "to": "nowhere"}),
        json!({"op": "permute", "space_id": "a", "order": [0, 1, 1, 2]}),
        json!({"op": "permute", "space_id": "a", "order": [0, 1, 2]}),
        json!({"op": "set_player_public_state", "player_id": 9, "key": "k", "value": 1}),
        json!({"op": "set_space_owner", "space_id": "zz", "owner": 1}),
    ];
    for patch in bad {
        let patch: Patch = serde_json::from_value(patch.clone()).unwrap();
        let mut state = start_state();
        assert!(apply_patch(&mut state, &patch).is_err(), "{:?} should fail", patch);
        assert_eq!(state, start_state());
    }
}

#[test]
#[should_panic(expected = "no space with id \"missing\"")]
fn a_missing_space_panics_with_its_id() {
    Table::new(start_state()).space("missing");
}

#[test]
fn helpers_find_spaces_players_and_pieces() {
    let table = Table::new(start_state());
    assert_eq!(table.space_index("hand"), 2);
    assert_eq!(table.spaces_of_kind("row").len(), 2);
    assert_eq!(table.seat_of(2), 1);
    assert_eq!(table.players(), vec![1, 2]);
    assert_eq!(table.piece("a", 3).public_kind, "p3");
    assert_eq!(table.state().space("b").kind, "row");
}

#[test]
fn short_form_state_reads_with_defaults() {
    let state: State = serde_json::from_value(json!({
        "players": [{"player_id": 1}],
        "spaces": [{"space_id": "s", "kind": "k", "pieces": [{"public_kind": "x"}]}]
    }))
    .unwrap();
    assert_eq!(state.spaces[0].pieces[0], Piece::new("x"));
    assert_eq!(state.spaces[0].arrangement, tablehost_sdk::Arrangement::Ordered);
    assert!(state.active_player_ids.is_empty() && state.log.is_empty());
}
