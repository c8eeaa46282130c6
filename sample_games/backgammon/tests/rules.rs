//! The turn, cube and match rules of backgammon, played the way the host
//! plays (`new_match` + `play`). The movement rules (forced moves, bearing
//! off) are tested on the board itself in `src/board.rs`.

use backgammon::board::Side;
use backgammon::layout::{
    board, space_of, CUBE, CUBE_OWNER, DICE_LEFT, MATCH_LENGTH, MATCH_POINTS, PHASE, SELECTED,
};
use backgammon::turn::{DOUBLE, DROP, END_TURN, ROLL, TAKE};
use backgammon::Backgammon;
use tablehost_sdk::{json, new_match, play, Action, Button, Game, Intent, Patch, Piece, Rng, Table};

const WHITE: u32 = 1;
const BLACK: u32 = 2;

fn button(id: &str) -> Action {
    Action::button_click(Button::new(id, ""))
}

/// The offered actions with their intents.
fn offered(table: &Table, player: u32) -> Vec<(Action, Intent)> {
    Backgammon::available_actions(table, player).into_iter().map(|a| (a.action, a.intent)).collect()
}

/// The ids of the buttons offered to `player`, in order.
fn button_ids(table: &Table, player: u32) -> Vec<String> {
    Backgammon::available_actions(table, player)
        .into_iter()
        .filter_map(|a| match a.action {
            Action::ButtonClick { button } => Some(button.id),
            _ => None,
        })
        .collect()
}

/// A table with white to move `dice` and the checkers placed as given (each
/// side in its own numbering: 0 off, 25 bar); everything else as dealt.
fn position(white: &[(usize, usize)], black: &[(usize, usize)], dice: &[u8]) -> Table {
    let mut state = new_match::<Backgammon>(&[WHITE, BLACK], 1).into_state();
    for space in state.spaces.iter_mut() {
        space.pieces.clear();
    }
    for (side, placed) in [(Side::White, white), (Side::Black, black)] {
        for &(point, count) in placed {
            let id = space_of(side, point);
            let space = state.spaces.iter_mut().find(|s| s.space_id == id).unwrap();
            space.pieces.extend((0..count).map(|_| Piece::new(side.name())));
        }
    }
    state.meta_data.insert(PHASE.into(), json!("move"));
    state.meta_data.insert(DICE_LEFT.into(), json!(dice));
    state.meta_data.remove(SELECTED);
    state.active_player_ids = vec![WHITE];
    Table::new(state)
}

#[test]
fn the_opening_roll_starts_the_higher_die_with_both_dice() {
    for seed in 0..20 {
        let table = new_match::<Backgammon>(&[WHITE, BLACK], seed);
        assert_eq!(table.meta(PHASE), Some(&json!("move")));
        let dice = table.meta("dice").unwrap().as_array().unwrap().clone();
        assert_ne!(dice[0], dice[1], "seed {}: the opening roll has no double", seed);
        let starter = if dice[0].as_u64() > dice[1].as_u64() { WHITE } else { BLACK };
        assert_eq!(table.active_players(), &[starter]);
        assert!(table.state().log.iter().any(|line| line.text.starts_with("White rolled")));
    }
}

#[test]
fn a_checker_move_is_pick_up_then_destination_and_both_allow_undo() {
    // White on 13 (5) and 6 (5) only, dice 5-3.
    let mut table = position(&[(13, 5), (6, 5), (0, 5)], &[(13, 15)], &[5, 3]);
    let first = offered(&table, WHITE);
    assert!(first.iter().all(|(_, intent)| *intent == Intent::Choice));
    let pick = Action::piece_click("point-13", 4);
    assert!(first.contains(&(pick.clone(), Intent::Choice)), "{:?}", first);
    let played = play::<Backgammon>(&mut table, WHITE, &pick, 1);
    assert!(played.allow_undo && !played.rng_used);
    assert_eq!(table.meta(SELECTED), Some(&json!("point-13")));
    let targets = offered(&table, WHITE);
    assert!(targets.contains(&(Action::space_click("point-8"), Intent::Choice)), "{:?}", targets);
    assert!(targets.contains(&(Action::space_click("point-10"), Intent::Choice)));
    assert!(targets.contains(&(pick.clone(), Intent::Cancel)));
    let played = play::<Backgammon>(&mut table, WHITE, &Action::space_click("point-8"), 2);
    assert!(played.allow_undo);
    assert_eq!(table.pieces("point-13").len(), 4);
    assert_eq!(table.pieces("point-8").len(), 1);
    assert_eq!(table.meta(DICE_LEFT), Some(&json!([3])));
    // Use the 3, then only ending the turn is left.
    play::<Backgammon>(&mut table, WHITE, &Action::piece_click("point-8", 0), 3);
    play::<Backgammon>(&mut table, WHITE, &Action::space_click("point-5"), 4);
    assert_eq!(button_ids(&table, WHITE), vec![END_TURN]);
    let played = play::<Backgammon>(&mut table, WHITE, &button(END_TURN), 5);
    assert!(!played.allow_undo);
    assert_eq!(table.active_players(), &[BLACK]);
    assert_eq!(table.meta(PHASE), Some(&json!("roll")));
}

#[test]
fn the_roll_draws_randomness_and_is_never_undoable() {
    let mut table = position(&[(13, 15)], &[(13, 15)], &[]);
    table.set_meta(PHASE, "roll");
    let roll = Backgammon::available_actions(&table, WHITE);
    assert_eq!(roll.len(), 2, "roll and double");
    let played = play::<Backgammon>(&mut table, WHITE, &button(ROLL), 99);
    assert!(played.rng_used && !played.allow_undo);
    let rolled = played.patches.iter().any(|p| matches!(p, Patch::Log { entry } if entry.text.contains("rolled")));
    assert!(rolled, "the roll is in the log");
}

