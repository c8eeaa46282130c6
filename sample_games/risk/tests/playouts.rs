//! Random full games for every player count and option: each ends within a
//! sane number of moves, no army or card appears or vanishes, and no viewer
//! reads a hidden card.

use std::collections::BTreeSet;

mod common;

use common::start_with;
use risk::cards::RiskCard;
use risk::layout::{
    armies, chosen, owner, phase, Owner, Phase, CLAIM_TERRITORIES, ROUND_LIMIT, TO, TWO_PLAYER_NEUTRAL,
};
use risk::map::TERRITORIES;
use risk::Risk;
use tablehost_sdk::face_down::face_of;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{json, play, Game, Rng, Table, Value};

/// Far more moves than a random game of these round limits takes.
const MOVE_LIMIT: usize = 10_000;

#[test]
fn random_games_end_conserve_cards_and_hide_them() {
    // Short games (8 rounds) keep the per-move checks quick; the Python
    // simulations play the default limit.
    let short = (ROUND_LIMIT, json!(8));
    let mut plies = Vec::new();
    for players in 2..=6u32 {
        plies.push((players, random_game(players, &[short.clone()], u64::from(players))));
    }
    let neutral = (TWO_PLAYER_NEUTRAL, json!(true));
    let claim = (CLAIM_TERRITORIES, json!(true));
    plies.push((2, random_game(2, &[short.clone(), neutral.clone()], 5)));
    plies.push((3, random_game(3, &[short.clone(), claim.clone()], 6)));
    plies.push((2, random_game(2, &[short, neutral, claim], 7)));
    println!("plies per game: {:?}", plies);
}

fn random_game(players: u32, options: &[(&str, Value)], seed: u64) -> usize {
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
