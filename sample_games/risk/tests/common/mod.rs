//! Shared setup for the Risk integration tests.

use risk::layout;
use risk::Risk;
use tablehost_sdk::{Game, Options, Player, PlayerId, Rng, State, Table, Value};

/// A game of `players` seats with options set, after `prepare`.
pub fn start_with(players: u32, options: &[(&str, Value)], seed: u64) -> Table {
    let ids: Vec<PlayerId> = (1..=players).collect();
    let mut cfg = layout::config(&ids, &Options::default());
    for (key, value) in options {
        cfg.meta_data.insert(key.to_string(), value.clone());
    }
    let mut rng = Rng::new(seed);
    let first = ids[rng.below(ids.len())];
    let state = State {
        active_player_ids: vec![first],
        players: ids.iter().map(|&player_id| Player { player_id, ..Player::default() }).collect(),
        spaces: cfg.spaces,
        meta_data: cfg.meta_data,
        log: Vec::new(),
    };
    let mut table = Table::new(state);
    Risk::prepare(&mut table, &mut rng);
    table.take_patches();
    table
}

