//! Reversi for two players on an 8x8 board, as a tablehost game module.
//!
//! # The table
//!
//! * 64 spaces of kind `"square"`, one per square, with ids `"a1"` ..= `"h8"`
//!   (file then rank; `a1` bottom left from dark's side). A square holds no
//!   piece or one disc whose `public_kind` is `"dark"` or `"light"`.
//! * `meta_data`: `{"dark": <player id>, "light": <player id>}`.
//! * Score label `"Discs"`: each player's discs on the board.
//!
//! # The rules
//!
//! 1. The first seat plays dark, the second light; dark moves first.
//! 2. The game starts with light on d4 and e5, dark on d5 and e4.
//! 3. A move places one disc on an empty square so that at least one straight
//!    line (any of eight directions) of opposing discs runs from it to a disc
//!    of the mover's colour; every such line is turned over.
//! 4. A player with no legal placement passes. Passing is automatic: the move
//!    that leaves the opponent without a placement logs the pass and the mover
//!    stays active. No "Pass" button is ever offered.
//! 5. The game ends when neither player can place (a full board included);
//!    nobody is active then. The player with more discs wins.
//!
//! Option `opening`: `"cross"` (rule 2, the default) or `"parallel"` (light
//! on d4 and e4, dark on d5 and e5).
//!
//! # Actions
//!
//! The active player is offered a `space_click` on every legal square, each a
//! `confirm` labelled with the square's name. Every move writes one log line.
//!
//! In-guest playouts and search run on [`compact::ReversiState`] (bitboards),
//! which plays exactly these rules.

pub mod board;
pub mod compact;
mod display;
mod lanes;
pub mod rules;

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, Rng, Scores, SearchStateOps,
    Summary, Table,
};

/// The game module: every method delegates to the rule of the same concern.
pub struct Reversi;

impl Game for Reversi {
    fn metadata() -> Metadata {
        Metadata::players(2, 2)
            .description("Reversi on an 8x8 board: outflank and turn over your opponent's discs; most discs wins.")
            .option(
                GameOption::choice(rules::OPENING, "cross", &["cross", "parallel"])
                    .describe("the four starting discs: crossed (standard) or side by side"),
            )
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        rules::starting_table(players, options)
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        rules::legal_actions(table, player_id)
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, _rng: &mut Rng) {
        rules::place_disc(table, player_id, action);
    }

    fn scores(table: &Table) -> Scores {
        rules::disc_counts(table)
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        rules::neither_can_place(table)
    }

    fn summary(table: &Table) -> Summary {
        rules::summary(table)
    }

    fn search_state() -> Option<SearchStateOps> {
        Some(SearchStateOps::of::<Reversi, compact::ReversiState>())
    }
}

tablehost_sdk::export_game!(Reversi);
