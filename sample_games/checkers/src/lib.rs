//! English draughts (checkers) for two players, as a tablehost game module.
//!
//! # The table
//!
//! * 32 spaces of kind `"square"`, one per dark square, ids `"a1"`, `"c1"`,
//!   ..., `"h8"` (file then rank, a square is dark when file + rank is even).
//!   A square holds no piece or one, whose `public_kind` is `"dark-man"`,
//!   `"dark-king"`, `"light-man"` or `"light-king"`. A piece jumped in the
//!   multi-jump under way carries `public_state.captured = true` until the move ends.
//! * `meta_data`: see [`turn`] (sides, selection, chain, quiet plies, result).
//! * Score label `"Result"`: 1 for the winner, 0 for the loser, 0.5 each on a
//!   draw, 0 each while the game is on.
//!
//! # The rules
//!
//! 1. The first seat plays dark, on ranks 1-3, and moves first; light starts on ranks 6-8.
//! 2. A man moves one square diagonally forward to an empty square; a king
//!    moves one square diagonally either way.
//! 3. A piece captures by jumping an adjacent opposing piece to the empty
//!    square right beyond it; men jump forward only, kings both ways.
//! 4. Capture is mandatory: when any piece can jump, the player must jump.
//! 5. After a jump, the same piece must jump on while it can (one hop per
//!    action, the player stays active). Jumped pieces stay on the board,
//!    blocking and not jumpable again, until the move ends.
//! 6. A man reaching the far row is crowned king, and that ends the move even
//!    if the new king could jump on.
//! 7. A player with no legal move on their turn loses.
//! 8. After 80 consecutive plies with no capture and no man moving, the game
//!    is drawn (a ply that leaves the opponent without a move wins first).
//!    Option `draw_plies` (20 to 400) changes the 80.
//!
//! # Actions
//!
//! Two clicks per hop: a `piece_click` on a movable piece selects it
//! (`choice`, undoable); then a `space_click` on a destination makes the hop
//! (`confirm`, or `choice` when the piece must jump on, in which case only
//! its next landing squares are offered). While a piece is selected outside a
//! chain, a "Cancel" button (`cancel`, id `"cancel"`) drops the selection.
//! Every hop, crowning and result writes a log line.
//!
//! In-guest playouts and search run on [`compact::CheckersState`] (bit
//! masks), which plays exactly these rules.

pub mod board;
pub mod compact;
mod display;
pub mod rules;
pub mod turn;

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, Rng, Scores, SearchStateOps,
    Table,
};

/// The game module: every method delegates to the rule of the same concern.
pub struct Checkers;

impl Game for Checkers {
    fn metadata() -> Metadata {
        Metadata::players(2, 2)
            .description("English draughts: men move diagonally forward, captures are compulsory, kings move both ways.")
            .option(
                GameOption::integer(turn::DRAW_PLIES, turn::QUIET_PLIES_FOR_DRAW as i64, 20, 400)
                    .describe("consecutive plies without a capture or a man moving that draw the game"),
            )
    }

    fn config(players: &[PlayerId], _options: &Options) -> GameConfig {
        rules::starting_table(players)
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        rules::legal_actions(table, player_id)
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, _rng: &mut Rng) {
        rules::apply(table, player_id, action);
    }

    fn scores(table: &Table) -> Scores {
        rules::result_points(table)
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        rules::has_result(table)
    }

    fn search_state() -> Option<SearchStateOps> {
        Some(SearchStateOps::of::<Checkers, compact::CheckersState>())
    }
}

tablehost_sdk::export_game!(Checkers);
