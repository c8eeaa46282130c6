//! Spades for four players in two fixed partnerships, as a tablehost game.
//!
//! Rules:
//!
//! 1. Seats 1 and 3 play against seats 2 and 4. The deal passes to the
//!    left each round; all 52 cards are dealt, thirteen each (`round`).
//! 2. Starting left of the dealer each player bids once, 0 (nil) to 13: the
//!    tricks they expect to take (`bidding`). Bids are public.
//! 3. The player left of the dealer leads. Players follow the suit led if
//!    they can, else play anything; spades are trump. Spades may not be led
//!    until one has been played, unless the leader holds only spades. The
//!    highest spade, or the highest card of the suit led, takes the trick and
//!    its taker leads next (`trick`).
//! 4. Scoring per side (`scoring`): 10 × the partners' combined bid when
//!    they take at least that many tricks, plus 1 per overtrick (bag); −10 ×
//!    the bid when set; −100 each time a side's bags reach 10; a nil bid
//!    wins 100 for the side when the bidder takes no trick, else loses 100.
//! 5. The game ends after a round in which a side has reached the target
//!    score (option `target_score`, 500), or after the round limit (option
//!    `round_limit`, 25 rounds, so that random bots always finish); the
//!    higher score wins; a tie plays another round.
//!
//! Options: the ABI cannot pass game options yet, so both are meta data keys
//! that `config` writes with their defaults and the rules read back from meta
//! data; once declared options reach `config`, only `config` changes.
//!
//! Hidden information: hands are collections owned by their holders, the
//! deck a collection nobody owns, hidden cards are the SDK's face-down
//! pieces. Played cards are turned face up. Scores are public:
//! `public_points` = [side score, side bags, own bid (-1 before bidding), own tricks].

use tablehost_sdk::{
    Action, AvailableAction, Game, GameConfig, GameOption, Metadata, Options, PlayerId, Rng, Score, Scores, State,
    Table,
};

pub mod bidding;
pub mod display;
pub mod layout;
pub mod round;
pub mod scoring;
pub mod trick;

use layout::{bid_of, hand_of, phase, side_of, side_pair, tricks_of, Phase, SIDE_BAGS, SIDE_SCORES};

/// The spades game, exported to the host by `export_game!`.
pub struct Spades;

impl Game for Spades {
    fn metadata() -> Metadata {
        Metadata::players(4, 4)
            .description("Spades for two partnerships: bid your tricks, spades are trump, bags cost you.")
            .hidden_information(true)
            .option(
                GameOption::integer(layout::TARGET_SCORE, layout::DEFAULT_TARGET_SCORE, 100, 1000)
                    .describe("a side at or over this many points after a round wins"),
            )
            .option(
                GameOption::integer(layout::ROUND_LIMIT, layout::DEFAULT_ROUND_LIMIT as i64, 1, 100)
                    .describe("the game ends after this many rounds at most"),
            )
    }

    fn config(players: &[PlayerId], options: &Options) -> GameConfig {
        layout::config(players, options)
    }

    fn prepare(table: &mut Table, rng: &mut Rng) {
        round::start_round(table, rng);
    }

    fn available_actions(table: &Table, player_id: PlayerId) -> Vec<AvailableAction> {
        if !table.is_active(player_id) {
            return Vec::new();
        }
        match phase(table) {
            Phase::Bidding => bidding::bidding_actions(),
            Phase::Playing => trick::playing_actions(table, player_id),
            Phase::Over => Vec::new(),
        }
    }

    /// Panics on an action spades never offers.
    fn apply_action(table: &mut Table, player_id: PlayerId, action: &Action, rng: &mut Rng) {
        match (phase(table), action) {
            (Phase::Bidding, Action::ButtonClick { button }) => {
                let bid = bidding::parse_bid(&button.id).unwrap_or_else(|| panic!("no bid {:?}", button.id));
                bidding::place_bid(table, player_id, bid);
            }
            (Phase::Playing, Action::PieceClick { space_id, index }) if *space_id == hand_of(player_id) => {
                play_to_trick(table, player_id, *index, rng)
            }
            (_, other) => panic!("spades does not offer {:?} now", other),
        }
    }

    fn scores(table: &Table) -> Scores {
        let side_scores = side_pair(table, SIDE_SCORES);
        let side_bags = side_pair(table, SIDE_BAGS);
        table
            .players()
            .into_iter()
            .map(|player| {
                let side = side_of(table, player);
                let bid = bid_of(table, player).map_or(-1.0, f64::from);
                let points =
                    vec![side_scores[side] as f64, side_bags[side] as f64, bid, f64::from(tricks_of(table, player))];
                (player, Score::public(points))
            })
            .collect()
    }

    fn is_game_over(table: &Table, _scores: &Scores) -> bool {
        phase(table) == Phase::Over
    }

    /// The cards hidden from `viewer` (the other hands, the deck) dealt again
    /// at random among the face-down places they occupy: all that a seat knows
    /// is which cards it holds and which have been played.
    fn sample_hidden(view: &Table, _viewer: PlayerId, rng: &mut Rng) -> Option<State> {
        use tablehost_sdk::face_down::Face;
        let faces: Vec<String> = tablehost_sdk::cards::Card::deck().into_iter().map(|card| card.face()).collect();
        Some(tablehost_sdk::hidden::deal_unseen(view, layout::BACK, &faces, rng))
    }
}

/// Plays a card; a full trick goes to its taker, who leads next, and the
/// thirteenth trick ends the round.
fn play_to_trick(table: &mut Table, player: PlayerId, index: usize, rng: &mut Rng) {
    trick::play_card(table, player, index);
    if !trick::trick_is_complete(table) {
        let next = table.seat_after(player, 1);
        table.set_active_players(vec![next]);
        return;
    }
    let taker = trick::collect_trick(table);
    if table.pieces(&hand_of(taker)).is_empty() {
        round::end_round(table, rng);
    } else {
        table.set_active_players(vec![taker]);
    }
}

tablehost_sdk::export_game!(Spades);
