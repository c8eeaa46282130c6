//! Many random full rounds: each ends, no tile appears or vanishes, and no
//! viewer receives the face of a tile hidden from them.

use std::collections::BTreeSet;

use dominoes::layout::{tile_of, RESULT};
use dominoes::Dominoes;
use tablehost_sdk::{new_match, play, Game, LogEntry, Map, Patch, PlayerId, Rng, Table, Value};

/// More moves than any round can take: 28 plays, 28 draws, a pass each.
const MOVE_LIMIT: usize = 200;

#[test]
fn random_rounds_end_conserve_tiles_and_hide_faces() {
    for seed in 0..150u64 {
        let players: Vec<PlayerId> = (1..=(2 + seed % 3) as u32).collect();
        let mut table = new_match::<Dominoes>(&players, seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut new_lines = table.state().log.clone();
        loop {
            check_tiles_conserved(&table);
            for viewer in players.iter().copied().map(Some).chain(std::iter::once(None)) {
                check_nothing_hidden_is_shown(&table, viewer, &new_lines);
            }
            if Dominoes::is_game_over(&table, &Dominoes::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            let player = table.active_players()[0];
            let offered = Dominoes::available_actions(&table, player);
            assert!(!offered.is_empty(), "seed {}: the active player has nothing to do", seed);
            let pick = &offered[bot.below(offered.len())];
            let played = play::<Dominoes>(&mut table, player, &pick.action, bot.next_u64());
            new_lines = logged(&played.patches);
            moves += 1;
        }
        assert!(table.meta(RESULT).is_some());
        assert!(table.active_players().is_empty());
    }
}

/// The log lines a move wrote.
fn logged(patches: &[Patch]) -> Vec<LogEntry> {
    patches
        .iter()
        .filter_map(|patch| match patch {
            Patch::Log { entry } => Some(entry.clone()),
            _ => None,
        })
        .collect()
}

/// Every tile of the set is on the table exactly once.
fn check_tiles_conserved(table: &Table) {
    let faces: Vec<String> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| tile_of(piece).expect("the rules see every tile").face())
        .collect();
    let distinct: BTreeSet<&String> = faces.iter().collect();
    assert_eq!((faces.len(), distinct.len()), (28, 28));
}

/// The faces hidden from `viewer` (a player, or a spectator as None) appear in
/// nothing that viewer receives: public kinds and states, meta data, the
/// `new_lines` of the log as they read them, public scores, and their actions.
fn check_nothing_hidden_is_shown(table: &Table, viewer: Option<PlayerId>, new_lines: &[LogEntry]) {
    let state = table.state();
    let mut hidden = Vec::new();
    let mut shown = Vec::new();
    for space in &state.spaces {
        shown.push(json_text(&space.public_state));
        for piece in &space.pieces {
            let viewers = piece.owner.or(space.owner);
            if let Some(face) = &piece.private_kind {
                if viewers.is_none() || viewers != viewer {
                    hidden.push(face.clone());
                }
                assert_eq!(piece.public_kind, "back", "a hidden tile shows only its back");
            }
            shown.push(piece.public_kind.clone());
            shown.push(json_text(&piece.public_state));
        }
    }
    shown.push(json_text(&state.meta_data));
    for player in &state.players {
        shown.push(json_text(&player.public_state));
    }
    for entry in new_lines {
        let own = viewer.and_then(|v| entry.for_player.get(&v.to_string()));
        shown.push(own.unwrap_or(&entry.text).clone());
    }
    for score in Dominoes::scores(table).values() {
        shown.push(format!("{:?}", score.public_points));
    }
    if let Some(player) = viewer {
        for offered in Dominoes::available_actions(table, player) {
            shown.push(offered.label.clone());
            shown.push(format!("{:?}", offered.action));
        }
    }
    let shown = shown.join("\n");
    for face in &hidden {
        assert!(!mentions(&shown, face), "viewer {:?} can read hidden {} in:\n{}", viewer, face, shown);
    }
}

fn json_text(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// Whether `text` names the tile `face` ("6-4") as a whole word.
fn mentions(text: &str, face: &str) -> bool {
    let is_word = |c: Option<char>| c.map_or(false, |c| c.is_ascii_alphanumeric() || c == '-');
    text.match_indices(face).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + face.len()..].chars().next();
        !is_word(before) && !is_word(after)
    })
}

#[test]
fn mentions_matches_whole_tile_names_only() {
    assert!(mentions("You drew 6-4", "6-4"));
    assert!(!mentions("play-left-6-4", "6-4"));
    assert!(!mentions("16-45", "6-4"));
}
