//! The rules of hearts, each test one rule, played the way the host plays
//! (`new_match` + `play`) from dealt or hand-built positions.

use hearts::card::{Card, TWO_OF_CLUBS};
use hearts::layout::{
    card_of, cards_in, face_down, hand_of, pass_pile_of, taken_by, BACK, DECK, HEARTS_BROKEN, TARGET_SCORE,
    PASS_DIRECTION, PHASE, PLAYED_BY, ROUND, SCORE, TRICK,
};
use hearts::passing::{pass_action, receiver_of};
use hearts::round::round_points;
use hearts::Hearts;
use tablehost_sdk::{json, new_match, play, Action, Game, Intent, Piece, ResultRule, Rng, Table};

const ANN: u32 = 1;
const BOB: u32 = 2;
const CAT: u32 = 3;
const DAN: u32 = 4;
const SEATS: [u32; 4] = [ANN, BOB, CAT, DAN];

fn fresh(seed: u64) -> Table {
    new_match::<Hearts>(&SEATS, seed)
}

/// A table in the playing phase of round `round`, set by hand: `hands[i]` is
/// the hand of seat `i` ("2C QS 10H"), `trick` the cards played so far with
/// who played them, `taken` each seat's taken cards. Cards named nowhere wait
/// in the deck, out of play.
struct Position<'a> {
    hands: [&'a str; 4],
    trick: &'a [(u32, &'a str)],
    taken: [&'a str; 4],
    round: u64,
    hearts_broken: bool,
    active: u32,
}

impl Position<'_> {
    fn table(&self) -> Table {
        let mut state = fresh(0).into_state();
        let mut named = Vec::new();
        for space in state.spaces.iter_mut() {
            space.pieces.clear();
        }
        let mut put = |state: &mut tablehost_sdk::State, space: String, piece: Piece, card: Card| {
            named.push(card);
            state
                .spaces
                .iter_mut()
                .find(|s| s.space_id == space)
                .unwrap()
                .pieces
                .push(piece);
        };
        for (seat, &player) in SEATS.iter().enumerate() {
            for card in cards(self.hands[seat]) {
                put(&mut state, hand_of(player), face_down(card), card);
            }
            for card in cards(self.taken[seat]) {
                put(&mut state, taken_by(player), face_up(card, player), card);
            }
        }
        for &(player, face) in self.trick {
            let card = Card::parse(face).unwrap();
            put(&mut state, TRICK.to_string(), face_up(card, player), card);
        }
        let deck = state.spaces.iter_mut().find(|s| s.space_id == DECK).unwrap();
        deck.pieces = Card::deck()
            .into_iter()
            .filter(|c| !named.contains(c))
            .map(face_down)
            .collect();
        state.meta_data.insert(PHASE.to_string(), json!("playing"));
        state.meta_data.insert(ROUND.to_string(), json!(self.round));
        state
            .meta_data
            .insert(HEARTS_BROKEN.to_string(), json!(self.hearts_broken));
        state.active_player_ids = vec![self.active];
        Table::new(state)
    }
}

fn cards(faces: &str) -> Vec<Card> {
    faces
        .split_whitespace()
        .map(|face| Card::parse(face).unwrap())
        .collect()
}

fn face_up(card: Card, played_by: u32) -> Piece {
    Piece::new(card.name()).with_public(PLAYED_BY, played_by)
}

/// The faces `player` may play now.
fn playable(table: &Table, player: u32) -> Vec<String> {
    Hearts::available_actions(table, player)
        .into_iter()
        .map(|offered| match offered.action {
            Action::PieceClick { space_id, index } => card_of(table.piece(&space_id, index)).unwrap().name(),
            other => panic!("a card play is a piece click, not {:?}", other),
        })
        .collect()
}

/// Plays the card `face` from `player`'s hand.
fn play_card(table: &mut Table, player: u32, face: &str) {
    let index = cards_in(table, &hand_of(player))
        .into_iter()
        .find(|(_, c)| c.name() == face)
        .unwrap()
        .0;
    play::<Hearts>(table, player, &Action::piece_click(hand_of(player), index), 7);
}

