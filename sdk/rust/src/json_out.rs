//! A hand-written JSON writer for the responses the SDK sends on every call.
//!
//! serde_json's generic serializer goes through `io::Write` one fragment at a
//! time and grows a fresh buffer; in wasm that was most of a move's cost. This
//! writer appends straight to a reused `Vec<u8>` and produces exactly the
//! bytes `serde_json::to_vec` produces for the same value (same member order,
//! same escapes, same numbers); the tests below check that byte for byte.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use crate::action::{Action, AvailableAction, Button, Intent};
use crate::config::{Score, Scores};
use crate::patch::Patch;
use crate::state::{Arrangement, LogEntry, Piece, Player, PlayerId, Space, State};

/// A value the SDK writes as JSON by appending to a byte buffer.
pub(crate) trait WriteJson {
    /// Append this value's JSON (as `serde_json::to_vec` writes it) to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// `,"key":` for `ObjectWriter::key` and `member`: a member name written
/// raw, so it must need no escape.
macro_rules! name {
    ($key:literal) => {
        concat!(",\"", $key, "\":")
    };
}
pub(crate) use name;

/// `,"key":"value"` for `ObjectWriter::tag`: a member whose name and string
/// value are both literals needing no escape.
macro_rules! tag {
    ($key:literal, $value:literal) => {
        concat!(",\"", $key, "\":\"", $value, "\"")
    };
}

/// `\u00XX` escapes use lowercase hex, as serde_json's do.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether byte `b` must be escaped inside a JSON string: `"`, `\` and the
/// control characters below 0x20. Everything else (DEL and all non-ASCII
/// UTF-8 included) is copied as is.
fn needs_escape(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Append the escape of a byte for which `needs_escape` holds: the short
/// forms serde_json uses where JSON has one, else `\u00XX`.
fn write_escape(out: &mut Vec<u8>, b: u8) {
    let short: &[u8] = match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x0C => b"\\f",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        _ => {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
            return;
        }
    };
    out.extend_from_slice(short);
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether any of the 8 bytes of `word` is below `limit` (<= 0x80). Exact as
/// a yes/no answer (the classic "has less" bit trick; only which byte may be
/// misreported, and the caller rescans the word byte by byte).
fn any_byte_below(word: u64, limit: u8) -> bool {
    word.wrapping_sub(LOW_BITS * u64::from(limit)) & !word & HIGH_BITS != 0
}

/// Whether any of the 8 bytes of `word` equals `byte`.
fn any_byte_is(word: u64, byte: u8) -> bool {
    any_byte_below(word ^ (LOW_BITS * u64::from(byte)), 1)
}

/// Whether any byte of `word` needs an escape (see `needs_escape`).
fn word_needs_escape(word: u64) -> bool {
    any_byte_below(word, 0x20) || any_byte_is(word, b'"') || any_byte_is(word, b'\\')
}

/// Append `text` as a quoted, escaped JSON string. Bytes are checked eight
/// at a time and runs of plain bytes copied in one go: labels and log text
/// rarely need an escape, and this is the writer's innermost loop.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut plain_from = 0;
    let mut at = 0;
    while at < bytes.len() {
        let end = if at + 8 <= bytes.len() {
            let word = u64::from_le_bytes([
                bytes[at],
                bytes[at + 1],
                bytes[at + 2],
                bytes[at + 3],
                bytes[at + 4],
                bytes[at + 5],
                bytes[at + 6],
                bytes[at + 7],
            ]);
            if !word_needs_escape(word) {
                at += 8;
                continue;
            }
            at + 8
        } else {
            bytes.len()
        };
        while at < end {
            let b = bytes[at];
            if needs_escape(b) {
                out.extend_from_slice(&bytes[plain_from..at]);
                write_escape(out, b);
                plain_from = at + 1;
            }
            at += 1;
        }
    }
    out.extend_from_slice(&bytes[plain_from..]);
    out.push(b'"');
}

/// Append `value` in decimal.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    write_u64(out, value.unsigned_abs());
}

/// Integral doubles below this magnitude print as `<digits>.0` (serde_json's
/// shortest form switches to exponents at 1e16).
const PLAIN_INTEGRAL_LIMIT: f64 = 1e15;

