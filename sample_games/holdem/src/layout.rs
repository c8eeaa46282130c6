//! The hold'em table: spaces, who sees into them, the options, and the
//! public bookkeeping.
//!
//! - `deck`: a collection nobody owns; cards wait here face down;
//! - `hole-<id>`: a collection owned by its player: their two hole cards,
//!   face down (only they see the faces) until a showdown turns them up;
//! - `board`: ordered, the flop, turn and river, face up;
//! - `muck`: a collection nobody owns: folded and mucked cards, face down.
//!
//! A hidden card is the SDK's `face_down` piece (a `back` hiding its name). Meta data (public)
//! holds the options (`small_blind`, `big_blind`, `starting_stack`,
//! `hand_limit`), `hand` (the hand number), `phase` (`"betting"` or
//! `"over"`), `betting` (the hand's betting, see `betting::Betting`) and
//! `last_showdown`. Each player's public state holds `chips` (behind),
//! `bet` (put in this round) and `status` (`"in"`, `"folded"`, `"all in"`,
//! `"out"`).

use tablehost_sdk::face_down::{face_down, faces_in};
use tablehost_sdk::{json, GameConfig, GameOption, Map, Options, PlayerId, Space, StartingPlayer, Table, Value};

use crate::betting::Betting;
use crate::cards::Card;

pub const DECK: &str = "deck";
pub const BOARD: &str = "board";
pub const MUCK: &str = "muck";

/// Option (meta key): the small blind, in chips. Default 5.
pub const SMALL_BLIND: &str = "small_blind";
/// Option (meta key): the big blind, in chips. Default 10.
pub const BIG_BLIND: &str = "big_blind";
/// Option (meta key): each player's chips at the start. Default 1000.
pub const STARTING_STACK: &str = "starting_stack";
/// Option (meta key): the game ends after this many hands (0: no limit). Default 100.
pub const HAND_LIMIT: &str = "hand_limit";
/// Option defaults, in the order above.
pub const DEFAULTS: [(&str, u64); 4] = [(SMALL_BLIND, 5), (BIG_BLIND, 10), (STARTING_STACK, 1000), (HAND_LIMIT, 100)];

/// The options as declared in the game's metadata: `(name, least, most, what it sets)`;
/// the defaults are in [`DEFAULTS`].
pub const OPTION_RANGES: [(&str, i64, i64, &str); 4] = [
    (SMALL_BLIND, 1, 1_000_000, "the small blind, in chips"),
    (BIG_BLIND, 1, 1_000_000, "the big blind, in chips (at least the small blind)"),
    (STARTING_STACK, 1, 1_000_000_000, "each player's chips at the start"),
    (HAND_LIMIT, 0, 1_000_000, "the game ends after this many hands (0: no limit)"),
];

/// The declared options (the metadata op), in the order of [`DEFAULTS`].
pub fn declared_options() -> Vec<GameOption> {
    OPTION_RANGES
        .iter()
        .zip(DEFAULTS.iter())
        .map(|(&(name, least, most, what), &(_, default))| GameOption::integer(name, default as i64, least, most).describe(what))
        .collect()
}

/// Meta key: the hand number, from 1.
pub const HAND: &str = "hand";
/// Meta key: `"betting"` while hands are played, `"over"` at the end.
pub const PHASE: &str = "phase";
/// Meta key: the current hand's `Betting`.
pub const BETTING: &str = "betting";
/// Meta key: the chips in the pot of the hand in play (every seat's `committed`; 0 between
/// hands), kept for the table to show.
pub const POT: &str = "pot";
/// Meta key: who showed, who mucked and who won at the last showdown.
pub const LAST_SHOWDOWN: &str = "last_showdown";
/// Player public state keys.
pub const CHIPS: &str = "chips";
pub const BET: &str = "bet";
pub const STATUS: &str = "status";

/// Seats at a hold'em table.
pub const MIN_PLAYERS: usize = 2;
pub const MAX_PLAYERS: usize = 9;

/// The space holding `player`'s hole cards.
pub fn hole_of(player: PlayerId) -> String {
    format!("hole-{}", player)
}

