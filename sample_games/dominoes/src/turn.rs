//! A turn: play a tile if you can; if you cannot, draw until you can or the
//! boneyard is empty; then, still unable, pass.
//!
//! Actions offered to the player whose turn it is:
//!
//! | situation | action | intent |
//! | --- | --- | --- |
//! | a tile fits one place | `piece_click` on it in the hand | confirm |
//! | a tile fits two different ends | buttons `play-left-<i>`, `play-right-<i>` (`i` = hand index) | confirm |
//! | nothing fits, boneyard not empty | `piece_click` on every boneyard tile (all alike) | choice |
//! | nothing fits, boneyard empty | button `pass` | confirm |
//!
//! The round's first tile is not played automatically: the leader is offered
//! exactly one action, laying their highest tile. A draw is a `piece_click` on
//! the boneyard, which the host resolves to a random tile of the face-down
//! group, so the player cannot pick a tile and the move can never be undone.

use tablehost_sdk::{json, Action, AvailableAction, Button, LogEntry, PlayerId, Table};

use crate::layout::{hand_of, hand_tiles, result, tile_of, BONEYARD, LINE, PASSES_IN_A_ROW};
use crate::line::{lay_tile, open_ends, placements, End};
use crate::round::{best_lead, end_round, Ending};
use crate::tile::Tile;

/// The id of the pass button.
pub const PASS: &str = "pass";

/// A legal play: the tile at `index` of the hand, laid on `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Play {
    pub index: usize,
    pub tile: Tile,
    pub end: End,
}

/// Every legal play for `player` now.
///
/// Rule: the round opens with the leader's highest tile; after that any tile
/// with an end matching an open end may be laid there.
pub fn legal_plays(table: &Table, player: PlayerId) -> Vec<Play> {
    let ends = open_ends(table);
    if ends.is_none() {
        return best_lead(table, player)
            .map(|(index, tile)| Play {
                index,
                tile,
                end: End::Right,
            })
            .into_iter()
            .collect();
    }
    hand_tiles(table, player)
        .into_iter()
        .flat_map(|(index, tile)| {
            placements(tile, ends)
                .into_iter()
                .map(move |end| Play { index, tile, end })
        })
        .collect()
}

/// The actions offered to `player` (empty unless it is their turn in a live round).
pub fn available_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    if result(table).is_some() || !table.is_active(player) {
        return Vec::new();
    }
    let plays = legal_plays(table, player);
    if !plays.is_empty() {
        if open_ends(table).is_none() {
            let lead = plays[0];
            let label = format!("Lead {}", lead.tile.face());
            return vec![AvailableAction::confirm(
                Action::piece_click(hand_of(player), lead.index),
                label,
            )];
        }
        return plays.iter().map(|play| offer_play(player, play, &plays)).collect();
    }
    let boneyard = table.space(BONEYARD).pieces.len();
    if boneyard > 0 {
        return (0..boneyard)
            .map(|index| AvailableAction::choice(Action::piece_click(BONEYARD, index), "Draw a tile from the boneyard"))
            .collect();
    }
    vec![AvailableAction::confirm(pass_action(), "Pass")]
}

/// A play as an action: a click on the tile when it has one place, else one
/// button per end. Labels name the tile: only its holder is offered them.
fn offer_play(player: PlayerId, play: &Play, all: &[Play]) -> AvailableAction {
    let places = all.iter().filter(|other| other.index == play.index).count();
    let label = format!("Play {} on the {} end", play.tile.face(), play.end.name());
    let action = if places == 1 {
        Action::piece_click(hand_of(player), play.index)
    } else {
        Action::button_click(Button::new(play_button_id(play.end, play.index), label.clone()))
    };
    AvailableAction::confirm(action, label)
}

/// The id of the button laying hand tile `index` on `end`: `play-left-3`.
pub fn play_button_id(end: End, index: usize) -> String {
    format!("play-{}-{}", end.name(), index)
}

/// Reads a play button id back into (end, hand index).
fn parse_play_button(id: &str) -> Option<(End, usize)> {
    let rest = id.strip_prefix("play-")?;
    let (end, index) = rest.split_once('-')?;
    let end = match end {
        "left" => End::Left,
        "right" => End::Right,
        _ => return None,
    };
    Some((end, index.parse().ok()?))
}

/// The pass action (offered only when nothing fits and the boneyard is empty).
pub fn pass_action() -> Action {
    Action::button_click(Button::new(PASS, "Pass"))
}

/// Carries out `action` by `player`, which the host checked was offered.
///
/// Panics on an action dominoes never offers.
pub fn apply_action(table: &mut Table, player: PlayerId, action: &Action) {
    let hand = hand_of(player);
    match action {
        Action::PieceClick { space_id, index } if *space_id == hand => {
            let play = legal_plays(table, player)
                .into_iter()
                .find(|play| play.index == *index)
                .expect("an offered tile has a place");
            play_tile(table, player, play.index, play.end);
        }
        Action::PieceClick { space_id, index } if space_id == BONEYARD => draw(table, player, *index),
        Action::ButtonClick { button } if button.id == PASS => pass(table, player),
        Action::ButtonClick { button } => match parse_play_button(&button.id) {
            Some((end, index)) => play_tile(table, player, index, end),
            None => panic!("dominoes has no button {:?}", button.id),
        },
        other => panic!("dominoes never offers {:?}", other),
    }
}

/// Lays a tile; an empty hand ends the round (domino), otherwise play passes on.
fn play_tile(table: &mut Table, player: PlayerId, index: usize, end: End) {
    let tile = lay_tile(table, player, index, end);
    table.set_space_public_state(LINE, PASSES_IN_A_ROW, json!(0));
    let text = format!(
        "{} played {} on the {} end",
        table.player_name(player),
        tile.face(),
        end.name()
    );
    table.log(LogEntry::new(text));
    if table.space(&hand_of(player)).pieces.is_empty() {
        end_round(table, Ending::Domino(player));
    } else {
        let next = table.seat_after(player, 1);
        table.set_active_players(vec![next]);
    }
}

/// Draws the boneyard tile at `index` into the hand; the turn goes on (the
/// player plays it if it fits, or draws again, or passes).
fn draw(table: &mut Table, player: PlayerId, index: usize) {
    let hand = hand_of(player);
    let at = table.move_piece(BONEYARD, index, &hand);
    let face = tile_of(table.piece(&hand, at)).map(Tile::face).unwrap_or_default();
    let name = table.player_name(player);
    table.log(LogEntry::new(format!("{} drew a tile", name)).for_player(player, format!("You drew {}", face)));
}

/// Passes; when everyone has passed in a row nobody can play and the round is blocked.
fn pass(table: &mut Table, player: PlayerId) {
    let passes = table
        .space(LINE)
        .public(PASSES_IN_A_ROW)
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
        + 1;
    table.set_space_public_state(LINE, PASSES_IN_A_ROW, json!(passes));
    let text = format!("{} passed", table.player_name(player));
    table.log(LogEntry::new(text));
    if passes as usize >= table.players().len() {
        end_round(table, Ending::Blocked);
    } else {
        let next = table.seat_after(player, 1);
        table.set_active_players(vec![next]);
    }
}
