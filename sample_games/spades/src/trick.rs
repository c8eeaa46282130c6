//! Tricks: what may be led and followed, and who takes the trick.
//!
//! Rules: a player must follow the suit led if able; otherwise any card may
//! be played, a spade included (spades are trump). Spades may not be led
//! until a spade has been played in the round ("broken"), unless the leader
//! holds nothing but spades. The highest spade takes the trick, or, with no
//! spade in it, the highest card of the suit led.

use tablehost_sdk::cards::{Card, Suit};
use tablehost_sdk::face_down::turn_face_up;
use tablehost_sdk::{json, Action, AvailableAction, LogEntry, PlayerId, Table};

use crate::layout::{
    card_of, cards_in, hand_of, spades_broken, taken_by, tricks_of, PLAYED_BY, PLAYERS, SPADES_BROKEN, TRICK, TRICKS,
};

/// The suit led to the trick in play, if a card has been led.
pub fn led_suit(table: &Table) -> Option<Suit> {
    cards_in(table, TRICK).first().map(|(_, card)| card.suit)
}

/// The hand indexes of the cards `player` may play now (see the module rules).
pub fn legal_plays(table: &Table, player: PlayerId) -> Vec<usize> {
    let hand = cards_in(table, &hand_of(player));
    let allowed: Vec<usize> = match led_suit(table) {
        None if !spades_broken(table) => only(&hand, |card| card.suit != Suit::Spades),
        None => Vec::new(),
        Some(suit) => only(&hand, |card| card.suit == suit),
    };
    // A restriction that would leave nothing playable is lifted.
    if allowed.is_empty() {
        hand.iter().map(|(index, _)| *index).collect()
    } else {
        allowed
    }
}

fn only(hand: &[(usize, Card)], rule: impl Fn(Card) -> bool) -> Vec<usize> {
    hand.iter().filter(|(_, card)| rule(*card)).map(|(index, _)| *index).collect()
}

/// The playable cards of `player` as actions: a click on each (`confirm`).
/// Labels name the card: only its holder is offered them.
pub fn playing_actions(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    let hand = hand_of(player);
    legal_plays(table, player)
        .into_iter()
        .map(|index| {
            let face = card_of(table.piece(&hand, index)).map(Card::name).unwrap_or_default();
            AvailableAction::confirm(Action::piece_click(hand.clone(), index), format!("Play {}", face))
        })
        .collect()
}

/// Plays the hand card at `index` face up to the trick; a spade breaks spades.
pub fn play_card(table: &mut Table, player: PlayerId, index: usize) -> Card {
    let hand = hand_of(player);
    let card = card_of(table.piece(&hand, index)).expect("the rules see the player's hand");
    let at = table.move_piece(&hand, index, TRICK);
    turn_face_up(table, TRICK, at);
    table.set_piece_public_state(TRICK, at, PLAYED_BY, player);
    if card.suit == Suit::Spades && !spades_broken(table) {
        table.set_meta(SPADES_BROKEN, true);
    }
    table.log(LogEntry::new(format!("{} played {}", table.player_name(player), card.name())));
    card
}

/// Whether all four players have played to the trick.
pub fn trick_is_complete(table: &Table) -> bool {
    table.pieces(TRICK).len() == PLAYERS
}

/// The winning card among `cards` (in play order, the first led): the
/// highest spade, else the highest card of the suit led. Returns its position.
pub fn winning_position(cards: &[Card]) -> usize {
    let led = cards[0].suit;
    let trump = cards.iter().any(|card| card.suit == Suit::Spades);
    let suit = if trump { Suit::Spades } else { led };
    let (position, _) = cards
        .iter()
        .enumerate()
        .filter(|(_, card)| card.suit == suit)
        .max_by_key(|(_, card)| card.rank)
        .expect("the winning suit is in the trick");
    position
}

/// Moves the complete trick to its winner's taken pile, counts it, and
/// returns the winner (who leads next).
pub fn collect_trick(table: &mut Table) -> PlayerId {
    let cards: Vec<Card> = cards_in(table, TRICK).into_iter().map(|(_, card)| card).collect();
    let position = winning_position(&cards);
    let winner = table.piece(TRICK, position).public(PLAYED_BY).and_then(|v| v.as_u64());
    let winner = winner.expect("every played card records its player") as PlayerId;
    while !table.pieces(TRICK).is_empty() {
        table.move_piece(TRICK, 0, &taken_by(winner));
    }
    let tricks = tricks_of(table, winner) + 1;
    table.set_player_public_state(winner, TRICKS, json!(tricks));
    table.log(LogEntry::new(format!("{} takes the trick", table.player_name(winner))));
    winner
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(faces: &str) -> Vec<Card> {
        faces.split_whitespace().map(|f| Card::parse(f).unwrap()).collect()
    }

    #[test]
    fn the_highest_spade_takes_the_trick_else_the_highest_of_the_led_suit() {
        assert_eq!(winning_position(&cards("KH AH 2S 3H")), 2);
        assert_eq!(winning_position(&cards("KH AH 2S 3S")), 3);
        assert_eq!(winning_position(&cards("KH AD QC 3H")), 0);
        assert_eq!(winning_position(&cards("5S AH KS 2S")), 2);
    }
}
