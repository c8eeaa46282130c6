//! A turn: reinforce (trading cards), attack, fortify; and the end of the game.
//!
//! Rules:
//! - Reinforce: the player receives `layout::reinforcements_for` armies and
//!   places them one at a time on their territories. They may trade a set of
//!   three cards for armies (`cards::set_value`: 4, 6, 8, 10, 12, 15, then +5
//!   for each later set, counted over the whole game); holding five or more
//!   cards they must trade before anything else.
//! - Attack, as often as they like: from a territory with at least two
//!   armies against a bordering enemy territory (the neutral army's too),
//!   rolling 1 to 3 dice (`combat`). Taking a territory, they move in at
//!   least as many armies as dice rolled, leaving at least one behind.
//!   Knocking a player out gives the attacker that player's cards; five or
//!   more must then be traded at once and the armies placed.
//! - Fortify: once, from one territory to another joined to it by a chain of
//!   their own territories, leaving at least one army; this ends the turn.
//! - A player who took at least one territory draws one card at the end of
//!   the turn. When the deck is empty the traded cards are shuffled back.
//! - The game ends when one player holds every territory not neutral, or
//!   after the round limit (option): then the most territories wins (scores:
//!   territories, then armies).

use tablehost_sdk::dice::Roll;
use tablehost_sdk::face_down::{list_faces, turn_face_down, turn_face_up, Face};
use tablehost_sdk::{json, Action, AvailableAction, Button, LogEntry, PlayerId, Rng, Table, Value};

use crate::cards::{set_value, sets_in, RiskCard};
use crate::combat::{attack_dice_allowed, defence_dice, losses};
use crate::layout::{
    armies, cards_of, chosen, hand, held_by, is_eliminated, meta_bool, meta_u64, name, owner, phase, reinforcements_for,
    round_limit, set_armies, set_owner, set_phase, Owner, Phase, CONQUERED, DECK, DISCARD, ELIMINATED, FROM, MOVE_MIN,
    REINFORCEMENTS, ROUND, SETS_TRADED, TO,
};
use crate::map::{neighbors, reachable, TERRITORIES};
use crate::setup::turn_order;

/// Button ids.
pub const END_ATTACKS: &str = "end-attacks";
pub const END_TURN: &str = "end-turn";
pub const CANCEL: &str = "cancel";
pub const TRADE_PREFIX: &str = "trade:";
pub const ROLL_PREFIX: &str = "roll-";
pub const MOVE_IN_PREFIX: &str = "move-in-";
pub const FORTIFY_PREFIX: &str = "fortify-";

/// Cards in hand at which a trade is forced.
pub const FORCED_TRADE_CARDS: usize = 5;

/// The first turn: round 1, the first player reinforces.
pub fn start_game(table: &mut Table) {
    table.set_meta(ROUND, json!(1));
    let first = turn_order(table)[0];
    start_turn(table, first);
}

/// `player`'s turn begins with their reinforcements.
pub fn start_turn(table: &mut Table, player: PlayerId) {
    let held = held_by(table, Owner::Player(player));
    let armies = reinforcements_for(&held);
    table.set_meta(REINFORCEMENTS, json!(armies));
    table.set_meta(CONQUERED, false);
    clear_choice(table);
    set_phase(table, Phase::Reinforce);
    table.set_active_players(vec![player]);
    table.log(LogEntry::new(format!(
        "Round {}: {} receives {} armies for {} territories and continents",
        meta_u64(table, ROUND),
        table.player_name(player),
        armies,
        held.len()
    )));
    leave_reinforce_if_done(table, player);
}

fn clear_choice(table: &mut Table) {
    for key in [FROM, TO, MOVE_MIN] {
        if table.meta(key).map_or(false, |v| !v.is_null()) {
            table.set_meta(key, Value::Null);
        }
    }
}

fn button(id: String, label: String, intent: tablehost_sdk::Intent) -> AvailableAction {
    AvailableAction::new(Action::button_click(Button::new(id, label.clone())), intent, label)
}

fn click(t: usize, label: String) -> AvailableAction {
    AvailableAction::choice(Action::space_click(TERRITORIES[t].id), label)
}