/// The starting table for 2 to 9 players with `options` (a missing one takes
/// its default); they are copied into meta data, where the rules read them.
/// Panics outside 2..=9 players, or when the big blind is below the small
/// blind or above the starting stack (the setup is refused).
pub fn config(players: &[PlayerId], options: &Options) -> GameConfig {
    assert!(
        (MIN_PLAYERS..=MAX_PLAYERS).contains(&players.len()),
        "hold'em is for 2 to 9 players, not {}",
        players.len()
    );
    let mut spaces =
        vec![Space::new(DECK, "deck").collection().with_pieces(Card::deck().iter().map(face_down))];
    spaces.push(Space::new(BOARD, "board"));
    spaces.push(Space::new(MUCK, "muck").collection());
    for &player in players {
        spaces.push(Space::new(hole_of(player), "hole").collection().owned_by(player));
    }
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("holdem"));
    for (key, default) in DEFAULTS.iter() {
        let value = options.0.get(*key).and_then(Value::as_u64).unwrap_or(*default);
        meta_data.insert(key.to_string(), json!(value));
    }
    let chosen = |key: &str| meta_data.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (small, big, stack) = (chosen(SMALL_BLIND), chosen(BIG_BLIND), chosen(STARTING_STACK));
    assert!(small <= big, "the big blind ({}) is below the small blind ({})", big, small);
    assert!(big <= stack, "the big blind ({}) is above the starting stack ({})", big, stack);
    meta_data.insert(HAND.to_string(), json!(0));
    meta_data.insert(POT.to_string(), json!(0));
    meta_data.insert("display".to_string(), crate::display::hints());
    GameConfig {
        spaces,
        score_labels: vec!["Chips".to_string()],
        meta_data,
        // `prepare` draws the button and sets who acts first.
        starting_player: StartingPlayer::All,
    }
}

/// The value of option `key` (meta data), or its default.
pub fn option(table: &Table, key: &str) -> u64 {
    let default = DEFAULTS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or(0);
    table.meta(key).and_then(Value::as_u64).unwrap_or(default)
}

/// The cards of space `space_id` the code running may see, in space order.
pub fn cards_in(table: &Table, space_id: &str) -> Vec<Card> {
    faces_in::<Card>(table, space_id).into_iter().map(|(_, card)| card).collect()
}

/// The hand's betting. Panics before the first hand (a state hold'em did not write).
pub fn betting(table: &Table) -> Betting {
    let value = table.meta(BETTING).expect("a hand is in play").clone();
    tablehost_sdk::serde_json::from_value(value).expect("meta data betting is a Betting")
}

/// Stores the hand's betting in meta data.
pub fn store_betting(table: &mut Table, betting: &Betting) {
    let value = tablehost_sdk::serde_json::to_value(betting).expect("a Betting serialises");
    table.set_meta(BETTING, value);
    set_pot(table, betting.pot());
}

/// Sets meta `pot` to `chips` unless it already holds that.
pub fn set_pot(table: &mut Table, chips: u64) {
    if table.meta(POT).and_then(Value::as_u64) != Some(chips) {
        table.set_meta(POT, chips);
    }
}

/// Whether the game is over.
pub fn is_over(table: &Table) -> bool {
    table.meta(PHASE).and_then(Value::as_str) == Some("over")
}

/// The hand number (0 before the first).
pub fn hand_number(table: &Table) -> u64 {
    table.meta(HAND).and_then(Value::as_u64).unwrap_or(0)
}

/// `player`'s chips outside the hand in play (public state `chips` plus what
/// the current hand holds of theirs): their score.
pub fn chips_of(table: &Table, player: PlayerId) -> u64 {
    if let Some(Ok(betting)) = table.meta(BETTING).map(|v| tablehost_sdk::serde_json::from_value::<Betting>(v.clone()))
    {
        if let Some(seat) = betting.seats.iter().find(|s| s.player == player) {
            return seat.stack + seat.committed;
        }
    }
    table.player(player).public(CHIPS).and_then(Value::as_u64).unwrap_or(0)
}

/// Writes each seat's `chips`, `bet` and `status` into its player's public
/// state, where they changed.
pub fn show_seats(table: &mut Table, betting: &Betting) {
    for seat in &betting.seats {
        let status = if seat.folded {
            "folded"
        } else if seat.all_in {
            "all in"
        } else {
            "in"
        };
        set_if_changed(table, seat.player, CHIPS, json!(seat.stack));
        set_if_changed(table, seat.player, BET, json!(seat.bet));
        set_if_changed(table, seat.player, STATUS, json!(status));
    }
}

/// Sets public state `key` of `player` unless it already holds `value`.
pub fn set_if_changed(table: &mut Table, player: PlayerId, key: &str, value: Value) {
    if table.player(player).public(key) != Some(&value) {
        table.set_player_public_state(player, key, value);
    }
}
