//! The auction: starting left of the dealer, each player bids once, 0 (nil)
//! to 13 tricks. Bids are public. After the fourth bid the player left of
//! the dealer leads the first trick.

use tablehost_sdk::{Action, AvailableAction, Button, LogEntry, PlayerId, Table};

use crate::layout::{bid_of, set_phase, Phase, BID, DEALER};

/// The highest bid: every trick of the round.
pub const MAX_BID: u8 = 13;

/// The id of the button bidding `bid`: `"bid-4"`, `"bid-0"` for nil.
pub fn bid_button_id(bid: u8) -> String {
    format!("bid-{}", bid)
}

/// The bid a button id stands for, if it is one (`"bid-0"` ..= `"bid-13"`).
pub fn parse_bid(id: &str) -> Option<u8> {
    let bid: u8 = id.strip_prefix("bid-")?.parse().ok()?;
    if bid <= MAX_BID && bid_button_id(bid) == id {
        Some(bid)
    } else {
        None
    }
}

/// How a bid reads: `"nil"` or the number.
pub fn bid_word(bid: u8) -> String {
    if bid == 0 {
        "nil".to_string()
    } else {
        bid.to_string()
    }
}

/// The bid buttons, nil then 1 to 13 (each a `confirm`).
pub fn bidding_actions() -> Vec<AvailableAction> {
    (0..=MAX_BID)
        .map(|bid| {
            let label = format!("Bid {}", bid_word(bid));
            AvailableAction::confirm(Action::button_click(Button::new(bid_button_id(bid), label.clone())), label)
        })
        .collect()
}

/// The dealer of the round in play.
pub fn dealer(table: &Table) -> PlayerId {
    table.meta(DEALER).and_then(|v| v.as_u64()).expect("a dealer is set") as PlayerId
}

/// Records `player`'s bid; the next player bids, or after the fourth bid
/// play begins with the player left of the dealer.
pub fn place_bid(table: &mut Table, player: PlayerId, bid: u8) {
    assert!(bid_of(table, player).is_none(), "{} has already bid", player);
    table.set_player_public_state(player, BID, bid);
    table.log(LogEntry::new(format!("{} bids {}", table.player_name(player), bid_word(bid))));
    let next = table.seat_after(player, 1);
    if bid_of(table, next).is_none() {
        table.set_active_players(vec![next]);
        return;
    }
    set_phase(table, Phase::Playing);
    let leader = table.seat_after(dealer(table), 1);
    table.set_active_players(vec![leader]);
    table.log(LogEntry::new(format!("{} leads the first trick", table.player_name(leader))));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bid_buttons_round_trip() {
        for bid in 0..=MAX_BID {
            assert_eq!(parse_bid(&bid_button_id(bid)), Some(bid));
        }
        for bad in ["bid-14", "bid--1", "bid-04", "bid-", "pass"] {
            assert_eq!(parse_bid(bad), None, "{}", bad);
        }
        assert_eq!(bidding_actions().len(), 14);
    }
}