fn scores(table: &Table) -> Vec<f64> {
    Hearts::scores(table).values().map(|s| s.public_points[0]).collect()
}

/// Every player selects their first three cards and passes them.
fn everyone_passes(table: &mut Table) -> Vec<Vec<Card>> {
    let mut chosen = Vec::new();
    for player in SEATS {
        let mine: Vec<Card> = cards_in(table, &hand_of(player))
            .into_iter()
            .take(3)
            .map(|(_, c)| c)
            .collect();
        for _ in 0..3 {
            play::<Hearts>(table, player, &Action::piece_click(hand_of(player), 0), 0);
        }
        play::<Hearts>(table, player, &pass_action(), 0);
        chosen.push(mine);
    }
    chosen
}

#[test]
fn each_round_deals_thirteen_face_down_cards_to_each_player() {
    let table = fresh(3);
    for player in SEATS {
        let hand = table.pieces(&hand_of(player));
        assert_eq!(hand.len(), 13);
        assert!(hand.iter().all(|p| p.public_kind == BACK && p.private_kind.is_some()));
    }
    assert!(table.pieces(DECK).is_empty());
    assert_eq!(table.meta(ROUND), Some(&json!(1)));
    assert_eq!(table.meta(PHASE), Some(&json!("passing")));
    assert_eq!(Hearts::metadata().result, ResultRule::LowestScore, "the host ranks the lowest score first");
    assert_eq!(table.options().integer(TARGET_SCORE), 100, "the target score defaults to 100");
}

#[test]
fn passing_goes_left_right_across_then_none() {
    let mut table = fresh(0);
    assert_eq!(table.meta(PASS_DIRECTION), Some(&json!("left")));
    let expected = [
        (1, BOB, "left"),
        (2, DAN, "right"),
        (3, CAT, "across"),
        (4, ANN, "none"),
        (5, BOB, "left"),
    ];
    for (round, receiver, name) in expected {
        table.set_meta(ROUND, json!(round));
        assert_eq!(receiver_of(&table, ANN), receiver, "round {}", round);
        assert_eq!(hearts::passing::current_direction(&table).name(), name);
    }
}

#[test]
fn all_four_choose_at_once() {
    let table = fresh(0);
    assert_eq!(table.active_players(), &SEATS);
    for player in SEATS {
        let offered = Hearts::available_actions(&table, player);
        assert_eq!(offered.len(), 13, "one selection per card in hand");
        assert!(offered.iter().all(|a| a.intent == Intent::Choice));
    }
}

#[test]
fn selecting_is_undoable_and_withdrawing_is_a_cancel() {
    let mut table = fresh(0);
    let card = card_of(table.piece(&hand_of(ANN), 4)).unwrap();
    let selected = play::<Hearts>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 4), 0);
    assert!(selected.allow_undo);
    assert_eq!(cards_in(&table, &pass_pile_of(ANN)), vec![(0, card)]);
    assert_eq!(
        table.space(&pass_pile_of(ANN)).owner,
        Some(ANN),
        "only ANN sees what she chose"
    );

    let offered = Hearts::available_actions(&table, ANN);
    let withdraw = offered.iter().find(|a| a.intent == Intent::Cancel).unwrap();
    assert_eq!(withdraw.action, Action::piece_click(pass_pile_of(ANN), 0));
    let withdrawn = play::<Hearts>(&mut table, ANN, &withdraw.action, 0);
    assert!(withdrawn.allow_undo);
    assert_eq!(table.pieces(&hand_of(ANN)).len(), 13);
}

