//! Checks for game authors' native tests: random playouts that prove no
//! viewer is shown what is hidden from them (the host checks the same on every
//! view; these catch a leak before the game is even built to wasm).
//!
//! A piece's face is its `private_kind`. A leak is that face appearing, as a
//! whole word, in anything a viewer receives that is not theirs to see.

use std::collections::HashSet;

use crate::{Game, Map, Patch, PlayerId, Table, Value};

/// No viewer (each player, and a spectator) receives a face hidden from them:
/// not in public kinds and states, meta data, public scores, their actions,
/// nor the log lines `last_move` wrote, as they read them. A line may name a
/// face that move turned up even if it is hidden again by the end of the move
/// (the last card of a round is played, then all are dealt again).
pub fn assert_nothing_hidden_is_shown<G: Game>(table: &Table, last_move: &[Patch]) {
    let public = public_text::<G>(table);
    let viewers = table.players().into_iter().map(Some).chain(std::iter::once(None));
    for viewer in viewers {
        let hidden = hidden_from(table, viewer);
        let mut own = Vec::new();
        if let Some(player) = viewer {
            for offered in G::available_actions(table, player) {
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

/// The private kinds (faces) of the pieces `viewer` may not see: hidden ones whose viewer
/// (the piece's owner, else its space's owner) is someone else or nobody.
pub fn hidden_from(table: &Table, viewer: Option<PlayerId>) -> Vec<String> {
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
pub fn public_text<G: Game>(table: &Table) -> String {
    let state = table.state();
    let mut shown = Vec::new();
    for space in &state.spaces {
        shown.push(json_text(&space.public_state));
        for piece in &space.pieces {
            shown.push(piece.public_kind.clone());
            shown.push(json_text(&piece.public_state));
        }
    }
    shown.push(json_text(&state.meta_data));
    for player in &state.players {
        shown.push(json_text(&player.public_state));
    }
    for score in G::scores(table).values() {
        shown.push(format!("{:?}", score.public_points));
    }
    shown.join("\n")
}

fn json_text(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// The words of `text`: runs of letters, digits and `-`, so a face such as "QS" or "6-4" is one word.
pub fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| !word.is_empty())
        .collect()
}


#[cfg(test)]
mod tests {
    use super::{assert_nothing_hidden_is_shown, words};
    use crate::{
        new_match, Action, AvailableAction, Game, GameConfig, Piece, PlayerId, Rng, Score, Scores, Space,
        StartingPlayer, Table,
    };

    /// One hidden card in player 1's hand; `leak` writes its face into meta data.
    struct OneCard;

    impl Game for OneCard {
        fn config(players: &[PlayerId], _options: &crate::Options) -> GameConfig {
            GameConfig {
                spaces: vec![Space::new("hand", "hand")
                    .collection()
                    .owned_by(players[0])
                    .with_pieces(vec![Piece::new("back").hiding("QS")])],
                score_labels: vec!["Points".to_string()],
                meta_data: crate::Map::new(),
                starting_player: StartingPlayer::Player(players[0]),
            }
        }
        fn available_actions(_table: &Table, _player_id: PlayerId) -> Vec<AvailableAction> {
            vec![AvailableAction::confirm(Action::space_click("hand"), "leak")]
        }
        fn apply_action(table: &mut Table, _player_id: PlayerId, _action: &Action, _rng: &mut Rng) {
            table.set_meta("seen", "the QS");
        }
        fn scores(table: &Table) -> Scores {
            table.players().into_iter().map(|p| (p, Score { public_points: vec![0.0], private_points: vec![] })).collect()
        }
        fn is_game_over(_table: &Table, _scores: &Scores) -> bool {
            false
        }
    }

    #[test]
    fn a_hidden_face_in_a_private_place_is_fine() {
        assert_nothing_hidden_is_shown::<OneCard>(&new_match::<OneCard>(&[1, 2], 1), &[]);
    }

    #[test]
    #[should_panic(expected = "can read hidden QS")]
    fn a_hidden_face_in_meta_data_is_a_leak() {
        let mut table = new_match::<OneCard>(&[1, 2], 1);
        let played = crate::play::<OneCard>(&mut table, 1, &Action::space_click("hand"), 2);
        assert_nothing_hidden_is_shown::<OneCard>(&table, &played.patches);
    }

    #[test]
    fn words_keep_whole_face_names_only() {
        assert!(words("You received 2C, 5H and QS").contains("QS"));
        assert!(!words("You received 10H").contains("0H"));
        assert!(!words("AS-IS").contains("AS"));
        assert!(words("You drew 6-4").contains("6-4"));
        assert!(!words("play-left-6-4").contains("6-4"));
        assert!(!words("16-45").contains("6-4"));
    }
}

/// A table after up to `plies` random moves from a new match of `player_ids`
/// (the in-guest playout's `random` policy: choices and confirms only), all
/// drawn from `seed`. It may be over sooner.
pub fn random_midgame<G: Game>(player_ids: &[PlayerId], seed: u64, plies: u32) -> Table {
    let mut table = crate::new_match::<G>(player_ids, seed);
    let mut rng = crate::Rng::new(seed ^ 0x5eed);
    crate::playout::play_out::<G>(&mut table, &[crate::playout::Policy::Random], plies, &mut rng);
    table
}

/// `G::sample_hidden` on `viewer`'s view of `table` (as a search receives it)
/// gives a state that fits the view and the real table: the same players,
/// spaces and meta data, every space with as many pieces, every piece the
/// viewer sees unchanged, every piece's public part unchanged, and the faces
/// (private kinds) of the whole table the same multiset as the real table's,
/// so a game whose hidden pieces are one fixed set deals each exactly once.
/// Returns the sample.
///
/// Panics (test failure) on any difference, or when the game has no sampler.
pub fn assert_sample_fits_view<G: Game>(table: &Table, viewer: PlayerId, seed: u64) -> crate::State {
    let view = crate::view_of(table.state(), Some(viewer));
    let sample = G::sample_hidden(&Table::new(view.clone()), viewer, &mut crate::Rng::new(seed))
        .expect("the game implements sample_hidden");
    assert_eq!(sample.players, view.players, "players are kept");
    assert_eq!(sample.meta_data, view.meta_data, "meta data is kept");
    assert_eq!(sample.active_player_ids, view.active_player_ids, "the active players are kept");
    assert_eq!(sample.spaces.len(), view.spaces.len(), "every space is kept");
    let mut real_faces: Vec<String> = Vec::new();
    let mut sample_faces: Vec<String> = Vec::new();
    for ((sampled, seen), real) in sample.spaces.iter().zip(&view.spaces).zip(&table.state().spaces) {
        assert_eq!(sampled.space_id, seen.space_id);
        assert_eq!(sampled.pieces.len(), seen.pieces.len(), "space {} keeps its piece count", seen.space_id);
        for (piece, was) in sampled.pieces.iter().zip(&seen.pieces) {
            assert_eq!(piece.public_kind, was.public_kind, "space {}: a public kind changed", seen.space_id);
            assert_eq!(piece.public_state, was.public_state, "space {}: a public state changed", seen.space_id);
            assert_eq!(piece.owner, was.owner, "space {}: an owner changed", seen.space_id);
            if was.private_kind.is_some() {
                assert_eq!(piece.private_kind, was.private_kind, "space {}: a face the viewer sees changed", seen.space_id);
            }
        }
        sample_faces.extend(sampled.pieces.iter().filter_map(|p| p.private_kind.clone()));
        real_faces.extend(real.pieces.iter().filter_map(|p| p.private_kind.clone()));
    }
    sample_faces.sort();
    real_faces.sort();
    assert_eq!(sample_faces, real_faces, "the sample deals the real table's hidden faces, each once");
    sample
}

/// `G::summary` equals `summary_of_parts::<G>` (scores, game over, each
/// active player's actions, asked one by one) on every state of a random game
/// of `player_ids` from `seed`: after setup and after each move (a random
/// offered action of the first active player that has one), for at most
/// `plies` moves. Returns the moves played.
///
/// Panics (test failure) on the first state where the two differ.
pub fn assert_summary_agrees<G: Game>(player_ids: &[PlayerId], seed: u64, plies: u32) -> u32 {
    let mut table = crate::new_match::<G>(player_ids, seed);
    let mut rng = crate::Rng::new(seed ^ 0x5eed);
    for played in 0..=plies {
        let summary = G::summary(&table);
        assert_eq!(summary, crate::summary_of_parts::<G>(&table), "after {} moves from seed {}", played, seed);
        if summary.game_over || played == plies {
            return played;
        }
        let mover = summary.actions.iter().find(|(_, offered)| !offered.is_empty());
        let (player, offered) = match mover {
            Some(found) => found,
            None => return played,
        };
        let action = offered[rng.below(offered.len())].action.clone();
        crate::play::<G>(&mut table, *player, &action, rng.next_u64());
    }
    plies
}

/// Random midgames of `player_ids` (seeds 0 to 5; 0, 7, 40 and 150 random
/// moves in): for every seat, [`assert_sample_fits_view`] holds, and sampling
/// twice with the same seed gives the same state.
///
/// Panics (test failure) on the first sample that does not fit or repeat.
pub fn assert_samples_fit_every_view<G: Game>(player_ids: &[PlayerId]) {
    for seed in 0..6u64 {
        for plies in [0u32, 7, 40, 150] {
            let table = random_midgame::<G>(player_ids, seed, plies);
            for &viewer in player_ids {
                let first = assert_sample_fits_view::<G>(&table, viewer, seed);
                let again = assert_sample_fits_view::<G>(&table, viewer, seed);
                assert_eq!(first, again, "the same seed samples the same state");
            }
        }
    }
}

/// For random midgames of `player_ids` (seeds 0 to 2, 25 random moves in) that
/// are not over and whose first active player has a move: an ISMCTS search (12
/// iterations, playouts cut at 60 moves) from that player's view answers one of
/// the actions the game offers them, and plain MCTS refuses the view (the game
/// hides information). Returns how many midgames were searched.
///
/// Panics (test failure) when a search fails or answers something not offered,
/// when plain MCTS does not refuse, or when no midgame had a move to search.
pub fn assert_ismcts_answers_an_offer<G: Game>(player_ids: &[PlayerId]) -> u32 {
    use crate::mcts::{search, Budget, Search};
    let mut searched = 0;
    for seed in 0..3u64 {
        let table = random_midgame::<G>(player_ids, seed, 25);
        let scores = G::scores(&table);
        if G::is_game_over(&table, &scores) {
            continue;
        }
        let player = table.active_players()[0];
        if crate::playout::candidates::<G>(&table, player).is_empty() {
            continue;
        }
        let view = crate::view_of(table.state(), Some(player));
        let budget = Budget { iterations: 12, exploration: 1.0, max_playout_plies: 60 };
        let decision = search::<G>(&view, player, Search::Ismcts, budget, seed).expect("a decision");
        let offered = G::available_actions(&table, player);
        assert!(offered.iter().any(|offer| offer.action == decision.offer.action), "{:?}", decision.offer);
        let mcts = search::<G>(&view, player, Search::Mcts, budget, seed);
        assert!(mcts.is_err(), "plain mcts refuses a game that hides information");
        searched += 1;
    }
    assert!(searched > 0, "some midgame had a move to search");
    searched
}
