//! Random full games for every table size: each ends, no chip or card
//! appears or vanishes, no viewer reads a hidden card, and every showdown
//! reveals exactly the hands the showing rule requires.

use std::collections::BTreeSet;

use holdem::betting::{Betting, Street};
use holdem::cards::Card;
use holdem::layout::{self, cards_in, hole_of, option, BOARD, LAST_SHOWDOWN, STARTING_STACK, HAND};
use holdem::offers::move_of;
use holdem::pots::side_pots;
use holdem::ranking::{best_value, HandValue};
use holdem::Holdem;
use tablehost_sdk::face_down::face_of;
use tablehost_sdk::testing::assert_nothing_hidden_is_shown;
use tablehost_sdk::{new_match, play, Action, Game, Patch, PlayerId, Rng, Table};

/// Far more moves than a game of 100 hands takes.
const MOVE_LIMIT: usize = 20_000;

#[test]
fn random_games_end_conserve_chips_and_cards_and_hide_hole_cards() {
    let mut showdowns = 0;
    for players in 2..=9u32 {
        for seed in 0..3u64 {
            showdowns += random_game(players, seed * 31 + u64::from(players));
        }
    }
    assert!(showdowns > 50, "the playouts reached only {} showdowns", showdowns);
}

/// Plays one game with random choices; returns the number of showdowns.
fn random_game(players: u32, seed: u64) -> usize {
    let ids: Vec<PlayerId> = (1..=players).collect();
    let mut table = new_match::<Holdem>(&ids, seed);
    let total = option(&table, STARTING_STACK) * u64::from(players);
    let mut bot = Rng::new(seed ^ 0x5EED);
    let mut last_move = Vec::new();
    let mut showdowns = 0;
    for moves in 0.. {
        check_conserved(&table, total);
        assert_nothing_hidden_is_shown::<Holdem>(&table, &last_move);
        if Holdem::is_game_over(&table, &Holdem::scores(&table)) {
            break;
        }
        assert!(moves < MOVE_LIMIT, "{} players, seed {}: no end after {} moves", players, seed, moves);
        let player = table.active_players()[0];
        let offered = Holdem::available_actions(&table, player);
        assert!(!offered.is_empty(), "the player to act has nothing to do");
        let pick = offered[bot.below(offered.len())].action.clone();
        let before = table.clone();
        let played = play::<Holdem>(&mut table, player, &pick, bot.next_u64());
        let showdown_at = played.patches.iter().position(|p| matches!(p, Patch::SetMeta { key, .. } if key == LAST_SHOWDOWN));
        let new_hand_at = played.patches.iter().position(|p| matches!(p, Patch::SetMeta { key, .. } if key == HAND));
        if let Some(at) = showdown_at {
            // A hand dealt and played out within the move (blinds put everyone all in)
            // is not the hand this move acted in: check only this hand's showdown.
            if new_hand_at.map_or(true, |new| at < new) {
                check_showdown(&before, &pick, &played.patches[..at]);
                showdowns += 1;
            }
        } else {
            assert!(turned_up_holes(&played.patches).is_empty(), "cards shown without a showdown");
        }
        last_move = played.patches;
    }
    let scores = Holdem::scores(&table);
    assert_eq!(scores.values().map(|s| s.public_points[0]).sum::<f64>(), total as f64);
    showdowns
}

/// Every chip is somewhere and every card is on the table once.
fn check_conserved(table: &Table, total: u64) {
    let chips: u64 = table.players().into_iter().map(|p| layout::chips_of(table, p)).sum();
    assert_eq!(chips, total, "chips appeared or vanished");
    let faces: Vec<Card> = table
        .state()
        .spaces
        .iter()
        .flat_map(|space| space.pieces.iter())
        .map(|piece| face_of::<Card>(piece).expect("the rules see every card"))
        .collect();
    let distinct: BTreeSet<Card> = faces.iter().copied().collect();
    assert_eq!((faces.len(), distinct.len()), (52, 52));
}

