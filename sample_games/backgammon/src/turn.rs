//! A turn: double or roll, move checkers one at a time, end the turn.
//!
//! Actions offered to the player whose turn it is:
//!
//! | phase | action | intent |
//! | --- | --- | --- |
//! | roll | button `roll`; button `double` when the player may double | confirm |
//! | double (opponent) | buttons `take` and `drop` | confirm |
//! | move, nothing picked up | `piece_click` on the top checker of each point (or bar) with a legal step | choice |
//! | move, a checker picked up | `space_click` on each point or off tray it may reach; buttons `off-<die>` when two dice bear it off; a `piece_click` on it again puts it down | choice / cancel |
//! | move, no legal step left | button `end-turn` | confirm |
//!
//! Picking up, putting down and moving a checker allow undo, so a player
//! can take back the moves of a turn until they end it; the roll draws
//! randomness and can never be undone.

use tablehost_sdk::dice::roll_logged;
use tablehost_sdk::{json, Action, AvailableAction, Button, LogEntry, PlayerId, Rng, Table, Value};

use crate::board::{without_one, Step, BAR, CHECKERS, OFF};
use crate::game::{bore_off_all, end_game};
use crate::layout::{
    board, cube_owner, meta_bool, meta_dice, meta_u64, phase, point_of, selected, set_phase, side_of, space_of,
    Phase, CRAWFORD_GAME, CUBE, CUBE_OWNER, DICE, DICE_LEFT, DOUBLING_CUBE, MAX_CUBE, SELECTED,
};

/// Button ids.
pub const ROLL: &str = "roll";
pub const DOUBLE: &str = "double";
pub const TAKE: &str = "take";
pub const DROP: &str = "drop";
pub const END_TURN: &str = "end-turn";

fn button(id: &str, label: &str) -> Action {
    Action::button_click(Button::new(id, label))
}

/// The button bearing the picked-up checker off with `die`.
pub fn off_with_id(die: u8) -> String {
    format!("off-{}", die)
}

/// Rule (doubling cube): before rolling, a player may double when the cube
/// is in play, in the middle or theirs, below 64, and this is not the
/// Crawford game.
pub fn may_double(table: &Table, player: PlayerId) -> bool {
    meta_bool(table, DOUBLING_CUBE, true)
        && !meta_bool(table, CRAWFORD_GAME, false)
        && meta_u64(table, CUBE, 1) < MAX_CUBE
        && cube_owner(table).map_or(true, |owner| owner == player)
}

/// The steps `player` may take now with the dice left.
pub fn legal_steps(table: &Table, player: PlayerId) -> Vec<Step> {
    board(table).legal_steps(side_of(table, player), &meta_dice(table, DICE_LEFT))
}

/// The actions offered to `player` (empty unless they are active).
pub fn available_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    if !table.is_active(player) {
        return Vec::new();
    }
    match phase(table) {
        Phase::Roll => {
            let mut actions = vec![AvailableAction::confirm(button(ROLL, "Roll"), "Roll the dice")];
            if may_double(table, player) {
                let label = format!("Double to {}", meta_u64(table, CUBE, 1) * 2);
                actions.push(AvailableAction::confirm(button(DOUBLE, &label), label));
            }
            actions
        }
        Phase::Double => vec![
            AvailableAction::confirm(button(TAKE, "Take"), format!("Take the cube at {}", meta_u64(table, CUBE, 1) * 2)),
            AvailableAction::confirm(button(DROP, "Drop"), "Drop: concede the game at the current stake"),
        ],
        Phase::Move => moving_actions(table, player),
        Phase::Over => Vec::new(),
    }
}

fn moving_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    let side = side_of(table, player);
    let steps = legal_steps(table, player);
    if steps.is_empty() {
        return vec![AvailableAction::confirm(button(END_TURN, "End turn"), "End the turn")];
    }
    match selected(table) {
        None => {
            let mut sources: Vec<usize> = steps.iter().map(|s| s.from).collect();
            sources.dedup();
            sources
                .into_iter()
                .map(|from| {
                    let space = space_of(side, from);
                    let top = table.pieces(&space).len() - 1;
                    AvailableAction::choice(Action::piece_click(space, top), format!("Pick up a checker from {}", name(from)))
                })
                .collect()
        }
        Some(space) => {
            let from = point_of(side, &space).expect("the selected space is the mover's");
            let mine: Vec<Step> = steps.into_iter().filter(|s| s.from == from).collect();
            let mut actions = Vec::new();
            for step in &mine {
                let to = step.to();
                let label = format!("Move {}/{} with the {}", name(from), name(to), step.die);
                let same_place = mine.iter().filter(|other| other.to() == to).count();
                let action = if same_place == 1 {
                    Action::space_click(space_of(side, to))
                } else {
                    button(&off_with_id(step.die), &label)
                };
                actions.push(AvailableAction::choice(action, label));
            }
            let top = table.pieces(&space).len() - 1;
            actions.push(AvailableAction::cancel(Action::piece_click(space, top), "Put the checker back down"));
            actions
        }
    }
}

/// A point in move notation: `"13"`, `"bar"`, `"off"`.
fn name(point: usize) -> String {
    match point {
        BAR => "bar".to_string(),
        OFF => "off".to_string(),
        n => n.to_string(),
    }
}

