//! Risk for 2 to 6 players on the classic map, as a tablehost game.
//!
//! Rules, each in the module that implements it:
//!
//! 1. The map: 42 territories, 6 continents with their bonuses (`map`).
//! 2. Setup: territories dealt at random or claimed in turn (option), then
//!    the starting armies placed one at a time; two players may play with a
//!    neutral army (option) (`setup`).
//! 3. A turn: reinforce (with card sets), attack, fortify (`turn`); dice
//!    battles (`combat`); cards and sets (`cards`).
//! 4. The game ends when one player holds every territory not neutral, or
//!    after the round limit (option) with the most territories winning.
//!    Scores: territories, then armies.
//!
//! Hidden information: the deck is a collection nobody owns; each player's
//! cards lie in a collection they own (everyone sees how many, only they
//! which); traded cards are turned face up. The options are declared in the
//! metadata (`layout::declared_options`) and copied into meta data.

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, Metadata, Options, PlayerId, Rng, Score, Scores, State, Table,
};

pub mod cards;
pub mod combat;
pub mod display;
pub mod layout;
pub mod map;
pub mod setup;
pub mod turn;

use layout::{armies, held_by, phase, Owner, Phase};

/// The Risk game, exported to the host by `export_game!`.
pub struct Risk;

impl Game for Risk {
    fn metadata() -> Metadata {
        layout::declared_options().into_iter().fold(
            Metadata::players(layout::MIN_PLAYERS as u32, layout::MAX_PLAYERS as u32)
                .description("Risk on the classic 42-territory map: reinforce, attack with dice, fortify, trade cards.")
                .hidden_information(true),
            Metadata::option,
        )
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        layout::config(players, options)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        setup::prepare(table, rng);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        let click = |t: usize, label: String| AvailableAction::confirm(Action::space_click(map::TERRITORIES[t].id), label);
        match phase(table) {
            Phase::Claim => {
                setup::free_territories(table).into_iter().map(|t| click(t, format!("Claim {}", layout::name(t)))).collect()
            }
            Phase::Place => held_by(table, Owner::Player(player_id))
                .into_iter()
                .map(|t| click(t, format!("Place an army on {}", layout::name(t))))
                .collect(),
            _ => turn::offers(table, player_id),
        }
    }

    /// Panics on an action Risk never offers.
    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        match (phase(table), action) {
            (Phase::Claim, Action::SpaceClick { space_id }) => setup::claim(table, player_id, territory(space_id)),
            (Phase::Place, Action::SpaceClick { space_id }) => setup::place(table, player_id, territory(space_id)),
            (Phase::Over, other) => panic!("the game is over: {:?}", other),
            _ => turn::apply(table, player_id, action, rng),
        }
    }

    fn scores(table: &Table) -> Scores {
        table
            .players()
            .into_iter()
            .map(|player| {
                let held = held_by(table, Owner::Player(player));
                let total: u32 = held.iter().map(|&t| armies(table, t)).sum();
                (player, Score::public(vec![held.len() as f64, f64::from(total)]))
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        phase(table) == Phase::Over
    }

    /// The cards hidden from `viewer` (the other players' cards, the deck,
    /// the discards) dealt again at random among the face-down places they
    /// occupy. How many cards each player holds stays as the view shows it.
    fn sample_hidden(view: &Table, _viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        use tablehost_sdk::face_down::Face;
        let faces: Vec<String> = cards::RiskCard::deck().into_iter().map(|card| card.face()).collect();
        Some(tablehost_sdk::hidden::deal_unseen(view, tablehost_sdk::face_down::BACK, &faces, rng))
    }
}

fn territory(space_id: &str) -> usize {
    map::index_of(space_id).unwrap_or_else(|| panic!("no territory {:?}", space_id))
}

tablehost_sdk::export_game!(Risk);