#[test]
fn the_pass_is_offered_only_with_three_chosen_and_cannot_be_undone() {
    let mut table = fresh(0);
    for chosen in 1..=3 {
        assert!(!Hearts::available_actions(&table, ANN)
            .iter()
            .any(|a| a.intent == Intent::Confirm));
        play::<Hearts>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 0), 0);
        assert_eq!(table.pieces(&pass_pile_of(ANN)).len(), chosen);
    }
    let offered = Hearts::available_actions(&table, ANN);
    assert!(!offered.iter().any(|a| a.intent == Intent::Choice), "no fourth card");
    let confirm: Vec<_> = offered.iter().filter(|a| a.intent == Intent::Confirm).collect();
    assert_eq!(confirm.len(), 1);
    let passed = play::<Hearts>(&mut table, ANN, &confirm[0].action, 0);
    assert!(!passed.allow_undo);
    assert_eq!(table.active_players(), &[BOB, CAT, DAN], "ANN waits for the others");
    assert_eq!(
        table.pieces(&pass_pile_of(ANN)).len(),
        3,
        "nothing moves before everyone has passed"
    );
}

#[test]
fn once_all_have_passed_the_cards_change_hands_and_each_is_told_privately() {
    let mut table = fresh(5);
    let chosen = everyone_passes(&mut table);
    for (seat, &player) in SEATS.iter().enumerate() {
        let receiver = SEATS[(seat + 1) % 4];
        let hand: Vec<Card> = cards_in(&table, &hand_of(receiver))
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        assert!(
            chosen[seat].iter().all(|c| hand.contains(c)),
            "{}'s cards reached {}",
            player,
            receiver
        );
        assert_eq!(hand.len(), 13);
        assert!(table.pieces(&pass_pile_of(player)).is_empty());
    }
    let exchange = table
        .state()
        .log
        .iter()
        .find(|e| e.text.starts_with("Everyone passed"))
        .unwrap();
    assert_eq!(exchange.text, "Everyone passed three cards left");
    let faces: Vec<String> = chosen[0].iter().map(|c| c.name()).collect();
    let told_bob = &exchange.for_player[&BOB.to_string()];
    assert!(
        faces.iter().all(|face| told_bob.contains(face.as_str())),
        "{}",
        told_bob
    );
    assert!(told_bob.ends_with("from player-1"));
    assert_eq!(exchange.for_player.len(), 4);
}

#[test]
fn the_two_of_clubs_leads_the_first_trick() {
    let mut table = fresh(11);
    everyone_passes(&mut table);
    assert_eq!(table.meta(PHASE), Some(&json!("playing")));
    let leader = table.active_players()[0];
    assert!(cards_in(&table, &hand_of(leader))
        .iter()
        .any(|(_, c)| *c == TWO_OF_CLUBS));
    assert_eq!(playable(&table, leader), vec!["2C"]);
}

#[test]
fn in_a_no_pass_round_play_starts_at_once() {
    let last_trick = Position {
        hands: ["AS", "2S", "3S", "4S"],
        trick: &[],
        taken: ["", "2H", "", ""],
        round: 3,
        hearts_broken: true,
        active: ANN,
    };
    let mut table = last_trick.table();
    for (player, face) in [(ANN, "AS"), (BOB, "2S"), (CAT, "3S"), (DAN, "4S")] {
        play_card(&mut table, player, face);
    }
    assert_eq!(table.meta(ROUND), Some(&json!(4)));
    assert_eq!(table.meta(PASS_DIRECTION), Some(&json!("none")));
    assert_eq!(table.meta(PHASE), Some(&json!("playing")));
    assert_eq!(table.meta(HEARTS_BROKEN), Some(&json!(false)));
    assert_eq!(playable(&table, table.active_players()[0]), vec!["2C"]);
    assert!(SEATS.iter().all(|&p| table.pieces(&hand_of(p)).len() == 13));
}

#[test]
fn followers_must_follow_suit() {
    let table = Position {
        hands: ["", "2D KD QS 3H", "", ""],
        trick: &[(ANN, "5D")],
        taken: ["2C 3C 4C 5C", "", "", ""],
        round: 1,
        hearts_broken: false,
        active: BOB,
    }
    .table();
    assert_eq!(playable(&table, BOB), vec!["2D", "KD"]);
}

