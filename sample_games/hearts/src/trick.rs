//! Tricks: what may be led and followed, and who takes the trick.

use tablehost_sdk::face_down::turn_face_up;
use tablehost_sdk::{Action, AvailableAction, LogEntry, PlayerId, Table};

use crate::card::{points, Card, Suit, TWO_OF_CLUBS};
use crate::layout::{
    card_of, cards_in, hand_of, hearts_broken, taken_by, HEARTS_BROKEN, PLAYED_BY, PLAYERS, TRICK,
};

/// Whether the trick in play is the round's first (no trick has been taken yet).
pub fn is_first_trick(table: &Table) -> bool {
    table
        .players()
        .into_iter()
        .all(|player| table.pieces(&taken_by(player)).is_empty())
}

/// The suit led to the trick in play, if a card has been led.
pub fn led_suit(table: &Table) -> Option<Suit> {
    cards_in(table, TRICK).first().map(|(_, card)| card.suit)
}

/// The hand indexes of the cards `player` may play now.
///
/// Rules: the 2♣ leads the first trick. Hearts may not be led until one has
/// been played, unless the hand holds nothing but hearts. A follower must
/// follow the suit led if able. On the first trick no heart and not the Q♠
/// may be played unless the hand holds nothing else.
pub fn legal_plays(table: &Table, player: PlayerId) -> Vec<usize> {
    let hand = cards_in(table, &hand_of(player));
    let first_trick = is_first_trick(table);
    let allowed: Vec<usize> = match led_suit(table) {
        None if first_trick => only(&hand, |card| card == TWO_OF_CLUBS),
        None if !hearts_broken(table) => only(&hand, |card| card.suit != Suit::Hearts),
        // Hearts broken: any card may lead (the empty list means "no restriction").
        None => Vec::new(),
        Some(suit) => {
            let following = only(&hand, |card| card.suit == suit);
            if !following.is_empty() || !first_trick {
                following
            } else {
                only(&hand, |card| points(card) == 0)
            }
        }
    };
    // A restriction that would leave nothing playable is lifted.
    if allowed.is_empty() {
        hand.iter().map(|(index, _)| *index).collect()
    } else {
        allowed
    }
}

/// The indexes of the cards in `hand` that pass `rule`.
fn only(hand: &[(usize, Card)], rule: impl Fn(Card) -> bool) -> Vec<usize> {
    hand.iter()
        .filter(|(_, card)| rule(*card))
        .map(|(index, _)| *index)
        .collect()
}

/// The playable cards of `player` as actions: a click on each (`confirm`).
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

/// Plays the hand card at `index` face up to the trick. A heart breaks hearts.
/// Returns the card. Turning a card face up reveals it, so this never allows undo.
pub fn play_card(table: &mut Table, player: PlayerId, index: usize) -> Card {
    let hand = hand_of(player);
    let card = card_of(table.piece(&hand, index)).expect("the rules see the player's hand");
    let at = table.move_piece(&hand, index, TRICK);
    turn_face_up(table, TRICK, at);
    table.set_piece_public_state(TRICK, at, PLAYED_BY, player);
    if card.suit == Suit::Hearts && !hearts_broken(table) {
        table.set_meta(HEARTS_BROKEN, true);
    }
    table.log(LogEntry::new(format!(
        "{} played {}",
        table.player_name(player),
        card.name()
    )));
    card
}

/// Whether all four players have played to the trick.
pub fn trick_is_complete(table: &Table) -> bool {
    table.pieces(TRICK).len() == PLAYERS
}

/// Who takes the trick: the highest card of the suit led.
pub fn trick_winner(table: &Table) -> PlayerId {
    let suit = led_suit(table).expect("a trick with cards");
    let (index, _) = cards_in(table, TRICK)
        .into_iter()
        .filter(|(_, card)| card.suit == suit)
        .max_by_key(|(_, card)| card.rank)
        .expect("the led card follows its own suit");
    let played_by = table.piece(TRICK, index).public(PLAYED_BY).and_then(|v| v.as_u64());
    played_by.expect("every played card records its player") as PlayerId
}

/// Moves the completed trick, in play order, to its winner's taken pile and
/// returns the winner.
pub fn collect_trick(table: &mut Table) -> PlayerId {
    let winner = trick_winner(table);
    while !table.pieces(TRICK).is_empty() {
        table.move_piece(TRICK, 0, &taken_by(winner));
    }
    table.log(LogEntry::new(format!("{} takes the trick", table.player_name(winner))));
    winner
}

/// Who plays next to an unfinished trick: the next seat to the left.
pub fn next_to_play(table: &Table, player: PlayerId) -> PlayerId {
    table.seat_after(player, 1)
}
