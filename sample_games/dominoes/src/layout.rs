//! The table of a dominoes round: which spaces exist and who sees into them.
//!
//! - `boneyard`: a collection nobody owns, so nobody sees a face in it;
//! - `hand-<player id>`: a collection owned by its holder, who alone sees the faces;
//! - `line`: the line of play, ordered left to right, every tile face up.
//!
//! A hidden tile is `Piece::new("back").hiding("<face>")`; a tile on the line
//! has its face as public kind, no private kind, and public state `left` and
//! `right`: the pips of the end facing each way along the line.

use tablehost_sdk::face_down::{face_of, faces_in};
pub use tablehost_sdk::face_down::{hand_of, BACK};
use tablehost_sdk::{json, GameConfig, Map, Options, Piece, PlayerId, Space, StartingPlayer, Table, Value};

use crate::tile::Tile;
/// The space of the tiles not yet drawn.
pub const BONEYARD: &str = "boneyard";
/// The space of the tiles played, left end first.
pub const LINE: &str = "line";
/// The line's public state key counting passes since the last tile was played.
pub const PASSES_IN_A_ROW: &str = "passes_in_a_row";
/// The meta key holding the round's result once it is over (absent before).
pub const RESULT: &str = "result";
/// The player public state key holding the points scored this round.
pub const POINTS: &str = "points";

/// Fewest players at the table.
pub const MIN_PLAYERS: usize = 2;
/// Most players at the table.
pub const MAX_PLAYERS: usize = 4;

/// The option and meta key of the tiles dealt to each hand (option: 0 means
/// the standard count of [`tiles_per_hand`], else 1 to 7).
pub const TILES_PER_HAND: &str = "tiles_per_hand";

/// The tiles this match deals to each hand: option `tiles_per_hand` when it
/// is 1 to 7, else the standard count for `player_count`.
pub fn tiles_dealt(options: &Options, player_count: usize) -> usize {
    match options.0.get(TILES_PER_HAND).and_then(Value::as_u64) {
        Some(count) if count >= 1 => count as usize,
        _ => tiles_per_hand(player_count),
    }
}

/// Tiles dealt to each hand: 7 with two players, 5 with three or four.
pub fn tiles_per_hand(player_count: usize) -> usize {
    if player_count == 2 {
        7
    } else {
        5
    }
}

/// The starting table for `players` (seat order): all 28 tiles face down in
/// the boneyard, an empty hand per player and an empty line. Dealing happens in
/// `prepare`, with the setup seed.
///
/// Panics unless there are 2 to 4 players.
pub fn config(players: &[PlayerId], options: &Options) -> GameConfig {
    assert!(
        (MIN_PLAYERS..=MAX_PLAYERS).contains(&players.len()),
        "dominoes is for 2 to 4 players, not {}",
        players.len()
    );
    let boneyard = Space::new(BONEYARD, "boneyard")
        .collection()
        .with_pieces(Tile::double_six_set().into_iter().map(face_down));
    let hands = players
        .iter()
        .map(|&player| Space::new(hand_of(player), "hand").collection().owned_by(player));
    let line = Space::new(LINE, "line").with_public(PASSES_IN_A_ROW, 0);
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("dominoes"));
    meta_data.insert(TILES_PER_HAND.to_string(), json!(tiles_dealt(options, players.len())));
    meta_data.insert("display".to_string(), crate::display::hints());
    GameConfig {
        spaces: std::iter::once(boneyard)
            .chain(hands)
            .chain(std::iter::once(line))
            .collect(),
        score_labels: vec!["Points".to_string()],
        meta_data,
        // Replaced in `prepare` by the holder of the highest tile.
        starting_player: StartingPlayer::Player(players[0]),
    }
}

/// A tile lying face down: everyone sees a back, its viewers see `tile`.
pub fn face_down(tile: Tile) -> Piece {
    tablehost_sdk::face_down::face_down(&tile)
}

/// The tile a piece really is, if the code running may see it.
pub fn tile_of(piece: &Piece) -> Option<Tile> {
    face_of(piece)
}

/// The tiles in `player`'s hand, with their indexes in the hand space.
pub fn hand_tiles(table: &Table, player: PlayerId) -> Vec<(usize, Tile)> {
    faces_in(table, &hand_of(player))
}

/// The pips left in `player`'s hand.
pub fn hand_pips(table: &Table, player: PlayerId) -> u32 {
    hand_tiles(table, player).iter().map(|(_, tile)| tile.pips()).sum()
}

/// The round's result once it is over (`{"winner": id|null, "reason": ...}`), else None.
pub fn result(table: &Table) -> Option<&Value> {
    table.state().meta_data.get(RESULT)
}
