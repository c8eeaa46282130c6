//! The match around the games: the opening roll, how a game ends and counts,
//! the Crawford rule, and setting up the next game.

use tablehost_sdk::dice::roll_logged;
use tablehost_sdk::{json, LogEntry, Piece, PlayerId, Rng, Table, Value};

use crate::board::{dice_to_play, Board, Side, Win, BAR, OFF};
use crate::layout::{
    match_points, meta_u64, player_of, set_phase, space_of, Phase, CRAWFORD_GAME, CRAWFORD_PLAYED, CUBE, CUBE_OWNER,
    DEFAULT_MATCH_LENGTH, DICE, DICE_LEFT, GAME_NUMBER, MATCH_LENGTH, MATCH_POINTS, SELECTED,
};
use crate::turn::begin_moving;

/// Rule: each player rolls one die; the higher starts and plays those two
/// dice as the first roll; equal dice are rolled again.
pub fn opening_roll(table: &mut Table, rng: &mut Rng) {
    loop {
        let white = roll_logged(table, rng, "White", 1, 6).values[0];
        let black = roll_logged(table, rng, "Black", 1, 6).values[0];
        if white == black {
            table.log(LogEntry::new("Equal dice: both roll again".to_string()));
            continue;
        }
        let starter = if white > black { Side::White } else { Side::Black };
        let player = player_of(table, starter);
        table.log(LogEntry::new(format!("{} ({}) starts with {}-{}", table.player_name(player), starter.name(), white, black)));
        table.set_meta(DICE, json!([white, black]));
        begin_moving(table, player, dice_to_play(white, black));
        return;
    }
}

/// Ends the game won by `winner`, worth `points` (the cube already counted):
/// adds them to the match score, then ends the match or starts the next game.
pub fn end_game(table: &mut Table, winner: PlayerId, points: u64, how: &str, rng: &mut Rng) {
    let total = match_points(table, winner) + points;
    table.set_player_public_state(winner, MATCH_POINTS, json!(total));
    table.set_meta(SELECTED, Value::Null);
    table.set_meta(DICE_LEFT, json!([]));
    table.log(LogEntry::new(format!(
        "{} wins {} and {} point{} ({} in the match)",
        table.player_name(winner),
        how,
        points,
        if points == 1 { "" } else { "s" },
        total
    )));
    let length = meta_u64(table, MATCH_LENGTH, DEFAULT_MATCH_LENGTH);
    if total >= length {
        set_phase(table, Phase::Over);
        table.set_active_players(Vec::new());
        table.log(LogEntry::new(format!("{} wins the match", table.player_name(winner))));
        return;
    }
    next_game(table, rng, length);
}

/// Counts a game won by bearing off: 1, 2 (gammon) or 3 (backgammon) times the cube.
pub fn bore_off_all(table: &mut Table, winner: Side, board: &Board, rng: &mut Rng) {
    let win: Win = board.win_kind(winner);
    let points = u64::from(win.points()) * meta_u64(table, CUBE, 1);
    let player = player_of(table, winner);
    end_game(table, player, points, win.name(), rng);
}

/// Sets up the next game of the match: checkers back to the opening
/// position, the cube in the middle at 1, the Crawford rule, the opening roll.
///
/// Rule (Crawford): the game right after either player first comes within
/// one point of winning the match is played without the doubling cube.
fn next_game(table: &mut Table, rng: &mut Rng, length: u64) {
    let game = meta_u64(table, GAME_NUMBER, 1) + 1;
    table.set_meta(GAME_NUMBER, json!(game));
    reset_checkers(table);
    table.set_meta(CUBE, json!(1));
    table.set_meta(CUBE_OWNER, Value::Null);
    let someone_at_match_point = table.players().into_iter().any(|p| match_points(table, p) + 1 == length);
    let crawford = someone_at_match_point && !table.meta(CRAWFORD_PLAYED).and_then(Value::as_bool).unwrap_or(false);
    table.set_meta(CRAWFORD_GAME, crawford);
    if crawford {
        table.set_meta(CRAWFORD_PLAYED, true);
        table.log(LogEntry::new(format!("Game {} is the Crawford game: no doubling", game)));
    } else {
        table.log(LogEntry::new(format!("Game {}", game)));
    }
    opening_roll(table, rng);
}

/// Takes every checker off the table and sets the opening position again.
fn reset_checkers(table: &mut Table) {
    let opening = Board::opening();
    for side in [Side::White, Side::Black] {
        for point in OFF..=BAR {
            let space = space_of(side, point);
            while let Some(last) = table.pieces(&space).len().checked_sub(1) {
                table.remove_piece(&space, last);
            }
        }
    }
    for side in [Side::White, Side::Black] {
        for point in 1..=24 {
            for _ in 0..opening.at(side, point) {
                table.add_piece(&space_of(side, point), Piece::new(side.name()));
            }
        }
    }
}
