//! Many random full rounds: each ends, no tile appears or vanishes, and no
//! viewer receives the face of a tile hidden from them.

use std::collections::{BTreeSet, HashSet};

use dominoes::layout::{tile_of, RESULT};
use dominoes::Dominoes;
use tablehost_sdk::{new_match, play, Game, Map, Patch, PlayerId, Rng, Table, Value};

/// More moves than any round can take: 28 plays, 28 draws, a pass each.
const MOVE_LIMIT: usize = 200;

#[test]
fn random_rounds_end_conserve_tiles_and_hide_faces() {
    for seed in 0..120u64 {
        let players: Vec<PlayerId> = (1..=(2 + seed % 3) as u32).collect();
        let mut table = new_match::<Dominoes>(&players, seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut last_move = Vec::new();
        loop {
            check_tiles_conserved(&table);
            check_nothing_hidden_is_shown(&table, &last_move);
            if Dominoes::is_game_over(&table, &Dominoes::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            let player = table.active_players()[0];
            let offered = Dominoes::available_actions(&table, player);
            assert!(
                !offered.is_empty(),
                "seed {}: the active player has nothing to do",
                seed
            );
            let pick = &offered[bot.below(offered.len())];
            let played = play::<Dominoes>(&mut table, player, &pick.action, bot.next_u64());
            last_move = played.patches;
            moves += 1;
        }
        assert!(table.meta(RESULT).is_some());
        assert!(table.active_players().is_empty());
    }
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

/// No viewer (each player, and a spectator) receives a face hidden from them:
/// not in public kinds and states, meta data, public scores, their actions,
/// nor the log lines `last_move` wrote, as they read them. A line may name a
/// face that move turned up even if it is hidden again by the end of the move
/// (the last card of a round is played, then all are dealt again).
fn check_nothing_hidden_is_shown(table: &Table, last_move: &[Patch]) {
    let public = public_text(table);
    let viewers = table.players().into_iter().map(Some).chain(std::iter::once(None));
    for viewer in viewers {
        let hidden = hidden_from(table, viewer);
        let mut own = Vec::new();
        if let Some(player) = viewer {
            for offered in Dominoes::available_actions(table, player) {
                own.push(format!("{} {:?}", offered.label, offered.action));
            }
        }
        let shown = format!("{}\n{}", public, own.join("\n"));
        let shown_words = words(&shown);
        for face in &hidden {
            assert!(
                !shown_words.contains(face.as_str()),
                "viewer {:?} can read hidden {} in:\n{}",
                viewer,
                face,
                shown
            );
        }
        let mut turned_up = Vec::new();
        let mut lines = Vec::new();
        for patch in last_move {
            match patch {
                Patch::SetPublicKind { kind, .. } => turned_up.push(kind),
                Patch::Log { entry } => {
                    let own = viewer.and_then(|v| entry.for_player.get(&v.to_string()));
                    lines.push(own.unwrap_or(&entry.text).as_str());
                }
                _ => {}
            }
        }
        let lines = lines.join("\n");
        let line_words = words(&lines);
        for face in hidden.iter().filter(|face| !turned_up.contains(face)) {
            assert!(
                !line_words.contains(face.as_str()),
                "viewer {:?} can read hidden {} in the log:\n{}",
                viewer,
                face,
                lines
            );
        }
    }
}

/// The faces of the tiles `viewer` may not see: hidden ones whose viewer
/// (the piece's owner, else its space's owner) is someone else or nobody.
fn hidden_from(table: &Table, viewer: Option<PlayerId>) -> Vec<String> {
    let mut hidden = Vec::new();
    for space in &table.state().spaces {
        for piece in &space.pieces {
            let sees = piece.owner.or(space.owner);
            match &piece.private_kind {
                Some(face) if sees.is_none() || sees != viewer => hidden.push(face.clone()),
                _ => {}
            }
        }
    }
    hidden
}

/// Everything every viewer receives alike: public kinds and states of spaces,
/// pieces and players, meta data and public scores.
fn public_text(table: &Table) -> String {
    let state = table.state();
    let mut shown = Vec::new();
    for space in &state.spaces {
        shown.push(json_text(&space.public_state));
        for piece in &space.pieces {
            if piece.private_kind.is_some() {
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
    for score in Dominoes::scores(table).values() {
        shown.push(format!("{:?}", score.public_points));
    }
    shown.join("\n")
}

fn json_text(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// The words of `text`: runs of letters, digits and `-`, so a face such as "6-4" is one word.
fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| !word.is_empty())
        .collect()
}

#[test]
fn words_keep_whole_tile_names_only() {
    assert!(words("You drew 6-4").contains("6-4"));
    assert!(!words("play-left-6-4").contains("6-4"));
    assert!(!words("16-45").contains("6-4"));
}
