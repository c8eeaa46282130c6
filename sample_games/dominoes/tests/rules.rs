//! The rules of dominoes, each test one rule, played the way the host plays
//! (`new_match` + `play`) from dealt or hand-built positions.

use dominoes::layout::{hand_of, hand_tiles, tile_of, BACK, BONEYARD, LINE, PASSES_IN_A_ROW, RESULT};
use dominoes::line::End;
use dominoes::round::leader;
use dominoes::tile::Tile;
use dominoes::turn::{pass_action, play_button_id};
use dominoes::Dominoes;
use tablehost_sdk::{json, new_match, play, Action, Button, Game, Intent, Piece, Table};

const ANN: u32 = 1;
const BOB: u32 = 2;
const CAT: u32 = 3;

/// A two- or three-player table set by hand: `hands[i]` is the hand of
/// player `i + 1` ("6-4 1-1"), `line` the tiles of the line left to right as
/// left|right pips ("6|3 3|4"), `boneyard` the tiles left to draw. Tiles named
/// nowhere are out of play.
fn position(hands: &[&str], line: &str, boneyard: &str, active: u32) -> Table {
    let ids: Vec<u32> = (1..=hands.len() as u32).collect();
    let mut state = new_match::<Dominoes>(&ids, 0).into_state();
    for space in state.spaces.iter_mut() {
        space.pieces.clear();
        if space.space_id == BONEYARD {
            space.pieces = tiles(boneyard).into_iter().map(dominoes::layout::face_down).collect();
        } else if space.space_id == LINE {
            space.pieces = line.split_whitespace().map(line_tile).collect();
        }
    }
    for (seat, hand) in hands.iter().enumerate() {
        let id = hand_of(seat as u32 + 1);
        let space = state.spaces.iter_mut().find(|space| space.space_id == id).unwrap();
        space.pieces = tiles(hand).into_iter().map(dominoes::layout::face_down).collect();
    }
    state.active_player_ids = vec![active];
    Table::new(state)
}

fn tiles(faces: &str) -> Vec<Tile> {
    faces
        .split_whitespace()
        .map(|face| Tile::parse(face).unwrap())
        .collect()
}

fn line_tile(pair: &str) -> Piece {
    let (left, right) = pair.split_once('|').unwrap();
    let (left, right): (u8, u8) = (left.parse().unwrap(), right.parse().unwrap());
    Piece::new(Tile::new(left, right).face())
        .with_public("left", left)
        .with_public("right", right)
}

fn line_pairs(table: &Table) -> Vec<String> {
    table
        .pieces(LINE)
        .iter()
        .map(|p| format!("{}|{}", p.public("left").unwrap(), p.public("right").unwrap()))
        .collect()
}

fn actions(table: &Table, player: u32) -> Vec<Action> {
    Dominoes::available_actions(table, player)
        .into_iter()
        .map(|a| a.action)
        .collect()
}

fn points(table: &Table) -> Vec<f64> {
    Dominoes::scores(table).values().map(|s| s.public_points[0]).collect()
}

fn over(table: &Table) -> bool {
    Dominoes::is_game_over(table, &Dominoes::scores(table))
}

#[test]
fn deal_gives_seven_each_to_two_players_and_five_to_three_or_four() {
    for (players, each) in [(2u32, 7usize), (3, 5), (4, 5)] {
        let ids: Vec<u32> = (1..=players).collect();
        let table = new_match::<Dominoes>(&ids, 42);
        for &id in &ids {
            let hand = table.pieces(&hand_of(id));
            assert_eq!(hand.len(), each);
            assert!(hand.iter().all(|p| p.public_kind == BACK && p.private_kind.is_some()));
        }
        assert_eq!(table.pieces(BONEYARD).len(), 28 - each * players as usize);
        assert!(table.pieces(LINE).is_empty());
    }
}

#[test]
fn the_deal_depends_on_the_seed() {
    let hand = |seed| {
        let table = new_match::<Dominoes>(&[ANN, BOB], seed);
        hand_tiles(&table, ANN).into_iter().map(|(_, t)| t).collect::<Vec<_>>()
    };
    let distinct: std::collections::BTreeSet<Vec<Tile>> = (0..8).map(hand).collect();
    assert!(distinct.len() > 1, "eight seeds dealt the same hand");
}

#[test]
#[should_panic(expected = "2 to 4 players")]
fn five_players_are_refused() {
    new_match::<Dominoes>(&[1, 2, 3, 4, 5], 0);
}

