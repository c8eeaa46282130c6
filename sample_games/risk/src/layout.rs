//! The Risk table: spaces, who sees into them, options, and the public
//! bookkeeping of the turn.
//!
//! - one `territory` space per territory (space id = territory id), public
//!   state `name`, `continent`, `neighbors`, `owner` (a player id or
//!   `"neutral"`) and `armies`;
//! - `deck`: a collection nobody owns, the cards face down;
//! - `discard`: ordered, traded cards face up;
//! - `cards-<id>`: a collection owned by its player, their cards face down
//!   (only they see which; everyone sees how many).
//!
//! Meta data (public): the options (`round_limit`, `two_player_neutral`,
//! `claim_territories`), `phase`, `round`, `first_player`, `sets_traded`,
//! `reinforcements` (armies left to place this turn), `from`/`to` (the
//! territories chosen for an attack or a fortify), `move_min` (dice rolled
//! by the conquering attack), `conquered` (a territory was taken this turn).
//! Player public state: `to_place` (armies left to place at the start) and
//! `eliminated`.

use tablehost_sdk::face_down::{face_down, faces_in};
use tablehost_sdk::{json, GameConfig, GameOption, Map, Options, PlayerId, Space, StartingPlayer, Table, Value};

use crate::cards::RiskCard;
use crate::map::{neighbors, CONTINENTS, TERRITORIES};

pub const DECK: &str = "deck";
pub const DISCARD: &str = "discard";

/// Option (meta key): the game ends after this many rounds, the most
/// territories winning (0: no limit). Default 12: random bots take about
/// 100 moves a round at six players, and a simulation of hundreds of games
/// should finish in minutes; a real table sets it higher or to 0.
pub const ROUND_LIMIT: &str = "round_limit";
/// Option (meta key): with two players, a neutral army holds a third of the
/// map and only defends. Default false.
pub const TWO_PLAYER_NEUTRAL: &str = "two_player_neutral";
/// Option (meta key): players claim territories one at a time instead of
/// having them dealt at random. Default false.
pub const CLAIM_TERRITORIES: &str = "claim_territories";
/// The default round limit.
pub const DEFAULT_ROUND_LIMIT: u64 = 12;

pub const PHASE: &str = "phase";
pub const ROUND: &str = "round";
pub const FIRST_PLAYER: &str = "first_player";
pub const SETS_TRADED: &str = "sets_traded";
pub const REINFORCEMENTS: &str = "reinforcements";
pub const FROM: &str = "from";
pub const TO: &str = "to";
pub const MOVE_MIN: &str = "move_min";
pub const CONQUERED: &str = "conquered";
/// Meta key: `{continent id: armies}`, the continent bonuses (static; for the table to show).
pub const CONTINENT_BONUS: &str = "continent_bonus";
/// Player public state: armies left to place during setup.
pub const TO_PLACE: &str = "to_place";
/// Player public state: knocked out of the game.
pub const ELIMINATED: &str = "eliminated";
/// Territory public state keys.
pub const OWNER: &str = "owner";
pub const ARMIES: &str = "armies";
/// The `owner` of a neutral territory.
pub const NEUTRAL: &str = "neutral";

pub const MIN_PLAYERS: usize = 2;
pub const MAX_PLAYERS: usize = 6;

/// The phases of the game, as kept in meta data `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Setup option: players take free territories in turn.
    Claim,
    /// Setup: players place their remaining starting armies one at a time.
    Place,
    /// Trade cards and place the turn's reinforcements.
    Reinforce,
    /// Choose attacks and roll.
    Attack,
    /// Move armies into a conquered territory.
    MoveIn,
    /// One move along a chain of one's own territories, then the turn ends.
    Fortify,
    Over,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Claim => "claim",
            Phase::Place => "place",
            Phase::Reinforce => "reinforce",
            Phase::Attack => "attack",
            Phase::MoveIn => "move_in",
            Phase::Fortify => "fortify",
            Phase::Over => "over",
        }
    }

    fn from_name(name: &str) -> Option<Phase> {
        [Phase::Claim, Phase::Place, Phase::Reinforce, Phase::Attack, Phase::MoveIn, Phase::Fortify, Phase::Over]
            .iter()
            .copied()
            .find(|p| p.name() == name)
    }
}

/// Who holds a territory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Player(PlayerId),
    Neutral,
    Nobody,
}