#[test]
fn hitting_a_blot_sends_it_to_the_bar_and_it_must_enter_first() {
    // White on 13, black blot on white's 10 (its 15). Dice 3-1.
    let mut table = position(&[(13, 2), (0, 13)], &[(15, 1), (6, 14)], &[3, 1]);
    play::<Backgammon>(&mut table, WHITE, &Action::piece_click("point-13", 1), 1);
    play::<Backgammon>(&mut table, WHITE, &Action::space_click("point-10"), 2);
    assert_eq!(table.pieces("bar-black").len(), 1);
    assert_eq!(table.pieces("point-10")[0].public_kind, "white");
    assert!(table.state().log.last().unwrap().text.ends_with("13/10*"));
    // Black, to move with a checker on the bar, may only pick up the bar checker.
    table.set_active_players(vec![BLACK]);
    table.set_meta(DICE_LEFT, json!([4, 2]));
    let black = offered(&table, BLACK);
    assert_eq!(black, vec![(Action::piece_click("bar-black", 0), Intent::Choice)]);
}

#[test]
fn the_larger_die_bears_off_the_last_checker_and_a_gammon_counts_two() {
    // White's last checker on its 1; black has borne off none. Dice 6-2: only one die
    // can be used, so it must be the 6.
    let mut table = position(&[(1, 1), (0, 14)], &[(13, 15)], &[6, 2]);
    play::<Backgammon>(&mut table, WHITE, &Action::piece_click("point-1", 0), 1);
    let targets = offered(&table, WHITE);
    assert_eq!(targets[0], (Action::space_click("off-white"), Intent::Choice));
    assert_eq!(targets.len(), 2, "off, and putting it back: {:?}", targets);
    play::<Backgammon>(&mut table, WHITE, &Action::space_click("off-white"), 2);
    assert_eq!(table.player(WHITE).public(MATCH_POINTS), Some(&json!(2)));
    assert_eq!(table.meta(PHASE), Some(&json!("over")));
    assert!(Backgammon::is_game_over(&table, &Backgammon::scores(&table)));
}

#[test]
fn two_dice_that_bear_off_the_same_checker_are_offered_as_buttons() {
    // White on 2 and 2 (two checkers), dice 6-5: both bear off a checker from 2, either die.
    let mut table = position(&[(2, 2), (0, 13)], &[(13, 14), (0, 1)], &[6, 5]);
    play::<Backgammon>(&mut table, WHITE, &Action::piece_click("point-2", 1), 1);
    let targets = button_ids(&table, WHITE);
    assert_eq!(targets, vec!["off-5", "off-6"]);
    play::<Backgammon>(&mut table, WHITE, &button("off-5"), 2);
    assert_eq!(table.meta(DICE_LEFT), Some(&json!([6])));
    assert_eq!(table.pieces("off-white").len(), 14);
}

#[test]
fn a_taken_double_doubles_the_cube_and_a_dropped_one_loses_at_its_value() {
    let mut table = position(&[(13, 15)], &[(13, 15)], &[]);
    table.set_meta(PHASE, "roll");
    play::<Backgammon>(&mut table, WHITE, &button(DOUBLE), 1);
    assert_eq!(table.active_players(), &[BLACK]);
    assert_eq!(offered(&table, BLACK).len(), 2);
    play::<Backgammon>(&mut table, BLACK, &button(TAKE), 2);
    assert_eq!(table.meta(CUBE), Some(&json!(2)));
    assert_eq!(table.meta(CUBE_OWNER), Some(&json!(BLACK)));
    assert_eq!(table.active_players(), &[WHITE]);
    // White no longer owns the cube: only rolling is offered.
    assert_eq!(button_ids(&table, WHITE), vec![ROLL]);
    // Black redoubles on its turn; white drops and black wins the cube's 2 points.
    table.set_active_players(vec![BLACK]);
    play::<Backgammon>(&mut table, BLACK, &button(DOUBLE), 3);
    play::<Backgammon>(&mut table, WHITE, &button(DROP), 4);
    assert_eq!(table.player(BLACK).public(MATCH_POINTS), Some(&json!(2)));
    assert_eq!(table.meta(PHASE), Some(&json!("over")));
}

#[test]
fn a_longer_match_plays_game_after_game_with_one_crawford_game() {
    for seed in 0..3 {
        let mut table = new_match::<Backgammon>(&[WHITE, BLACK], seed);
        table.set_meta(MATCH_LENGTH, 5);
        let mut bot = Rng::new(seed);
        let mut games_seen = 1;
        let mut crawford_games = 0;
        while !Backgammon::is_game_over(&table, &Backgammon::scores(&table)) {
            let player = table.active_players()[0];
            let actions = Backgammon::available_actions(&table, player);
            let pick = actions[bot.below(actions.len())].action.clone();
            play::<Backgammon>(&mut table, player, &pick, bot.next_u64());
            let game = table.meta("game_number").and_then(|v| v.as_u64()).unwrap();
            if game != games_seen {
                games_seen = game;
                crawford_games += usize::from(table.meta("crawford_game") == Some(&json!(true)));
            }
        }
        let points: Vec<u64> =
            [WHITE, BLACK].iter().map(|&p| table.player(p).public(MATCH_POINTS).unwrap().as_u64().unwrap()).collect();
        assert!(points.iter().any(|&p| p >= 5), "seed {}: {:?}", seed, points);
        assert!(crawford_games <= 1);
        let position = board(&table);
        assert!(position.borne_off(Side::White) <= 15 && position.borne_off(Side::Black) <= 15);
    }
}
