//! A hand from the deal to the pot: blinds, hole cards, the board, the
//! showdown, and the next hand; and the end of the game.
//!
//! Rules:
//! - The button moves one player to the left each hand, skipping players
//!   with no chips; the first button is drawn at random.
//! - Each player gets two hole cards, face down; the board gets three cards
//!   (the flop), then one (the turn), then one (the river), face up, each
//!   followed by a betting round. Cards come from random places of the
//!   unseen deck, so there is no burn card to keep.
//! - When all but one player fold, that player wins every chip in the pot
//!   and shows nothing. Otherwise the showdown (see `showdown`) decides.
//! - A player left with no chips is out. The game ends when one player has
//!   every chip, or when the hand limit (option) is reached; most chips wins.

use tablehost_sdk::face_down::{face_of, turn_face_down, turn_face_up};
use tablehost_sdk::{json, LogEntry, PlayerId, Rng, Table, Value};

use crate::betting::{Betting, Move, Street};
use crate::cards::{list_cards, Card};
use crate::layout::{
    cards_in, hand_number, hole_of, option, set_if_changed, show_seats, store_betting, BETTING, BIG_BLIND, BOARD, CHIPS, DECK, HAND, HAND_LIMIT, LAST_SHOWDOWN, MUCK, PHASE, SMALL_BLIND,
    STARTING_STACK, STATUS,
};
use crate::pots::side_pots;
use crate::ranking::{best_value, describe};
use crate::showdown::decide;

/// Meta key: the player holding the button this hand.
pub const BUTTON: &str = "button";

/// Whether the hand in play waits for a player, or is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    Waiting,
    Finished,
}

/// Gives everyone the starting stack and plays the first hand up to its
/// first decision.
pub fn start_game(table: &mut Table, rng: &mut Rng) {
    let stack = option(table, STARTING_STACK);
    for player in table.players() {
        table.set_player_public_state(player, CHIPS, json!(stack));
        table.set_player_public_state(player, STATUS, json!("in"));
    }
    table.set_meta(PHASE, "betting");
    play_hands(table, rng);
}

/// Deals hands until one waits for a player's decision or the game ends.
pub fn play_hands(table: &mut Table, rng: &mut Rng) {
    loop {
        if game_has_ended(table) {
            finish(table);
            return;
        }
        let mut betting = deal_hand(table, rng);
        if advance(table, &mut betting, rng) == Progress::Waiting {
            return;
        }
    }
}

/// The players who still have chips, in seat order.
pub fn players_with_chips(table: &Table) -> Vec<PlayerId> {
    table
        .players()
        .into_iter()
        .filter(|&p| table.player(p).public(CHIPS).and_then(Value::as_u64).unwrap_or(0) > 0)
        .collect()
}

/// Rule: the game ends when one player has every chip, or after the hand limit.
pub fn game_has_ended(table: &Table) -> bool {
    let limit = option(table, HAND_LIMIT);
    players_with_chips(table).len() < 2 || (limit > 0 && hand_number(table) >= limit)
}

/// The next button: the first player with chips after the last button (seat
/// order, wrapping); at the first hand one drawn at random.
fn next_button(table: &Table, in_hand: &[PlayerId], rng: &mut Rng) -> usize {
    let last = table.meta(BUTTON).and_then(Value::as_u64).map(|p| p as PlayerId);
    match last {
        None => rng.below(in_hand.len()),
        Some(last) => {
            let players = table.players();
            let from = table.seat_of(last);
            (1..=players.len())
                .map(|k| players[(from + k) % players.len()])
                .find_map(|p| in_hand.iter().position(|&q| q == p))
                .expect("someone has chips")
        }
    }
}

/// Starts a hand: the button moves, the blinds are posted, two cards each.
pub fn deal_hand(table: &mut Table, rng: &mut Rng) -> Betting {
    let hand = hand_number(table) + 1;
    table.set_meta(HAND, json!(hand));
    let in_hand = players_with_chips(table);
    let button = next_button(table, &in_hand, rng);
    table.set_meta(BUTTON, json!(in_hand[button]));
    let stacks: Vec<(PlayerId, u64)> = in_hand
        .iter()
        .map(|&p| (p, table.player(p).public(CHIPS).and_then(Value::as_u64).unwrap_or(0)))
        .collect();
    let betting = Betting::start(&stacks, button, option(table, SMALL_BLIND), option(table, BIG_BLIND));
    let (small, big) = betting.blind_seats();
    table.log(LogEntry::new(format!(
        "Hand {}: {} has the button; {} posts {}, {} posts {}",
        hand,
        table.player_name(in_hand[button]),
        table.player_name(in_hand[small]),
        betting.seats[small].bet,
        table.player_name(in_hand[big]),
        betting.seats[big].bet
    )));
    let mut dealt = LogEntry::new("Two cards are dealt face down to each player".to_string());
    for k in 1..=in_hand.len() {
        let player = in_hand[(button + k) % in_hand.len()];
        let mut hole = Vec::new();
        for _ in 0..2 {
            let index = rng.below(table.pieces(DECK).len());
            let at = table.move_piece(DECK, index, &hole_of(player));
            hole.push(face_of::<Card>(table.piece(&hole_of(player), at)).expect("the rules see the deck"));
        }
        dealt = dealt.for_player(player, format!("You are dealt {}", list_cards(&hole)));
    }
    table.log(dealt);
    show_seats(table, &betting);
    betting
}

