//! Dominoes, the block-and-draw game with a double-six set, as a tablehost game.
//!
//! Rules, one round being the whole game:
//!
//! 1. 2 to 4 players. Each draws 7 tiles with two players, 5 with three or
//!    four (option `tiles_per_hand`: 1 to 7 sets another count), at random
//!    from the face-down boneyard (`round::deal`).
//! 2. The holder of the highest double leads it; if no double was dealt, the
//!    holder of the highest tile leads that (`round::leader`). The lead is the
//!    leader's first move, not automatic: it is the only action offered.
//! 3. In turn, each player lays one tile with an end matching an open end of
//!    the line; a tile that fits both ends may go to either (`line::placements`).
//! 4. A player who cannot play draws from the boneyard until able or the
//!    boneyard is empty, then passes (`turn`).
//! 5. The round ends when a player lays their last tile, or when every player
//!    has passed in a row so nobody can play (blocked) (`round::end_round`).
//! 6. The winner scores the pips left in the other hands. A blocked round goes
//!    to the fewest pips in hand; if that is tied, nobody scores.
//!
//! Hidden information: hands are collections owned by their holders, the
//! boneyard a collection nobody owns, and each hidden tile a `back` hiding its
//! face (see `layout`). Public points are 0 until the round ends; each player's
//! `private_points[0]` is the pips in their own hand.

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, Rng, Score, Scores, State,
    Table,
};

pub mod display;
pub mod layout;
pub mod line;
pub mod round;
pub mod tile;
pub mod turn;

use layout::{hand_pips, result, POINTS};

/// The dominoes game, exported to the host by `export_game!`.
pub struct Dominoes;

impl Game for Dominoes {
    fn metadata() -> Metadata {
        Metadata::players(layout::MIN_PLAYERS as u32, layout::MAX_PLAYERS as u32)
            .description("Block-and-draw dominoes with a double-six set: match an open end or draw; first out wins the pips left.")
            .hidden_information(true)
            .option(
                GameOption::integer(layout::TILES_PER_HAND, 0, 0, 7)
                    .describe("tiles dealt to each hand; 0: 7 with two players, 5 with three or four"),
            )
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        layout::config(players, options)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        round::deal(table, rng);
        round::start_round(table);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        turn::available_actions(table, player_id)
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, _rng: &mut Rng) {
        turn::apply_action(table, player_id, action);
    }

    /// `public_points[0]`: points won this round (0 until it ends);
    /// `private_points[0]`: pips still in the player's own hand.
    fn scores(table: &Table) -> Scores {
        table
            .players()
            .into_iter()
            .map(|player| {
                let won = table
                    .player(player)
                    .public(POINTS)
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
                let score = Score {
                    public_points: vec![won],
                    private_points: vec![f64::from(hand_pips(table, player))],
                };
                (player, score)
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        result(table).is_some()
    }

    /// The tiles the viewer has not seen (not in their hand, not on the
    /// line) dealt at random to the face-down tiles of the other hands and
    /// the boneyard.
    fn sample_hidden(view: &Table, _viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        let faces: Vec<String> = tile::Tile::double_six_set().into_iter().map(tile::Tile::face).collect();
        Some(tablehost_sdk::hidden::deal_unseen(view, layout::BACK, &faces, rng))
    }
}

tablehost_sdk::export_game!(Dominoes);
