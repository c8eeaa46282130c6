//! The backgammon table: its spaces, and the public facts kept in meta data.
//!
//! - `point-1` .. `point-24`: the points, numbered as white counts them
//!   (white bears off past point 1, black past point 24), public state
//!   `number`; ordered, the top checker last;
//! - `bar-white`, `bar-black`: the checkers hit and waiting to enter;
//! - `off-white`, `off-black`: the checkers borne off.
//!
//! A checker is a piece of kind `"white"` or `"black"`. Nothing is hidden.
//! Seat 1 plays white, seat 2 black. Meta data: `phase` (`roll`, `double`,
//! `move`, `over`), `dice` (the roll), `dice_left` (dice not yet used; four
//! of a double), `selected` (the space of the checker picked up, or absent),
//! `cube` (1, 2, 4, ... 64) and `cube_owner` (player id; absent while the
//! cube is in the middle), `crawford_game` and `crawford_played`, `game`
//! (the number of the game in the match), and the options `match_length`
//! (1) and `doubling_cube` (true). Player public state: `colour` and
//! `match_points`.

use tablehost_sdk::{json, GameConfig, Map, Options, Piece, PlayerId, Space, StartingPlayer, Table, Value};

use crate::board::{Board, Side, BAR, OFF};

/// Meta key: `"roll"`, `"double"`, `"move"` or `"over"`.
pub const PHASE: &str = "phase";
/// Meta key: the two dice of the roll being played.
pub const DICE: &str = "dice";
/// Meta key: the dice not yet used this turn.
pub const DICE_LEFT: &str = "dice_left";
/// Meta key: the space id of the checker picked up (absent when none).
pub const SELECTED: &str = "selected";
/// Meta key: the doubling cube's value.
pub const CUBE: &str = "cube";
/// Meta key: the player who owns the cube (absent while it is in the middle).
pub const CUBE_OWNER: &str = "cube_owner";
/// Meta key: whether this is the Crawford game (no doubling).
pub const CRAWFORD_GAME: &str = "crawford_game";
/// Meta key: whether the Crawford game has been played in this match.
pub const CRAWFORD_PLAYED: &str = "crawford_played";
/// Meta key: the number of the game being played in the match, from 1.
pub const GAME_NUMBER: &str = "game_number";
/// Meta key (option): points needed to win the match, 1 by default.
pub const MATCH_LENGTH: &str = "match_length";
/// Meta key (option): whether the doubling cube is in play, true by default.
pub const DOUBLING_CUBE: &str = "doubling_cube";
/// Player public state key: `"white"` or `"black"`.
pub const COLOUR: &str = "colour";
/// Player public state key: points won in the match so far.
pub const MATCH_POINTS: &str = "match_points";

/// The default `match_length`: one game decides.
pub const DEFAULT_MATCH_LENGTH: u64 = 1;
/// The highest cube value: no double beyond it.
pub const MAX_CUBE: u64 = 64;

/// The phase of a turn, as kept in meta data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The player to move may double or roll.
    Roll,
    /// A double was offered; the opponent takes or drops.
    Double,
    /// The player moves checkers with the dice, then ends the turn.
    Move,
    /// The match is over.
    Over,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Roll => "roll",
            Phase::Double => "double",
            Phase::Move => "move",
            Phase::Over => "over",
        }
    }
}

/// The starting table for two players: the opening position, cube in the
/// middle, no points. The opening roll happens in `prepare`.
///
/// Panics unless there are exactly two players.
pub fn config(players: &[PlayerId], options: &Options) -> GameConfig {
    assert_eq!(players.len(), 2, "backgammon is for exactly 2 players");
    let mut spaces: Vec<Space> = (1..=24).map(|n| Space::new(point_space(n), "point").with_public("number", n)).collect();
    for side in [Side::White, Side::Black] {
        spaces.push(Space::new(format!("bar-{}", side.name()), "bar"));
        spaces.push(Space::new(format!("off-{}", side.name()), "off"));
    }
    let opening = Board::opening();
    for side in [Side::White, Side::Black] {
        for point in 1..=24 {
            let space = space_of(side, point);
            let at = spaces.iter_mut().find(|s| s.space_id == space).expect("every point exists");
            at.pieces.extend((0..opening.at(side, point)).map(|_| Piece::new(side.name())));
        }
    }
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("backgammon"));
    meta_data.insert(CUBE.to_string(), json!(1));
    meta_data.insert(GAME_NUMBER.to_string(), json!(1));
    meta_data.insert(CRAWFORD_GAME.to_string(), json!(false));
    meta_data.insert(CRAWFORD_PLAYED.to_string(), json!(false));
    let length = options.0.get(MATCH_LENGTH).and_then(Value::as_u64).unwrap_or(DEFAULT_MATCH_LENGTH);
    let cube = options.0.get(DOUBLING_CUBE).and_then(Value::as_bool).unwrap_or(true);
    meta_data.insert(MATCH_LENGTH.to_string(), json!(length));
    meta_data.insert(DOUBLING_CUBE.to_string(), json!(cube));
    meta_data.insert("display".to_string(), crate::display::hints(players));
    GameConfig {
        spaces,
        score_labels: vec!["Match points".to_string(), "Pips to go".to_string()],
        meta_data,
        // The opening roll in `prepare` decides who starts.
        starting_player: StartingPlayer::All,
    }
}

