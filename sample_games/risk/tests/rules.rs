//! The rules of Risk at the table, each test one rule, from positions set by hand.

mod common;

use common::start_with;
use risk::combat::{defence_dice, losses};
use risk::layout::{
    armies, cards_of, hand, is_eliminated, meta_u64, owner, phase, set_armies, set_owner, Owner, Phase, DECK, DISCARD,
    FIRST_PLAYER, REINFORCEMENTS, ROUND, ROUND_LIMIT, SETS_TRADED,
};
use risk::map::{index_of, territories_of, TERRITORIES};
use risk::turn::{self, CANCEL, END_ATTACKS, END_TURN};
use risk::Risk;
use tablehost_sdk::dice::Roll;
use tablehost_sdk::face_down::Face;
use tablehost_sdk::{json, play, Action, AvailableAction, Game, Rng, Table};

fn id(name: &str) -> usize {
    index_of(name).unwrap()
}

/// Players 1 and 2; `mine` are player 1's territories, the rest player 2's;
/// every territory holds `armies`; player 1's turn has just begun (round 1).
fn position(mine: &[usize], armies_each: u32) -> Table {
    let mut table = start_with(2, &[], 1);
    for t in 0..TERRITORIES.len() {
        let who = if mine.contains(&t) { 1 } else { 2 };
        set_owner(&mut table, t, Owner::Player(who));
        set_armies(&mut table, t, armies_each);
    }
    table.set_meta(ROUND, json!(1));
    table.set_meta(FIRST_PLAYER, json!(1));
    turn::start_turn(&mut table, 1);
    table.take_patches();
    table
}

/// Gives `player` the cards named by `faces`, from the deck.
fn give_cards(table: &mut Table, player: u32, faces: &[&str]) {
    for face in faces {
        let index = table.pieces(DECK).iter().position(|p| p.private_kind.as_deref() == Some(face)).unwrap();
        table.move_piece(DECK, index, &cards_of(player));
    }
    table.take_patches();
}

fn offered(table: &Table) -> Vec<AvailableAction> {
    Risk::available_actions(table, table.active_players()[0])
}

fn press(table: &mut Table, id: &str, seed: u64) {
    let player = table.active_players()[0];
    let action = offered(table)
        .into_iter()
        .map(|o| o.action)
        .find(|a| matches!(a, Action::ButtonClick { button } if button.id == id))
        .unwrap_or_else(|| panic!("{} is not offered: {:?}", id, offered(table)));
    play::<Risk>(table, player, &action, seed);
}

fn click(table: &mut Table, territory: usize) {
    let player = table.active_players()[0];
    let action = Action::space_click(TERRITORIES[territory].id);
    assert!(offered(table).iter().any(|o| o.action == action), "{} is not offered", TERRITORIES[territory].id);
    play::<Risk>(table, player, &action, 0);
}

fn place_all(table: &mut Table, on: usize) {
    while phase(table) == Phase::Reinforce {
        click(table, on);
    }
}

#[test]
fn reinforcements_are_territories_over_three_plus_whole_continents() {
    // North America (9) and Australia (4) and three more: 16 / 3 = 5, + 5 + 2.
    let mut mine = territories_of(0);
    mine.extend(territories_of(5));
    mine.extend([id("iceland"), id("ural"), id("egypt")]);
    let table = position(&mine, 1);
    assert_eq!(meta_u64(&table, REINFORCEMENTS), 12);
    assert_eq!(offered(&table).len(), 16, "a click on each own territory");
    // Few territories still give three.
    assert_eq!(meta_u64(&position(&[id("japan")], 1), REINFORCEMENTS), 3);
}

#[test]
fn placing_the_last_reinforcement_starts_the_attack() {
    let mut table = position(&[id("japan"), id("kamchatka")], 1);
    place_all(&mut table, id("japan"));
    assert_eq!(armies(&table, id("japan")), 4);
    assert_eq!(phase(&table), Phase::Attack);
}

