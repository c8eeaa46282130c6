//! Whole games played inside the guest, with no crossing per move (docs/abi.md,
//! "playout"). One move of a playout or a search is chosen the same way:
//!
//! - only `choice` and `confirm` actions are candidates: `cancel` would let a
//!   search wander back and forth inside one decision, and `undo` is the
//!   platform's, never the game's;
//! - a player who just made a `choice` and is still offered something moves
//!   again, so a chain of choices ended by a confirm is one decision;
//! - otherwise, when several players are active (simultaneous moves), the
//!   mover is drawn from those offered something, as the host's bots do.

use std::collections::BTreeMap;

use crate::action::{AvailableAction, Intent};
use crate::config::Scores;
use crate::game::{start, Game};
use crate::rng::Rng;
use crate::search_state::SearchState;
use crate::state::{Player, PlayerId};
use crate::table::Table;

/// How a seat picks among its candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Uniformly at random (from the playout's rng).
    Random,
    /// Always the first candidate.
    First,
}

impl Policy {
    /// The policy named `name` (`"random"` or `"first"`), else None.
    pub fn parse(name: &str) -> Option<Policy> {
        match name {
            "random" => Some(Policy::Random),
            "first" => Some(Policy::First),
            _ => None,
        }
    }

    /// The index of the candidate this policy picks among `count` (>= 1).
    #[inline(always)]
    pub fn pick(self, count: usize, rng: &mut Rng) -> usize {
        match self {
            Policy::Random => rng.below(count),
            Policy::First => 0,
        }
    }
}

/// A seat about to move and what it may do (`choice` and `confirm` offers only).
pub struct Turn {
    pub player: PlayerId,
    pub candidates: Vec<AvailableAction>,
}

/// The offers of `player` a playout or search may take: choices and confirms.
pub fn candidates<G: Game>(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    let mut offers = G::available_actions(table, player);
    offers.retain(|offer| matches!(offer.intent, Intent::Choice | Intent::Confirm));
    offers
}

/// Who moves next and with which candidates (see the module docs), or None
/// when no active player is offered anything. `after` is the previous
/// mover and the intent of their action.
pub fn next_turn<G: Game>(table: &Table, after: Option<(PlayerId, Intent)>, rng: &mut Rng) -> Option<Turn> {
    if let Some((player, Intent::Choice)) = after {
        if table.is_active(player) {
            let candidates = candidates::<G>(table, player);
            if !candidates.is_empty() {
                return Some(Turn { player, candidates });
            }
        }
    }
    let active = table.active_players();
    if active.len() == 1 {
        let candidates = candidates::<G>(table, active[0]);
        return if candidates.is_empty() { None } else { Some(Turn { player: active[0], candidates }) };
    }
    let mut turns: Vec<Turn> = active
        .iter()
        .map(|&player| Turn { player, candidates: candidates::<G>(table, player) })
        .filter(|turn| !turn.candidates.is_empty())
        .collect();
    match turns.len() {
        0 => None,
        1 => turns.pop(),
        n => Some(turns.swap_remove(rng.below(n))),
    }
}

/// Carry out `offer` for `player` with a fresh move seed drawn from `rng`,
/// dropping the recorded patches (nobody mirrors a playout).
pub fn apply<G: Game>(table: &mut Table, player: PlayerId, offer: &AvailableAction, rng: &mut Rng) {
    let mut move_rng = Rng::new(rng.next_u64());
    G::apply_action(table, player, &offer.action, &mut move_rng);
    table.take_patches();
}

/// Why a playout stopped before game over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// `max_plies` moves were played.
    MaxPlies,
    /// No active player was offered a choice or a confirm.
    Stuck,
}

impl Cut {
    /// The name in a playout response (`"max_plies"`, `"stuck"`).
    pub fn name(self) -> &'static str {
        match self {
            Cut::MaxPlies => "max_plies",
            Cut::Stuck => "stuck",
        }
    }
}

/// How one playout ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub plies: u32,
    pub scores: Scores,
    pub game_over: bool,
    /// Why the game stopped short of game over (None when it is over).
    pub cut: Option<Cut>,
    /// The game's own ranks at game over (`Game::ranks`), when it gives them.
    pub ranks: Option<BTreeMap<PlayerId, u32>>,
}

/// Play `table` on to game over (or `max_plies` moves), each seat by its
/// policy (`policies[seat]`, the last one for any further seat), everything
/// random drawn from `rng`.
pub fn play_out<G: Game>(table: &mut Table, policies: &[Policy], max_plies: u32, rng: &mut Rng) -> Outcome {
    let mut plies = 0u32;
    let mut after = None;
    loop {
        let scores = G::scores(table);
        if G::is_game_over(table, &scores) {
            let ranks = G::ranks(table, &scores);
            return Outcome { plies, scores, game_over: true, cut: None, ranks };
        }
        if plies >= max_plies {
            return Outcome { plies, scores, game_over: false, cut: Some(Cut::MaxPlies), ranks: None };
        }
        let turn = match next_turn::<G>(table, after, rng) {
            Some(turn) => turn,
            None => return Outcome { plies, scores, game_over: false, cut: Some(Cut::Stuck), ranks: None },
        };
        let seat = table.seat_of(turn.player);
        let policy = policies.get(seat).or_else(|| policies.last()).copied().unwrap_or(Policy::Random);
        let offer = &turn.candidates[policy.pick(turn.candidates.len(), rng)];
        apply::<G>(table, turn.player, offer, rng);
        after = Some((turn.player, offer.intent));
        plies += 1;
    }
}

