//! The pass: before play, each player passes three cards to another, left,
//! right, across, then no pass, round by round.
//!
//! All four choose at the same time, so all four are active. Selecting a card
//! moves it from the hand to the player's own pass pile (`choice`, undoable);
//! clicking a card in the pass pile puts it back (`cancel`, undoable); with
//! three selected the `pass` button (`confirm`, not undoable) commits them and
//! the player stops being active. When the last player commits, the cards change
//! hands and each player is told, in a log line only they read, what they got.

use tablehost_sdk::{Action, AvailableAction, Button, LogEntry, PlayerId, Table};

use crate::card::Card;
use crate::layout::{cards_in, hand_of, list_cards, pass_pile_of, round_number};

/// Cards each player passes.
pub const CARDS_TO_PASS: usize = 3;
/// The id of the button that commits the pass.
pub const PASS: &str = "pass";

/// Where the cards go this round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Left,
    Right,
    Across,
    Hold,
}

impl Direction {
    /// Rule: round 1 passes left, 2 right, 3 across, 4 not at all, then again.
    pub fn of_round(round: u64) -> Direction {
        match round.saturating_sub(1) % 4 {
            0 => Direction::Left,
            1 => Direction::Right,
            2 => Direction::Across,
            _ => Direction::Hold,
        }
    }

    /// How many seats on from the passer the receiver sits (0 when nobody passes).
    pub fn seats_on(self) -> usize {
        match self {
            Direction::Left => 1,
            Direction::Across => 2,
            Direction::Right => 3,
            Direction::Hold => 0,
        }
    }

    /// The word kept in meta data and used in the log.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Left => "left",
            Direction::Right => "right",
            Direction::Across => "across",
            Direction::Hold => "none",
        }
    }
}

/// The passing direction of the round in play.
pub fn current_direction(table: &Table) -> Direction {
    Direction::of_round(round_number(table))
}

/// Who receives `player`'s cards this round.
pub fn receiver_of(table: &Table, player: PlayerId) -> PlayerId {
    table.seat_after(player, current_direction(table).seats_on())
}

/// What `player` may do while choosing: select a hand card (while fewer than
/// three are chosen), withdraw a chosen card, or pass the three.
pub fn passing_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    let hand = hand_of(player);
    let pile = pass_pile_of(player);
    let chosen = cards_in(table, &pile);
    let mut actions = Vec::new();
    if chosen.len() < CARDS_TO_PASS {
        for (index, card) in cards_in(table, &hand) {
            let label = format!("Select {} to pass", card.name());
            actions.push(AvailableAction::choice(Action::piece_click(hand.clone(), index), label));
        }
    }
    for (index, card) in &chosen {
        let label = format!("Withdraw {}", card.name());
        actions.push(AvailableAction::cancel(
            Action::piece_click(pile.clone(), *index),
            label,
        ));
    }
    if chosen.len() == CARDS_TO_PASS {
        let label = format!("Pass the three cards {}", current_direction(table).name());
        actions.push(AvailableAction::confirm(pass_action(), label));
    }
    actions
}

/// The button that commits a pass.
pub fn pass_action() -> Action {
    Action::button_click(Button::new(PASS, "Pass the cards"))
}

/// Chooses the hand card at `index` for passing (undoable).
pub fn select(table: &mut Table, player: PlayerId, index: usize) {
    table.move_piece(&hand_of(player), index, &pass_pile_of(player));
    table.allow_undo();
}

/// Puts the chosen card at `index` back in the hand (undoable).
pub fn withdraw(table: &mut Table, player: PlayerId, index: usize) {
    table.move_piece(&pass_pile_of(player), index, &hand_of(player));
    table.allow_undo();
}

/// Commits `player`'s three cards; they wait for everyone else. Returns true
/// when this was the last player to commit (time to exchange).
pub fn commit(table: &mut Table, player: PlayerId) -> bool {
    let waiting: Vec<PlayerId> = table
        .active_players()
        .iter()
        .copied()
        .filter(|&p| p != player)
        .collect();
    let done = waiting.is_empty();
    table.set_active_players(waiting);
    table.log(LogEntry::new(format!(
        "{} chose three cards to pass",
        table.player_name(player)
    )));
    done
}

/// Moves every pass pile into its receiver's hand and tells each player what
/// they received. The common log line names no card.
pub fn exchange(table: &mut Table) {
    let direction = current_direction(table);
    let mut entry = LogEntry::new(format!("Everyone passed three cards {}", direction.name()));
    for passer in table.players() {
        let receiver = receiver_of(table, passer);
        let received: Vec<Card> = cards_in(table, &pass_pile_of(passer))
            .into_iter()
            .map(|(_, card)| card)
            .collect();
        while !table.pieces(&pass_pile_of(passer)).is_empty() {
            table.move_piece(&pass_pile_of(passer), 0, &hand_of(receiver));
        }
        let text = format!("You received {} from {}", list_cards(&received), table.player_name(passer));
        entry = entry.for_player(receiver, text);
    }
    table.log(entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_cycle_left_right_across_hold() {
        let directions: Vec<Direction> = (1..=9).map(Direction::of_round).collect();
        use Direction::*;
        assert_eq!(
            directions,
            vec![Left, Right, Across, Hold, Left, Right, Across, Hold, Left]
        );
    }
}
