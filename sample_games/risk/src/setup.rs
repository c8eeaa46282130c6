//! Setting up: territories dealt at random (or claimed in turn, an option),
//! then the remaining starting armies placed one at a time in turn.
//!
//! Rules:
//! - Each player starts with the armies of `layout::starting_armies`; every
//!   territory they get takes one of them, and they place the rest one at a
//!   time, in turn, on their own territories.
//! - Dealt at random: the 42 territories are dealt round the table from the
//!   first player (drawn at random); with more than 42 / players the first
//!   players get one extra.
//! - Claimed (option `claim_territories`): in turn, each player takes one
//!   free territory until none is left.
//! - Two players with the neutral option: the neutral army gets a third of
//!   the territories (14) at random and 40 armies spread at random on them;
//!   it never moves, only defends.

use tablehost_sdk::{json, LogEntry, PlayerId, Rng, Table};

use crate::layout::{
    held_by, meta_bool, owner, set_armies, set_owner, set_phase, starting_armies, to_place, Owner, Phase,
    CLAIM_TERRITORIES, FIRST_PLAYER, ROUND, TO_PLACE, TWO_PLAYER_NEUTRAL,
};
use crate::map::TERRITORIES;
use crate::turn;

/// Territories the neutral army holds in a two-player game.
pub const NEUTRAL_TERRITORIES: usize = 14;

/// The players in turn order, from the first player.
pub fn turn_order(table: &Table) -> Vec<PlayerId> {
    let players = table.players();
    let first = table.meta(FIRST_PLAYER).and_then(|v| v.as_u64()).map(|p| p as PlayerId).unwrap_or(players[0]);
    let start = table.seat_of(first);
    (0..players.len()).map(|k| players[(start + k) % players.len()]).collect()
}

/// Deals or opens the claim, gives out starting armies, and starts placing.
pub fn prepare(table: &mut Table, rng: &mut Rng) {
    let first = table.active_players()[0];
    table.set_meta(FIRST_PLAYER, json!(first));
    table.set_meta(ROUND, json!(0));
    let players = turn_order(table);
    let armies = starting_armies(players.len());
    for &player in &players {
        table.set_player_public_state(player, TO_PLACE, json!(armies));
    }
    let mut free: Vec<usize> = (0..TERRITORIES.len()).collect();
    rng.shuffle(&mut free);
    if players.len() == 2 && meta_bool(table, TWO_PLAYER_NEUTRAL) {
        let neutral: Vec<usize> = free.drain(..NEUTRAL_TERRITORIES).collect();
        for &t in &neutral {
            set_owner(table, t, Owner::Neutral);
            set_armies(table, t, 1);
        }
        for _ in NEUTRAL_TERRITORIES as u32..armies {
            let t = neutral[rng.below(neutral.len())];
            let now = crate::layout::armies(table, t);
            set_armies(table, t, now + 1);
        }
        table.log(LogEntry::new("A neutral army holds 14 territories with 40 armies".to_string()));
    }
    if meta_bool(table, CLAIM_TERRITORIES) {
        set_phase(table, Phase::Claim);
        table.set_active_players(vec![first]);
        table.log(LogEntry::new(format!("{} claims first", table.player_name(first))));
        return;
    }
    for (k, &t) in free.iter().enumerate() {
        take(table, players[k % players.len()], t);
    }
    table.log(LogEntry::new("The territories are dealt at random".to_string()));
    start_placing(table, first);
}

/// `player` takes free territory `t` with one of their starting armies.
fn take(table: &mut Table, player: PlayerId, t: usize) {
    set_owner(table, t, Owner::Player(player));
    set_armies(table, t, 1);
    let left = to_place(table, player) - 1;
    table.set_player_public_state(player, TO_PLACE, json!(left));
}

/// The free territories (claim phase).
pub fn free_territories(table: &Table) -> Vec<usize> {
    held_by(table, Owner::Nobody)
}

/// Claim phase: `player` takes free territory `t`; the next player claims,
/// or placing starts when none is left.
pub fn claim(table: &mut Table, player: PlayerId, t: usize) {
    assert_eq!(owner(table, t), Owner::Nobody, "{} is taken", TERRITORIES[t].name);
    take(table, player, t);
    table.log(LogEntry::new(format!("{} claims {}", table.player_name(player), TERRITORIES[t].name)));
    let next = next_in_order(table, player);
    if free_territories(table).is_empty() {
        start_placing(table, next);
    } else {
        table.set_active_players(vec![next]);
    }
}

/// The player after `player` in turn order.
fn next_in_order(table: &Table, player: PlayerId) -> PlayerId {
    table.seat_after(player, 1)
}

/// Placing starts with `from`, or the first after them with armies left.
fn start_placing(table: &mut Table, from: PlayerId) {
    set_phase(table, Phase::Place);
    match placer_from(table, from) {
        Some(player) => table.set_active_players(vec![player]),
        None => turn::start_game(table),
    }
}

/// The first player from `from` on (in seat order) with armies to place.
fn placer_from(table: &Table, from: PlayerId) -> Option<PlayerId> {
    let players = table.players();
    (0..players.len()).map(|k| table.seat_after(from, k)).find(|&p| to_place(table, p) > 0)
}

/// Place phase: one army on `player`'s territory `t`; the next player with
/// armies left places, or the first turn starts.
pub fn place(table: &mut Table, player: PlayerId, t: usize) {
    assert_eq!(owner(table, t), Owner::Player(player), "{} is not theirs", TERRITORIES[t].name);
    let now = crate::layout::armies(table, t);
    set_armies(table, t, now + 1);
    let left = to_place(table, player) - 1;
    table.set_player_public_state(player, TO_PLACE, json!(left));
    table.log(LogEntry::new(format!("{} places an army on {}", table.player_name(player), TERRITORIES[t].name)));
    match placer_from(table, next_in_order(table, player)) {
        Some(next) => table.set_active_players(vec![next]),
        None => turn::start_game(table),
    }
}