/// Carries out `action` by `player`, which the host checked was offered.
///
/// Panics on an action backgammon never offers.
pub fn apply_action(table: &mut Table, player: PlayerId, action: &Action, rng: &mut Rng) {
    match (phase(table), action) {
        (Phase::Roll, Action::ButtonClick { button }) if button.id == ROLL => roll(table, player, rng),
        (Phase::Roll, Action::ButtonClick { button }) if button.id == DOUBLE => offer_double(table, player),
        (Phase::Double, Action::ButtonClick { button }) if button.id == TAKE => take(table, player),
        (Phase::Double, Action::ButtonClick { button }) if button.id == DROP => drop_cube(table, player, rng),
        (Phase::Move, Action::ButtonClick { button }) if button.id == END_TURN => end_turn(table, player),
        (Phase::Move, Action::PieceClick { space_id, .. }) => match selected(table) {
            None => {
                table.set_meta(SELECTED, space_id.as_str());
                table.allow_undo();
            }
            Some(_) => {
                table.set_meta(SELECTED, Value::Null);
                table.allow_undo();
            }
        },
        (Phase::Move, Action::SpaceClick { space_id }) => {
            let side = side_of(table, player);
            let to = point_of(side, space_id).unwrap_or_else(|| panic!("no destination {:?}", space_id));
            let step = picked_steps(table, player).into_iter().find(|s| s.to() == to).expect("an offered destination");
            move_checker(table, player, step, rng);
        }
        (Phase::Move, Action::ButtonClick { button }) => {
            let die: u8 = button.id.strip_prefix("off-").and_then(|d| d.parse().ok()).expect("an off-<die> button");
            let step = picked_steps(table, player).into_iter().find(|s| s.die == die).expect("an offered die");
            move_checker(table, player, step, rng);
        }
        (_, other) => panic!("backgammon does not offer {:?} now", other),
    }
}

/// The legal steps of the checker picked up.
fn picked_steps(table: &Table, player: PlayerId) -> Vec<Step> {
    let side = side_of(table, player);
    let space = selected(table).expect("a checker is picked up");
    let from = point_of(side, &space).expect("the selected space is the mover's");
    legal_steps(table, player).into_iter().filter(|s| s.from == from).collect()
}

/// Rolls two dice (logged) and starts moving.
fn roll(table: &mut Table, player: PlayerId, rng: &mut Rng) {
    let who = table.player_name(player);
    let dice = roll_logged(table, rng, &who, 2, 6).values;
    table.set_meta(DICE, json!(dice));
    begin_moving(table, player, crate::board::dice_to_play(dice[0], dice[1]));
}

/// `player` starts moving with `dice`; with no legal step at all the turn
/// passes at once.
pub fn begin_moving(table: &mut Table, player: PlayerId, dice: Vec<u8>) {
    table.set_meta(DICE_LEFT, json!(dice));
    table.set_meta(SELECTED, Value::Null);
    set_phase(table, Phase::Move);
    table.set_active_players(vec![player]);
    if legal_steps(table, player).is_empty() {
        table.log(LogEntry::new(format!("{} cannot move", table.player_name(player))));
        end_turn(table, player);
    }
}

/// Moves the picked-up checker by one die: a hit blot goes to the bar, the
/// die is used up. Bearing off the fifteenth checker wins the game.
fn move_checker(table: &mut Table, player: PlayerId, step: Step, rng: &mut Rng) {
    let side = side_of(table, player);
    let mut after = board(table);
    let hit = after.apply(side, step);
    let from = space_of(side, step.from);
    let to = space_of(side, step.to());
    if hit {
        let bar = space_of(side.opponent(), BAR);
        table.move_piece(&to, 0, &bar);
    }
    let top = table.pieces(&from).len() - 1;
    table.move_piece(&from, top, &to);
    let left = without_one(&meta_dice(table, DICE_LEFT), step.die);
    table.set_meta(DICE_LEFT, json!(left));
    table.set_meta(SELECTED, Value::Null);
    let text = format!(
        "{} {}/{}{}",
        table.player_name(player),
        name(step.from),
        name(step.to()),
        if hit { "*" } else { "" }
    );
    table.log(LogEntry::new(text));
    if after.borne_off(side) == CHECKERS {
        bore_off_all(table, side, &after, rng);
    } else {
        table.allow_undo();
    }
}

/// Ends the turn: the opponent is to double or roll.
fn end_turn(table: &mut Table, player: PlayerId) {
    let next = table.seat_after(player, 1);
    table.set_meta(DICE_LEFT, json!([]));
    table.set_meta(SELECTED, Value::Null);
    set_phase(table, Phase::Roll);
    table.set_active_players(vec![next]);
}

/// Offers a double: the opponent must take or drop.
fn offer_double(table: &mut Table, player: PlayerId) {
    let next = table.seat_after(player, 1);
    set_phase(table, Phase::Double);
    table.set_active_players(vec![next]);
    let value = meta_u64(table, CUBE, 1) * 2;
    table.log(LogEntry::new(format!("{} doubles to {}", table.player_name(player), value)));
}

/// Takes the double: the cube doubles and is the taker's; the doubler rolls.
fn take(table: &mut Table, player: PlayerId) {
    let value = meta_u64(table, CUBE, 1) * 2;
    table.set_meta(CUBE, json!(value));
    table.set_meta(CUBE_OWNER, json!(player));
    let doubler = table.seat_after(player, 1);
    set_phase(table, Phase::Roll);
    table.set_active_players(vec![doubler]);
    table.log(LogEntry::new(format!("{} takes; the cube is at {}", table.player_name(player), value)));
}

/// Drops the double: the doubler wins the game at the cube's value before the double.
fn drop_cube(table: &mut Table, player: PlayerId, rng: &mut Rng) {
    let doubler = table.seat_after(player, 1);
    let points = meta_u64(table, CUBE, 1);
    table.log(LogEntry::new(format!("{} drops", table.player_name(player))));
    end_game(table, doubler, points, "by a dropped double", rng);
}