/// Where the games of a batch start.
#[derive(Clone, Copy)]
pub enum Start<'a> {
    /// From setup with these players (default options).
    Setup(&'a [Player]),
    /// From this table.
    Table(&'a Table),
}

/// One game per seed, in seed order: game *i* uses `Rng::new(seeds[i])`;
/// from setup, its first draw is the setup seed (docs/abi.md "playout").
///
/// A setup that drew nothing from its rng is the same for every seed, so it
/// runs once and the games start from copies of its table. When the game
/// declares a compact state (`Game::search_state`) that the table has, the
/// games run on it; otherwise on the table. Both give the same outcomes.
pub fn play_batch<G: Game>(start_at: Start<'_>, seeds: &[u64], policies: &[Policy], max_plies: u32) -> Vec<Outcome> {
    let mut rngs: Vec<Rng> = seeds.iter().map(|&seed| Rng::new(seed)).collect();
    let mut outcomes = Vec::with_capacity(seeds.len());
    let mut at = 0;
    while at < rngs.len() {
        let mut end = rngs.len();
        let set_up;
        let table = match start_at {
            Start::Table(table) => table,
            Start::Setup(players) => {
                let started = start::<G>(players.to_vec(), rngs[at].next_u64());
                if started.rng_used {
                    end = at + 1;
                } else {
                    // The same table for every seed; each game's first draw still goes to setup.
                    rngs[at + 1..].iter_mut().for_each(|rng| drop(rng.next_u64()));
                }
                set_up = started.table;
                &set_up
            }
        };
        play_from_table::<G>(table, &mut rngs[at..end], policies, max_plies, &mut outcomes);
        at = end;
    }
    outcomes
}

/// One game per generator from copies of `table` (its recorded patches
/// ignored), on the game's compact state when it has one for this table.
fn play_from_table<G: Game>(table: &Table, rngs: &mut [Rng], policies: &[Policy], max_plies: u32, out: &mut Vec<Outcome>) {
    if let Some(ops) = G::search_state() {
        if let Some(outcomes) = (ops.play_out)(table, rngs, policies, max_plies) {
            out.extend(outcomes);
            return;
        }
    }
    for rng in rngs {
        out.push(play_out::<G>(&mut table.clone(), policies, max_plies, rng));
    }
}

/// One game from setup: the setup seed is the first draw of `Rng::new(seed)`,
/// then the game is played out with the same generator (on the table).
pub fn play_from_setup<G: Game>(players: &[Player], seed: u64, policies: &[Policy], max_plies: u32) -> Outcome {
    let mut rng = Rng::new(seed);
    let mut table = start::<G>(players.to_vec(), rng.next_u64()).table;
    table.take_patches();
    play_out::<G>(&mut table, policies, max_plies, &mut rng)
}

/// One game from `table` (cloned), played with `Rng::new(seed)` (on the table).
pub fn play_from_state<G: Game>(table: &Table, seed: u64, policies: &[Policy], max_plies: u32) -> Outcome {
    let mut rng = Rng::new(seed);
    let mut table = table.clone();
    play_out::<G>(&mut table, policies, max_plies, &mut rng)
}

/// `play_out` on a compact state: one game per generator in `rngs` from
/// `table`'s compact state `S`, the same draws in the same order as on the
/// table; `None` when `S::from_table` refuses the table.
pub fn play_out_compact<S: SearchState>(
    table: &Table,
    rngs: &mut [Rng],
    policies: &[Policy],
    max_plies: u32,
) -> Option<Vec<Outcome>> {
    let first = S::from_table(table).ok()?;
    let mut scratch = Vec::new();
    let outcomes = rngs
        .iter_mut()
        .map(|rng| {
            let mut state = first.clone();
            let mut plies = 0u32;
            loop {
                if state.is_over() {
                    let scores = state.scores();
                    let ranks = state.ranks();
                    return Outcome { plies, scores, game_over: true, cut: None, ranks };
                }
                if plies >= max_plies {
                    return Outcome { plies, scores: state.scores(), game_over: false, cut: Some(Cut::MaxPlies), ranks: None };
                }
                let picked = state.mover().and_then(|seat| {
                    let policy = policies.get(seat).or_else(|| policies.last()).copied().unwrap_or(Policy::Random);
                    state.pick(policy, rng, &mut scratch)
                });
                let mv = match picked {
                    Some(mv) => mv,
                    None => return Outcome { plies, scores: state.scores(), game_over: false, cut: Some(Cut::Stuck), ranks: None },
                };
                state.apply(mv, &mut Rng::new(rng.next_u64()));
                plies += 1;
            }
        })
        .collect();
    Some(outcomes)
}
