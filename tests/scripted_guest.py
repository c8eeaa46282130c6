"""A scripted guest: a real wasm module (built from WAT here) that answers fixed bytes per op.

Hostile-answer tests build one with the answer under test; the module itself is a correct
ABI v1 module (alloc, dealloc, memory, panic report), so only its answers misbehave.
:data:`SETUP` and :data:`STEP` are a small well-formed game to start from: players 1 and 2,
cells ``a`` and ``b``, player 1's hand with one hidden card, a hidden deck.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import wasmtime

PLAYERS = [
    {"player_id": 1, "username": "ann", "color": "#d33"},
    {"player_id": 2, "username": "bob", "color": "#33d"},
]

SCORES = {"1": {"public_points": [0.0], "private_points": []}, "2": {"public_points": [0.0], "private_points": []}}

SETUP: dict[str, Any] = {
    "state": {
        "active_player_ids": [1],
        "players": [dict(p, public_state={}, private_state={}) for p in PLAYERS],
        "spaces": [
            {"space_id": "a", "kind": "cell"},
            {"space_id": "b", "kind": "cell"},
            {"space_id": "hand-1", "kind": "hand", "owner": 1,
             "pieces": [{"public_kind": "back", "private_kind": "ace"}]},
            {"space_id": "deck", "kind": "deck", "arrangement": "collection",
             "pieces": [{"public_kind": "back", "private_kind": "king"}, {"public_kind": "back", "private_kind": "two"}]},
        ],
        "meta_data": {},
        "log": [],
    },
    "patches": [],
    "rng_used": False,
    "score_labels": ["Points"],
    "scores": SCORES,
    "game_over": False,
    "actions": {"1": [{"action": {"type": "space_click", "space_id": "a"}, "intent": "confirm", "label": "a"}]},
}  # fmt: skip
"""A well-formed setup answer."""

STEP: dict[str, Any] = {
    "patches": [
        {"op": "add_piece", "space_id": "a",
         "piece": {"public_kind": "x", "public_state": {}, "private_kind": None, "private_state": {}, "owner": 1}},
        {"op": "log", "entry": {"text": "ann marks a", "for_player": {}}},
        {"op": "set_active_players", "player_ids": [2]},
    ],
    "rng_used": False,
    "allow_undo": False,
    "scores": {"1": {"public_points": [1.0], "private_points": []}, "2": {"public_points": [0.0], "private_points": []}},
    "game_over": False,
    "actions": {"2": [{"action": {"type": "space_click", "space_id": "b"}, "intent": "confirm", "label": "b"}]},
}  # fmt: skip
"""A well-formed answer to player 1's ``space_click a`` in :data:`SETUP`."""

MOVE = {"type": "space_click", "space_id": "a"}
"""The action :data:`SETUP` offers player 1."""

NO_PANIC = b'{"message":null,"printed":""}'
OP_SETUP, OP_ACTIONS, OP_STEP, OP_SCORES, OP_GAME_OVER, OP_METADATA = 1, 2, 3, 4, 5, 6


def answer(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level members replaced."""
    result = copy.deepcopy(base)
    result.update(changes)
    return result


def encode(value: dict[str, Any] | bytes) -> bytes:
    return value if isinstance(value, bytes) else orjson.dumps(value)


def _data(offset: int, payload: bytes) -> str:
    return f'  (data (i32.const {offset}) "' + "".join(f"\\{b:02x}" for b in payload) + '")\n'


def scripted_guest(
    *,
    setup: dict[str, Any] | bytes = SETUP,
    step: dict[str, Any] | bytes = STEP,
    actions: dict[str, Any] | bytes | None = None,
    game_over: dict[str, Any] | bytes | None = None,
    step_panics: bytes | None = None,
    more: dict[int, dict[str, Any] | bytes] | None = None,
) -> bytes:
    """The wasm bytes of a guest answering ``setup``/``step``/``actions``/``game_over`` with these bytes.

    Args:
        setup, step: the answers (a dict is encoded with orjson; bytes go out as they are).
        actions: the ``actions`` answer; default: :data:`STEP`'s offers to player 2.
        game_over: the ``game_over`` answer; default: not over, :data:`SCORES`.
        step_panics: when given, ``step`` traps after leaving this panic report
            (``{"message", "printed"}`` JSON bytes) for ``tablehost_panic_message``.
        more: answers of further ops (op number -> answer), e.g. ``metadata`` (6) or ``search`` (8);
            an op with no answer gets a null result (the ABI's "unknown op"). With a metadata
            answer the module reports ABI minor 1 (else 0).
    """
    answers = {
        OP_SETUP: encode(setup),
        OP_STEP: encode(step),
        OP_ACTIONS: encode(actions if actions is not None else {"actions": STEP["actions"]["2"]}),
        OP_SCORES: encode({"scores": SCORES}),
        OP_GAME_OVER: encode(game_over if game_over is not None else {"game_over": False, "scores": SCORES}),
        **{op: encode(value) for op, value in (more or {}).items()},
    }
    minor = 1 if OP_METADATA in answers else 0  # the metadata op exists from ABI minor 1
    panic = step_panics if step_panics is not None else NO_PANIC
    offset, placed, data = 1024, {}, ""
    for op, payload in [*answers.items(), (0, panic)]:
        placed[op] = (offset, len(payload))
        data += _data(offset, payload)
        offset = (offset + len(payload) + 7) & ~7
    heap = (offset + 0xFFFF) & ~0xFFFF
    pages = heap // 0x10000 + 1

    def packed(op: int) -> str:
        where, size = placed[op]
        return f"(i64.const {(where << 32) | size})"

    dispatch = "".join(
        f"    (if (i32.eq (local.get $op) (i32.const {op})) (then (return {packed(op)})))\n" for op in answers
    )
    trap = "    (if (i32.eq (local.get $op) (i32.const 3)) (then unreachable))\n" if step_panics is not None else ""
    text = f"""(module
  (memory (export "memory") {pages})
  (global $heap (mut i32) (i32.const {heap}))
{data}
  (func (export "tablehost_abi_v1") (result i32) (i32.const {minor}))
  (func (export "tablehost_alloc") (param $len i32) (result i32)
    (local $ptr i32) (local $pages i32)
    (local.set $ptr (global.get $heap))
    (global.set $heap (i32.add (local.get $ptr) (i32.add (local.get $len) (i32.const 8))))
    (local.set $pages (i32.shr_u (i32.add (global.get $heap) (i32.const 65535)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
        (then (return (i32.const 0))))))
    (local.get $ptr))
  (func (export "tablehost_dealloc") (param $ptr i32) (param $len i32))
  (func (export "tablehost_panic_message") (result i64) {packed(0)})
  (func (export "tablehost_call") (param $op i32) (param $ptr i32) (param $len i32) (result i64)
{trap}{dispatch}    (i64.const 0))
)
"""
    return bytes(wasmtime.wat2wasm(text))