/// The space id of white-numbered point `number` (1..=24): `"point-13"`.
pub fn point_space(number: usize) -> String {
    format!("point-{}", number)
}

/// The space of `side`'s own point `point` (0 off, 1..=24, 25 bar).
pub fn space_of(side: Side, point: usize) -> String {
    match (point, side) {
        (BAR, _) => format!("bar-{}", side.name()),
        (OFF, _) => format!("off-{}", side.name()),
        (_, Side::White) => point_space(point),
        (_, Side::Black) => point_space(25 - point),
    }
}

/// `side`'s own point number of space `space_id`, if it is a point, its
/// bar or its off tray.
pub fn point_of(side: Side, space_id: &str) -> Option<usize> {
    if space_id == format!("bar-{}", side.name()) {
        return Some(BAR);
    }
    if space_id == format!("off-{}", side.name()) {
        return Some(OFF);
    }
    let number: usize = space_id.strip_prefix("point-")?.parse().ok()?;
    if !(1..=24).contains(&number) || point_space(number) != space_id {
        return None;
    }
    Some(match side {
        Side::White => number,
        Side::Black => 25 - number,
    })
}

/// The side `player` plays: white for the first seat, black for the second.
pub fn side_of(table: &Table, player: PlayerId) -> Side {
    if table.seat_of(player) == 0 {
        Side::White
    } else {
        Side::Black
    }
}

/// The player who plays `side`.
pub fn player_of(table: &Table, side: Side) -> PlayerId {
    table.players()[side.index()]
}

/// The position on the table.
pub fn board(table: &Table) -> Board {
    let mut board = Board::default();
    for side in [Side::White, Side::Black] {
        for point in OFF..=BAR {
            let count = table.pieces(&space_of(side, point)).iter().filter(|p| p.public_kind == side.name()).count();
            board.counts[side.index()][point] = count as u8;
        }
    }
    board
}

/// The current phase. Panics on a state backgammon did not write.
pub fn phase(table: &Table) -> Phase {
    match table.meta(PHASE).and_then(Value::as_str) {
        Some("roll") => Phase::Roll,
        Some("double") => Phase::Double,
        Some("move") => Phase::Move,
        Some("over") => Phase::Over,
        other => panic!("backgammon has no phase {:?}", other),
    }
}

/// Records the phase in meta data.
pub fn set_phase(table: &mut Table, phase: Phase) {
    table.set_meta(PHASE, phase.name());
}

/// A list of small numbers kept under meta key `key` (`dice`, `dice_left`).
pub fn meta_dice(table: &Table, key: &str) -> Vec<u8> {
    let values = table.meta(key).and_then(Value::as_array);
    values.map(|v| v.iter().filter_map(Value::as_u64).map(|d| d as u8).collect()).unwrap_or_default()
}

/// A meta number, or `default` when absent.
pub fn meta_u64(table: &Table, key: &str, default: u64) -> u64 {
    table.meta(key).and_then(Value::as_u64).unwrap_or(default)
}

/// A meta flag, or `default` when absent.
pub fn meta_bool(table: &Table, key: &str, default: bool) -> bool {
    table.meta(key).and_then(Value::as_bool).unwrap_or(default)
}

/// The space of the checker picked up, if any.
pub fn selected(table: &Table) -> Option<String> {
    table.meta(SELECTED).and_then(Value::as_str).map(str::to_owned)
}

/// `player`'s points in the match.
pub fn match_points(table: &Table, player: PlayerId) -> u64 {
    table.player(player).public(MATCH_POINTS).and_then(Value::as_u64).unwrap_or(0)
}

/// The cube's owner, or `None` while it is in the middle.
pub fn cube_owner(table: &Table) -> Option<PlayerId> {
    table.meta(CUBE_OWNER).and_then(Value::as_u64).map(|id| id as PlayerId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_numbers_the_points_from_its_own_home() {
        assert_eq!(space_of(Side::White, 1), "point-1");
        assert_eq!(space_of(Side::Black, 1), "point-24");
        assert_eq!(space_of(Side::Black, BAR), "bar-black");
        assert_eq!(space_of(Side::White, OFF), "off-white");
        for side in [Side::White, Side::Black] {
            for point in OFF..=BAR {
                assert_eq!(point_of(side, &space_of(side, point)), Some(point));
            }
        }
        assert_eq!(point_of(Side::White, "bar-black"), None);
        assert_eq!(point_of(Side::White, "point-25"), None);
        assert_eq!(point_of(Side::White, "point-01"), None);
    }
}
