//! A round: gather and deal, pass (or not), thirteen tricks, then the count.

use tablehost_sdk::face_down::{self, turn_face_down};
use tablehost_sdk::{json, LogEntry, PlayerId, Rng, Table, Value};

use crate::card::{Card, TWO_OF_CLUBS};
use crate::layout::{
    cards_in, hand_of, points_taken, round_number, score_of, set_phase, taken_by, target_score, Phase, DECK,
    HEARTS_BROKEN, PASS_DIRECTION, PLAYED_BY, ROUND, SCORE,
};
use crate::passing::{current_direction, Direction};

/// Cards dealt to each player.
pub const HAND_SIZE: usize = 13;
/// All the penalty points of a round: taking every one of them is shooting the moon.
pub const ALL_POINTS: u32 = 26;

/// Starts the next round: every card back into the deck face down, thirteen
/// each dealt at random, then the pass (or, in a no-pass round, the lead).
pub fn start_round(table: &mut Table, rng: &mut Rng) {
    let round = round_number(table) + 1;
    table.set_meta(ROUND, json!(round));
    table.set_meta(HEARTS_BROKEN, false);
    gather(table);
    deal(table, rng);
    let direction = current_direction(table);
    table.set_meta(PASS_DIRECTION, direction.name());
    table.log(LogEntry::new(format!(
        "Round {}: the pass is {}",
        round,
        direction.name()
    )));
    if direction == Direction::Hold {
        start_play(table);
    } else {
        set_phase(table, Phase::Passing);
        table.set_active_players(table.players());
    }
}

/// Turns every taken card face down again and returns it to the deck.
fn gather(table: &mut Table) {
    for player in table.players() {
        let pile = taken_by(player);
        while !cards_in(table, &pile).is_empty() {
            turn_face_down(table, &pile, 0);
            table.set_piece_public_state(&pile, 0, PLAYED_BY, Value::Null);
            table.move_piece(&pile, 0, DECK);
        }
    }
}

/// Deals thirteen cards to each player, one at a time in seat order, each
/// from a random position of the deck (a collection shows no order, so the
/// random positions are what make the deal random).
fn deal(table: &mut Table, rng: &mut Rng) {
    let hands: Vec<String> = table.players().into_iter().map(hand_of).collect();
    face_down::deal(table, rng, DECK, &hands, HAND_SIZE);
}

/// Play begins: the holder of the 2♣ leads.
pub fn start_play(table: &mut Table) {
    set_phase(table, Phase::Playing);
    let leader = holder_of(table, TWO_OF_CLUBS).expect("the 2C was dealt");
    table.set_active_players(vec![leader]);
    table.log(LogEntry::new(format!(
        "{} leads the first trick",
        table.player_name(leader)
    )));
}

/// Who holds `card` in hand, if anyone.
pub fn holder_of(table: &Table, card: Card) -> Option<PlayerId> {
    table
        .players()
        .into_iter()
        .find(|&player| cards_in(table, &hand_of(player)).iter().any(|(_, held)| *held == card))
}

/// Each player's penalty points for the round just played.
///
/// Rule: a heart is 1 point and the Q♠ 13; a player who took all 26
/// ("shot the moon") scores 0 and every other player 26 instead.
pub fn round_points(taken: &[(PlayerId, u32)]) -> Vec<(PlayerId, u32)> {
    let shooter = taken
        .iter()
        .find(|(_, points)| *points == ALL_POINTS)
        .map(|(player, _)| *player);
    match shooter {
        Some(moon) => taken
            .iter()
            .map(|(p, _)| (*p, if *p == moon { 0 } else { ALL_POINTS }))
            .collect(),
        None => taken.to_vec(),
    }
}

/// Ends the round after the thirteenth trick: adds the round's points to the
/// scores, then ends the game if anyone has reached the target score (100
/// unless option `target_score` says otherwise), else deals again.
pub fn end_round(table: &mut Table, rng: &mut Rng) {
    let taken: Vec<(PlayerId, u32)> = table
        .players()
        .into_iter()
        .map(|p| (p, points_taken(table, p)))
        .collect();
    let mut summary = Vec::new();
    for (player, points) in round_points(&taken) {
        let total = score_of(table, player) + points;
        table.set_player_public_state(player, SCORE, json!(total));
        summary.push(format!("{} +{} = {}", table.player_name(player), points, total));
    }
    if let Some((moon, _)) = taken.iter().find(|(_, points)| *points == ALL_POINTS) {
        table.log(LogEntry::new(format!("{} shot the moon", table.player_name(*moon))));
    }
    table.log(LogEntry::new(format!("End of round: {}", summary.join(", "))));
    if is_game_end(table) {
        set_phase(table, Phase::Over);
        table.set_active_players(Vec::new());
        let line = format!("Someone reached {}: the lowest score wins", target_score(table));
        table.log(LogEntry::new(line));
    } else {
        start_round(table, rng);
    }
}

/// Rule: the game ends when, at the end of a round, someone has the target
/// score (100 by default) or more.
pub fn is_game_end(table: &Table) -> bool {
    table
        .players()
        .into_iter()
        .any(|player| score_of(table, player) >= target_score(table))
}
