//! Backgammon for two players, as a tablehost game.
//!
//! Rules:
//!
//! 1. Each side has 15 checkers on 24 points, starting two on its 24-point,
//!    five on its 13, three on its 8 and five on its 6, and moves them
//!    towards its home board (points 1..=6) and off (`board`).
//! 2. Each player rolls one die to start; the higher plays both dice as the
//!    first roll (`game::opening_roll`). After that each turn begins with a
//!    roll of two dice; a double gives four moves (`turn`).
//! 3. A die moves one checker that many points to a point not held by two
//!    or more opposing checkers. Landing on a lone opposing checker (a blot)
//!    hits it to the bar; a player with a checker on the bar must enter it
//!    in the opponent's home board before moving anything else.
//! 4. Once all its checkers are home a side bears off: a die takes off a
//!    checker from the matching point, or from the highest occupied point
//!    when the die is larger than it.
//! 5. A player must use both dice if any legal sequence does (all four of a
//!    double, or as many as possible); if only one die can be used, the
//!    larger one if possible (`board::Board::legal_steps`).
//! 6. Bearing off all 15 wins 1 point, a gammon (the loser bore off none) 2,
//!    a backgammon (and the loser still has a checker on the bar or in the
//!    winner's home board) 3, each times the doubling cube.
//! 7. Doubling cube (option `doubling_cube`, on): before rolling, a player
//!    who owns the cube or while it is in the middle may double; the
//!    opponent takes (the cube doubles and becomes theirs) or drops (and
//!    loses the game at the cube's value). Up to 64.
//! 8. Match play (option `match_length`, 1 point): games are played until a
//!    player has that many points; the Crawford rule holds (no doubling in
//!    the game after a player first reaches match point).
//!
//! Moves: each checker move is picking a checker up then choosing where it
//! goes (both `choice`, undoable) until the player ends the turn
//! (`confirm`). The roll can never be undone (it draws randomness).
//!
//! Options: the ABI cannot pass game options yet; `match_length` and
//! `doubling_cube` are meta data keys `config` writes with their defaults
//! and the rules read back, so only `config` changes once declared options
//! arrive. Scores: `public_points` = [match points, pips to go].

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, Rng, Score, Scores, Table,
};

pub mod board;
pub mod display;
pub mod game;
pub mod layout;
pub mod turn;

use layout::{board, match_points, phase, side_of, Phase};

/// The backgammon game, exported to the host by `export_game!`.
pub struct Backgammon;

impl Game for Backgammon {
    fn metadata() -> Metadata {
        Metadata::players(2, 2)
            .description("Backgammon: race your fifteen checkers home and bear them off; hitting, the bar, the doubling cube.")
            .option(
                GameOption::integer(layout::MATCH_LENGTH, layout::DEFAULT_MATCH_LENGTH as i64, 1, 25)
                    .describe("points to win the match (the Crawford rule applies)"),
            )
            .option(GameOption::boolean(layout::DOUBLING_CUBE, true).describe("play with the doubling cube"))
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        layout::config(players, options)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        for player in table.players() {
            let colour = side_of(table, player).name();
            table.set_player_public_state(player, layout::COLOUR, colour);
            table.set_player_public_state(player, layout::MATCH_POINTS, 0);
        }
        game::opening_roll(table, rng);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        turn::available_actions(table, player_id)
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        turn::apply_action(table, player_id, action, rng);
    }

    fn scores(table: &Table) -> Scores {
        let position = board(table);
        table
            .players()
            .into_iter()
            .map(|player| {
                let pips = position.pips(side_of(table, player));
                (player, Score::public(vec![match_points(table, player) as f64, f64::from(pips)]))
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        phase(table) == Phase::Over
    }
}

tablehost_sdk::export_game!(Backgammon);
