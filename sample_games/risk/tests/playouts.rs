//! Random full games for every player count and option: each ends within a
//! sane number of moves, no army or card appears or vanishes, and no viewer
//! reads a hidden card.

use std::collections::BTreeSet;

use risk::cards::RiskCard;
use risk::layout::{self, armies, chosen, owner, phase, Owner, Phase, CLAIM_TERRITORIES, TO, TWO_PLAYER_NEUTRAL};
use risk::map::TERRITORIES;
use risk::Risk;
use tablehost_sdk::face_down::face_of;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{json, play, Game, Player, PlayerId, Rng, State, Table};

/// A game of `players` seats with options set, after `prepare`.
pub fn start_with(players: u32, options: &[(&str, bool)], seed: u64) -> Table {
    let ids: Vec<PlayerId> = (1..=players).collect();
    let mut cfg = layout::config(&ids);
    for (key, value) in options {
        cfg.meta_data.insert(key.to_string(), json!(value));
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

/// Moves a game of the default round limit may take, with room to spare.
const MOVE_LIMIT: usize = 10_000;

#[test]
fn random_games_end_conserve_cards_and_hide_them() {
    let mut plies = Vec::new();
    for players in 2..=6u32 {
        for seed in 0..3u64 {
            plies.push((players, random_game(players, &[], seed * 7 + u64::from(players))));
        }
    }
    plies.push((2, random_game(2, &[(TWO_PLAYER_NEUTRAL, true)], 5)));
    plies.push((3, random_game(3, &[(CLAIM_TERRITORIES, true)], 6)));
    plies.push((2, random_game(2, &[(TWO_PLAYER_NEUTRAL, true), (CLAIM_TERRITORIES, true)], 7)));
    println!("plies per game: {:?}", plies);
}

fn random_game(players: u32, options: &[(&str, bool)], seed: u64) -> usize {
    let mut table = start_with(players, options, seed);
    let mut bot = Rng::new(seed ^ 0x5EED);
    let mut last_move = Vec::new();
    for moves in 0.. {
        check_invariants(&table);
        assert_nothing_hidden_is_shown::<Risk>(&table, &last_move);
        if Risk::is_game_over(&table, &Risk::scores(&table)) {
            return moves;
        }
        assert!(moves < MOVE_LIMIT, "{} players, seed {}: no end after {} moves", players, seed, moves);
        let player = table.active_players()[0];
        let offered = Risk::available_actions(&table, player);
        assert!(!offered.is_empty(), "{} players, seed {}: the player to act has nothing to do", players, seed);
        assert!(offered.len() <= 43, "at most a territory each and a button");
        let pick = offered[bot.below(offered.len())].action.clone();
        last_move = play::<Risk>(&mut table, player, &pick, bot.next_u64()).patches;
    }
    unreachable!()
}

/// Every card is somewhere once; after setup every territory is held with
/// at least one army (but the one being moved into).
fn check_invariants(table: &Table) {
    let faces: Vec<RiskCard> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| face_of::<RiskCard>(piece).expect("the rules see every card"))
        .collect();
    let distinct: BTreeSet<RiskCard> = faces.iter().copied().collect();
    assert_eq!((faces.len(), distinct.len()), (44, 44));
    let p = phase(table);
    if p == Phase::Claim || p == Phase::Place {
        return;
    }
    let moving_into = if p == Phase::MoveIn { chosen(table, TO) } else { None };
    for t in 0..TERRITORIES.len() {
        assert_ne!(owner(table, t), Owner::Nobody);
        if Some(t) != moving_into {
            assert!(armies(table, t) >= 1, "{} is empty", TERRITORIES[t].name);
        }
    }
}
