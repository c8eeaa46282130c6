//! Monte Carlo tree search over the `Game` trait, run inside the guest on a
//! seat's view (docs/abi.md, "search").
//!
//! One algorithm serves both kinds of game. Every iteration starts from a
//! *determinization* of the view: the view itself for perfect information
//! (`Search::Mcts`, plain UCT), or a full state sampled by
//! `Game::sample_hidden` to fit what the seat sees (`Search::Ismcts`,
//! single-observer information-set MCTS: Cowling, Powley and Whitehouse,
//! 2012). The tree is keyed by actions, so nodes are shared across
//! determinizations; a child is scored by UCB1 against the number of
//! iterations in which it was available, not its parent's visits.
//!
//! - Edges: in `Mcts` an action itself; in `Ismcts` its intent and label (an
//!   action on a hidden piece names an index that means nothing across
//!   samples; the label says what it does, e.g. "Play QS"), the action when
//!   the label is empty. Several actions under one key are one edge, taken
//!   at random (drawing "a tile from the boneyard").
//! - Moves follow `playout`: only choices and confirms, a chain of choices is
//!   one player's decision, simultaneous movers drawn at random.
//! - Rewards: each seat's standing by the game's declared result rule
//!   (`Game::metadata().result`), scaled to 0..1 between the worst and the
//!   best seat (1 for the best; 0.5 each when all are equal), at game over or
//!   after `max_playout_plies` random moves. The standing is the first public
//!   score (`HighestScore`), its negation (`LowestScore`), or the negated rank
//!   from `Game::ranks` (`Ranks`, at game over; by score before it).

use crate::action::{AvailableAction, Intent};
use crate::config::Scores;
use crate::game::Game;
use crate::json_out::WriteJson;
use crate::metadata::ResultRule;
use crate::playout::{apply, next_turn, Policy, Turn};
use crate::rng::Rng;
use crate::state::{PlayerId, State};
use crate::table::Table;

/// Which search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// UCT on the view as it is (a game with nothing hidden from the seat).
    Mcts,
    /// Information-set MCTS over states sampled by `Game::sample_hidden`.
    Ismcts,
}

/// How hard to search.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Iterations (each one descent, one expansion, one playout, one backup).
    pub iterations: u32,
    /// UCB1 exploration constant (rewards are in 0..1).
    pub exploration: f64,
    /// Random moves after the tree before the scores are read.
    pub max_playout_plies: u32,
}

/// Why a search could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The seat is offered no choice or confirm in the view.
    NoAction,
    /// `Ismcts` was asked of a game without `Game::sample_hidden`.
    NoSampler,
    /// `Mcts` was asked of a game that hides information (it has
    /// `Game::sample_hidden`): its rules cannot run on a view alone.
    HiddenInformation,
}

/// What a search decided.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The chosen offer, addressed in the state the search was given.
    pub offer: AvailableAction,
    /// Iterations in which the chosen edge was visited.
    pub visits: u32,
    /// Iterations run.
    pub iterations: u32,
}

struct Node {
    key: String,
    /// Who took the edge into this node.
    player: PlayerId,
    children: Vec<usize>,
    visits: f64,
    availability: f64,
    reward: f64,
}

/// Search `view` (a state with nothing the seat may not see) for `player`'s
/// next action, every random draw from `Rng::new(seed)`.
///
/// With `Search::Mcts`, a game with a compact state (`Game::search_state`)
/// is searched on it when the view has one: the same decision, faster.
pub fn search<G: Game>(
    view: &State,
    player: PlayerId,
    kind: Search,
    budget: Budget,
    seed: u64,
) -> Result<Decision, SearchError> {
    search_with::<G>(view, player, kind, budget, seed, true)
}

/// `search` on the table only, never on a compact state (for tests that
/// compare the two).
pub fn search_on_table<G: Game>(
    view: &State,
    player: PlayerId,
    kind: Search,
    budget: Budget,
    seed: u64,
) -> Result<Decision, SearchError> {
    search_with::<G>(view, player, kind, budget, seed, false)
}

