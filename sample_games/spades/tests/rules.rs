//! The rules of spades, each test one rule, played the way the host plays
//! (`new_match` + `play`) from dealt or hand-built positions.

use spades::bidding::{bid_button_id, MAX_BID};
use spades::layout::{
    card_of, cards_in, hand_of, taken_by, BID, DEALER, PHASE, ROUND, ROUND_LIMIT, SIDE_BAGS, SIDE_SCORES,
    SPADES_BROKEN, TRICK, TRICKS,
};
use spades::Spades;
use tablehost_sdk::cards::Card;
use tablehost_sdk::face_down::face_down;
use tablehost_sdk::{json, new_match, play, Action, Button, Game, Piece, Table};

const ANN: u32 = 1;
const BOB: u32 = 2;
const CAT: u32 = 3;
const DAN: u32 = 4;
const SEATS: [u32; 4] = [ANN, BOB, CAT, DAN];

fn cards(faces: &str) -> Vec<Card> {
    faces.split_whitespace().map(|face| Card::parse(face).unwrap()).collect()
}

/// A table in the playing phase: `hands[i]` is seat i's hand, `trick` the
/// cards played so far, `bids` and `tricks` per seat. Other cards wait in
/// the deck.
fn position(hands: [&str; 4], trick: &[(u32, &str)], broken: bool, bids: [u8; 4], tricks: [u8; 4], active: u32) -> Table {
    let mut state = new_match::<Spades>(&SEATS, 0).into_state();
    let mut named = Vec::new();
    for space in state.spaces.iter_mut() {
        space.pieces.clear();
    }
    for (seat, &player) in SEATS.iter().enumerate() {
        let hand = state.spaces.iter_mut().find(|s| s.space_id == hand_of(player)).unwrap();
        for card in cards(hands[seat]) {
            named.push(card);
            hand.pieces.push(face_down(&card));
        }
        let public = &mut state.players[seat].public_state;
        public.insert(BID.into(), json!(bids[seat]));
        public.insert(TRICKS.into(), json!(tricks[seat]));
    }
    let played = state.spaces.iter_mut().find(|s| s.space_id == TRICK).unwrap();
    for &(player, face) in trick {
        let card = Card::parse(face).unwrap();
        named.push(card);
        played.pieces.push(Piece::new(card.name()).with_public("played_by", player));
    }
    let deck = state.spaces.iter_mut().find(|s| s.space_id == "deck").unwrap();
    deck.pieces = Card::deck().into_iter().filter(|c| !named.contains(c)).map(|c| face_down(&c)).collect();
    state.meta_data.insert(PHASE.into(), json!("playing"));
    state.meta_data.insert(SPADES_BROKEN.into(), json!(broken));
    state.active_player_ids = vec![active];
    Table::new(state)
}

/// The faces `player` may play now.
fn playable(table: &Table, player: u32) -> Vec<String> {
    let mut faces: Vec<String> = Spades::available_actions(table, player)
        .into_iter()
        .map(|offered| match offered.action {
            Action::PieceClick { space_id, index } => card_of(table.piece(&space_id, index)).unwrap().name(),
            other => panic!("a card play is a piece click, not {:?}", other),
        })
        .collect();
    faces.sort();
    faces
}

fn play_card(table: &mut Table, player: u32, face: &str) {
    let index = cards_in(table, &hand_of(player)).into_iter().find(|(_, c)| c.name() == face).unwrap().0;
    play::<Spades>(table, player, &Action::piece_click(hand_of(player), index), 7);
}

fn bid(table: &mut Table, player: u32, bid: u8) {
    let button = Button::new(bid_button_id(bid), "");
    play::<Spades>(table, player, &Action::button_click(button), 0);
}

#[test]
fn the_deal_gives_thirteen_hidden_cards_each_and_left_of_dealer_bids_first() {
    let table = new_match::<Spades>(&SEATS, 3);
    for player in SEATS {
        let hand = table.pieces(&hand_of(player));
        assert_eq!(hand.len(), 13);
        assert!(hand.iter().all(|p| p.public_kind == "back" && p.private_kind.is_some()));
    }
    assert_eq!(table.meta(DEALER), Some(&json!(ANN)));
    assert_eq!(table.meta(ROUND), Some(&json!(1)));
    assert_eq!(table.active_players(), &[BOB]);
    assert_eq!(Spades::available_actions(&table, BOB).len(), usize::from(MAX_BID) + 1);
    assert!(Spades::available_actions(&table, CAT).is_empty());
}

#[test]
fn bids_go_round_once_then_left_of_dealer_leads() {
    let mut table = new_match::<Spades>(&SEATS, 3);
    for (player, amount) in [(BOB, 3), (CAT, 0), (DAN, 4), (ANN, 2)] {
        assert_eq!(table.active_players(), &[player]);
        bid(&mut table, player, amount);
    }
    assert_eq!(table.meta(PHASE), Some(&json!("playing")));
    assert_eq!(table.player(CAT).public(BID), Some(&json!(0)));
    assert_eq!(table.active_players(), &[BOB]);
}

#[test]
fn spades_cannot_be_led_until_broken() {
    let table = position(["2C", "AS 3H 4D", "5C", "6C"], &[], false, [3; 4], [0; 4], BOB);
    assert_eq!(playable(&table, BOB), vec!["3H", "4D"]);
    let broken = position(["2C", "AS 3H 4D", "5C", "6C"], &[], true, [3; 4], [0; 4], BOB);
    assert_eq!(playable(&broken, BOB), vec!["3H", "4D", "AS"]);
}