/// The space holding `player`'s cards.
pub fn cards_of(player: PlayerId) -> String {
    format!("cards-{}", player)
}

/// The declared options (the metadata op).
pub fn declared_options() -> Vec<GameOption> {
    vec![
        GameOption::integer(ROUND_LIMIT, DEFAULT_ROUND_LIMIT as i64, 0, 1000)
            .describe("the game ends after this many rounds (0: no limit)"),
        GameOption::boolean(TWO_PLAYER_NEUTRAL, false).describe("two players: a neutral army holds territories too"),
        GameOption::boolean(CLAIM_TERRITORIES, false).describe("players claim free territories in turn instead of a deal"),
    ]
}

/// The starting table for 2 to 6 players with `options` (a missing one takes
/// its default; they are copied into meta data, where the rules read them):
/// every territory empty, the 44 cards face down in the deck. `prepare` deals.
/// Panics outside 2..=6 players.
pub fn config(players: &[PlayerId], options: &Options) -> GameConfig {
    assert!(
        (MIN_PLAYERS..=MAX_PLAYERS).contains(&players.len()),
        "risk is for 2 to 6 players, not {}",
        players.len()
    );
    let mut spaces: Vec<Space> = TERRITORIES
        .iter()
        .enumerate()
        .map(|(index, territory)| {
            let borders: Vec<&str> = neighbors(index).into_iter().map(|n| TERRITORIES[n].id).collect();
            Space::new(territory.id, "territory")
                .with_public("name", territory.name)
                .with_public("continent", CONTINENTS[territory.continent].id)
                .with_public("neighbors", json!(borders))
                .with_public(OWNER, Value::Null)
                .with_public(ARMIES, 0)
        })
        .collect();
    spaces.push(Space::new(DECK, "deck").collection().with_pieces(RiskCard::deck().iter().map(face_down)));
    spaces.push(Space::new(DISCARD, "discard"));
    for &player in players {
        spaces.push(Space::new(cards_of(player), "cards").collection().owned_by(player));
    }
    let mut meta_data = Map::new();
    meta_data.insert("game".to_string(), json!("risk"));
    let flag = |key: &str| options.0.get(key).and_then(Value::as_bool).unwrap_or(false);
    let round_limit = options.0.get(ROUND_LIMIT).and_then(Value::as_u64).unwrap_or(DEFAULT_ROUND_LIMIT);
    meta_data.insert(ROUND_LIMIT.to_string(), json!(round_limit));
    meta_data.insert(TWO_PLAYER_NEUTRAL.to_string(), json!(flag(TWO_PLAYER_NEUTRAL)));
    meta_data.insert(CLAIM_TERRITORIES.to_string(), json!(flag(CLAIM_TERRITORIES)));
    meta_data.insert(SETS_TRADED.to_string(), json!(0));
    let bonuses: Map<String, Value> = CONTINENTS.iter().map(|c| (c.id.to_string(), json!(c.bonus))).collect();
    meta_data.insert(CONTINENT_BONUS.to_string(), Value::Object(bonuses));
    meta_data.insert("display".to_string(), crate::display::hints());
    GameConfig {
        spaces,
        score_labels: vec!["Territories".to_string(), "Armies".to_string()],
        meta_data,
        // The first player is drawn at random; `prepare` deals and sets the turn.
        starting_player: StartingPlayer::Random,
    }
}

/// Rule: starting armies by number of players (two players, with or
/// without the neutral army: 40 each).
pub fn starting_armies(players: usize) -> u32 {
    match players {
        2 => 40,
        3 => 35,
        4 => 30,
        5 => 25,
        _ => 20,
    }
}

