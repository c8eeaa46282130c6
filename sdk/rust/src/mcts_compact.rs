//! UCT on a game's compact state (`SearchState`): `mcts::search` with
//! `Search::Mcts`, step for step and draw for draw, so it makes the same
//! decision as the table path, without a JSON-shaped table, an offer list or
//! a string key anywhere in the loop.
//!
//! What the table path does per move and this does instead: candidates are
//! `S::moves` into one reused buffer (not `AvailableAction`s), tree edges
//! are keyed by the move itself (not the action written as JSON), and a move
//! is `S::apply` on a copy of a few dozen bytes. The `SearchState` contract
//! (one mover at a time, distinct moves in offer order) is what makes the
//! table path's extra steps no-ops here: no mover is ever drawn among
//! several, and no two candidates share an edge.

use crate::game::Game;
use crate::mcts::{Budget, Decision, SearchError};
use crate::metadata::ResultRule;
use crate::playout::{candidates, Policy};
use crate::rng::Rng;
use crate::search_state::SearchState;
use crate::state::PlayerId;
use crate::table::Table;

/// Availabilities below this have their logarithm kept (UCB1 takes `ln` of
/// one for every candidate at every step of a descent).
const LN_CACHE: usize = 1 << 16;

struct Node<M> {
    /// The move into this node (None at the root).
    mv: Option<M>,
    /// The seat that made it.
    seat: usize,
    /// Where `mv` was in the mover's moves when last seen: tested first,
    /// so a game whose node always has the same moves needs no scan.
    at: usize,
    children: Vec<usize>,
    visits: f64,
    /// Iterations this node was available in (a whole number: its `ln` is
    /// looked up, not computed).
    availability: u32,
    reward: f64,
}

impl<M> Node<M> {
    fn new(mv: Option<M>, seat: usize, at: usize, availability: u32) -> Node<M> {
        Node { mv, seat, at, children: Vec::new(), visits: 0.0, availability, reward: 0.0 }
    }
}

/// `player`'s decision on `view` by UCT on `view`'s compact state `S`:
/// exactly what `mcts::search` decides with `Search::Mcts` on the table.
///
/// `None` (the caller searches the table instead) when `S::from_table`
/// refuses the view or the compact moves at the root are not the table's
/// candidates, action for action.
pub fn search<G: Game, S: SearchState>(
    view: &Table,
    player: PlayerId,
    budget: Budget,
    seed: u64,
) -> Option<Result<Decision, SearchError>> {
    let root = S::from_table(view).ok()?;
    let seats = view.players();
    let seat = seats.iter().position(|&p| p == player)?;
    let offers = candidates::<G>(view, player);
    if offers.is_empty() {
        return Some(Err(SearchError::NoAction));
    }
    let mut root_moves = Vec::new();
    if root.mover() == Some(seat) {
        root.moves(&mut root_moves);
    }
    let agree = root_moves.len() == offers.len()
        && root_moves.iter().zip(&offers).all(|(&mv, offer)| root.action(mv) == offer.action);
    if !agree {
        return None;
    }
    let rule = G::metadata().result;
    let mut rng = Rng::new(seed);
    let mut nodes = vec![Node::new(None, seat, 0, 0)];
    let mut ln_cache = Vec::new();
    let (mut path, mut moves, mut rewards, mut taken) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..budget.iterations {
        let mut state = root.clone();
        path.clear();
        let mut node = 0usize;
        // Selection and expansion.
        loop {
            if state.is_over() {
                break;
            }
            let mover = if node == 0 {
                moves.clone_from(&root_moves);
                seat
            } else {
                match state.mover() {
                    Some(mover) => {
                        state.moves(&mut moves);
                        mover
                    }
                    None => break,
                }
            };
            if moves.is_empty() {
                break;
            }
            // The children available now: each counts this iteration and
            // remembers where its move is (so `is_available` can tell it).
            let mut tried = 0;
            for i in 0..nodes[node].children.len() {
                let child = nodes[node].children[i];
                let made = &mut nodes[child];
                if made.seat != mover {
                    continue;
                }
                // Moves are distinct (the `SearchState` contract): a hit at
                // the remembered place is the one `position` would find.
                let at = match made.mv {
                    Some(mv) if moves.get(made.at) == Some(&mv) => Some(made.at),
                    Some(mv) => moves.iter().position(|&m| m == mv),
                    None => None,
                };
                if let Some(at) = at {
                    made.availability += 1;
                    made.at = at;
                    tried += 1;
                }
            }
            let (child, at) = if tried < moves.len() {
                // A move without a child, drawn among those in move order.
                let nth = rng.below(moves.len() - tried);
                let at = if tried == 0 { nth } else { nth_untried(&nodes, node, mover, &moves, nth, &mut taken) };
                nodes.push(Node::new(Some(moves[at]), mover, at, 1));
                let child = nodes.len() - 1;
                nodes[node].children.push(child);
                (child, at)
            } else {
                best_child(&nodes, node, mover, &moves, budget.exploration, &mut ln_cache)
            };
            state.apply(moves[at], &mut Rng::new(rng.next_u64()));
            path.push(child);
            node = child;
            if nodes[child].visits == 0.0 {
                break; // just expanded
            }
        }
        // Playout, then backup.
        let mut plies = 0;
        while plies < budget.max_playout_plies && !state.is_over() {
            let mv = match state.mover().and_then(|_| state.pick(Policy::Random, &mut rng, &mut moves)) {
                Some(mv) => mv,
                None => break,
            };
            state.apply(mv, &mut Rng::new(rng.next_u64()));
            plies += 1;
        }
        rewards_into(&state, &seats, rule, &mut rewards);
        nodes[0].visits += 1.0;
        for &visited in &path {
            let node = &mut nodes[visited];
            node.visits += 1.0;
            node.reward += rewards.get(node.seat).copied().unwrap_or(0.5);
        }
    }
    let best = nodes[0].children.iter().copied().filter(|&c| nodes[c].seat == seat).fold(None, |best: Option<usize>, c| {
        match best {
            Some(b) if nodes[b].visits >= nodes[c].visits => Some(b),
            _ => Some(c),
        }
    });
    let at = best.and_then(|b| root_moves.iter().position(|&m| Some(m) == nodes[b].mv)).unwrap_or(0);
    let visits = best.map(|b| nodes[b].visits as u32).unwrap_or(0);
    Some(Ok(Decision { offer: offers[at].clone(), visits, iterations: budget.iterations }))
}