fn search_with<G: Game>(
    view: &State,
    player: PlayerId,
    kind: Search,
    budget: Budget,
    seed: u64,
    compact: bool,
) -> Result<Decision, SearchError> {
    let mut rng = Rng::new(seed);
    let mut root_state = view.clone();
    root_state.log.clear(); // the log is for people; copying it every iteration is waste
    let root_table = Table::new(root_state);
    let has_sampler = G::sample_hidden(&root_table, player, &mut Rng::new(seed)).is_some();
    match kind {
        Search::Ismcts if !has_sampler => return Err(SearchError::NoSampler),
        Search::Mcts if has_sampler => return Err(SearchError::HiddenInformation),
        _ => {}
    }
    if compact && kind == Search::Mcts {
        if let Some(ops) = G::search_state() {
            if let Some(result) = (ops.search)(&root_table, player, budget, seed) {
                return result;
            }
        }
    }
    let first = determinize::<G>(&root_table, player, kind, &mut rng);
    let offers = crate::playout::candidates::<G>(&first, player);
    if offers.is_empty() {
        return Err(SearchError::NoAction);
    }
    let mut nodes = vec![Node {
        key: String::new(),
        player,
        children: Vec::new(),
        visits: 0.0,
        availability: 0.0,
        reward: 0.0,
    }];
    let seats = root_table.players();
    let rule = G::metadata().result;
    let mut path = Vec::new();
    for iteration in 0..budget.iterations {
        let mut table = if iteration == 0 { first.clone() } else { determinize::<G>(&root_table, player, kind, &mut rng) };
        path.clear();
        let mut node = 0usize;
        let mut after: Option<(PlayerId, Intent)> = None;
        // Selection and expansion.
        loop {
            let scores = G::scores(&table);
            if G::is_game_over(&table, &scores) {
                break;
            }
            let turn = if node == 0 {
                Some(Turn { player, candidates: crate::playout::candidates::<G>(&table, player) })
                    .filter(|turn| !turn.candidates.is_empty())
            } else {
                next_turn::<G>(&table, after, &mut rng)
            };
            let turn = match turn {
                Some(turn) => turn,
                None => break,
            };
            let keys: Vec<String> = turn.candidates.iter().map(|offer| edge_key(offer, kind)).collect();
            let mut untried: Vec<usize> = Vec::new();
            for (at, key) in keys.iter().enumerate() {
                if keys[..at].contains(key) {
                    continue;
                }
                let child = nodes[node].children.iter().copied().find(|&c| nodes[c].player == turn.player && nodes[c].key == *key);
                match child {
                    Some(child) => nodes[child].availability += 1.0,
                    None => untried.push(at),
                }
            }
            let (child, offer_at) = if !untried.is_empty() {
                let at = untried[rng.below(untried.len())];
                nodes.push(Node {
                    key: keys[at].clone(),
                    player: turn.player,
                    children: Vec::new(),
                    visits: 0.0,
                    availability: 1.0,
                    reward: 0.0,
                });
                let child = nodes.len() - 1;
                nodes[node].children.push(child);
                (child, at)
            } else {
                let child = best_child(&nodes, node, turn.player, &keys, budget.exploration);
                (child, pick_with_key(&keys, &nodes[child].key, &mut rng))
            };
            let offer = &turn.candidates[offer_at];
            apply::<G>(&mut table, turn.player, offer, &mut rng);
            after = Some((turn.player, offer.intent));
            path.push(child);
            node = child;
            if nodes[child].visits == 0.0 {
                break; // just expanded
            }
        }
        // Playout, then backup.
        let scores = random_playout::<G>(&mut table, after, budget.max_playout_plies, &mut rng);
        let rewards = rewards(&seats, &standings::<G>(&table, &seats, &scores, rule));
        nodes[0].visits += 1.0;
        for &visited in &path {
            let seat = seats.iter().position(|&p| p == nodes[visited].player).unwrap_or(0);
            nodes[visited].visits += 1.0;
            nodes[visited].reward += rewards.get(seat).copied().unwrap_or(0.5);
        }
    }
    let best = nodes[0]
        .children
        .iter()
        .copied()
        .filter(|&c| nodes[c].player == player)
        .fold(None, |best: Option<usize>, c| match best {
            Some(b) if nodes[b].visits >= nodes[c].visits => Some(b),
            _ => Some(c),
        });
    let offer = match best {
        Some(best) => offers
            .iter()
            .find(|offer| edge_key(offer, kind) == nodes[best].key)
            .cloned()
            .unwrap_or_else(|| offers[0].clone()),
        None => offers[0].clone(),
    };
    let visits = best.map(|b| nodes[b].visits as u32).unwrap_or(0);
    Ok(Decision { offer, visits, iterations: budget.iterations })
}

