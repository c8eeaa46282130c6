//! Many random full games: each ends, no card appears or vanishes, and no
//! viewer receives the face of a card hidden from them.

use std::collections::{BTreeSet, HashSet};

use hearts::layout::{card_of, PHASE};
use hearts::Hearts;
use tablehost_sdk::{new_match, play, Game, Map, Patch, PlayerId, Rng, Table, Value};

/// Far more moves than a game takes: at most 26 rounds (someone takes at
/// least 4 points a round) of 52 plays, plus the pass selections.
const MOVE_LIMIT: usize = 20_000;

#[test]
fn random_games_end_conserve_cards_and_hide_faces() {
    for seed in 0..5u64 {
        let players: Vec<PlayerId> = vec![11, 12, 13, 14];
        let mut table = new_match::<Hearts>(&players, seed);
        let mut bot = Rng::new(seed ^ 0x5EED);
        let mut moves = 0;
        let mut last_move = Vec::new();
        loop {
            check_cards_conserved(&table);
            check_nothing_hidden_is_shown(&table, &last_move);
            if Hearts::is_game_over(&table, &Hearts::scores(&table)) {
                break;
            }
            assert!(moves < MOVE_LIMIT, "seed {}: no end after {} moves", seed, moves);
            // While passing all four are active: any of them may move next.
            let active = table.active_players();
            let player = active[bot.below(active.len())];
            let offered = Hearts::available_actions(&table, player);
            assert!(
                !offered.is_empty(),
                "seed {}: the active player has nothing to do",
                seed
            );
            let pick = &offered[bot.below(offered.len())];
            let played = play::<Hearts>(&mut table, player, &pick.action, bot.next_u64());
            last_move = played.patches;
            moves += 1;
        }
        assert_eq!(table.meta(PHASE), Some(&tablehost_sdk::json!("over")));
        assert!(Hearts::scores(&table).values().any(|s| s.public_points[0] >= 100.0));
        assert!(table.active_players().is_empty());
    }
}

/// Every card of the deck is on the table exactly once.
fn check_cards_conserved(table: &Table) {
    let faces: Vec<String> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| card_of(piece).expect("the rules see every card").face())
        .collect();
    let distinct: BTreeSet<&String> = faces.iter().collect();
    assert_eq!((faces.len(), distinct.len()), (52, 52));
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
            for offered in Hearts::available_actions(table, player) {
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

/// The faces of the cards `viewer` may not see: hidden ones whose viewer
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
                assert_eq!(piece.public_kind, "back", "a hidden card shows only its back");
            }
            shown.push(piece.public_kind.clone());
            shown.push(json_text(&piece.public_state));
        }
    }
    shown.push(json_text(&state.meta_data));
    for player in &state.players {
        shown.push(json_text(&player.public_state));
    }
    for score in Hearts::scores(table).values() {
        shown.push(format!("{:?}", score.public_points));
    }
    shown.join("\n")
}

fn json_text(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// The words of `text`: runs of letters, digits and `-`, so a face such as "QS" is one word.
fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| !word.is_empty())
        .collect()
}

#[test]
fn words_keep_whole_card_names_only() {
    assert!(words("You received 2C, 5H and QS").contains("QS"));
    assert!(words("You received 2C, 5H and QS").contains("2C"));
    assert!(!words("You received 10H").contains("0H"));
    assert!(!words("AS-IS").contains("AS"));
}
