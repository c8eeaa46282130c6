//! The rules of a turn, read from and written to the `Table`.
//!
//! Each function reads the table at most once into a [`Board`] (one pass over
//! the 64 square spaces) and answers from the bitboards.

use tablehost_sdk::{
    json, Action, AvailableAction, GameConfig, LogEntry, Map, Options, Piece, PlayerId, Score, Scores, Space,
    StartingPlayer, Summary, Table,
};

use crate::board::{parse_square, square_name, squares, Board, Colour, Square};

/// The kind of every square space.
pub const SQUARE_KIND: &str = "square";

/// The option naming the opening: `"cross"` (standard) or `"parallel"`.
pub const OPENING: &str = "opening";

/// Set-up rule: 64 empty-or-one-disc square spaces `a1`..`h8` with the
/// four-disc opening (crossed, or side by side with `opening = "parallel"`);
/// the first seat plays dark and moves first.
///
/// `players`: the two seated player ids in seat order.
/// Panics unless exactly two players are seated.
pub fn starting_table(players: &[PlayerId], options: &Options) -> GameConfig {
    assert_eq!(players.len(), 2, "reversi is played by exactly two players, got {}", players.len());
    let opening = match options.0.get(OPENING).and_then(|v| v.as_str()) {
        Some("parallel") => Board::parallel_opening(),
        _ => Board::opening(),
    };
    let spaces = (0..64u8)
        .map(|square| {
            let space = Space::new(square_name(square), SQUARE_KIND);
            match opening.colour_at(square) {
                Some(colour) => space.with_piece(Piece::new(colour.kind())),
                None => space,
            }
        })
        .collect();
    let mut meta_data = Map::new();
    meta_data.insert("dark".to_owned(), json!(players[0]));
    meta_data.insert("light".to_owned(), json!(players[1]));
    meta_data.insert("display".to_owned(), crate::display::hints(players));
    GameConfig {
        spaces,
        score_labels: vec!["Discs".to_owned()],
        meta_data,
        starting_player: StartingPlayer::Player(players[0]),
    }
}

/// The board as the table shows it: one pass over the spaces; a space whose id
/// names a square holds that square's disc as its first piece, if any.
/// (Matching the two-byte id is cheaper than comparing kinds, and this runs
/// several times per move.)
pub fn read_board(table: &Table) -> Board {
    let mut board = Board::default();
    for space in &table.state().spaces {
        // Most squares are empty early in a game: look at the id only under a disc.
        let disc = match space.pieces.first() {
            Some(piece) => Colour::from_kind(&piece.public_kind),
            None => continue,
        };
        if let (Some(colour), Some(square)) = (disc, parse_square(&space.space_id)) {
            board.put(square, colour);
        }
    }
    board
}

/// Seating rule: the first seat plays dark, the second light.
pub fn colour_of(table: &Table, player: PlayerId) -> Colour {
    if table.seat_of(player) == 0 {
        Colour::Dark
    } else {
        Colour::Light
    }
}

/// The player who plays `colour`.
pub fn player_of(table: &Table, colour: Colour) -> PlayerId {
    let seat = match colour {
        Colour::Dark => 0,
        Colour::Light => 1,
    };
    table.state().players[seat].player_id
}

/// What the active player may do: click any empty square where a disc would
/// flip at least one line (each offered as a `confirm`, labelled like `"d3"`).
/// Nobody else may do anything.
pub fn legal_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    if !table.is_active(player) {
        return Vec::new();
    }
    placement_actions(read_board(table).legal_placements(colour_of(table, player)))
}

/// A `confirm` click labelled with the square's name for each square of `placements`, in square order.
fn placement_actions(placements: u64) -> Vec<AvailableAction> {
    let mut actions = Vec::with_capacity(placements.count_ones() as usize);
    actions.extend(
        squares(placements)
            .map(|square| AvailableAction::confirm(Action::space_click(square_name(square)), square_name(square))),
    );
    actions
}

/// Scores, game over and the active players' actions from one reading of the
/// board: what [`disc_counts`], [`neither_can_place`] and [`legal_actions`]
/// give one by one (the SDK's `Game::summary`; a test checks they agree).
pub fn summary(table: &Table) -> Summary {
    let board = read_board(table);
    let scores = scores_of(table, &board);
    let dark = board.legal_placements(Colour::Dark);
    let light = board.legal_placements(Colour::Light);
    let game_over = dark == 0 && light == 0;
    let actions = if game_over {
        Vec::new()
    } else {
        table
            .active_players()
            .iter()
            .map(|&player| {
                let placements = match colour_of(table, player) {
                    Colour::Dark => dark,
                    Colour::Light => light,
                };
                (player, placement_actions(placements))
            })
            .collect()
    };
    Summary { scores, game_over, actions }
}

