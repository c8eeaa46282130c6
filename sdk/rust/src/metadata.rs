//! What a game declares about itself (ABI v1.1 op `metadata`, docs/abi.md
//! "metadata"): how many players it seats, a description, whether it hides
//! information, how its result is read, how a resignation plays out, and the
//! options (variants) a match may choose. Plus [`Options`], the chosen values
//! `config` receives.
//!
//! ```ignore
//! fn metadata() -> Metadata {
//!     Metadata::players(4, 4)
//!         .description("Hearts for four")
//!         .hidden_information(true)
//!         .result(ResultRule::LowestScore)
//!         .option(GameOption::integer("target_score", 100, 50, 500).describe("a round ending at or over this ends the game"))
//! }
//! ```

use serde_json::{json, Map, Value};

use crate::json_out::json_text;
use crate::table::Table;

/// The `meta_data` key under which the SDK records the chosen options at
/// setup, so later calls (`step`, `game_over`) read them from the state.
pub const OPTIONS_META_KEY: &str = "options";

/// How the host reads a finished match's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultRule {
    /// Rank seats by their first public score, highest first (the default).
    HighestScore,
    /// Rank seats by their first public score, lowest first (hearts, golf).
    LowestScore,
    /// The game returns each seat's rank itself ([`crate::Game::ranks`]).
    Ranks,
}

impl ResultRule {
    fn wire(self) -> &'static str {
        match self {
            ResultRule::HighestScore => "highest_score",
            ResultRule::LowestScore => "lowest_score",
            ResultRule::Ranks => "ranks",
        }
    }
}

/// What happens when a seat resigns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResignRule {
    /// The match ends at once; the resigner ranks last (the default).
    Ends,
    /// The others play on; the host plays the resigner's seat (a deterministic
    /// offered action) and ranks it last at the end.
    Continue,
}

/// The type and allowed values of one option.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionKind {
    /// A whole number in `min..=max`.
    Integer { min: i64, max: i64 },
    /// `true` or `false`.
    Boolean,
    /// One of these strings.
    Choice(Vec<String>),
}

/// One named setting of a match (a variant), with its default.
#[derive(Clone, Debug, PartialEq)]
pub struct GameOption {
    pub name: String,
    pub description: String,
    pub kind: OptionKind,
    pub default: Value,
}

impl GameOption {
    /// An integer option in `min..=max` defaulting to `default`.
    ///
    /// Panics when `default` is outside `min..=max`.
    pub fn integer(name: &str, default: i64, min: i64, max: i64) -> GameOption {
        assert!(min <= default && default <= max, "option {}: default {} outside {}..={}", name, default, min, max);
        GameOption { name: name.to_owned(), description: String::new(), kind: OptionKind::Integer { min, max }, default: json!(default) }
    }

    /// A boolean option defaulting to `default`.
    pub fn boolean(name: &str, default: bool) -> GameOption {
        GameOption { name: name.to_owned(), description: String::new(), kind: OptionKind::Boolean, default: json!(default) }
    }

    /// A choice among `values` defaulting to `default`.
    ///
    /// Panics when `default` is not one of `values`.
    pub fn choice(name: &str, default: &str, values: &[&str]) -> GameOption {
        assert!(values.contains(&default), "option {}: default {:?} is not among {:?}", name, default, values);
        GameOption {
            name: name.to_owned(),
            description: String::new(),
            kind: OptionKind::Choice(values.iter().map(|v| (*v).to_owned()).collect()),
            default: json!(default),
        }
    }

    /// Set the one-line description shown to people choosing it.
    pub fn describe(mut self, description: &str) -> GameOption {
        self.description = description.to_owned();
        self
    }

    /// Whether `value` is allowed for this option.
    pub fn allows(&self, value: &Value) -> bool {
        match &self.kind {
            OptionKind::Integer { min, max } => value.as_i64().map_or(false, |v| *min <= v && v <= *max),
            OptionKind::Boolean => value.is_boolean(),
            OptionKind::Choice(values) => value.as_str().map_or(false, |v| values.iter().any(|x| x == v)),
        }
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name));
        out.insert("description".into(), json!(self.description));
        match &self.kind {
            OptionKind::Integer { min, max } => {
                out.insert("type".into(), json!("integer"));
                out.insert("min".into(), json!(min));
                out.insert("max".into(), json!(max));
            }
            OptionKind::Boolean => {
                out.insert("type".into(), json!("boolean"));
            }
            OptionKind::Choice(values) => {
                out.insert("type".into(), json!("choice"));
                out.insert("values".into(), Value::Array(values.iter().cloned().map(Value::String).collect()));
            }
        }
        out.insert("default".into(), self.default.clone());
        Value::Object(out)
    }
}

/// Everything a game declares about itself. Build with [`Metadata::players`]
/// (or `Metadata::default()`: 1 to 64 players, nothing hidden, highest score
/// wins, resigning ends the match, no options).
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    pub min_players: u32,
    pub max_players: u32,
    pub description: String,
    pub hidden_information: bool,
    pub result: ResultRule,
    pub resign: ResignRule,
    pub options: Vec<GameOption>,
}

impl Default for Metadata {
    fn default() -> Metadata {
        Metadata {
            min_players: 1,
            max_players: 64,
            description: String::new(),
            hidden_information: false,
            result: ResultRule::HighestScore,
            resign: ResignRule::Ends,
            options: Vec::new(),
        }
    }
}