#[test]
fn holder_of_the_highest_double_leads_it_and_nothing_else() {
    for seed in 0..40 {
        let table = new_match::<Dominoes>(&[ANN, BOB, CAT], seed);
        let best = |p| {
            hand_tiles(&table, p)
                .into_iter()
                .map(|(_, t)| t.lead_rank())
                .max()
                .unwrap()
        };
        let leader = table.active_players()[0];
        assert!([ANN, BOB, CAT].iter().all(|&p| best(p) <= best(leader)));
        let offered = Dominoes::available_actions(&table, leader);
        assert_eq!(offered.len(), 1, "the lead is forced");
        assert!(offered[0].label.starts_with("Lead "), "{}", offered[0].label);
        match &offered[0].action {
            Action::PieceClick { space_id, index } => {
                assert_eq!(*space_id, hand_of(leader));
                assert_eq!(
                    tile_of(table.piece(space_id, *index)).unwrap().lead_rank(),
                    best(leader)
                );
            }
            other => panic!("lead offered as {:?}", other),
        }
    }
}

#[test]
fn without_doubles_the_highest_tile_leads() {
    let table = position(&["5-4 3-1", "6-5 2-0"], "", "", ANN);
    assert_eq!(leader(&table), BOB);
    let table = position(&["5-4 0-0", "6-5 2-0"], "", "", ANN);
    assert_eq!(leader(&table), ANN, "the double blank beats any plain tile");
}

#[test]
fn the_lead_starts_the_line_and_passes_the_turn() {
    let mut table = position(&["6-6 1-0", "5-5 2-0"], "", "", ANN);
    play::<Dominoes>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 0), 0);
    assert_eq!(line_pairs(&table), vec!["6|6"]);
    assert_eq!(table.piece(LINE, 0).public_kind, "6-6");
    assert_eq!(table.piece(LINE, 0).private_kind, None);
    assert_eq!(table.active_players(), &[BOB]);
}

#[test]
fn a_tile_fitting_both_ends_is_offered_on_each() {
    let table = position(&["6-4 1-1", "2-2"], "6|3 3|4", "", ANN);
    let offered = Dominoes::available_actions(&table, ANN);
    let ids: Vec<String> = offered
        .iter()
        .map(|a| match &a.action {
            Action::ButtonClick { button } => button.id.clone(),
            other => panic!("expected buttons, got {:?}", other),
        })
        .collect();
    assert_eq!(ids, vec![play_button_id(End::Left, 0), play_button_id(End::Right, 0)]);
    assert!(offered.iter().all(|a| a.intent == Intent::Confirm));

    let mut left = table.clone();
    play::<Dominoes>(&mut left, ANN, &offered[0].action, 0);
    assert_eq!(line_pairs(&left), vec!["4|6", "6|3", "3|4"]);

    let mut right = table;
    play::<Dominoes>(&mut right, ANN, &offered[1].action, 0);
    assert_eq!(line_pairs(&right), vec!["6|3", "3|4", "4|6"]);
}

#[test]
fn a_tile_fitting_one_end_is_a_click_on_it() {
    let mut table = position(&["1-1 4-2", "2-2"], "6|3 3|4", "", ANN);
    assert_eq!(actions(&table, ANN), vec![Action::piece_click(hand_of(ANN), 1)]);
    play::<Dominoes>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 1), 0);
    assert_eq!(line_pairs(&table), vec!["6|3", "3|4", "4|2"]);
}

#[test]
fn unable_to_play_the_player_draws_until_able() {
    let mut table = position(&["1-1 2-2", "0-0"], "6|3 3|4", "5-5 4-0", ANN);
    let draws = actions(&table, ANN);
    assert_eq!(
        draws,
        vec![Action::piece_click(BONEYARD, 0), Action::piece_click(BONEYARD, 1)]
    );
    assert!(Dominoes::available_actions(&table, ANN)
        .iter()
        .all(|a| a.intent == Intent::Choice));

    // The host resolves the click to a random tile; here the 5-5, which does not fit.
    let drew = play::<Dominoes>(&mut table, ANN, &Action::piece_click(BONEYARD, 0), 0);
    assert!(!drew.allow_undo, "a draw reveals a tile to the drawer");
    assert_eq!(table.active_players(), &[ANN], "still ANN's turn");
    assert_eq!(actions(&table, ANN), vec![Action::piece_click(BONEYARD, 0)]);
    let line = table.state().log.last().unwrap();
    assert_eq!(line.text, "player-1 drew a tile");
    assert_eq!(line.for_player.get("1").map(String::as_str), Some("You drew 5-5"));

    play::<Dominoes>(&mut table, ANN, &Action::piece_click(BONEYARD, 0), 0);
    assert_eq!(
        actions(&table, ANN),
        vec![Action::piece_click(hand_of(ANN), 3)],
        "the 4-0 fits"
    );
}