/// Append `value` as serde_json writes an f64: `null` when not finite, the
/// integral ones as `3.0`, the rest through serde_json's own float printer.
pub(crate) fn write_f64(out: &mut Vec<u8>, value: f64) {
    if !value.is_finite() {
        out.extend_from_slice(b"null");
    } else if value.fract() == 0.0 && value.abs() < PLAIN_INTEGRAL_LIMIT {
        if value.is_sign_negative() {
            out.push(b'-');
        }
        write_u64(out, value.abs() as u64);
        out.extend_from_slice(b".0");
    } else {
        serde_json::to_writer(&mut *out, &value).expect("writing to a Vec cannot fail");
    }
}

fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// `value` as compact JSON text (what `value.to_string()` gives), for
/// messages: through this writer, so a module carries no serde_json
/// serializer for the rare paths that quote a value.
pub(crate) fn json_text(value: &Value) -> String {
    let mut out = Vec::new();
    value.write_json(&mut out);
    String::from_utf8(out).expect("the writer only appends whole UTF-8 strings and ASCII")
}

/// Whether `text` can go between quotes as it is (no byte needs an escape).
fn is_plain(text: &str) -> bool {
    !text.bytes().any(needs_escape)
}

/// The members of one JSON object, written in order with the commas between.
pub(crate) struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjectWriter<'a> {
    /// Open an object in `out`; `end` closes it.
    pub(crate) fn begin(out: &'a mut Vec<u8>) -> ObjectWriter<'a> {
        out.push(b'{');
        ObjectWriter { out, first: true }
    }

    fn comma(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    /// Append a member name made by `name!` (`,"key":`, a literal that needs
    /// no escape, copied in one go; its comma is dropped for the first
    /// member) and return the buffer for the value, which the caller must
    /// write before the next member.
    pub(crate) fn key(&mut self, name: &'static str) -> &mut Vec<u8> {
        debug_assert!(name.starts_with(",\"") && name.ends_with("\":") && is_plain(&name[2..name.len() - 2]));
        self.out.extend_from_slice(&name.as_bytes()[usize::from(self.first)..]);
        self.first = false;
        self.out
    }

    /// Append member `name` (made by `name!`) with `value`.
    pub(crate) fn member<T: WriteJson + ?Sized>(&mut self, name: &'static str, value: &T) -> &mut Self {
        value.write_json(self.key(name));
        self
    }

    /// Append a whole member made by `tag!` (`,"key":"value"`, a literal
    /// such as `"op": "add_piece"`).
    pub(crate) fn tag(&mut self, member: &'static str) -> &mut Self {
        debug_assert!(member.starts_with(",\"") && member.ends_with('"'));
        self.out.extend_from_slice(&member.as_bytes()[usize::from(self.first)..]);
        self.first = false;
        self
    }

    /// Append a member whose name comes from data (escaped like any string).
    pub(crate) fn entry<T: WriteJson + ?Sized>(&mut self, key: &str, value: &T) -> &mut Self {
        self.comma();
        write_str(self.out, key);
        self.out.push(b':');
        value.write_json(self.out);
        self
    }

    /// Close the object.
    pub(crate) fn end(self) {
        self.out.push(b'}');
    }
}

// ---- generic shapes ---------------------------------------------------------

impl WriteJson for str {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl WriteJson for String {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl WriteJson for bool {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_bool(out, *self);
    }
}

impl WriteJson for u32 {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_u64(out, u64::from(*self));
    }
}

impl WriteJson for usize {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_u64(out, *self as u64);
    }
}

impl WriteJson for f64 {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_f64(out, *self);
    }
}

impl<T: WriteJson> WriteJson for Option<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(value) => value.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

impl<T: WriteJson> WriteJson for [T] {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (at, item) in self.iter().enumerate() {
            if at > 0 {
                out.push(b',');
            }
            item.write_json(out);
        }
        out.push(b']');
    }
}

impl<T: WriteJson> WriteJson for Vec<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_slice().write_json(out);
    }
}

impl WriteJson for Number {
    fn write_json(&self, out: &mut Vec<u8>) {
        if let Some(value) = self.as_u64() {
            write_u64(out, value);
        } else if let Some(value) = self.as_i64() {
            write_i64(out, value);
        } else {
            write_f64(out, self.as_f64().unwrap_or(f64::NAN));
        }
    }
}