#[test]
fn five_cards_force_a_trade_and_set_values_climb() {
    let mut table = position(&[id("japan"), id("kamchatka")], 1);
    give_cards(&mut table, 1, &["alaska-infantry", "greenland-artillery", "ontario-cavalry", "alberta-infantry", "wild-1"]);
    // Reinforcement starts with the cards already in hand: re-open the turn.
    turn::start_turn(&mut table, 1);
    table.take_patches();
    let offers = offered(&table);
    assert!(!offers.is_empty());
    assert!(offers.iter().all(|o| matches!(&o.action, Action::ButtonClick { button } if button.id.starts_with("trade:"))));
    let trade = offers.iter().find(|o| o.label.contains("alaska-infantry, greenland-artillery and ontario-cavalry"));
    let trade = trade.expect("one of each symbol is offered").action.clone();
    play::<Risk>(&mut table, 1, &trade, 0);
    assert_eq!(meta_u64(&table, SETS_TRADED), 1);
    assert_eq!(meta_u64(&table, REINFORCEMENTS), 3 + 4);
    assert_eq!(hand(&table, 1).len(), 2);
    let discard: Vec<&str> = table.pieces(DISCARD).iter().map(|p| p.public_kind.as_str()).collect();
    assert_eq!(discard, vec!["alaska-infantry", "greenland-artillery", "ontario-cavalry"], "traded cards are shown");
    // The sixth set in the game is worth 15, the seventh 20.
    table.set_meta(SETS_TRADED, json!(5));
    give_cards(&mut table, 1, &["peru-cavalry"]);
    let label = offered(&table).into_iter().find(|o| o.label.starts_with("Trade")).unwrap().label;
    assert!(label.ends_with("for 15 armies"), "{}", label);
}

#[test]
fn dice_decide_losses_highest_pairs_defender_wins_ties() {
    let (japan, kamchatka) = (id("japan"), id("kamchatka"));
    for seed in 0..30u64 {
        let mut table = position(&[japan], 1);
        set_armies(&mut table, japan, 10);
        set_armies(&mut table, kamchatka, 5);
        table.take_patches();
        place_all(&mut table, japan);
        click(&mut table, japan);
        click(&mut table, kamchatka);
        let before = (armies(&table, japan), armies(&table, kamchatka));
        press(&mut table, "roll-3", seed);
        let mut rng = Rng::new(seed);
        let attack = Roll::new(&mut rng, 3, 6);
        let defence = Roll::new(&mut rng, defence_dice(5) as usize, 6);
        let (lost, killed) = losses(&attack.values, &defence.values);
        assert_eq!(lost + killed, 2, "two pairs are compared");
        assert_eq!((armies(&table, japan), armies(&table, kamchatka)), (before.0 - lost, before.1 - killed));
        let line = &table.state().log.last().unwrap().text;
        assert!(line.contains(&attack.describe()) && line.contains(&defence.describe()), "{}", line);
    }
}

#[test]
fn a_conquest_moves_in_at_least_the_dice_and_earns_one_card() {
    let (japan, kamchatka) = (id("japan"), id("kamchatka"));
    let mut table = position(&[japan, id("alaska")], 1);
    set_armies(&mut table, japan, 20);
    set_armies(&mut table, kamchatka, 1);
    table.take_patches();
    place_all(&mut table, japan);
    click(&mut table, japan);
    click(&mut table, kamchatka);
    let mut seed = 0;
    while owner(&table, kamchatka) != Owner::Player(1) {
        press(&mut table, "roll-3", seed);
        seed += 1;
    }
    assert_eq!(phase(&table), Phase::MoveIn);
    let moves: Vec<String> = offered(&table)
        .into_iter()
        .map(|o| match o.action {
            Action::ButtonClick { button } => button.id,
            _ => unreachable!(),
        })
        .collect();
    let most = armies(&table, japan) - 1;
    assert_eq!(moves.first().unwrap(), "move-in-3", "at least the three dice rolled");
    assert_eq!(moves.last().unwrap(), &format!("move-in-{}", most));
    press(&mut table, "move-in-3", 0);
    assert_eq!(armies(&table, kamchatka), 3);
    assert_eq!(phase(&table), Phase::Attack);
    press(&mut table, END_ATTACKS, 0);
    press(&mut table, END_TURN, 9);
    assert_eq!(hand(&table, 1).len(), 1, "one card for a turn with a conquest");
    assert_eq!(table.active_players(), &[2]);
    // Player 2 conquers nothing and draws nothing.
    place_all(&mut table, id("china"));
    press(&mut table, END_ATTACKS, 0);
    press(&mut table, END_TURN, 9);
    assert_eq!(hand(&table, 2).len(), 0);
}

