//! The start and the end of a round: the deal, the lead, and the count.

use tablehost_sdk::face_down::{self, turn_face_up};
use tablehost_sdk::{json, LogEntry, PlayerId, Rng, Table};

use crate::layout::{hand_of, hand_pips, hand_tiles, tiles_per_hand, BONEYARD, POINTS, RESULT, TILES_PER_HAND};
use crate::tile::Tile;

/// Deals `tiles_per_hand` tiles to every hand, one at a time in seat order,
/// each drawn from a random position of the boneyard.
///
/// The boneyard is a collection, so its order is never shown; drawing random
/// positions is what makes the deal random.
pub fn deal(table: &mut Table, rng: &mut Rng) {
    let hands: Vec<String> = table.players().into_iter().map(hand_of).collect();
    let count = table
        .meta(TILES_PER_HAND)
        .and_then(|v| v.as_u64())
        .map_or_else(|| tiles_per_hand(hands.len()), |n| n as usize);
    face_down::deal(table, rng, BONEYARD, &hands, count);
}

/// The tile a hand would lead with: its highest ranked tile (see `Tile::lead_rank`).
pub fn best_lead(table: &Table, player: PlayerId) -> Option<(usize, Tile)> {
    hand_tiles(table, player)
        .into_iter()
        .max_by_key(|(_, tile)| tile.lead_rank())
}

/// Who leads: the holder of the highest double, or of the highest tile if
/// no double was dealt.
pub fn leader(table: &Table) -> PlayerId {
    table
        .players()
        .into_iter()
        .filter_map(|player| best_lead(table, player).map(|(_, tile)| (tile.lead_rank(), player)))
        .max()
        .map(|(_, player)| player)
        .expect("tiles were dealt")
}

/// Makes the leader active and says so, without naming their tile (they play
/// it themselves as their first move: it is the only action they are offered).
pub fn start_round(table: &mut Table) {
    let first = leader(table);
    table.set_active_players(vec![first]);
    let text = format!("{} holds the highest tile and leads", table.player_name(first));
    table.log(LogEntry::new(text));
}

/// How a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A player laid their last tile.
    Domino(PlayerId),
    /// Every player passed in turn with the boneyard empty: nobody can play.
    Blocked,
}

/// The winner of a round, if any.
///
/// Rule: a player who dominoes wins. A blocked round goes to the player with
/// the fewest pips in hand; when several tie for fewest nobody wins and
/// nobody scores.
pub fn winner(table: &Table, ending: Ending) -> Option<PlayerId> {
    match ending {
        Ending::Domino(player) => Some(player),
        Ending::Blocked => {
            let counts: Vec<(u32, PlayerId)> = table.players().into_iter().map(|p| (hand_pips(table, p), p)).collect();
            let fewest = counts.iter().map(|(pips, _)| *pips).min()?;
            let mut lowest = counts.iter().filter(|(pips, _)| *pips == fewest);
            match (lowest.next(), lowest.next()) {
                (Some((_, player)), None) => Some(*player),
                _ => None,
            }
        }
    }
}

/// The winner's points: the pips left in every other hand.
pub fn points_for(table: &Table, winner: PlayerId) -> u32 {
    table
        .players()
        .into_iter()
        .filter(|&p| p != winner)
        .map(|p| hand_pips(table, p))
        .sum()
}

/// Ends the round: turns every hand face up (the count is done in the open),
/// awards the winner's points, records the result in meta data and leaves
/// nobody active.
pub fn end_round(table: &mut Table, ending: Ending) {
    reveal_hands(table);
    let winner = winner(table, ending);
    let reason = match ending {
        Ending::Domino(_) => "domino",
        Ending::Blocked => "blocked",
    };
    let text = match winner {
        Some(player) => {
            let points = points_for(table, player);
            table.set_player_public_state(player, POINTS, json!(points));
            match ending {
                Ending::Domino(_) => format!("{} dominoes and scores {}", table.player_name(player), points),
                Ending::Blocked => {
                    format!(
                        "The line is blocked: {} holds the fewest pips and scores {}",
                        table.player_name(player),
                        points
                    )
                }
            }
        }
        None => "The line is blocked and the fewest pips are tied: nobody scores".to_string(),
    };
    table.set_meta(RESULT, json!({"winner": winner, "reason": reason}));
    table.set_active_players(Vec::new());
    table.log(LogEntry::new(text));
}

/// Turns every tile left in a hand face up.
///
/// On a player's view (the rules running in a browser, docs/abi.md section 18)
/// other hands' tiles are unknown: they stay face down there, and the server's
/// answer shows them.
fn reveal_hands(table: &mut Table) {
    for player in table.players() {
        let hand = hand_of(player);
        for index in 0..table.space(&hand).pieces.len() {
            if table.piece(&hand, index).private_kind.is_some() {
                turn_face_up(table, &hand, index);
            }
        }
    }
}