/// A whole-number meta value (0 when unset).
pub fn meta_u64(table: &Table, key: &str) -> u64 {
    table.meta(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A true/false meta value (false when unset).
pub fn meta_bool(table: &Table, key: &str) -> bool {
    table.meta(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The round limit option (0: none).
pub fn round_limit(table: &Table) -> u64 {
    table.meta(ROUND_LIMIT).and_then(Value::as_u64).unwrap_or(DEFAULT_ROUND_LIMIT)
}

/// The current phase. Panics on a state Risk did not write.
pub fn phase(table: &Table) -> Phase {
    let name = table.meta(PHASE).and_then(Value::as_str).unwrap_or("");
    Phase::from_name(name).unwrap_or_else(|| panic!("risk has no phase {:?}", name))
}

pub fn set_phase(table: &mut Table, phase: Phase) {
    table.set_meta(PHASE, phase.name());
}

/// A territory index kept in meta data (`from`, `to`), if set.
pub fn chosen(table: &Table, key: &str) -> Option<usize> {
    table.meta(key).and_then(Value::as_u64).map(|i| i as usize)
}

/// Who holds territory `index`.
pub fn owner(table: &Table, index: usize) -> Owner {
    match table.space(TERRITORIES[index].id).public(OWNER) {
        Some(Value::Number(n)) => Owner::Player(n.as_u64().unwrap_or(0) as PlayerId),
        Some(Value::String(s)) if s == NEUTRAL => Owner::Neutral,
        _ => Owner::Nobody,
    }
}

pub fn set_owner(table: &mut Table, index: usize, owner: Owner) {
    let value = match owner {
        Owner::Player(p) => json!(p),
        Owner::Neutral => json!(NEUTRAL),
        Owner::Nobody => Value::Null,
    };
    table.set_space_public_state(TERRITORIES[index].id, OWNER, value);
}

/// The armies on territory `index`.
pub fn armies(table: &Table, index: usize) -> u32 {
    table.space(TERRITORIES[index].id).public(ARMIES).and_then(Value::as_u64).unwrap_or(0) as u32
}

pub fn set_armies(table: &mut Table, index: usize, armies: u32) {
    table.set_space_public_state(TERRITORIES[index].id, ARMIES, armies);
}

/// The territories `who` holds, ascending.
pub fn held_by(table: &Table, who: Owner) -> Vec<usize> {
    (0..TERRITORIES.len()).filter(|&i| owner(table, i) == who).collect()
}

/// The cards `player` holds (visible to the rules), in face order.
pub fn hand(table: &Table, player: PlayerId) -> Vec<RiskCard> {
    let mut cards: Vec<RiskCard> = faces_in::<RiskCard>(table, &cards_of(player)).into_iter().map(|(_, c)| c).collect();
    cards.sort_by_key(|c| tablehost_sdk::face_down::Face::face(c));
    cards
}

/// Whether `player` is out of the game.
pub fn is_eliminated(table: &Table, player: PlayerId) -> bool {
    table.player(player).public(ELIMINATED).and_then(Value::as_bool).unwrap_or(false)
}

/// A player's armies still to place during setup.
pub fn to_place(table: &Table, player: PlayerId) -> u32 {
    table.player(player).public(TO_PLACE).and_then(Value::as_u64).unwrap_or(0) as u32
}

/// Territory `index`'s name for the log.
pub fn name(index: usize) -> &'static str {
    TERRITORIES[index].name
}

/// Rule: reinforcements at the start of a turn are the territories held
/// divided by three (rounded down, at least 3), plus the bonus of every
/// continent held entirely. `held`: the territory indexes held.
pub fn reinforcements_for(held: &[usize]) -> u32 {
    let base = (held.len() as u32 / 3).max(3);
    let bonus: u32 = (0..CONTINENTS.len())
        .filter(|&c| {
            let all = crate::map::territories_of(c);
            all.iter().all(|t| held.contains(t))
        })
        .map(|c| CONTINENTS[c].bonus)
        .sum();
    base + bonus
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::territories_of;

    #[test]
    fn reinforcements_count_territories_and_whole_continents() {
        assert_eq!(reinforcements_for(&[0, 1]), 3, "never fewer than three");
        assert_eq!(reinforcements_for(&(0..11).collect::<Vec<_>>()), 3 + 5, "11 territories with North America");
        assert_eq!(reinforcements_for(&territories_of(5)), 3 + 2, "Australia alone");
        let asia_and_more: Vec<usize> = territories_of(4).into_iter().chain([0, 9, 13]).collect();
        assert_eq!(reinforcements_for(&asia_and_more), 5 + 7);
        assert_eq!(reinforcements_for(&(0..42).collect::<Vec<_>>()), 14 + 24);
    }

    #[test]
    fn starting_armies_by_player_count() {
        let armies: Vec<u32> = (2..=6).map(starting_armies).collect();
        assert_eq!(armies, vec![40, 35, 30, 25, 20]);
    }
}
