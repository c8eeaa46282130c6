//! What a player can do: `Action`, `Button`, and the offered `AvailableAction`.

use serde::{Deserialize, Serialize};

/// One thing a player does, addressed in the state the rules were handed.
///
/// JSON: `{"type": "space_click", "space_id": "c3"}`,
/// `{"type": "piece_click", "space_id": "hand-1", "index": 0}`,
/// `{"type": "button_click", "button": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "FlatAction")]
pub enum Action {
    SpaceClick { space_id: String },
    PieceClick { space_id: String, index: usize },
    ButtonClick { button: Button },
}

impl Action {
    /// A click on space `space_id`.
    pub fn space_click(space_id: impl Into<String>) -> Action {
        Action::SpaceClick { space_id: space_id.into() }
    }

    /// A click on the piece at `index` (0-based) of space `space_id`.
    pub fn piece_click(space_id: impl Into<String>, index: usize) -> Action {
        Action::PieceClick { space_id: space_id.into(), index }
    }

    /// A press of `button`.
    pub fn button_click(button: Button) -> Action {
        Action::ButtonClick { button }
    }
}

/// Every field any action has: read first, then checked against `type`.
/// (serde's own internally tagged reader buffers the whole value and costs
/// tens of KB of wasm; this one costs a struct.)
#[derive(Deserialize)]
struct FlatAction {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    space_id: Option<String>,
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    button: Option<Button>,
}

impl TryFrom<FlatAction> for Action {
    type Error = String;

    fn try_from(flat: FlatAction) -> Result<Action, String> {
        let missing = |field: &str| format!("a {} action needs \"{}\"", flat.kind, field);
        match flat.kind.as_str() {
            "space_click" => Ok(Action::SpaceClick { space_id: flat.space_id.ok_or_else(|| missing("space_id"))? }),
            "piece_click" => Ok(Action::PieceClick {
                space_id: flat.space_id.ok_or_else(|| missing("space_id"))?,
                index: flat.index.ok_or_else(|| missing("index"))?,
            }),
            "button_click" => Ok(Action::ButtonClick { button: flat.button.ok_or_else(|| missing("button"))? }),
            other => Err(format!("unknown action type \"{}\"", other)),
        }
    }
}

/// A button a game offers: `id` is what the rules match on, `label` what a
/// client shows, `location` a free-form placement hint ("" = default).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Button {
    pub id: String,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub location: String,
    #[serde(default)]
    pub disabled: bool,
}

impl Button {
    /// An enabled button with no location hint.
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> Button {
        Button { id: id.into(), label: label.into(), location: String::new(), disabled: false }
    }

    /// The same button placed at `location`.
    pub fn at(mut self, location: impl Into<String>) -> Button {
        self.location = location.into();
        self
    }
}

/// What an action does to the decision in progress (what bots and search key off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Advances a decision without ending it (select, stage, target).
    Choice,
    /// Commits the decision and hands play on.
    Confirm,
    /// Abandons the decision in progress.
    Cancel,
    /// The platform's own "take back": a game never offers it.
    Undo,
}

/// An action offered to a player, with its intent and a label for logs and bots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AvailableAction {
    pub action: Action,
    pub intent: Intent,
    #[serde(default)]
    pub label: String,
}

impl AvailableAction {
    /// `action` offered with `intent`.
    pub fn new(action: Action, intent: Intent, label: impl Into<String>) -> AvailableAction {
        AvailableAction { action, intent, label: label.into() }
    }

    /// `action` offered as a choice.
    pub fn choice(action: Action, label: impl Into<String>) -> AvailableAction {
        AvailableAction::new(action, Intent::Choice, label)
    }

    /// `action` offered as a confirm (ends the decision).
    pub fn confirm(action: Action, label: impl Into<String>) -> AvailableAction {
        AvailableAction::new(action, Intent::Confirm, label)
    }

    /// `action` offered as a cancel.
    pub fn cancel(action: Action, label: impl Into<String>) -> AvailableAction {
        AvailableAction::new(action, Intent::Cancel, label)
    }
}
