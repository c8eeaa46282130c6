//! The spades table: its spaces, who sees into them, and the public
//! bookkeeping kept in meta data and player state.
//!
//! - `deck`: a collection nobody owns; cards wait here face down between deals;
//! - `hand-<id>`: a collection owned by its holder, who alone sees the faces;
//! - `trick`: ordered, the cards of the trick in play, face up, each with
//!   public state `played_by`;
//! - `taken-<id>`: ordered, the tricks a player took this round, face up.
//!
//! Meta data (all public): `teams` (`[[0, 2], [1, 3]]`, for the host), `phase` (`bidding`, `playing`, `over`), `round`
//! (from 1), `dealer` (a player id), `spades_broken`, `side_scores` and
//! `side_bags` (two numbers each: side 0 = seats 1 and 3, side 1 = seats 2
//! and 4), and the two options `target_score` (500) and `round_limit` (25).
//! Player public state: `bid` (absent until they bid; 0 is nil) and `tricks`
//! (taken this round).

use tablehost_sdk::cards::Card;
use tablehost_sdk::face_down::{face_down, face_of, faces_in};
pub use tablehost_sdk::face_down::{hand_of, BACK};
use tablehost_sdk::{json, GameConfig, Map, Options, Piece, PlayerId, Space, StartingPlayer, Table, Value};

/// Where the cards wait face down between deals.
pub const DECK: &str = "deck";
/// The trick in play.
pub const TRICK: &str = "trick";
/// Meta key the host reads: the partnerships, as lists of 0-based seat indexes.
pub const TEAMS: &str = "teams";
/// Meta key: `"bidding"`, `"playing"` or `"over"`.
pub const PHASE: &str = "phase";
/// Meta key: the round number, from 1.
pub const ROUND: &str = "round";
/// Meta key: the player id of this round's dealer.
pub const DEALER: &str = "dealer";
/// Meta key: whether a spade has been played this round.
pub const SPADES_BROKEN: &str = "spades_broken";
/// Meta key: `[side 0, side 1]` game scores.
pub const SIDE_SCORES: &str = "side_scores";
/// Meta key: `[side 0, side 1]` bags (overtricks) not yet penalised.
pub const SIDE_BAGS: &str = "side_bags";
/// Meta key (option): the score that ends the game, 500 by default.
pub const TARGET_SCORE: &str = "target_score";
/// Meta key (option): after this many rounds the game ends even if nobody
/// reached the target (the higher score wins; a tie plays on). 25 by default.
pub const ROUND_LIMIT: &str = "round_limit";
/// Player public state key: the bid, 0 (nil) ..= 13.
pub const BID: &str = "bid";
/// Player public state key: tricks taken this round.
pub const TRICKS: &str = "tricks";
/// Piece public state key on a played card: who played it.
pub const PLAYED_BY: &str = "played_by";

/// Spades is for exactly four players.
pub const PLAYERS: usize = 4;
/// The default `target_score`.
pub const DEFAULT_TARGET_SCORE: i64 = 500;
/// The default `round_limit`: a real game rarely lasts 20 rounds; random
/// bots, who are set most rounds, may never reach 500 without it.
pub const DEFAULT_ROUND_LIMIT: u64 = 25;

/// The phase of play, as kept in meta data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Bidding,
    Playing,
    Over,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Bidding => "bidding",
            Phase::Playing => "playing",
            Phase::Over => "over",
        }
    }
}

/// The space holding the tricks `player` took this round.
pub fn taken_by(player: PlayerId) -> String {
    format!("taken-{}", player)
}