/// Everything `player` may do now.
pub fn offers(table: &Table, player: PlayerId) -> Vec<AvailableAction> {
    use tablehost_sdk::Intent::{Cancel, Choice, Confirm};
    let mine = |t: usize| owner(table, t) == Owner::Player(player);
    let enemy = |t: usize| !mine(t) && owner(table, t) != Owner::Nobody;
    let mut offered = Vec::new();
    match phase(table) {
        Phase::Reinforce => {
            let cards = hand(table, player);
            for set in sets_in(&cards) {
                let faces: Vec<String> = set.iter().map(Face::face).collect();
                let label = format!("Trade {} for {} armies", list_faces(&set), set_value(meta_u64(table, SETS_TRADED) as u32 + 1));
                offered.push(button(format!("{}{}", TRADE_PREFIX, faces.join("+")), label, Choice));
            }
            if cards.len() < FORCED_TRADE_CARDS && meta_u64(table, REINFORCEMENTS) > 0 {
                for t in held_by(table, Owner::Player(player)) {
                    offered.push(click(t, format!("Place an army on {}", name(t))));
                }
            }
        }
        Phase::Attack => match (chosen(table, FROM), chosen(table, TO)) {
            (None, _) => {
                for t in held_by(table, Owner::Player(player)) {
                    if armies(table, t) >= 2 && neighbors(t).into_iter().any(enemy) {
                        offered.push(click(t, format!("Attack from {}", name(t))));
                    }
                }
                offered.push(end_attacks());
            }
            (Some(from), None) => {
                for t in neighbors(from).into_iter().filter(|&t| enemy(t)) {
                    offered.push(click(t, format!("Attack {} from {}", name(t), name(from))));
                }
                offered.push(button(CANCEL.to_string(), "Choose another territory".to_string(), Cancel));
                offered.push(end_attacks());
            }
            (Some(from), Some(to)) => {
                for dice in (1..=attack_dice_allowed(armies(table, from))).rev() {
                    let label = format!("Roll {} {} against {}", dice, if dice == 1 { "die" } else { "dice" }, name(to));
                    offered.push(button(format!("{}{}", ROLL_PREFIX, dice), label, Confirm));
                }
                offered.push(button(CANCEL.to_string(), "Stop this attack".to_string(), Cancel));
                offered.push(end_attacks());
            }
        },
        Phase::MoveIn => {
            let (from, to) = (chosen(table, FROM).expect("from"), chosen(table, TO).expect("to"));
            for n in move_in_choices(armies(table, from), meta_u64(table, MOVE_MIN) as u32) {
                let label = format!("Move {} into {}", n, name(to));
                offered.push(button(format!("{}{}", MOVE_IN_PREFIX, n), label, Confirm));
            }
        }
        Phase::Fortify => match (chosen(table, FROM), chosen(table, TO)) {
            (None, _) => {
                for t in held_by(table, Owner::Player(player)) {
                    if armies(table, t) >= 2 && !reachable(t, mine).is_empty() {
                        offered.push(click(t, format!("Fortify from {}", name(t))));
                    }
                }
                offered.push(end_turn_button());
            }
            (Some(from), None) => {
                for t in reachable(from, mine) {
                    offered.push(click(t, format!("Fortify {} from {}", name(t), name(from))));
                }
                offered.push(button(CANCEL.to_string(), "Choose another territory".to_string(), Cancel));
                offered.push(end_turn_button());
            }
            (Some(from), Some(to)) => {
                for n in move_choices(armies(table, from) - 1) {
                    let label = format!("Move {} to {} and end the turn", n, name(to));
                    offered.push(button(format!("{}{}", FORTIFY_PREFIX, n), label, Confirm));
                }
                offered.push(button(CANCEL.to_string(), "Choose again".to_string(), Cancel));
                offered.push(end_turn_button());
            }
        },
        Phase::Claim | Phase::Place | Phase::Over => {}
    }
    offered
}

/// "End attacks" is offered at every step of the attack phase, so a player
/// (or a random bot) can stop at any point.
fn end_attacks() -> AvailableAction {
    button(END_ATTACKS.to_string(), "End attacks".to_string(), tablehost_sdk::Intent::Confirm)
}

/// "End the turn" (without fortifying, or without finishing one) is offered
/// at every step of the fortify phase.
fn end_turn_button() -> AvailableAction {
    button(END_TURN.to_string(), "End the turn".to_string(), tablehost_sdk::Intent::Confirm)
}