/// Carries out `mv` for the player to act, logs it, and plays on.
pub fn act(table: &mut Table, player: PlayerId, mv: Move, rng: &mut Rng) {
    let mut betting = crate::layout::betting(table);
    let seat = betting.to_act.expect("someone is to act");
    assert_eq!(betting.seats[seat].player, player, "it is not player {}'s turn", player);
    let call = betting.choices().call;
    let opening = betting.current_bet == 0;
    betting.apply(mv);
    let s = &betting.seats[seat];
    let all_in = if s.all_in { " (all in)" } else { "" };
    let what = match mv {
        Move::Fold => "folds".to_string(),
        Move::Check => "checks".to_string(),
        Move::Call => format!("calls {}{}", call, all_in),
        Move::RaiseTo(total) if opening => format!("bets {}{}", total, all_in),
        Move::RaiseTo(total) => format!("raises to {}{}", total, all_in),
    };
    table.log(LogEntry::new(format!("{} {}", table.player_name(player), what)));
    if mv == Move::Fold {
        muck(table, player);
    }
    show_seats(table, &betting);
    if advance(table, &mut betting, rng) == Progress::Finished {
        play_hands(table, rng);
    }
}

/// Plays the hand on until a player must decide (their turn is set) or the
/// hand is over (the pot is paid and the cards gathered).
pub fn advance(table: &mut Table, betting: &mut Betting, rng: &mut Rng) -> Progress {
    loop {
        let live = betting.live_seats();
        if live.len() == 1 {
            win_uncontested(table, betting, live[0]);
            return Progress::Finished;
        }
        if let Some(seat) = betting.to_act {
            store_betting(table, betting);
            table.set_active_players(vec![betting.seats[seat].player]);
            return Progress::Waiting;
        }
        match betting.street.next() {
            Some(street) => {
                deal_board(table, street, rng);
                betting.next_street();
                show_seats(table, betting);
            }
            None => {
                showdown(table, betting);
                return Progress::Finished;
            }
        }
    }
}

/// Turns the next street's cards face up on the board.
fn deal_board(table: &mut Table, street: Street, rng: &mut Rng) {
    let mut dealt = Vec::new();
    for _ in 0..street.board_cards() {
        let index = rng.below(table.pieces(DECK).len());
        let at = table.move_piece(DECK, index, BOARD);
        let name = turn_face_up(table, BOARD, at);
        dealt.push(Card::parse(&name).expect("a card"));
    }
    let name = match street {
        Street::Flop => "Flop",
        Street::Turn => "Turn",
        _ => "River",
    };
    table.log(LogEntry::new(format!("{}: {}", name, list_cards(&dealt))));
}

/// A folded or beaten hand goes to the muck face down, unseen.
fn muck(table: &mut Table, player: PlayerId) {
    let hole = hole_of(player);
    while !table.pieces(&hole).is_empty() {
        table.move_piece(&hole, 0, MUCK);
    }
}

/// Everyone else folded: the last player takes the whole pot without showing.
fn win_uncontested(table: &mut Table, betting: &mut Betting, seat: usize) {
    let pot = betting.pot();
    let winner = betting.seats[seat].player;
    table.log(LogEntry::new(format!("{} wins {} uncontested", table.player_name(winner), pot)));
    let mut won = vec![0; betting.seats.len()];
    won[seat] = pot;
    settle(table, betting, &won);
}