#[test]
fn knocking_a_player_out_takes_their_cards() {
    let mut table = start_with(3, &[], 2);
    let (japan, kamchatka) = (id("japan"), id("kamchatka"));
    for t in 0..42 {
        let who = if t == kamchatka { 3 } else if t % 2 == 0 || t == japan { 1 } else { 2 };
        set_owner(&mut table, t, Owner::Player(who));
        set_armies(&mut table, t, if t == japan { 30 } else { 1 });
    }
    table.set_meta(ROUND, json!(1));
    table.set_meta(FIRST_PLAYER, json!(1));
    turn::start_turn(&mut table, 1);
    table.take_patches();
    give_cards(&mut table, 3, &["peru-cavalry", "brazil-artillery"]);
    place_all(&mut table, japan);
    click(&mut table, japan);
    click(&mut table, kamchatka);
    let mut seed = 0;
    while owner(&table, kamchatka) != Owner::Player(1) {
        press(&mut table, "roll-3", seed);
        seed += 1;
    }
    assert!(is_eliminated(&table, 3));
    let held: Vec<String> = hand(&table, 1).iter().map(Face::face).collect();
    assert_eq!(held, vec!["brazil-artillery", "peru-cavalry"]);
    assert!(table.pieces(&cards_of(3)).is_empty());
}

#[test]
fn fortify_follows_a_chain_of_own_territories_and_ends_the_turn() {
    // Player 1 holds Alaska - Northwest Territory - Greenland and, apart, Argentina.
    let chain = [id("alaska"), id("northwest-territory"), id("greenland")];
    let mut mine = chain.to_vec();
    mine.push(id("argentina"));
    let mut table = position(&mine, 1);
    place_all(&mut table, id("alaska"));
    press(&mut table, END_ATTACKS, 0);
    click(&mut table, id("alaska"));
    let targets: Vec<String> = offered(&table)
        .into_iter()
        .filter_map(|o| match o.action {
            Action::SpaceClick { space_id } => Some(space_id),
            _ => None,
        })
        .collect();
    assert_eq!(targets, vec!["northwest-territory", "greenland"]);
    click(&mut table, id("greenland"));
    press(&mut table, CANCEL, 0);
    click(&mut table, id("greenland"));
    press(&mut table, "fortify-2", 0);
    assert_eq!((armies(&table, id("alaska")), armies(&table, id("greenland"))), (2, 3));
    assert_eq!(table.active_players(), &[2], "fortifying ends the turn");
}

#[test]
fn the_round_limit_ends_the_game() {
    let mut table = position(&[id("japan")], 1);
    table.set_meta(ROUND_LIMIT, json!(1));
    place_all(&mut table, id("japan"));
    press(&mut table, END_ATTACKS, 0);
    press(&mut table, END_TURN, 0);
    assert!(!Risk::is_game_over(&table, &Risk::scores(&table)));
    place_all(&mut table, id("china"));
    press(&mut table, END_ATTACKS, 0);
    press(&mut table, END_TURN, 0);
    assert!(Risk::is_game_over(&table, &Risk::scores(&table)));
    assert!(table.active_players().is_empty());
    assert_eq!(Risk::scores(&table)[&2].public_points[0], 41.0);
}

#[test]
fn cards_in_hand_are_hidden_from_the_others() {
    let mut table = position(&[id("japan")], 1);
    give_cards(&mut table, 1, &["peru-cavalry"]);
    let space = table.space(&cards_of(1));
    assert_eq!(space.owner, Some(1));
    assert_eq!(space.pieces[0].public_kind, "back");
}