#[test]
fn a_player_void_in_the_suit_led_may_play_anything_after_the_first_trick() {
    let table = Position {
        hands: ["", "QS 3H 4S", "", ""],
        trick: &[(ANN, "5D")],
        taken: ["2C 3C 4C 5C", "", "", ""],
        round: 1,
        hearts_broken: false,
        active: BOB,
    }
    .table();
    assert_eq!(playable(&table, BOB), vec!["QS", "3H", "4S"]);
}

#[test]
fn no_points_on_the_first_trick_unless_nothing_else_can_be_played() {
    let first_trick = |hand| {
        Position {
            hands: ["", hand, "", ""],
            trick: &[(ANN, "2C")],
            taken: ["", "", "", ""],
            round: 1,
            hearts_broken: false,
            active: BOB,
        }
        .table()
    };
    assert_eq!(playable(&first_trick("QS 3H 4D"), BOB), vec!["4D"]);
    assert_eq!(playable(&first_trick("QS 3H 5H"), BOB), vec!["QS", "3H", "5H"]);
    assert_eq!(
        playable(&first_trick("QS 3H 9C"), BOB),
        vec!["9C"],
        "following suit comes first"
    );
}

#[test]
fn hearts_cannot_be_led_until_broken() {
    let lead = |hand, broken| {
        Position {
            hands: [hand, "", "", ""],
            trick: &[],
            taken: ["2C 3C 4C 5C", "", "", ""],
            round: 1,
            hearts_broken: broken,
            active: ANN,
        }
        .table()
    };
    assert_eq!(playable(&lead("3H 4D", false), ANN), vec!["4D"]);
    assert_eq!(
        playable(&lead("3H 5H", false), ANN),
        vec!["3H", "5H"],
        "a hand of only hearts may lead one"
    );
    assert_eq!(playable(&lead("3H 4D", true), ANN), vec!["3H", "4D"]);
}

#[test]
fn a_heart_played_breaks_hearts() {
    let mut table = Position {
        hands: ["", "3H 4S", "", ""],
        trick: &[(ANN, "5D")],
        taken: ["2C 3C 4C 5C", "", "", ""],
        round: 1,
        hearts_broken: false,
        active: BOB,
    }
    .table();
    play_card(&mut table, BOB, "3H");
    assert_eq!(table.meta(HEARTS_BROKEN), Some(&json!(true)));
    let played = table.piece(TRICK, 1);
    assert_eq!(
        (played.public_kind.as_str(), played.private_kind.as_deref()),
        ("3H", None),
        "played face up"
    );
    assert_eq!(table.active_players(), &[CAT]);
}

#[test]
fn playing_a_card_reveals_it_and_cannot_be_undone() {
    let mut table = Position {
        hands: ["5D 6D", "", "", ""],
        trick: &[],
        taken: ["2C 3C 4C 5C", "", "", ""],
        round: 1,
        hearts_broken: false,
        active: ANN,
    }
    .table();
    let played = play::<Hearts>(&mut table, ANN, &Action::piece_click(hand_of(ANN), 0), 0);
    assert!(!played.allow_undo);
}

#[test]
fn the_highest_card_of_the_suit_led_takes_the_trick_and_leads_next() {
    let mut table = Position {
        hands: ["5D 7C", "2D 8C", "AS 9C", "KD 10C"],
        trick: &[],
        taken: ["2C 3C 4C 5C", "", "", ""],
        round: 1,
        hearts_broken: false,
        active: ANN,
    }
    .table();
    for (player, face) in [(ANN, "5D"), (BOB, "2D"), (CAT, "AS"), (DAN, "KD")] {
        play_card(&mut table, player, face);
    }
    assert!(table.pieces(TRICK).is_empty());
    let taken: Vec<String> = cards_in(&table, &taken_by(DAN))
        .into_iter()
        .map(|(_, c)| c.name())
        .collect();
    assert_eq!(taken, vec!["5D", "2D", "AS", "KD"]);
    assert_eq!(table.active_players(), &[DAN]);
}

#[test]
fn a_heart_is_one_point_and_the_queen_of_spades_thirteen() {
    let table = Position {
        hands: ["5D", "", "", ""],
        trick: &[],
        taken: ["2H 3H QS 4C", "", "", ""],
        round: 1,
        hearts_broken: true,
        active: ANN,
    }
    .table();
    assert_eq!(Hearts::scores(&table)[&ANN].public_points, vec![0.0, 15.0]);
}

