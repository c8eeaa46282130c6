//! No-limit Texas hold'em for 2 to 9 players, as a tablehost game.
//!
//! Rules, each in the module that implements it:
//!
//! 1. Every player starts with the same stack (option `starting_stack`). A
//!    button moves left each hand; the two players after it post the small
//!    and big blinds (options `small_blind`, `big_blind`); heads up the
//!    button posts the small blind (`betting`, `hand`).
//! 2. Each player gets two hole cards only they see; five board cards come
//!    face up, three, one and one, each followed by a betting round (`hand`).
//! 3. Betting is no-limit: fold, check, call, bet or raise any amount from
//!    the minimum raise up to all in; a short all-in raise does not reopen
//!    the betting (`betting`). Sizes are offered as buttons (`offers`).
//! 4. All-ins for different amounts make side pots (`pots`); at the showdown
//!    only the hands that could win something are shown, in the order of
//!    `showdown`; the best five of seven cards wins (`ranking`); equal hands
//!    split, odd chips from the first seat left of the button.
//! 5. A player with no chips is out. The game ends when one player has every
//!    chip or after `hand_limit` hands (0: no limit); scores are chips.
//!
//! Hidden information: the deck and the muck are collections nobody owns;
//! each player's hole cards lie in a collection they own; cards are turned
//! face up only on the board and at a showdown. The options are declared in
//! the metadata (`layout::declared_options`) and copied into meta data.

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, Metadata, Options, PlayerId, Rng, Score, Scores, State, Table,
};

pub mod betting;
pub mod cards;
pub mod display;
pub mod hand;
pub mod layout;
pub mod offers;
pub mod pots;
pub mod ranking;
pub mod showdown;

/// The hold'em game, exported to the host by `export_game!`.
pub struct Holdem;

impl Game for Holdem {
    fn metadata() -> Metadata {
        layout::declared_options().into_iter().fold(
            Metadata::players(layout::MIN_PLAYERS as u32, layout::MAX_PLAYERS as u32)
                .description("No-limit Texas hold'em: blinds, four betting rounds, side pots, showdown.")
                .hidden_information(true),
            Metadata::option,
        )
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        layout::config(players, options)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        hand::start_game(table, rng);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if layout::is_over(table) || !table.is_active(player_id) {
            return Vec::new();
        }
        offers::offers(&layout::betting(table))
    }

    /// Panics on an action hold'em never offers.
    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        match action {
            Action::ButtonClick { button } => hand::act(table, player_id, offers::move_of(&button.id), rng),
            other => panic!("hold'em does not offer {:?}", other),
        }
    }

    fn scores(table: &Table) -> Scores {
        table
            .players()
            .into_iter()
            .map(|player| (player, Score::public(vec![layout::chips_of(table, player) as f64])))
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        layout::is_over(table)
    }

    /// The cards hidden from `viewer` (the others' hole cards, the deck, the
    /// muck) dealt again at random among the face-down places they occupy.
    fn sample_hidden(view: &Table, _viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        use tablehost_sdk::face_down::Face;
        let faces: Vec<String> = cards::Card::deck().into_iter().map(|card| card.face()).collect();
        Some(tablehost_sdk::hidden::deal_unseen(view, tablehost_sdk::face_down::BACK, &faces, rng))
    }
}

tablehost_sdk::export_game!(Holdem);
