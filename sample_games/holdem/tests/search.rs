//! Information-set search on holdem: `sample_hidden` fits every seat's view,
//! and a search from a seat's view answers one of that seat's offers
//! (the checks themselves live in `tablehost_sdk::testing`).

use holdem::Holdem;
use tablehost_sdk::testing::{assert_ismcts_answers_an_offer, assert_samples_fit_every_view};

const PLAYERS: &[u32] = &[1, 2, 3];

#[test]
fn samples_fit_every_seats_view_along_random_games() {
    assert_samples_fit_every_view::<Holdem>(PLAYERS);
}

#[test]
fn ismcts_answers_one_of_the_seats_offers() {
    assert_ismcts_answers_an_offer::<Holdem>(PLAYERS);
}