impl WriteJson for Value {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(value) => write_bool(out, *value),
            Value::Number(number) => number.write_json(out),
            Value::String(text) => write_str(out, text),
            Value::Array(items) => items.write_json(out),
            Value::Object(map) => map.write_json(out),
        }
    }
}

impl WriteJson for Map<String, Value> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        for (key, value) in self {
            object.entry(key, value);
        }
        object.end();
    }
}

impl WriteJson for BTreeMap<String, String> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        for (key, value) in self {
            object.entry(key, value);
        }
        object.end();
    }
}

/// Append `"<id>":` for a map keyed by player id (the id in decimal).
pub(crate) fn write_player_key(out: &mut Vec<u8>, player_id: PlayerId, first: bool) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    write_u64(out, u64::from(player_id));
    out.extend_from_slice(b"\":");
}

// ---- the ABI's types (member order = declaration order of their serde derives) ----

impl WriteJson for Arrangement {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self {
            Arrangement::Ordered => b"\"ordered\"",
            Arrangement::Collection => b"\"collection\"",
        });
    }
}

impl WriteJson for Piece {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object
            .member(name!("public_kind"), &self.public_kind)
            .member(name!("public_state"), &self.public_state)
            .member(name!("private_kind"), &self.private_kind)
            .member(name!("private_state"), &self.private_state)
            .member(name!("owner"), &self.owner);
        object.end();
    }
}

impl WriteJson for Space {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object
            .member(name!("space_id"), &self.space_id)
            .member(name!("kind"), &self.kind)
            .member(name!("owner"), &self.owner)
            .member(name!("arrangement"), &self.arrangement)
            .member(name!("public_state"), &self.public_state)
            .member(name!("private_state"), &self.private_state)
            .member(name!("pieces"), &self.pieces);
        object.end();
    }
}

impl WriteJson for Player {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object
            .member(name!("player_id"), &self.player_id)
            .member(name!("color"), &self.color)
            .member(name!("username"), &self.username)
            .member(name!("public_state"), &self.public_state)
            .member(name!("private_state"), &self.private_state);
        object.end();
    }
}

impl WriteJson for LogEntry {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object.member(name!("text"), &self.text).member(name!("for_player"), &self.for_player);
        object.end();
    }
}

impl WriteJson for State {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object
            .member(name!("active_player_ids"), &self.active_player_ids)
            .member(name!("players"), &self.players)
            .member(name!("spaces"), &self.spaces)
            .member(name!("meta_data"), &self.meta_data)
            .member(name!("log"), &self.log);
        object.end();
    }
}

impl WriteJson for Button {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object
            .member(name!("id"), &self.id)
            .member(name!("label"), &self.label)
            .member(name!("location"), &self.location)
            .member(name!("disabled"), &self.disabled);
        object.end();
    }
}

impl WriteJson for Action {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        match self {
            Action::SpaceClick { space_id } => {
                object.tag(tag!("type", "space_click")).member(name!("space_id"), space_id);
            }
            Action::PieceClick { space_id, index } => {
                object.tag(tag!("type", "piece_click")).member(name!("space_id"), space_id).member(name!("index"), index);
            }
            Action::ButtonClick { button } => {
                object.tag(tag!("type", "button_click")).member(name!("button"), button);
            }
        }
        object.end();
    }
}

impl WriteJson for Intent {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self {
            Intent::Choice => b"\"choice\"",
            Intent::Confirm => b"\"confirm\"",
            Intent::Cancel => b"\"cancel\"",
            Intent::Undo => b"\"undo\"",
        });
    }
}

impl WriteJson for AvailableAction {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object.member(name!("action"), &self.action).member(name!("intent"), &self.intent).member(name!("label"), &self.label);
        object.end();
    }
}

impl WriteJson for Score {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        object.member(name!("public_points"), &self.public_points).member(name!("private_points"), &self.private_points);
        object.end();
    }
}

impl WriteJson for Scores {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (at, (player_id, score)) in self.iter().enumerate() {
            write_player_key(out, *player_id, at == 0);
            score.write_json(out);
        }
        out.push(b'}');
    }
}