#[test]
fn taking_all_26_gives_26_to_every_other_player() {
    assert_eq!(
        round_points(&[(1, 26), (2, 0), (3, 0), (4, 0)]),
        vec![(1, 0), (2, 26), (3, 26), (4, 26)]
    );
    assert_eq!(
        round_points(&[(1, 25), (2, 1), (3, 0), (4, 0)]),
        vec![(1, 25), (2, 1), (3, 0), (4, 0)]
    );

    let mut table = Position {
        hands: ["AH", "2S", "3S", "4S"],
        trick: &[],
        taken: ["2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH QS", "", "", ""],
        round: 1,
        hearts_broken: true,
        active: ANN,
    }
    .table();
    for (player, face) in [(ANN, "AH"), (BOB, "2S"), (CAT, "3S"), (DAN, "4S")] {
        play_card(&mut table, player, face);
    }
    assert_eq!(scores(&table), vec![0.0, 26.0, 26.0, 26.0]);
    assert!(table.state().log.iter().any(|e| e.text == "player-1 shot the moon"));
    assert_eq!(table.meta(ROUND), Some(&json!(2)), "the next round is dealt");
}

/// The last trick of round 6, where ANN leads the A♠ and takes BOB's Q♠,
/// played out with ANN starting the round at `ann_before` points.
fn queen_to_ann_in_the_last_trick(ann_before: u32) -> Table {
    let mut table = Position {
        hands: ["AS", "QS", "3S", "4S"],
        trick: &[],
        taken: ["", "", "", ""],
        round: 6,
        hearts_broken: true,
        active: ANN,
    }
    .table();
    table.set_player_public_state(ANN, SCORE, json!(ann_before));
    for (player, face) in [(ANN, "AS"), (BOB, "QS"), (CAT, "3S"), (DAN, "4S")] {
        play_card(&mut table, player, face);
    }
    table
}

#[test]
fn the_game_goes_on_while_everyone_is_below_100() {
    let table = queen_to_ann_in_the_last_trick(86);
    assert_eq!(scores(&table), vec![99.0, 0.0, 0.0, 0.0]);
    assert!(!Hearts::is_game_over(&table, &Hearts::scores(&table)));
    assert_eq!(table.meta(ROUND), Some(&json!(7)));
}

#[test]
fn the_game_ends_when_a_round_ends_with_someone_at_100() {
    let table = queen_to_ann_in_the_last_trick(87);
    assert_eq!(scores(&table), vec![100.0, 0.0, 0.0, 0.0]);
    assert!(Hearts::is_game_over(&table, &Hearts::scores(&table)));
    assert_eq!(table.meta(PHASE), Some(&json!("over")));
    assert!(table.active_players().is_empty());
    assert!(Hearts::available_actions(&table, ANN).is_empty());
}

#[test]
fn deals_differ_between_seeds() {
    let hand = |seed| {
        cards_in(&fresh(seed), &hand_of(ANN))
            .into_iter()
            .map(|(_, c)| c)
            .collect::<Vec<_>>()
    };
    let mut rng = Rng::new(1);
    let seeds: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
    let distinct: std::collections::BTreeSet<Vec<Card>> = seeds.into_iter().map(hand).collect();
    assert!(distinct.len() > 1);
}

#[test]
fn option_target_score_is_the_points_that_end_the_game() {
    let mut options = tablehost_sdk::Map::new();
    options.insert(TARGET_SCORE.to_string(), json!(20));
    let table = tablehost_sdk::new_match_with::<Hearts>(&SEATS, 3, &options);
    assert_eq!(hearts::layout::target_score(&table), 20);
    assert!(Hearts::metadata().resolve(&options).is_ok());
    options.insert(TARGET_SCORE.to_string(), json!(5));
    assert!(Hearts::metadata().resolve(&options).is_err(), "below the declared range");
}