/// The numbers of armies offered when moving up to `most`: one, half, all.
pub fn move_choices(most: u32) -> Vec<u32> {
    let mut choices = vec![1, (most + 1) / 2, most];
    choices.retain(|&n| n >= 1 && n <= most);
    choices.dedup();
    choices
}

/// Armies that may move into a conquered territory: from the dice rolled
/// (capped by what can leave) up to all but one, as min, half-way and max.
pub fn move_in_choices(from_armies: u32, dice: u32) -> Vec<u32> {
    let most = from_armies - 1;
    let least = dice.min(most).max(1);
    let mut choices = vec![least, (least + most + 1) / 2, most];
    choices.dedup();
    choices
}

/// Carries out one of `offers`. Panics on anything else.
pub fn apply(table: &mut Table, player: PlayerId, action: &Action, rng: &mut Rng) {
    let phase = phase(table);
    match action {
        Action::SpaceClick { space_id } => {
            let t = crate::map::index_of(space_id).unwrap_or_else(|| panic!("no territory {:?}", space_id));
            match phase {
                Phase::Reinforce => place_reinforcement(table, player, t),
                Phase::Attack | Phase::Fortify if chosen(table, FROM).is_none() => {
                    table.set_meta(FROM, json!(t));
                    table.allow_undo();
                }
                Phase::Attack | Phase::Fortify => {
                    table.set_meta(TO, json!(t));
                    table.allow_undo();
                }
                other => panic!("no territory click in {:?}", other),
            }
        }
        Action::ButtonClick { button } => {
            let id = button.id.as_str();
            if let Some(faces) = id.strip_prefix(TRADE_PREFIX) {
                trade(table, player, faces);
            } else if id == CANCEL {
                if phase == Phase::Fortify && chosen(table, TO).is_some() {
                    table.set_meta(TO, Value::Null);
                } else {
                    clear_choice(table);
                }
                table.allow_undo();
            } else if id == END_ATTACKS {
                clear_choice(table);
                set_phase(table, Phase::Fortify);
                table.log(LogEntry::new(format!("{} ends their attacks", table.player_name(player))));
            } else if id == END_TURN {
                end_turn(table, player, rng);
            } else if let Some(n) = id.strip_prefix(ROLL_PREFIX) {
                attack(table, player, n.parse().expect("dice"), rng);
            } else if let Some(n) = id.strip_prefix(MOVE_IN_PREFIX) {
                move_in(table, player, n.parse().expect("armies"));
            } else if let Some(n) = id.strip_prefix(FORTIFY_PREFIX) {
                fortify(table, player, n.parse().expect("armies"));
                end_turn(table, player, rng);
            } else {
                panic!("risk has no button {:?}", id);
            }
        }
        other => panic!("risk does not offer {:?}", other),
    }
}

fn place_reinforcement(table: &mut Table, player: PlayerId, t: usize) {
    assert_eq!(owner(table, t), Owner::Player(player), "{} is not theirs", name(t));
    let left = meta_u64(table, REINFORCEMENTS);
    assert!(left > 0, "no armies left to place");
    set_armies(table, t, armies(table, t) + 1);
    table.set_meta(REINFORCEMENTS, json!(left - 1));
    table.log(LogEntry::new(format!("{} places an army on {}", table.player_name(player), name(t))));
    leave_reinforce_if_done(table, player);
}

/// With every army placed and fewer than five cards, the attack begins.
fn leave_reinforce_if_done(table: &mut Table, player: PlayerId) {
    if meta_u64(table, REINFORCEMENTS) == 0 && hand(table, player).len() < FORCED_TRADE_CARDS {
        clear_choice(table);
        set_phase(table, Phase::Attack);
    }
}