/// The showdown: the hands that must be shown are turned face up, the others
/// mucked unseen, and each pot paid (see `showdown` for the showing rule).
fn showdown(table: &mut Table, betting: &mut Betting) {
    let board = cards_in(table, BOARD);
    let values: Vec<_> = betting
        .seats
        .iter()
        .map(|seat| {
            if seat.folded {
                return None;
            }
            let mut seven = cards_in(table, &hole_of(seat.player));
            seven.extend(board.iter().copied());
            Some(best_value(&seven))
        })
        .collect();
    let committed: Vec<u64> = betting.seats.iter().map(|s| s.committed).collect();
    let folded: Vec<bool> = betting.seats.iter().map(|s| s.folded).collect();
    let pots = side_pots(&committed, &folded);
    let first = betting.last_aggressor.unwrap_or_else(|| {
        let n = betting.seats.len();
        (1..=n).map(|k| (betting.button + k) % n).find(|&s| !betting.seats[s].folded).expect("live seats")
    });
    let all_in = betting.seats.iter().any(|s| s.is_live() && s.all_in);
    let outcome = decide(&values, &pots, first, betting.button, all_in);
    for &seat in &outcome.shown {
        let player = betting.seats[seat].player;
        let hole = hole_of(player);
        let cards = cards_in(table, &hole);
        for index in 0..cards.len() {
            turn_face_up(table, &hole, index);
        }
        let value = values[seat].expect("a shown hand is live");
        table.log(LogEntry::new(format!("{} shows {}: {}", table.player_name(player), list_cards(&cards), describe(&value))));
    }
    for &seat in &outcome.mucked {
        let player = betting.seats[seat].player;
        table.log(LogEntry::new(format!("{} mucks", table.player_name(player))));
        muck(table, player);
    }
    let mut won = vec![0u64; betting.seats.len()];
    for (pot_index, awards) in outcome.awards.iter().enumerate() {
        let pot_name = if pot_index == 0 { "the main pot".to_string() } else { format!("side pot {}", pot_index) };
        for &(seat, chips) in awards {
            won[seat] += chips;
            let player = betting.seats[seat].player;
            let uncalled = pots[pot_index].eligible.len() == 1;
            let text = if uncalled {
                format!("{} takes back {} uncalled", table.player_name(player), chips)
            } else {
                format!("{} wins {} from {}", table.player_name(player), chips, pot_name)
            };
            table.log(LogEntry::new(text));
        }
    }
    let players = |seats: &[usize]| seats.iter().map(|&s| json!(betting.seats[s].player)).collect::<Vec<_>>();
    table.set_meta(
        LAST_SHOWDOWN,
        json!({"hand": hand_number(table), "shown": players(&outcome.shown), "mucked": players(&outcome.mucked)}),
    );
    settle(table, betting, &won);
}

/// Pays `won[seat]` chips to each seat, gathers the cards face down into the
/// deck, and marks players left with no chips as out.
fn settle(table: &mut Table, betting: &mut Betting, won: &[u64]) {
    for (seat, chips) in betting.seats.iter_mut().zip(won) {
        seat.stack += chips;
        seat.committed = 0;
        seat.bet = 0;
    }
    betting.to_act = None;
    store_betting(table, betting);
    gather(table);
    for seat in &betting.seats {
        set_if_changed(table, seat.player, CHIPS, json!(seat.stack));
        set_if_changed(table, seat.player, crate::layout::BET, json!(0));
        let status = if seat.stack == 0 { "out" } else { "in" };
        set_if_changed(table, seat.player, STATUS, json!(status));
        if seat.stack == 0 {
            table.log(LogEntry::new(format!("{} is out of chips", table.player_name(seat.player))));
        }
    }
}

/// Every card back into the deck, face down.
fn gather(table: &mut Table) {
    let mut spaces: Vec<String> = vec![BOARD.to_string(), MUCK.to_string()];
    spaces.extend(table.players().into_iter().map(hole_of));
    for space in spaces {
        while !table.pieces(&space).is_empty() {
            if table.piece(&space, 0).private_kind.is_none() {
                turn_face_down(table, &space, 0);
            }
            table.move_piece(&space, 0, DECK);
        }
    }
}

/// The game is over: nobody acts; the final chip counts are logged.
fn finish(table: &mut Table) {
    table.set_meta(PHASE, "over");
    table.set_meta(BETTING, Value::Null);
    crate::layout::set_pot(table, 0);
    table.set_active_players(Vec::new());
    let mut standings: Vec<(u64, PlayerId)> = table
        .players()
        .into_iter()
        .map(|p| (table.player(p).public(CHIPS).and_then(Value::as_u64).unwrap_or(0), p))
        .collect();
    standings.sort_by(|a, b| b.0.cmp(&a.0));
    let text: Vec<String> = standings.iter().map(|(chips, p)| format!("{} {}", table.player_name(*p), chips)).collect();
    table.log(LogEntry::new(format!("Game over after {} hands: {}", hand_number(table), text.join(", "))));
}
