//! Information-set search on hearts: `sample_hidden` fits the view, and a
//! search from a seat's view answers one of that seat's offers.

use hearts::layout::card_of;
use hearts::Hearts;
use tablehost_sdk::face_down::Face;
use tablehost_sdk::mcts::{search, Budget, Search};
use tablehost_sdk::{new_match, play, Game, PlayerId, Rng, State, Table};

/// The state as `viewer` sees it: every face hidden from them removed.
fn view_of(state: &State, viewer: PlayerId) -> State {
    let mut view = state.clone();
    for space in &mut view.spaces {
        let space_owner = space.owner;
        for piece in &mut space.pieces {
            if piece.owner.or(space_owner) != Some(viewer) {
                piece.private_kind = None;
            }
        }
    }
    view
}

fn midgame(seed: u64, plies: usize) -> Table {
    let mut table = new_match::<Hearts>(&[1, 2, 3, 4], seed);
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let player = table.active_players()[0];
        let offered = Hearts::available_actions(&table, player);
        let confirm_or_choice: Vec<_> = offered.iter().filter(|a| a.label.starts_with("Select") || a.label.starts_with("Pass") || a.label.starts_with("Play")).collect();
        let pick = confirm_or_choice[rng.below(confirm_or_choice.len())];
        play::<Hearts>(&mut table, player, &pick.action, rng.next_u64());
    }
    table
}

#[test]
fn a_sample_keeps_what_the_viewer_sees_and_deals_every_card_once() {
    let table = midgame(3, 30);
    let view = Table::new(view_of(table.state(), 1));
    let sample = Hearts::sample_hidden(&view, 1, &mut Rng::new(9)).expect("hearts samples");
    let mut faces: Vec<String> = Vec::new();
    for (space, seen) in sample.spaces.iter().zip(&view.state().spaces) {
        assert_eq!(space.pieces.len(), seen.pieces.len());
        for (piece, was) in space.pieces.iter().zip(&seen.pieces) {
            if was.private_kind.is_some() {
                assert_eq!(piece.private_kind, was.private_kind, "a card the viewer sees stays");
            }
            faces.push(card_of(piece).expect("every card has a face").face());
        }
    }
    faces.sort();
    faces.dedup();
    assert_eq!(faces.len(), 52);
}

#[test]
fn ismcts_answers_one_of_the_seats_offers() {
    let table = midgame(5, 20);
    let player = table.active_players()[0];
    let view = view_of(table.state(), player);
    let started = std::time::Instant::now();
    let budget = Budget { iterations: 20, exploration: 1.0, max_playout_plies: 200 };
    let decision = search::<Hearts>(&view, player, Search::Ismcts, budget, 7).expect("a decision");
    println!("20 iterations: {:?}", started.elapsed());
    let offered = Hearts::available_actions(&table, player);
    assert!(offered.iter().any(|offer| offer.action == decision.offer.action));
    assert!(decision.visits >= 1);
}