/// Whether `made`, a child of a node where `mover` chooses among `moves`,
/// is available there: its `at` was set by this descent's pass over the
/// children when it is, and cannot name its move when it is not.
#[inline(always)]
fn is_available<M: PartialEq>(made: &Node<M>, mover: usize, moves: &[M]) -> bool {
    made.seat == mover && made.mv.is_some() && moves.get(made.at) == made.mv.as_ref()
}

/// The position of the `nth` (0-based) of `moves` no available child of
/// `node` stands for, in move order; `taken` is a buffer to reuse.
fn nth_untried<M: Copy + PartialEq>(nodes: &[Node<M>], node: usize, mover: usize, moves: &[M], nth: usize, taken: &mut Vec<bool>) -> usize {
    taken.clear();
    taken.resize(moves.len(), false);
    for &child in &nodes[node].children {
        let made = &nodes[child];
        if is_available(made, mover, moves) {
            taken[made.at] = true;
        }
    }
    taken.iter().enumerate().filter(|&(_, &t)| !t).nth(nth).map_or(0, |(at, _)| at)
}

/// Of `node`'s children available to `mover`, in the order they were made,
/// the one with the best UCB1 score (the first of equals), with its move's
/// position, as `mcts::best_child`.
fn best_child<M: PartialEq>(nodes: &[Node<M>], node: usize, mover: usize, moves: &[M], exploration: f64, ln_cache: &mut Vec<f64>) -> (usize, usize) {
    let mut best = (0, 0);
    let mut best_score = f64::NEG_INFINITY;
    for &child in &nodes[node].children {
        let c = &nodes[child];
        if !is_available(c, mover, moves) {
            continue;
        }
        let score = if c.visits == 0.0 {
            f64::INFINITY
        } else {
            c.reward / c.visits + exploration * (ln(c.availability.max(1), ln_cache) / c.visits).sqrt()
        };
        if score > best_score {
            best_score = score;
            best = (child, c.at);
        }
    }
    best
}

/// `ln` of `count` (>= 1) as a double, from `cache` below `LN_CACHE`
/// (the same value: `ln` of the same double).
#[inline(always)]
fn ln(count: u32, cache: &mut Vec<f64>) -> f64 {
    let at = count as usize;
    if let Some(&known) = cache.get(at) {
        return known;
    }
    if at >= LN_CACHE {
        return f64::from(count).ln();
    }
    while cache.len() <= at {
        let next = cache.len() as f64;
        cache.push(next.ln());
    }
    cache[at]
}

/// Each seat's reward in 0..1 at the end of a playout from `state`, into
/// `out`: `mcts::rewards` of `mcts::standings`, without building `Scores`.
fn rewards_into<S: SearchState>(state: &S, seats: &[PlayerId], rule: ResultRule, out: &mut Vec<f64>) {
    let ranks = if rule == ResultRule::Ranks && state.is_over() { state.ranks() } else { None };
    match ranks {
        Some(ranks) => {
            out.clear();
            out.extend(seats.iter().map(|p| ranks.get(p).map_or(0.0, |&rank| -f64::from(rank))));
        }
        None => {
            state.first_points(seats, out);
            let sign = if rule == ResultRule::LowestScore { -1.0 } else { 1.0 };
            for v in out.iter_mut() {
                *v = if v.is_finite() { sign * *v } else { 0.0 };
            }
        }
    }
    // Every value is finite here, so comparisons give what `f64::min` and
    // `f64::max` would, without their calls.
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in out.iter() {
        low = if v < low { v } else { low };
        high = if v > high { v } else { high };
    }
    for v in out.iter_mut() {
        *v = if high > low { (*v - low) / (high - low) } else { 0.5 };
    }
}