/// Trades the three cards named `faces` (`a+b+c`): they go face up to the
/// discard pile and the set's value joins the armies to place.
fn trade(table: &mut Table, player: PlayerId, faces: &str) {
    let space = cards_of(player);
    let mut traded = Vec::new();
    for face in faces.split('+') {
        let card = RiskCard::parse_face(face).unwrap_or_else(|| panic!("no card {:?}", face));
        let index = table
            .pieces(&space)
            .iter()
            .position(|p| p.private_kind.as_deref() == Some(face))
            .unwrap_or_else(|| panic!("{} does not hold {}", player, face));
        let at = table.move_piece(&space, index, DISCARD);
        turn_face_up(table, DISCARD, at);
        traded.push(card);
    }
    let cards: [RiskCard; 3] = [traded[0], traded[1], traded[2]];
    assert!(crate::cards::is_set(&cards), "{} is not a set", faces);
    let nth = meta_u64(table, SETS_TRADED) as u32 + 1;
    let value = set_value(nth);
    table.set_meta(SETS_TRADED, json!(nth));
    let left = meta_u64(table, REINFORCEMENTS) + u64::from(value);
    table.set_meta(REINFORCEMENTS, json!(left));
    table.log(LogEntry::new(format!(
        "{} trades {} for {} armies",
        table.player_name(player),
        list_faces(&traded),
        value
    )));
    leave_reinforce_if_done(table, player);
}

/// One roll of the chosen attack with `dice` dice.
fn attack(table: &mut Table, player: PlayerId, dice: u32, rng: &mut Rng) {
    let (from, to) = (chosen(table, FROM).expect("from"), chosen(table, TO).expect("to"));
    assert!(dice >= 1 && dice <= attack_dice_allowed(armies(table, from)), "{} dice not allowed", dice);
    let defender = owner(table, to);
    let attack_roll = Roll::new(rng, dice as usize, 6);
    let defence_roll = Roll::new(rng, defence_dice(armies(table, to)) as usize, 6);
    let (lost, killed) = losses(&attack_roll.values, &defence_roll.values);
    set_armies(table, from, armies(table, from) - lost);
    set_armies(table, to, armies(table, to) - killed);
    let defender_name = owner_name(table, defender);
    table.log(LogEntry::new(format!(
        "{} attacks {} from {}: {} rolled {} against {}: the attacker loses {}, the defender {}",
        table.player_name(player),
        name(to),
        name(from),
        table.player_name(player),
        attack_roll.describe(),
        defence_roll.describe(),
        lost,
        killed
    )));
    if armies(table, to) == 0 {
        conquer(table, player, from, to, dice, defender, &defender_name);
    } else if armies(table, from) < 2 {
        clear_choice(table);
    }
}

fn owner_name(table: &Table, who: Owner) -> String {
    match who {
        Owner::Player(p) => table.player_name(p),
        Owner::Neutral => "the neutral army".to_string(),
        Owner::Nobody => "nobody".to_string(),
    }
}

/// The attacker takes `to`; a defender left with nothing is knocked out.
fn conquer(table: &mut Table, player: PlayerId, from: usize, to: usize, dice: u32, defender: Owner, defender_name: &str) {
    set_owner(table, to, Owner::Player(player));
    table.set_meta(CONQUERED, true);
    table.log(LogEntry::new(format!("{} takes {} from {}", table.player_name(player), name(to), defender_name)));
    if let Owner::Player(loser) = defender {
        if held_by(table, defender).is_empty() {
            eliminate(table, player, loser);
        }
    }
    if winner(table).is_some() {
        // The game is won: the least move-in ends it.
        let n = move_in_choices(armies(table, from), dice)[0];
        set_armies(table, from, armies(table, from) - n);
        set_armies(table, to, n);
        finish(table);
        return;
    }
    table.set_meta(MOVE_MIN, json!(dice));
    set_phase(table, Phase::MoveIn);
}

/// `loser` is out; their cards go to `player`.
fn eliminate(table: &mut Table, player: PlayerId, loser: PlayerId) {
    table.set_player_public_state(loser, ELIMINATED, true);
    let taken: Vec<RiskCard> = hand(table, loser);
    let from = cards_of(loser);
    let to = cards_of(player);
    while !table.pieces(&from).is_empty() {
        table.move_piece(&from, 0, &to);
    }
    let text = format!(
        "{} knocks {} out and takes their {} cards",
        table.player_name(player),
        table.player_name(loser),
        taken.len()
    );
    let mine = format!("You knock {} out and take {}", table.player_name(loser), list_faces(&taken));
    table.log(LogEntry::new(text).for_player(player, mine));
}