#[test]
fn a_hand_of_only_spades_may_lead_one_before_they_are_broken() {
    let table = position(["2C", "AS 3S", "5C", "6C"], &[], false, [3; 4], [0; 4], BOB);
    assert_eq!(playable(&table, BOB), vec!["3S", "AS"]);
}

#[test]
fn followers_follow_suit_else_may_trump_which_breaks_spades() {
    let mut table = position(["2H 9S", "KH 3S 4D", "5C 7S", "6H"], &[], false, [3; 4], [0; 4], ANN);
    play_card(&mut table, ANN, "2H");
    assert_eq!(playable(&table, BOB), vec!["KH"]);
    play_card(&mut table, BOB, "KH");
    assert_eq!(playable(&table, CAT), vec!["5C", "7S"], "void in hearts: anything");
    play_card(&mut table, CAT, "7S");
    assert_eq!(table.meta(SPADES_BROKEN), Some(&json!(true)));
    play_card(&mut table, DAN, "6H");
    // The 7S trumps the KH; Cat takes the trick and leads.
    assert_eq!(table.active_players(), &[CAT]);
    assert_eq!(table.player(CAT).public(TRICKS), Some(&json!(1)));
    assert_eq!(table.pieces(&taken_by(CAT)).len(), 4);
    assert_eq!(playable(&table, CAT), vec!["5C"]);
}

/// Plays out a last trick (one card each) and returns the table after the count.
fn last_trick(bids: [u8; 4], tricks: [u8; 4], hands: [&str; 4], leader: u32) -> Table {
    let mut table = position(hands, &[], true, bids, tricks, leader);
    let mut player = leader;
    for _ in 0..4 {
        let face = cards_in(&table, &hand_of(player))[0].1.name();
        play_card(&mut table, player, &face);
        player = SEATS[(SEATS.iter().position(|&p| p == player).unwrap() + 1) % 4];
    }
    table
}

#[test]
fn a_made_nil_wins_a_hundred_and_a_failed_nil_loses_a_hundred() {
    // Ann (side 0) bid nil and took nothing; Cat bid 4 and takes the last trick for 4.
    // Bob (side 1) bid nil but took 1; Dan bid 5 and took 4: set.
    let table = last_trick([0, 0, 4, 5], [0, 1, 3, 4], ["2C", "3C", "AC", "4C"], ANN);
    assert_eq!(table.meta(SIDE_SCORES), Some(&json!([100 + 40, -100 - 50 + 1])));
    assert_eq!(table.meta(SIDE_BAGS), Some(&json!([0, 1])));
    assert_eq!(table.meta(ROUND), Some(&json!(2)), "the next round is dealt");
}

#[test]
fn overtricks_are_bags_and_the_tenth_bag_costs_a_hundred() {
    // Side 0 bid 2 + 2 and takes 8 + 1 (the last trick) = 9: 5 bags on top of 6 carried.
    let mut table = last_trick([2, 1, 2, 1], [4, 2, 4, 2], ["AC", "3C", "2C", "4C"], ANN);
    let scores = table.meta(SIDE_SCORES).cloned();
    // Recompute with 6 bags carried in: rebuild with the carried bags set.
    let mut state = position(["AC", "3C", "2C", "4C"], &[], true, [2, 1, 2, 1], [4, 2, 4, 2], ANN).into_state();
    state.meta_data.insert(SIDE_BAGS.into(), json!([6, 0]));
    table = Table::new(state);
    for (player, face) in [(ANN, "AC"), (BOB, "3C"), (CAT, "2C"), (DAN, "4C")] {
        play_card(&mut table, player, face);
    }
    // Side 1 bid 1 + 1 and took 4: 20 and 2 bags.
    assert_eq!(scores, Some(json!([45, 22])));
    assert_eq!(table.meta(SIDE_SCORES), Some(&json!([45 - 100, 22])));
    assert_eq!(table.meta(SIDE_BAGS), Some(&json!([1, 2])));
}

#[test]
fn the_game_ends_at_the_round_limit_and_the_higher_side_wins() {
    let mut state = position(["AC", "3C", "2C", "4C"], &[], true, [2, 1, 2, 1], [4, 2, 4, 2], ANN).into_state();
    state.meta_data.insert(ROUND.into(), json!(40));
    state.meta_data.insert(ROUND_LIMIT.into(), json!(40));
    let mut table = Table::new(state);
    for (player, face) in [(ANN, "AC"), (BOB, "3C"), (CAT, "2C"), (DAN, "4C")] {
        play_card(&mut table, player, face);
    }
    assert_eq!(table.meta(PHASE), Some(&json!("over")));
    assert!(Spades::is_game_over(&table, &Spades::scores(&table)));
    assert_eq!(Spades::scores(&table)[&ANN].public_points[0], 45.0);
}

#[test]
fn a_tie_at_the_target_plays_on() {
    // Both sides bid 3 + 3; side 0 takes 7 (61 points), side 1 takes 6 (60).
    // From 450 and 451 that is 511 each: a tie past the target, so a new round is dealt.
    let mut state = position(["AC", "3C", "2C", "4C"], &[], true, [3, 3, 3, 3], [3, 3, 3, 3], ANN).into_state();
    state.meta_data.insert(SIDE_SCORES.into(), json!([450, 451]));
    let mut table = Table::new(state);
    for (player, face) in [(ANN, "AC"), (BOB, "3C"), (CAT, "2C"), (DAN, "4C")] {
        play_card(&mut table, player, face);
    }
    assert_eq!(table.meta(SIDE_SCORES), Some(&json!([511, 511])));
    assert_eq!(table.meta(PHASE), Some(&json!("bidding")));
    assert!(!Spades::is_game_over(&table, &Spades::scores(&table)));
}
