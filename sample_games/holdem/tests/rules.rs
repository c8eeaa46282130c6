//! The rules of hold'em at the table, each test one rule, played the way
//! the host plays (`play`) from a started game.

use holdem::betting::Street;
use holdem::hand::BUTTON;
use holdem::layout::{
    self, config, hole_of, BOARD, CHIPS, DECK, HAND, HAND_LIMIT, PHASE, STARTING_STACK, STATUS,
};
use holdem::offers::{CALL, CHECK, FOLD};
use holdem::Holdem;
use tablehost_sdk::{json, play, Action, Game, Options, Player, PlayerId, Rng, State, Table, Value};

/// A game of `players` seats with options changed from their defaults, after `prepare`.
fn start_with(players: u32, options: &[(&str, u64)], seed: u64) -> Table {
    let ids: Vec<PlayerId> = (1..=players).collect();
    let mut cfg = config(&ids, &Options::default());
    for (key, value) in options {
        cfg.meta_data.insert(key.to_string(), json!(value));
    }
    let state = State {
        active_player_ids: ids.clone(),
        players: ids
            .iter()
            .map(|&player_id| Player { player_id, username: format!("p{}", player_id), ..Player::default() })
            .collect(),
        spaces: cfg.spaces,
        meta_data: cfg.meta_data,
        log: Vec::new(),
    };
    let mut table = Table::new(state);
    Holdem::prepare(&mut table, &mut Rng::new(seed));
    table.take_patches();
    table
}

fn press(table: &mut Table, id: &str) {
    let player = table.active_players()[0];
    let offered = Holdem::available_actions(table, player);
    let action = offered
        .iter()
        .map(|o| o.action.clone())
        .find(|a| matches!(a, Action::ButtonClick { button } if button.id == id || (id == "allin" && button.label.starts_with("All in"))))
        .unwrap_or_else(|| panic!("{} is not offered: {:?}", id, offered));
    play::<Holdem>(table, player, &action, 7);
}

fn chips(table: &Table, player: PlayerId) -> u64 {
    table.player(player).public(CHIPS).and_then(Value::as_u64).unwrap()
}

#[test]
fn each_player_gets_two_hidden_hole_cards_and_the_blinds_are_posted() {
    let table = start_with(4, &[], 1);
    for p in 1..=4 {
        let hole = table.space(&hole_of(p));
        assert_eq!(hole.owner, Some(p));
        assert_eq!(hole.pieces.len(), 2);
        assert!(hole.pieces.iter().all(|piece| piece.public_kind == "back" && piece.private_kind.is_some()));
    }
    assert_eq!(table.pieces(DECK).len(), 44);
    let betting = layout::betting(&table);
    let (small, big) = betting.blind_seats();
    assert_eq!((betting.seats[small].bet, betting.seats[big].bet), (5, 10));
    assert_eq!(table.active_players(), &[betting.seats[betting.after(big)].player]);
}

#[test]
fn the_button_moves_left_each_hand() {
    let mut table = start_with(3, &[], 2);
    let first = table.meta(BUTTON).cloned().unwrap().as_u64().unwrap() as u32;
    // Everyone folds to the big blind.
    press(&mut table, FOLD);
    press(&mut table, FOLD);
    assert_eq!(table.meta(HAND), Some(&json!(2)));
    let second = table.meta(BUTTON).cloned().unwrap().as_u64().unwrap() as u32;
    assert_eq!(second, first % 3 + 1);
}

#[test]
fn a_hand_won_by_folds_shows_nothing_and_pays_the_blinds() {
    let mut table = start_with(2, &[], 3);
    let betting = layout::betting(&table);
    let (small, big) = betting.blind_seats();
    let (sb, bb) = (betting.seats[small].player, betting.seats[big].player);
    let played = {
        let player = table.active_players()[0];
        assert_eq!(player, sb, "heads up the button (small blind) acts first");
        let fold = Holdem::available_actions(&table, player)
            .into_iter()
            .find(|o| matches!(&o.action, Action::ButtonClick { button } if button.id == FOLD))
            .unwrap();
        play::<Holdem>(&mut table, player, &fold.action, 1)
    };
    assert_eq!((layout::chips_of(&table, sb), layout::chips_of(&table, bb)), (995, 1005));
    let shown = played.patches.iter().any(|p| {
        matches!(p, tablehost_sdk::Patch::SetPublicKind { space_id, .. } if space_id.starts_with("hole-"))
    });
    assert!(!shown, "an uncontested pot shows no cards");
}

#[test]
fn checking_down_deals_flop_turn_and_river_face_up() {
    let mut table = start_with(2, &[], 4);
    press(&mut table, CALL);
    press(&mut table, CHECK);
    assert_eq!(layout::betting(&table).street, Street::Flop);
    assert_eq!(table.pieces(BOARD).len(), 3);
    assert!(table.pieces(BOARD).iter().all(|p| p.private_kind.is_none() && p.public_kind != "back"));
    press(&mut table, CHECK);
    press(&mut table, CHECK);
    assert_eq!(table.pieces(BOARD).len(), 4);
    press(&mut table, CHECK);
    press(&mut table, CHECK);
    assert_eq!(table.pieces(BOARD).len(), 5);
    press(&mut table, CHECK);
    press(&mut table, CHECK);
    // The showdown paid the pot and dealt hand 2.
    assert_eq!(table.meta(HAND), Some(&json!(2)));
    assert_eq!(chips(&table, 1) + chips(&table, 2), 2000 - 15);
}

#[test]
fn all_in_and_call_runs_the_board_out_and_busts_the_loser_or_splits() {
    for seed in 0..20 {
        let mut table = start_with(2, &[], seed);
        press(&mut table, "allin");
        press(&mut table, CALL);
        let stacks = (chips(&table, 1), chips(&table, 2));
        let over = Holdem::is_game_over(&table, &Holdem::scores(&table));
        if over {
            assert!(stacks == (2000, 0) || stacks == (0, 2000));
            assert_eq!(table.meta(PHASE), Some(&json!("over")));
            assert!(table.active_players().is_empty());
            let loser = if stacks.0 == 0 { 1 } else { 2 };
            assert_eq!(table.player(loser).public(STATUS), Some(&json!("out")));
        } else {
            // A split pot: both keep their stacks, and hand 2 is dealt.
            assert_eq!(table.meta(HAND), Some(&json!(2)));
        }
    }
}

#[test]
fn the_hand_limit_ends_the_game_with_most_chips_winning() {
    let mut table = start_with(3, &[(HAND_LIMIT, 2), (STARTING_STACK, 500)], 5);
    press(&mut table, FOLD);
    press(&mut table, FOLD);
    assert!(!Holdem::is_game_over(&table, &Holdem::scores(&table)));
    press(&mut table, FOLD);
    press(&mut table, FOLD);
    assert!(Holdem::is_game_over(&table, &Holdem::scores(&table)));
    let scores = Holdem::scores(&table);
    let total: f64 = scores.values().map(|s| s.public_points[0]).sum();
    assert_eq!(total, 1500.0);
    assert!(scores.values().any(|s| s.public_points[0] > 500.0));
}
