//! A round: gather and deal, the auction, thirteen tricks, then the count.

use tablehost_sdk::face_down::{self, turn_face_down};
use tablehost_sdk::{json, LogEntry, PlayerId, Rng, Table, Value};

use crate::bidding::{bid_word, dealer};
use crate::layout::{
    bid_of, hand_of, meta_i64, round_number, set_phase, side_pair, side_of, taken_by, tricks_of, Phase, BID,
    DEALER, DECK, DEFAULT_ROUND_LIMIT, DEFAULT_TARGET_SCORE, PLAYED_BY, ROUND, ROUND_LIMIT, SIDE_BAGS, SIDE_SCORES,
    SPADES_BROKEN, TARGET_SCORE, TRICKS,
};
use crate::scoring::{score_side, Partner};

/// Cards dealt to each player.
pub const HAND_SIZE: usize = 13;

/// Starts the next round: the deal passes to the left, every card goes back
/// into the deck face down, thirteen each are dealt at random, bids and
/// tricks are cleared, and the player left of the dealer bids first.
pub fn start_round(table: &mut Table, rng: &mut Rng) {
    let round = round_number(table) + 1;
    let dealer = table.seat_after(dealer(table), 1);
    table.set_meta(ROUND, json!(round));
    table.set_meta(DEALER, json!(dealer));
    table.set_meta(SPADES_BROKEN, false);
    gather(table);
    let hands: Vec<String> = table.players().into_iter().map(hand_of).collect();
    face_down::deal(table, rng, DECK, &hands, HAND_SIZE);
    for player in table.players() {
        table.set_player_public_state(player, BID, Value::Null);
        table.set_player_public_state(player, TRICKS, json!(0));
    }
    set_phase(table, Phase::Bidding);
    let first = table.seat_after(dealer, 1);
    table.set_active_players(vec![first]);
    table.log(LogEntry::new(format!(
        "Round {}: {} deals, {} bids first",
        round,
        table.player_name(dealer),
        table.player_name(first)
    )));
}

/// Turns every taken card face down again and returns it to the deck.
fn gather(table: &mut Table) {
    for player in table.players() {
        let pile = taken_by(player);
        while !table.pieces(&pile).is_empty() {
            turn_face_down(table, &pile, 0);
            table.set_piece_public_state(&pile, 0, PLAYED_BY, Value::Null);
            table.move_piece(&pile, 0, DECK);
        }
    }
}

/// Ends the round after the thirteenth trick: scores both sides, then ends
/// the game or deals again.
pub fn end_round(table: &mut Table, rng: &mut Rng) {
    let players = table.players();
    let mut scores = side_pair(table, SIDE_SCORES);
    let mut bags = side_pair(table, SIDE_BAGS);
    let mut summary = Vec::new();
    for side in 0..2 {
        let partners: Vec<PlayerId> = players.iter().copied().filter(|&p| side_of(table, p) == side).collect();
        let part = |p: PlayerId| Partner { bid: bid_of(table, p).expect("everyone bid"), tricks: tricks_of(table, p) };
        let result = score_side([part(partners[0]), part(partners[1])], bags[side]);
        scores[side] += result.points;
        bags[side] = result.bags;
        let names: Vec<String> = partners
            .iter()
            .map(|&p| format!("{} bid {} took {}", table.player_name(p), bid_word(part(p).bid), part(p).tricks))
            .collect();
        summary.push(format!("{}: {:+} = {}", names.join(", "), result.points, scores[side]));
    }
    table.set_meta(SIDE_SCORES, json!(scores));
    table.set_meta(SIDE_BAGS, json!(bags));
    table.log(LogEntry::new(format!("End of round: {}", summary.join("; "))));
    if is_game_end(table, scores) {
        set_phase(table, Phase::Over);
        table.set_active_players(Vec::new());
        table.log(LogEntry::new("The game is over: the higher score wins".to_string()));
    } else {
        start_round(table, rng);
    }
}

/// Rule: the game ends after a round in which a side reached the target
/// score (500) or the round limit was reached, unless the two sides are
/// tied: then another round is played.
pub fn is_game_end(table: &Table, scores: [i64; 2]) -> bool {
    let target = meta_i64(table, TARGET_SCORE, DEFAULT_TARGET_SCORE);
    let limit = meta_i64(table, ROUND_LIMIT, DEFAULT_ROUND_LIMIT as i64);
    let reached = scores.iter().any(|&score| score >= target) || round_number(table) as i64 >= limit;
    reached && scores[0] != scores[1]
}