/// Placement rule: put a disc of the player's colour on the clicked square and
/// turn over every line it closes off, then hand over the turn.
///
/// Panics when `action` is not a click on an empty square that flips something
/// (the host only forwards offered actions, so this is a bug).
pub fn place_disc(table: &mut Table, player: PlayerId, action: &Action) {
    let square = clicked_square(action);
    let board = read_board(table);
    let colour = colour_of(table, player);
    let flipped = board.flips(colour, square);
    assert!(flipped != 0, "{} flips no disc for {}", square_name(square), colour.kind());

    table.add_piece(square_name(square), Piece::new(colour.kind()));
    for turned in squares(flipped) {
        table.set_public_kind(square_name(turned), 0, colour.kind());
    }
    let line = placement_line(table, player, colour, square, flipped.count_ones());
    table.log(LogEntry::new(line));
    hand_over_turn(table, &board.after_placement(colour, square, flipped), colour);
}

/// The log line of a placement, e.g. `"ann places dark on f5 and turns over 2 discs"`.
/// Written piece by piece: `format!` cost a tenth of a move's wasm instructions.
fn placement_line(table: &Table, player: PlayerId, colour: Colour, square: Square, turned: u32) -> String {
    let mut line = String::with_capacity(64);
    let username = &table.player(player).username;
    if username.is_empty() {
        line.push_str(&format!("player {}", player));
    } else {
        line.push_str(username);
    }
    line.push_str(" places ");
    line.push_str(colour.kind());
    line.push_str(" on ");
    line.push_str(square_name(square));
    line.push_str(" and turns over ");
    push_small_number(&mut line, turned);
    line.push_str(if turned == 1 { " disc" } else { " discs" });
    line
}

/// Append `n` in decimal (without `format!`: a move's log line needs only small counts).
fn push_small_number(out: &mut String, n: u32) {
    if n >= 10 {
        push_small_number(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// The square a `space_click` names. Panics on any other action.
fn clicked_square(action: &Action) -> Square {
    match action {
        Action::SpaceClick { space_id } => match parse_square(space_id) {
            Some(square) => square,
            None => panic!("{:?} is not a square", space_id),
        },
        other => panic!("reversi only takes square clicks, got {:?}", other),
    }
}

/// Turn rule: the opponent moves next if they can place; a player who cannot
/// place passes automatically (logged) and the mover goes again; when neither
/// can place the game ends and nobody is active.
fn hand_over_turn(table: &mut Table, board: &Board, mover: Colour) {
    let next = mover.opponent();
    if board.can_place(next) {
        table.set_active_players(vec![player_of(table, next)]);
    } else if board.can_place(mover) {
        let passer = display_name(table, player_of(table, next));
        table.log(LogEntry::new(format!("{} has no legal placement and passes", passer)));
        // The mover is already the active player: nothing to change.
    } else {
        table.set_active_players(Vec::new());
        table.log(LogEntry::new(format!(
            "Neither player can place: game over, dark {} to light {}",
            board.count(Colour::Dark),
            board.count(Colour::Light)
        )));
    }
}

/// Scoring rule: each player scores the discs of their colour on the board.
pub fn disc_counts(table: &Table) -> Scores {
    scores_of(table, &read_board(table))
}

/// The scores of `board` (see [`disc_counts`]).
fn scores_of(table: &Table, board: &Board) -> Scores {
    [Colour::Dark, Colour::Light]
        .iter()
        .map(|&colour| (player_of(table, colour), Score::public(vec![f64::from(board.count(colour))])))
        .collect()
}

/// End rule: the game is over when neither player can place a disc.
pub fn neither_can_place(table: &Table) -> bool {
    read_board(table).neither_can_place()
}

/// How the log names a player: their username, else `player <id>`.
fn display_name(table: &Table, player: PlayerId) -> String {
    let username = &table.player(player).username;
    if username.is_empty() {
        format!("player {}", player)
    } else {
        username.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tablehost_sdk::new_match;

    /// The line as `format!` words it (what the placement rule wrote before it was built by hand).
    fn formatted(table: &Table, player: PlayerId, colour: Colour, square: Square, turned: u32) -> String {
        let noun = if turned == 1 { "disc" } else { "discs" };
        format!(
            "{} places {} on {} and turns over {} {}",
            display_name(table, player),
            colour.kind(),
            square_name(square),
            turned,
            noun
        )
    }

    #[test]
    fn placement_lines_match_the_formatted_words() {
        let unnamed = new_match::<crate::Reversi>(&[1, 2], 7);
        let mut state = unnamed.state().clone();
        state.players[1].username = "Ann".to_owned();
        let named = Table::new(state);
        for table in [&unnamed, &named] {
            for player in [1, 2] {
                for square in [0u8, 19, 63] {
                    for turned in 0..=40u32 {
                        let colour = colour_of(table, player);
                        assert_eq!(
                            placement_line(table, player, colour, square, turned),
                            formatted(table, player, colour, square, turned)
                        );
                    }
                }
            }
        }
    }
}
