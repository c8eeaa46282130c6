//! The hearts table: which spaces exist, who sees into them, and the public
//! bookkeeping of a round.
//!
//! - `deck`: a collection nobody owns; cards wait here face down between deals;
//! - `hand-<id>`: a collection owned by its holder, who alone sees the faces;
//! - `pass-<id>`: a collection owned by its holder: the cards they chose to pass;
//! - `trick`: ordered, the cards of the trick in play, face up, each with
//!   public state `played_by`;
//! - `taken-<id>`: ordered, the tricks a player took, face up (every card in
//!   them was seen when it was played).
//!
//! A hidden card is `Piece::new("back").hiding("<face>")`. Meta data holds only
//! public facts: `round`, `phase`, `pass_direction`, `hearts_broken`, and the
//! chosen `options` (`target_score`). Each player's public state holds `score`, the points
//! of the rounds already finished.

use tablehost_sdk::face_down::{face_of, faces_in};
pub use tablehost_sdk::face_down::{hand_of, list_faces as list_cards, BACK};
use tablehost_sdk::{json, GameConfig, Map, Piece, PlayerId, Space, StartingPlayer, Table, Value};

use crate::card::{self, Card};
/// Where the cards wait face down between deals.
pub const DECK: &str = "deck";
/// The trick in play.
pub const TRICK: &str = "trick";
/// Meta key: the round number, from 1.
pub const ROUND: &str = "round";
/// Meta key: `"passing"`, `"playing"` or `"over"`.
pub const PHASE: &str = "phase";
/// Meta key: this round's passing direction (`"left"`, `"right"`, `"across"`, `"none"`).
pub const PASS_DIRECTION: &str = "pass_direction";
/// Meta key: whether a heart has been played this round.
pub const HEARTS_BROKEN: &str = "hearts_broken";
/// Player public state key: points from finished rounds.
pub const SCORE: &str = "score";
/// Piece public state key on a played card: who played it.
pub const PLAYED_BY: &str = "played_by";

/// Hearts is for exactly four players.
pub const PLAYERS: usize = 4;
/// The game ends after a round in which someone reaches this many points
/// (the default of option [`TARGET_SCORE`]).
pub const GAME_END_POINTS: u32 = 100;
/// The option setting the points that end the game (20 to 500).
pub const TARGET_SCORE: &str = "target_score";

/// The points that end this match: option `target_score`, else 100.
pub fn target_score(table: &Table) -> u32 {
    table
        .options()
        .0
        .get(TARGET_SCORE)
        .and_then(Value::as_u64)
        .map_or(GAME_END_POINTS, |points| points as u32)
}

/// The phase of play, as kept in meta data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Passing,
    Playing,
    Over,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Passing => "passing",
            Phase::Playing => "playing",
            Phase::Over => "over",
        }
    }
}

/// The space holding the cards `player` chose to pass.
pub fn pass_pile_of(player: PlayerId) -> String {
    format!("pass-{}", player)
}

/// The space holding the tricks `player` took this round.
pub fn taken_by(player: PlayerId) -> String {
    format!("taken-{}", player)
}

/// The starting table: the 52 cards face down in the deck, empty spaces for
/// every seat, every score 0. Dealing happens in `prepare`.
///
/// Panics unless there are exactly four players.
pub fn config(players: &[PlayerId]) -> GameConfig {
    assert_eq!(players.len(), PLAYERS, "hearts is for exactly 4 players");
    let mut spaces = vec![Space::new(DECK, "deck")
        .collection()
        .with_pieces(card::deck().into_iter().map(face_down))];
    for &player in players {
        spaces.push(Space::new(hand_of(player), "hand").collection().owned_by(player));
        spaces.push(Space::new(pass_pile_of(player), "pass").collection().owned_by(player));
        spaces.push(Space::new(taken_by(player), "taken"));
    }
    spaces.push(Space::new(TRICK, "trick"));
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("hearts"));
    meta_data.insert(ROUND.to_string(), json!(0));
    meta_data.insert("display".to_string(), crate::display::hints(players));
    GameConfig {
        spaces,
        score_labels: vec!["Points".to_string(), "This round".to_string()],
        meta_data,
        // `prepare` sets the real active players once the cards are dealt.
        starting_player: StartingPlayer::All,
    }
}

/// A card lying face down: everyone sees a back, its viewers see `card`.
pub fn face_down(card: Card) -> Piece {
    tablehost_sdk::face_down::face_down(&card)
}

/// The card a piece really is, if the code running may see it.
pub fn card_of(piece: &Piece) -> Option<Card> {
    face_of(piece)
}

/// The cards of space `space_id` with their indexes (only those visible here).
pub fn cards_in(table: &Table, space_id: &str) -> Vec<(usize, Card)> {
    faces_in(table, space_id)
}

/// The current phase. Panics on a state hearts did not write.
pub fn phase(table: &Table) -> Phase {
    match table.meta(PHASE).and_then(Value::as_str) {
        Some("passing") => Phase::Passing,
        Some("playing") => Phase::Playing,
        Some("over") => Phase::Over,
        other => panic!("hearts has no phase {:?}", other),
    }
}

/// Records the phase in meta data.
pub fn set_phase(table: &mut Table, phase: Phase) {
    table.set_meta(PHASE, phase.name());
}

/// The round number (1 for the first round).
pub fn round_number(table: &Table) -> u64 {
    table.meta(ROUND).and_then(Value::as_u64).unwrap_or(0)
}

/// Whether a heart has been played this round.
pub fn hearts_broken(table: &Table) -> bool {
    table.meta(HEARTS_BROKEN).and_then(Value::as_bool).unwrap_or(false)
}

/// `player`'s points from finished rounds.
pub fn score_of(table: &Table, player: PlayerId) -> u32 {
    table.player(player).public(SCORE).and_then(Value::as_u64).unwrap_or(0) as u32
}

/// The penalty points in the tricks `player` has taken this round.
pub fn points_taken(table: &Table, player: PlayerId) -> u32 {
    cards_in(table, &taken_by(player))
        .iter()
        .map(|&(_, card)| card::points(card))
        .sum()
}