impl WriteJson for Patch {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::begin(out);
        match self {
            Patch::AddPiece { space_id, piece } => {
                object.tag(tag!("op", "add_piece")).member(name!("space_id"), space_id).member(name!("piece"), piece);
            }
            Patch::InsertPiece { space_id, index, piece } => {
                object
                    .tag(tag!("op", "insert_piece"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("piece"), piece);
            }
            Patch::RemovePiece { space_id, index } => {
                object.tag(tag!("op", "remove_piece")).member(name!("space_id"), space_id).member(name!("index"), index);
            }
            Patch::MovePiece { from, index, to, to_index } => {
                object.tag(tag!("op", "move_piece")).member(name!("from"), from).member(name!("index"), index).member(name!("to"), to);
                if let Some(to_index) = to_index {
                    object.member(name!("to_index"), to_index);
                }
            }
            Patch::Permute { space_id, order } => {
                object.tag(tag!("op", "permute")).member(name!("space_id"), space_id).member(name!("order"), order);
            }
            Patch::SetPublicKind { space_id, index, kind } => {
                object
                    .tag(tag!("op", "set_public_kind"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("kind"), kind);
            }
            Patch::SetPrivateKind { space_id, index, kind } => {
                object
                    .tag(tag!("op", "set_private_kind"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("kind"), kind);
            }
            Patch::SetPieceOwner { space_id, index, owner } => {
                object
                    .tag(tag!("op", "set_piece_owner"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("owner"), owner);
            }
            Patch::SetPiecePublicState { space_id, index, key, value } => {
                object
                    .tag(tag!("op", "set_piece_public_state"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetPiecePrivateState { space_id, index, key, value } => {
                object
                    .tag(tag!("op", "set_piece_private_state"))
                    .member(name!("space_id"), space_id)
                    .member(name!("index"), index)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetSpaceOwner { space_id, owner } => {
                object.tag(tag!("op", "set_space_owner")).member(name!("space_id"), space_id).member(name!("owner"), owner);
            }
            Patch::SetSpacePublicState { space_id, key, value } => {
                object
                    .tag(tag!("op", "set_space_public_state"))
                    .member(name!("space_id"), space_id)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetSpacePrivateState { space_id, key, value } => {
                object
                    .tag(tag!("op", "set_space_private_state"))
                    .member(name!("space_id"), space_id)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetPlayerPublicState { player_id, key, value } => {
                object
                    .tag(tag!("op", "set_player_public_state"))
                    .member(name!("player_id"), player_id)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetPlayerPrivateState { player_id, key, value } => {
                object
                    .tag(tag!("op", "set_player_private_state"))
                    .member(name!("player_id"), player_id)
                    .member(name!("key"), key)
                    .member(name!("value"), value);
            }
            Patch::SetActivePlayers { player_ids } => {
                object.tag(tag!("op", "set_active_players")).member(name!("player_ids"), player_ids);
            }
            Patch::SetMeta { key, value } => {
                object.tag(tag!("op", "set_meta")).member(name!("key"), key).member(name!("value"), value);
            }
            Patch::Log { entry } => {
                object.tag(tag!("op", "log")).member(name!("entry"), entry);
            }
        }
        object.end();
    }
}

#[cfg(test)]
mod tests {
    //! Every writer against `serde_json::to_vec` on randomly built values
    //! (seeded SplitMix64 draws, so a failure reproduces).

    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::{Map, Number, Value};

    use super::WriteJson;
    use crate::action::{Action, AvailableAction, Button, Intent};
    use crate::config::{Score, Scores};
    use crate::patch::Patch;
    use crate::rng::Rng;
    use crate::state::{Arrangement, LogEntry, Piece, Player, Space, State};

    fn written<T: WriteJson + ?Sized>(value: &T) -> String {
        let mut out = Vec::new();
        value.write_json(&mut out);
        String::from_utf8(out).expect("the writer emits UTF-8")
    }

    fn assert_same<T: WriteJson + Serialize + ?Sized>(value: &T) {
        let expected = String::from_utf8(serde_json::to_vec(value).unwrap()).unwrap();
        assert_eq!(written(value), expected);
    }

    /// Characters that stress escaping: quotes, backslashes, every control
    /// character, DEL, and 2-, 3- and 4-byte UTF-8.
    fn tricky_char(rng: &mut Rng) -> char {
        const SPECIAL: &[char] = &['"', '\\', '/', '\u{7f}', 'é', '€', '漢', '😀', '\u{2028}', ' ', 'a', 'Z', '0'];
        match rng.below(3u32) {
            0 => char::from(rng.below(0x20u8)),
            1 => SPECIAL[rng.below(SPECIAL.len())],
            _ => char::from(b'a' + rng.below(26u8)),
        }
    }

    /// Mostly short like ids and labels; one in four long like log lines.
    fn text(rng: &mut Rng) -> String {
        let len = if rng.below(4u32) == 0 { rng.below(40usize) } else { rng.below(12usize) };
        (0..len).map(|_| tricky_char(rng)).collect()
    }

    fn float(rng: &mut Rng) -> f64 {
        const EDGES: &[f64] = &[
            0.0, -0.0, 0.5, -1.5, 1.0, 3.0, -7.0, 1e15, -1e15, 999_999_999_999_999.0, 1e16, 1e17, 1e21, 1e22,
            1e-7, 0.1, 123.456, f64::MAX, f64::MIN_POSITIVE, 5e-324, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
        ];
        match rng.below(3u32) {
            0 => EDGES[rng.below(EDGES.len())],
            1 => f64::from_bits(rng.next_u64()),
            _ => (rng.below(2_000_001u64) as f64 - 1_000_000.0) / 4.0,
        }
    }

    fn value(rng: &mut Rng, depth: u32) -> Value {
        let kinds = if depth >= 3 { 6 } else { 8 };
        match rng.below(kinds as u32) {
            0 => Value::Null,
            1 => Value::Bool(rng.below(2u32) == 1),
            2 => Value::from(rng.next_u64()),
            3 => Value::from(rng.next_u64() as i64),
            4 => Number::from_f64(float(rng)).map_or(Value::Null, Value::Number),
            5 => Value::String(text(rng)),
            6 => Value::Array((0..rng.below(4u32)).map(|_| value(rng, depth + 1)).collect()),
            _ => Value::Object(map(rng, depth + 1)),
        }
    }

    fn map(rng: &mut Rng, depth: u32) -> Map<String, Value> {
        (0..rng.below(4u32)).map(|_| (text(rng), value(rng, depth))).collect()
    }

    fn owner(rng: &mut Rng) -> Option<u32> {
        if rng.below(2u32) == 0 {
            None
        } else {
            Some(rng.next_u64() as u32)
        }
    }

    fn piece(rng: &mut Rng) -> Piece {
        Piece {
            public_kind: text(rng),
            public_state: map(rng, 1),
            private_kind: if rng.below(2u32) == 0 { None } else { Some(text(rng)) },
            private_state: map(rng, 1),
            owner: owner(rng),
        }
    }

    fn log_entry(rng: &mut Rng) -> LogEntry {
        let for_player: BTreeMap<String, String> = (0..rng.below(3u32)).map(|_| (text(rng), text(rng))).collect();
        LogEntry { text: text(rng), for_player }
    }

    fn patch(rng: &mut Rng) -> Patch {
        let space_id = text(rng);
        let index = rng.below(1000usize);
        match rng.below(18u32) {
            0 => Patch::AddPiece { space_id, piece: piece(rng) },
            1 => Patch::InsertPiece { space_id, index, piece: piece(rng) },
            2 => Patch::RemovePiece { space_id, index },
            3 => Patch::MovePiece {
                from: space_id,
                index,
                to: text(rng),
                to_index: if rng.below(2u32) == 0 { None } else { Some(rng.below(9usize)) },
            },
            4 => Patch::Permute { space_id, order: (0..rng.below(5usize)).collect() },
            5 => Patch::SetPublicKind { space_id, index, kind: text(rng) },
            6 => Patch::SetPrivateKind { space_id, index, kind: if rng.below(2u32) == 0 { None } else { Some(text(rng)) } },
            7 => Patch::SetPieceOwner { space_id, index, owner: owner(rng) },
            8 => Patch::SetPiecePublicState { space_id, index, key: text(rng), value: value(rng, 0) },
            9 => Patch::SetPiecePrivateState { space_id, index, key: text(rng), value: value(rng, 0) },
            10 => Patch::SetSpaceOwner { space_id, owner: owner(rng) },
            11 => Patch::SetSpacePublicState { space_id, key: text(rng), value: value(rng, 0) },
            12 => Patch::SetSpacePrivateState { space_id, key: text(rng), value: value(rng, 0) },
            13 => Patch::SetPlayerPublicState { player_id: rng.next_u64() as u32, key: text(rng), value: value(rng, 0) },
            14 => Patch::SetPlayerPrivateState { player_id: 7, key: text(rng), value: value(rng, 0) },
            15 => Patch::SetActivePlayers { player_ids: (0..rng.below(4u32)).map(|_| rng.next_u64() as u32).collect() },
            16 => Patch::SetMeta { key: text(rng), value: value(rng, 0) },
            _ => Patch::Log { entry: log_entry(rng) },
        }
    }

    fn space(rng: &mut Rng) -> Space {
        Space {
            space_id: text(rng),
            kind: text(rng),
            owner: owner(rng),
            arrangement: if rng.below(2u32) == 0 { Arrangement::Ordered } else { Arrangement::Collection },
            public_state: map(rng, 1),
            private_state: map(rng, 1),
            pieces: (0..rng.below(3u32)).map(|_| piece(rng)).collect(),
        }
    }

    fn state(rng: &mut Rng) -> State {
        State {
            active_player_ids: vec![1, u32::MAX],
            players: (0..rng.below(3u32))
                .map(|seat| Player {
                    player_id: seat,
                    color: text(rng),
                    username: text(rng),
                    public_state: map(rng, 1),
                    private_state: map(rng, 1),
                })
                .collect(),
            spaces: (0..rng.below(4u32)).map(|_| space(rng)).collect(),
            meta_data: map(rng, 0),
            log: (0..rng.below(3u32)).map(|_| log_entry(rng)).collect(),
        }
    }

    fn available_action(rng: &mut Rng) -> AvailableAction {
        let action = match rng.below(3u32) {
            0 => Action::space_click(text(rng)),
            1 => Action::piece_click(text(rng), rng.below(100usize)),
            _ => Action::button_click(Button {
                id: text(rng),
                label: text(rng),
                location: text(rng),
                disabled: rng.below(2u32) == 1,
            }),
        };
        let intent = [Intent::Choice, Intent::Confirm, Intent::Cancel, Intent::Undo][rng.below(4usize)];
        AvailableAction { action, intent, label: text(rng) }
    }

    fn scores(rng: &mut Rng) -> Scores {
        (0..rng.below(4u32))
            .map(|_| {
                let points = |rng: &mut Rng| (0..rng.below(3u32)).map(|_| float(rng)).collect();
                (rng.next_u64() as u32, Score { public_points: points(rng), private_points: points(rng) })
            })
            .collect()
    }

    #[test]
    fn strings_escape_exactly_as_serde_json() {
        for byte in 0u8..0x80 {
            assert_same(&char::from(byte).to_string());
        }
        assert_same("say \"hi\" \\ to C:\\dir\n\ttabbed\u{0}\u{1f}\u{7f} é € 漢 😀");
        // Every byte below 0x80 at every offset of the 8-byte words the scan reads.
        for byte in 0u8..0x80 {
            for offset in 0..17 {
                let mut line = "abcdefghijklmnopq".to_string();
                line.replace_range(offset..=offset, &char::from(byte).to_string());
                assert_same(&line);
            }
        }
        let mut rng = Rng::new(1);
        for _ in 0..2000 {
            assert_same(&text(&mut rng));
        }
    }

    #[test]
    fn numbers_print_exactly_as_serde_json() {
        let mut rng = Rng::new(2);
        for _ in 0..5000 {
            assert_same(&float(&mut rng));
            assert_same(&value(&mut rng, 3));
        }
        for n in [0u64, 9, 10, 99, 100, u64::from(u32::MAX), u64::MAX] {
            assert_same(&Value::from(n));
        }
        assert_same(&Value::from(i64::MIN));
    }

    #[test]
    fn json_values_match_serde_json() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            assert_same(&value(&mut rng, 0));
        }
    }

    #[test]
    fn every_patch_variant_matches_serde_json() {
        let mut rng = Rng::new(4);
        for _ in 0..3000 {
            assert_same(&patch(&mut rng));
        }
    }

    #[test]
    fn states_actions_and_scores_match_serde_json() {
        let mut rng = Rng::new(5);
        for _ in 0..300 {
            assert_same(&state(&mut rng));
            assert_same(&available_action(&mut rng));
            assert_same(&scores(&mut rng));
        }
    }
}