/// The players whose hole cards a move turned face up, in the order shown.
fn turned_up_holes(patches: &[Patch]) -> Vec<PlayerId> {
    let mut shown: Vec<PlayerId> = Vec::new();
    for patch in patches {
        if let Patch::SetPublicKind { space_id, kind, .. } = patch {
            if let Some(id) = space_id.strip_prefix("hole-") {
                let player: PlayerId = id.parse().unwrap();
                if kind != "back" && !shown.contains(&player) {
                    shown.push(player);
                }
            }
        }
    }
    shown
}

/// The showing rule, checked from its definition against what the move
/// revealed: when a live player is all in every contesting hand shows;
/// otherwise the first to show is the river's last aggressor (else the first
/// live seat left of the button) and a later player shows exactly when, in
/// some pot they contest, no hand shown before theirs beats it. Folded hands and
/// uncontested hands are never shown, and every pot's winners are shown.
fn check_showdown(before: &Table, action: &Action, patches: &[Patch]) {
    let mut betting: Betting = layout::betting(before);
    let mv = match action {
        Action::ButtonClick { button } => move_of(&button.id),
        _ => unreachable!(),
    };
    betting.apply(mv);
    let mut board = cards_in(before, BOARD);
    for patch in patches {
        if let Patch::SetPublicKind { space_id, kind, .. } = patch {
            if space_id == BOARD && kind != "back" {
                board.push(Card::parse(kind).unwrap());
            }
        }
    }
    assert_eq!(board.len(), 5, "a showdown has the whole board");
    let values: Vec<Option<HandValue>> = betting
        .seats
        .iter()
        .map(|seat| {
            if seat.folded {
                return None;
            }
            let mut seven = cards_in(before, &hole_of(seat.player));
            seven.extend(board.iter().copied());
            Some(best_value(&seven))
        })
        .collect();
    let committed: Vec<u64> = betting.seats.iter().map(|s| s.committed).collect();
    let folded: Vec<bool> = betting.seats.iter().map(|s| s.folded).collect();
    let contested: Vec<_> = side_pots(&committed, &folded).into_iter().filter(|p| p.eligible.len() > 1).collect();
    let n = betting.seats.len();
    let aggressor = if betting.street == Street::River { betting.last_aggressor } else { None };
    let first = aggressor
        .unwrap_or_else(|| (1..=n).map(|k| (betting.button + k) % n).find(|&s| !folded[s]).unwrap());
    let revealed = turned_up_holes(patches);
    let seat_of = |p: PlayerId| betting.seats.iter().position(|s| s.player == p).unwrap();
    let mut shown_so_far: Vec<usize> = Vec::new();
    let mut expected: Vec<PlayerId> = Vec::new();
    for seat in (0..n).map(|k| (first + k) % n) {
        let value = match values[seat] {
            Some(v) => v,
            None => continue,
        };
        let pots: Vec<_> = contested.iter().filter(|p| p.eligible.contains(&seat)).collect();
        if pots.is_empty() {
            continue;
        }
        let all_in = betting.seats.iter().any(|s| !s.folded && s.all_in);
        let unbeaten_somewhere = all_in || pots.iter().any(|pot| {
            !shown_so_far.iter().any(|&q| pot.eligible.contains(&q) && values[q].unwrap() > value)
        });
        if unbeaten_somewhere {
            shown_so_far.push(seat);
            expected.push(betting.seats[seat].player);
        }
    }
    assert_eq!(revealed, expected, "the showdown revealed the wrong hands");
    for pot in &contested {
        let best = pot.eligible.iter().map(|&s| values[s].unwrap()).max().unwrap();
        for &s in &pot.eligible {
            if values[s] == Some(best) {
                assert!(revealed.contains(&betting.seats[s].player), "a pot winner was not shown");
            }
        }
    }
    for &player in &revealed {
        assert!(!folded[seat_of(player)], "a folded hand was shown");
    }
}