/// The state one iteration starts from.
fn determinize<G: Game>(root: &Table, player: PlayerId, kind: Search, rng: &mut Rng) -> Table {
    match kind {
        Search::Mcts => root.clone(),
        Search::Ismcts => {
            let state = G::sample_hidden(root, player, rng).expect("checked before the search");
            Table::new(state)
        }
    }
}

fn edge_key(offer: &AvailableAction, kind: Search) -> String {
    match kind {
        Search::Ismcts if !offer.label.is_empty() => {
            let intent = if offer.intent == Intent::Choice { "choice " } else { "confirm " };
            [intent, offer.label.as_str()].concat()
        }
        _ => {
            let mut key = Vec::new();
            offer.action.write_json(&mut key);
            String::from_utf8(key).unwrap_or_default()
        }
    }
}

/// The index of an offer under `key`, drawn at random when several share it.
fn pick_with_key(keys: &[String], key: &str, rng: &mut Rng) -> usize {
    let matching: Vec<usize> = (0..keys.len()).filter(|&at| keys[at] == key).collect();
    if matching.len() == 1 {
        matching[0]
    } else {
        matching[rng.below(matching.len())]
    }
}

/// The available child of `node` for `player` with the best UCB1 score.
fn best_child(nodes: &[Node], node: usize, player: PlayerId, keys: &[String], exploration: f64) -> usize {
    let mut best = usize::MAX;
    let mut best_score = f64::NEG_INFINITY;
    for &child in &nodes[node].children {
        let c = &nodes[child];
        if c.player != player || !keys.contains(&c.key) {
            continue;
        }
        let score = if c.visits == 0.0 {
            f64::INFINITY
        } else {
            c.reward / c.visits + exploration * (c.availability.max(1.0).ln() / c.visits).sqrt()
        };
        if score > best_score {
            best_score = score;
            best = child;
        }
    }
    debug_assert!(best != usize::MAX, "every key has a child once none is untried");
    best
}

/// Random moves (as in `playout`) until game over or `max_plies`; the scores then.
fn random_playout<G: Game>(table: &mut Table, mut after: Option<(PlayerId, Intent)>, max_plies: u32, rng: &mut Rng) -> Scores {
    let mut plies = 0;
    loop {
        let scores = G::scores(table);
        if plies >= max_plies || G::is_game_over(table, &scores) {
            return scores;
        }
        let turn = match next_turn::<G>(table, after, rng) {
            Some(turn) => turn,
            None => return scores,
        };
        let offer = &turn.candidates[Policy::Random.pick(turn.candidates.len(), rng)];
        apply::<G>(table, turn.player, offer, rng);
        after = Some((turn.player, offer.intent));
        plies += 1;
    }
}

/// Each seat's standing (higher is better), in seat order, by `rule`: the
/// first public score, its negation, or the negated rank the game returns
/// once it is over (by score until then, or when it returns none).
pub fn standings<G: Game>(table: &Table, seats: &[PlayerId], scores: &Scores, rule: ResultRule) -> Vec<f64> {
    if rule == ResultRule::Ranks && G::is_game_over(table, scores) {
        if let Some(ranks) = G::ranks(table, scores) {
            return seats.iter().map(|p| ranks.get(p).map_or(0.0, |&rank| -f64::from(rank))).collect();
        }
    }
    let sign = if rule == ResultRule::LowestScore { -1.0 } else { 1.0 };
    seats
        .iter()
        .map(|p| scores.get(p).and_then(|s| s.public_points.first().copied()).unwrap_or(0.0))
        .map(|v| if v.is_finite() { sign * v } else { 0.0 })
        .collect()
}

/// Each seat's reward in 0..1 from its standing (higher is better), in seat
/// order: 1 for the best, 0 for the worst, 0.5 each when all are equal.
pub fn rewards(seats: &[PlayerId], standings: &[f64]) -> Vec<f64> {
    let low = standings.iter().copied().fold(f64::INFINITY, f64::min);
    let high = standings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(high > low) {
        return vec![0.5; seats.len()];
    }
    standings.iter().map(|v| (v - low) / (high - low)).collect()
}