#[test]
fn with_the_boneyard_empty_an_unable_player_passes() {
    let mut table = position(&["1-1 2-2", "0-0 4-0", "5-0"], "6|3 3|4", "", ANN);
    let offered = Dominoes::available_actions(&table, ANN);
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].action, pass_action());
    assert_eq!(offered[0].intent, Intent::Confirm);
    play::<Dominoes>(&mut table, ANN, &pass_action(), 0);
    assert_eq!(table.active_players(), &[BOB]);
    assert_eq!(table.space(LINE).public(PASSES_IN_A_ROW), Some(&json!(1)));
    assert!(!over(&table));
}

#[test]
fn a_play_resets_the_pass_count() {
    let mut table = position(&["1-1 2-2", "0-0 4-0"], "6|3 3|4", "", ANN);
    play::<Dominoes>(&mut table, ANN, &pass_action(), 0);
    play::<Dominoes>(&mut table, BOB, &Action::piece_click(hand_of(BOB), 1), 0);
    assert_eq!(table.space(LINE).public(PASSES_IN_A_ROW), Some(&json!(0)));
}

#[test]
fn blocked_round_goes_to_the_fewest_pips_who_scores_the_rest() {
    let mut table = position(&["1-1 2-2", "1-0", "5-5"], "6|3 3|4", "", ANN);
    for player in [ANN, BOB, CAT] {
        assert!(!over(&table));
        play::<Dominoes>(&mut table, player, &pass_action(), 0);
    }
    assert!(over(&table));
    assert_eq!(table.meta(RESULT), Some(&json!({"winner": BOB, "reason": "blocked"})));
    assert_eq!(points(&table), vec![0.0, 16.0, 0.0], "ANN's 6 plus CAT's 10");
    assert!(table.active_players().is_empty());
    let hand = table.pieces(&hand_of(CAT));
    assert_eq!(
        (hand[0].public_kind.as_str(), hand[0].private_kind.as_deref()),
        ("5-5", None),
        "hands are shown"
    );
}

#[test]
fn a_tie_for_fewest_pips_in_a_blocked_round_scores_nobody() {
    let mut table = position(&["2-1", "3-0"], "6|6", "", ANN);
    play::<Dominoes>(&mut table, ANN, &pass_action(), 0);
    play::<Dominoes>(&mut table, BOB, &pass_action(), 0);
    assert_eq!(table.meta(RESULT), Some(&json!({"winner": null, "reason": "blocked"})));
    assert_eq!(points(&table), vec![0.0, 0.0]);
}

#[test]
fn laying_the_last_tile_wins_the_other_hands_pips() {
    let mut table = position(&["4-1", "6-6 0-0", "2-3"], "6|3 3|4", "5-5", ANN);
    play::<Dominoes>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 0), 0);
    assert!(over(&table));
    assert_eq!(table.meta(RESULT), Some(&json!({"winner": ANN, "reason": "domino"})));
    assert_eq!(
        points(&table),
        vec![17.0, 0.0, 0.0],
        "BOB's 12 plus CAT's 5; the boneyard does not count"
    );
    assert!(Dominoes::available_actions(&table, BOB).is_empty());
}

#[test]
fn pips_in_hand_are_private_points_and_public_points_stay_zero_in_play() {
    let table = position(&["6-4 1-1", "2-2"], "6|3 3|4", "", ANN);
    let scores = Dominoes::scores(&table);
    assert_eq!(scores[&ANN].private_points, vec![12.0]);
    assert_eq!(scores[&BOB].private_points, vec![4.0]);
    assert!(scores.values().all(|s| s.public_points == vec![0.0]));
}

#[test]
#[should_panic(expected = "no button")]
fn an_unknown_button_is_refused() {
    let mut table = position(&["6-4 1-1", "2-2"], "6|3 3|4", "", ANN);
    play::<Dominoes>(&mut table, ANN, &Action::button_click(Button::new("cheat", "")), 0);
}

#[test]
fn option_tiles_per_hand_sets_the_deal() {
    let mut options = tablehost_sdk::Map::new();
    options.insert("tiles_per_hand".to_string(), json!(3));
    let table = tablehost_sdk::new_match_with::<Dominoes>(&[ANN, BOB, CAT], 4, &options);
    for player in [ANN, BOB, CAT] {
        assert_eq!(table.pieces(&hand_of(player)).len(), 3);
    }
    assert_eq!(table.pieces(BONEYARD).len(), 28 - 9);
    let standard = new_match::<Dominoes>(&[ANN, BOB], 4);
    assert_eq!(standard.pieces(&hand_of(ANN)).len(), 7, "0 (the default) keeps the standard count");
}