/// The starting table: 52 cards face down in the deck, a hand and a taken
/// pile per seat, both sides at 0. Dealing happens in `prepare`.
///
/// Panics unless there are exactly four players.
pub fn config(players: &[PlayerId], options: &Options) -> GameConfig {
    assert_eq!(players.len(), PLAYERS, "spades is for exactly 4 players");
    let mut spaces = vec![Space::new(DECK, "deck").collection().with_pieces(Card::deck().iter().map(face_down))];
    for &player in players {
        spaces.push(Space::new(hand_of(player), "hand").collection().owned_by(player));
        spaces.push(Space::new(taken_by(player), "taken"));
    }
    spaces.push(Space::new(TRICK, "trick"));
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("spades"));
    // Seat indexes (0-based) playing together: the host counts a side's win
    // as a win for both partners, not a draw between them.
    meta_data.insert(TEAMS.to_string(), json!([[0, 2], [1, 3]]));
    meta_data.insert(ROUND.to_string(), json!(0));
    meta_data.insert(DEALER.to_string(), json!(players[PLAYERS - 1]));
    meta_data.insert(SIDE_SCORES.to_string(), json!([0, 0]));
    meta_data.insert(SIDE_BAGS.to_string(), json!([0, 0]));
    let target = options.0.get(TARGET_SCORE).and_then(Value::as_i64).unwrap_or(DEFAULT_TARGET_SCORE);
    let rounds = options.0.get(ROUND_LIMIT).and_then(Value::as_u64).unwrap_or(DEFAULT_ROUND_LIMIT);
    meta_data.insert(TARGET_SCORE.to_string(), json!(target));
    meta_data.insert(ROUND_LIMIT.to_string(), json!(rounds));
    meta_data.insert("display".to_string(), crate::display::hints(players));
    GameConfig {
        spaces,
        score_labels: vec!["Side score".to_string(), "Side bags".to_string(), "Bid".to_string(), "Tricks".to_string()],
        meta_data,
        // `prepare` deals and makes the first bidder active.
        starting_player: StartingPlayer::All,
    }
}

/// The card a piece really is, if the code running may see it.
pub fn card_of(piece: &Piece) -> Option<Card> {
    face_of(piece)
}

/// The cards of space `space_id` visible here, with their indexes.
pub fn cards_in(table: &Table, space_id: &str) -> Vec<(usize, Card)> {
    faces_in(table, space_id)
}

/// The side of `player`: 0 for the first and third seats, 1 for the second and fourth.
pub fn side_of(table: &Table, player: PlayerId) -> usize {
    table.seat_of(player) % 2
}

/// The current phase. Panics on a state spades did not write.
pub fn phase(table: &Table) -> Phase {
    match table.meta(PHASE).and_then(Value::as_str) {
        Some("bidding") => Phase::Bidding,
        Some("playing") => Phase::Playing,
        Some("over") => Phase::Over,
        other => panic!("spades has no phase {:?}", other),
    }
}

/// Records the phase in meta data.
pub fn set_phase(table: &mut Table, phase: Phase) {
    table.set_meta(PHASE, phase.name());
}

/// A meta number, or `default` when absent.
pub fn meta_i64(table: &Table, key: &str, default: i64) -> i64 {
    table.meta(key).and_then(Value::as_i64).unwrap_or(default)
}

/// The round number (1 for the first round, 0 before the first deal).
pub fn round_number(table: &Table) -> u64 {
    meta_i64(table, ROUND, 0) as u64
}

/// The pair of numbers under meta key `key` (`side_scores`, `side_bags`).
pub fn side_pair(table: &Table, key: &str) -> [i64; 2] {
    let pair = table.meta(key).and_then(Value::as_array);
    let at = |i: usize| pair.and_then(|p| p.get(i)).and_then(Value::as_i64).unwrap_or(0);
    [at(0), at(1)]
}

/// `player`'s bid this round, once made (0 = nil).
pub fn bid_of(table: &Table, player: PlayerId) -> Option<u8> {
    table.player(player).public(BID).and_then(Value::as_u64).map(|bid| bid as u8)
}

/// Tricks `player` has taken this round.
pub fn tricks_of(table: &Table, player: PlayerId) -> u8 {
    table.player(player).public(TRICKS).and_then(Value::as_u64).unwrap_or(0) as u8
}

/// Whether a spade has been played this round.
pub fn spades_broken(table: &Table) -> bool {
    table.meta(SPADES_BROKEN).and_then(Value::as_bool).unwrap_or(false)
}