impl Metadata {
    /// Defaults with a seat range of `min..=max` players.
    ///
    /// Panics when `min` is 0 or greater than `max`.
    pub fn players(min: u32, max: u32) -> Metadata {
        assert!(1 <= min && min <= max, "player range {}..={} is empty or starts at 0", min, max);
        Metadata { min_players: min, max_players: max, ..Metadata::default() }
    }

    /// Set the short description (one or two sentences).
    pub fn description(mut self, description: &str) -> Metadata {
        self.description = description.to_owned();
        self
    }

    /// Declare whether some pieces or states are hidden from some viewers.
    pub fn hidden_information(mut self, hidden: bool) -> Metadata {
        self.hidden_information = hidden;
        self
    }

    /// Set how the result is read.
    pub fn result(mut self, rule: ResultRule) -> Metadata {
        self.result = rule;
        self
    }

    /// Set what a resignation does.
    pub fn resign(mut self, rule: ResignRule) -> Metadata {
        self.resign = rule;
        self
    }

    /// Add an option. Panics when an option of that name exists.
    pub fn option(mut self, option: GameOption) -> Metadata {
        assert!(self.options.iter().all(|o| o.name != option.name), "option {} declared twice", option.name);
        self.options.push(option);
        self
    }

    /// The wire form of docs/abi.md "metadata".
    pub fn to_json(&self) -> Value {
        json!({
            "min_players": self.min_players,
            "max_players": self.max_players,
            "description": self.description,
            "hidden_information": self.hidden_information,
            "result": self.result.wire(),
            "resign": match self.resign { ResignRule::Ends => "ends", ResignRule::Continue => "continue" },
            "options": Value::Array(self.options.iter().map(GameOption::to_json).collect()),
        })
    }

    /// `given` with every declared option's default filled in.
    ///
    /// Errors name an option that is not declared or a value it does not allow
    /// (the host checks the same before it calls `setup`).
    pub fn resolve(&self, given: &Map<String, Value>) -> Result<Options, String> {
        for (name, value) in given {
            match self.options.iter().find(|o| &o.name == name) {
                None => return Err(format!("unknown option {:?}", name)),
                Some(option) if !option.allows(value) => {
                    return Err(format!("option {:?} does not allow {}", name, json_text(value)))
                }
                Some(_) => {}
            }
        }
        let mut values = Map::new();
        for option in &self.options {
            values.insert(option.name.clone(), given.get(&option.name).cloned().unwrap_or_else(|| option.default.clone()));
        }
        Ok(Options(values))
    }
}

/// The options chosen for a match, every declared one present (defaults
/// filled in). `config` receives them; later calls read them with
/// [`Table::options`] (the SDK keeps them in `meta_data.options`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options(pub Map<String, Value>);

impl Options {
    /// The value of integer option `name`. Panics when it is missing or not an integer.
    pub fn integer(&self, name: &str) -> i64 {
        self.0.get(name).and_then(Value::as_i64).unwrap_or_else(|| panic!("integer option {} is not set", name))
    }

    /// The value of boolean option `name`. Panics when it is missing or not a boolean.
    pub fn boolean(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or_else(|| panic!("boolean option {} is not set", name))
    }

    /// The value of choice option `name`. Panics when it is missing or not a string.
    pub fn choice(&self, name: &str) -> &str {
        self.0.get(name).and_then(Value::as_str).unwrap_or_else(|| panic!("choice option {} is not set", name))
    }
}

impl Table {
    /// The options chosen for this match (from `meta_data.options`; empty when
    /// the game declares none).
    pub fn options(&self) -> Options {
        match self.meta(OPTIONS_META_KEY) {
            Some(Value::Object(map)) => Options(map.clone()),
            _ => Options::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Metadata {
        Metadata::players(2, 4)
            .option(GameOption::integer("target", 100, 50, 200))
            .option(GameOption::choice("deck", "full", &["full", "short"]))
            .option(GameOption::boolean("jokers", false))
    }

    #[test]
    fn resolve_fills_defaults_and_keeps_given_values() {
        let mut given = Map::new();
        given.insert("target".into(), json!(150));
        let options = sample().resolve(&given).unwrap();
        assert_eq!(options.integer("target"), 150);
        assert_eq!(options.choice("deck"), "full");
        assert!(!options.boolean("jokers"));
    }

    #[test]
    fn resolve_refuses_unknown_names_and_disallowed_values() {
        let mut given = Map::new();
        given.insert("colour".into(), json!(1));
        assert!(sample().resolve(&given).unwrap_err().contains("unknown option"));
        let mut given = Map::new();
        given.insert("target".into(), json!(20));
        assert!(sample().resolve(&given).unwrap_err().contains("does not allow"));
        let mut given = Map::new();
        given.insert("deck".into(), json!("tiny"));
        assert!(sample().resolve(&given).is_err());
    }

    #[test]
    fn wire_form_lists_every_field() {
        let wire = sample().to_json();
        assert_eq!(wire["min_players"], json!(2));
        assert_eq!(wire["result"], json!("highest_score"));
        assert_eq!(wire["resign"], json!("ends"));
        assert_eq!(wire["options"][0]["type"], json!("integer"));
        assert_eq!(wire["options"][1]["values"], json!(["full", "short"]));
        assert_eq!(wire["options"][2]["default"], json!(false));
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn a_default_outside_the_range_is_refused() {
        GameOption::integer("n", 5, 6, 9);
    }
}
