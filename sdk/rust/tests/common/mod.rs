//! A tiny card game that exercises every part of the SDK the host sees:
//! hidden pieces, a shuffle in `prepare`, randomness in a move, undo,
//! printing and buttons.
//!
//! Each player has a hand (collection, owned). A shared face-down deck of six
//! cards is shuffled at setup. The active player either draws the top card
//! (piece_click on deck index 0; allows undo), rolls a die (button "roll",
//! draws randomness) or passes (button "pass", hands the turn on). The game
//! ends when the deck is empty; a player scores the number of cards in hand.
#![allow(dead_code)]

use tablehost_sdk::{
    println, Action, AvailableAction, Button, Game, GameConfig, LogEntry, Map, Piece, PlayerId, Rng, Score,
    Scores, Space, StartingPlayer, Table,
};

pub struct DrawGame;

pub fn hand(player: PlayerId) -> String {
    format!("hand-{}", player)
}

impl Game for DrawGame {
    fn config(players: &[PlayerId], _options: &tablehost_sdk::Options) -> GameConfig {
        let deck = (1..=6).map(|value| Piece::new("back").hiding(format!("card-{}", value)));
        let mut spaces: Vec<Space> =
            players.iter().map(|&player| Space::new(hand(player), "hand").collection().owned_by(player)).collect();
        spaces.push(Space::new("deck", "deck").collection().with_pieces(deck));
        GameConfig {
            spaces,
            score_labels: vec!["Cards".to_string()],
            meta_data: Map::new(),
            starting_player: StartingPlayer::Random,
        }
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        table.shuffle("deck", rng);
        println!("shuffled {} cards", table.pieces("deck").len());
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        let mut offered = Vec::new();
        if !table.pieces("deck").is_empty() {
            offered.push(AvailableAction::choice(Action::piece_click("deck", 0), "draw"));
        }
        offered.push(AvailableAction::choice(Action::button_click(Button::new("roll", "Roll")), "roll"));
        offered.push(AvailableAction::confirm(Action::button_click(Button::new("pass", "Pass")), "pass"));
        offered
    }

    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        match action {
            Action::PieceClick { space_id, index } => {
                let at = table.move_piece(space_id, *index, &hand(player_id));
                table.log(LogEntry::new("someone drew a card").for_player(player_id, format!("you drew #{}", at)));
                table.allow_undo();
            }
            Action::ButtonClick { button } if button.id == "roll" => {
                let value = rng.roll(6u32);
                println!("rolled {}", value);
                table.set_player_public_state(player_id, "last_roll", value);
            }
            Action::ButtonClick { button } if button.id == "explode" => panic!("boom"),
            Action::ButtonClick { .. } => {
                let players = table.players();
                let next = players[(table.seat_of(player_id) + 1) % players.len()];
                table.set_active_players(vec![next]);
            }
            Action::SpaceClick { .. } => panic!("no space clicks here"),
        }
    }

    fn scores(table: &Table) -> Scores {
        table
            .players()
            .into_iter()
            .map(|player| (player, Score::public(vec![table.pieces(&hand(player)).len() as f64])))
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        table.pieces("deck").is_empty()
    }
}