/// Moves `n` armies into the conquered territory; with five or more cards
/// (taken from a knocked-out player) the trade comes first.
fn move_in(table: &mut Table, player: PlayerId, n: u32) {
    let (from, to) = (chosen(table, FROM).expect("from"), chosen(table, TO).expect("to"));
    assert!(move_in_choices(armies(table, from), meta_u64(table, MOVE_MIN) as u32).contains(&n), "move {} not allowed", n);
    set_armies(table, from, armies(table, from) - n);
    set_armies(table, to, n);
    table.log(LogEntry::new(format!("{} moves {} into {}", table.player_name(player), n, name(to))));
    clear_choice(table);
    if hand(table, player).len() >= FORCED_TRADE_CARDS {
        table.set_meta(REINFORCEMENTS, json!(0));
        set_phase(table, Phase::Reinforce);
    } else {
        set_phase(table, Phase::Attack);
    }
}

/// Moves `n` armies between the chosen territories (the turn's fortify).
fn fortify(table: &mut Table, player: PlayerId, n: u32) {
    let (from, to) = (chosen(table, FROM).expect("from"), chosen(table, TO).expect("to"));
    let mine = |t: usize| owner(table, t) == Owner::Player(player);
    assert!(mine(from) && reachable(from, mine).contains(&to), "no path of own territories");
    assert!(n >= 1 && n < armies(table, from), "must leave one army");
    set_armies(table, from, armies(table, from) - n);
    set_armies(table, to, armies(table, to) + n);
    table.log(LogEntry::new(format!("{} moves {} from {} to {}", table.player_name(player), n, name(from), name(to))));
}

/// The end of `player`'s turn: a card if they conquered, then the next
/// player's turn, or the end of the game after the round limit.
fn end_turn(table: &mut Table, player: PlayerId, rng: &mut Rng) {
    clear_choice(table);
    if meta_bool(table, CONQUERED) {
        draw_card(table, player, rng);
    }
    let order = turn_order(table);
    let at = order.iter().position(|&p| p == player).expect("seated");
    let next_at = (1..=order.len()).map(|k| (at + k) % order.len()).find(|&i| !is_eliminated(table, order[i]));
    let next_at = next_at.expect("someone is left");
    if next_at <= at {
        let round = meta_u64(table, ROUND) + 1;
        let limit = round_limit(table);
        if limit > 0 && round > limit {
            table.log(LogEntry::new(format!("The round limit ({}) is reached", limit)));
            finish(table);
            return;
        }
        table.set_meta(ROUND, json!(round));
    }
    start_turn(table, order[next_at]);
}

/// One card from a random place of the deck; an empty deck is refilled
/// with the traded cards, face down.
fn draw_card(table: &mut Table, player: PlayerId, rng: &mut Rng) {
    if table.pieces(DECK).is_empty() {
        while !table.pieces(DISCARD).is_empty() {
            turn_face_down(table, DISCARD, 0);
            table.move_piece(DISCARD, 0, DECK);
        }
    }
    let left = table.pieces(DECK).len();
    if left == 0 {
        return;
    }
    let index = rng.below(left);
    let at = table.move_piece(DECK, index, &cards_of(player));
    let face = table.piece(&cards_of(player), at).private_kind.clone().unwrap_or_default();
    let text = format!("{} draws a card", table.player_name(player));
    table.log(LogEntry::new(text).for_player(player, format!("You draw {}", face)));
}

/// The only player holding territories (other than the neutral army), if
/// just one is left.
pub fn winner(table: &Table) -> Option<PlayerId> {
    let left: Vec<PlayerId> =
        table.players().into_iter().filter(|&p| !held_by(table, Owner::Player(p)).is_empty()).collect();
    if left.len() == 1 {
        Some(left[0])
    } else {
        None
    }
}

/// The game is over: nobody acts; the final counts are logged.
pub fn finish(table: &mut Table) {
    set_phase(table, Phase::Over);
    clear_choice(table);
    table.set_active_players(Vec::new());
    let counts: Vec<String> = table
        .players()
        .into_iter()
        .map(|p| format!("{} {}", table.player_name(p), held_by(table, Owner::Player(p)).len()))
        .collect();
    table.log(LogEntry::new(format!("Game over. Territories: {}", counts.join(", "))));
}
