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

def final_step(base: dict[str, Any] | None = None, setup: dict[str, Any] | None = None) -> dict[str, Any]:
    """``base`` (default :data:`STEP`) as the last move: game over, nothing offered, and the
    ``state`` after its patches on ``setup``'s state (default :data:`SETUP`), so the host's
    mirror check (``check_mirror``, ``tablehost check``) passes. A scripted guest answering it
    plays one-move games."""
    from tablehost.table import Table

    base = base if base is not None else STEP
    table = Table((setup if setup is not None else SETUP)["state"])
    table.apply(base["patches"])
    return answer(base, game_over=True, actions={}, state=table.state)


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


_ODD_SEED = """  ;; 1 when the JSON request at $ptr..$ptr+$len has "seed": followed by digits ending odd.
  (func $odd_seed (param $ptr i32) (param $len i32) (result i32)
    (local $at i32) (local $end i32) (local $last i32) (local $byte i32)
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $at (local.get $ptr))
    (block $found
      (loop $scan
        (if (i32.gt_u (i32.add (local.get $at) (i32.const 7)) (local.get $end)) (then (return (i32.const 0))))
        (br_if $found (i32.and
          (i32.and (i32.and (i32.eq (i32.load8_u (local.get $at)) (i32.const 34))
                            (i32.eq (i32.load8_u offset=1 (local.get $at)) (i32.const 115)))
                   (i32.and (i32.eq (i32.load8_u offset=2 (local.get $at)) (i32.const 101))
                            (i32.eq (i32.load8_u offset=3 (local.get $at)) (i32.const 101))))
          (i32.and (i32.and (i32.eq (i32.load8_u offset=4 (local.get $at)) (i32.const 100))
                            (i32.eq (i32.load8_u offset=5 (local.get $at)) (i32.const 34)))
                   (i32.eq (i32.load8_u offset=6 (local.get $at)) (i32.const 58)))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $scan)))
    (local.set $at (i32.add (local.get $at) (i32.const 7)))
    (block $digits
      (loop $next
        (br_if $digits (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $byte (i32.load8_u (local.get $at)))
        (br_if $digits (i32.or (i32.lt_u (local.get $byte) (i32.const 48)) (i32.gt_u (local.get $byte) (i32.const 57))))
        (local.set $last (local.get $byte))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $next)))
    (i32.and (local.get $last) (i32.const 1)))
"""
"""Helper of :func:`scripted_guest` ``setup_panics_on_odd_seed`` (an ASCII digit's parity is its value's)."""

_HOLDS = """  ;; 1 when the request at $ptr..$ptr+$len holds the $plen bytes at $pat.
  (func $holds (param $ptr i32) (param $len i32) (param $pat i32) (param $plen i32) (result i32)
    (local $at i32) (local $last i32) (local $k i32)
    (if (i32.lt_u (local.get $len) (local.get $plen)) (then (return (i32.const 0))))
    (local.set $last (i32.sub (i32.add (local.get $ptr) (local.get $len)) (local.get $plen)))
    (local.set $at (local.get $ptr))
    (block $none
      (loop $scan
        (br_if $none (i32.gt_u (local.get $at) (local.get $last)))
        (local.set $k (i32.const 0))
        (block $differs
          (loop $compare
            (if (i32.ge_u (local.get $k) (local.get $plen)) (then (return (i32.const 1))))
            (br_if $differs (i32.ne (i32.load8_u (i32.add (local.get $at) (local.get $k)))
                                    (i32.load8_u (i32.add (local.get $pat) (local.get $k)))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $compare)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $scan)))
    (i32.const 0))
"""
"""Helper of :func:`scripted_guest` ``step_panics_when``."""


def scripted_guest(
    *,
    setup: dict[str, Any] | bytes = SETUP,
    step: dict[str, Any] | bytes = STEP,
    actions: dict[str, Any] | bytes | None = None,
    game_over: dict[str, Any] | bytes | None = None,
    step_panics: bytes | None = None,
    step_panics_when: bytes | None = None,
    setup_panics_on_odd_seed: bytes | None = None,
    more: dict[int, dict[str, Any] | bytes] | None = None,
) -> bytes:
    """The wasm bytes of a guest answering ``setup``/``step``/``actions``/``game_over`` with these bytes.

    Args:
        setup, step: the answers (a dict is encoded with orjson; bytes go out as they are).
        actions: the ``actions`` answer; default: :data:`STEP`'s offers to player 2.
        game_over: the ``game_over`` answer; default: not over, :data:`SCORES`.
        step_panics: when given, ``step`` traps after leaving this panic report
            (``{"message", "printed"}`` JSON bytes) for ``tablehost_panic_message``.
        step_panics_when: with ``step_panics``, ``step`` traps only when its request holds these
            bytes (``b'"player_id":2,"action"'``: player 2's moves), and answers ``step``
            otherwise: a game that fails mid-game.
        setup_panics_on_odd_seed: when given, ``setup`` traps with this panic report when the
            request's ``seed`` is odd (its last digit), and answers ``setup`` otherwise: a
            module that panics on some seeds. (Give at most one of the two panic reports.)
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
    panic = step_panics if step_panics is not None else setup_panics_on_odd_seed or NO_PANIC
    pattern = step_panics_when or b""
    offset, placed, data = 1024, {}, ""
    for op, payload in [*answers.items(), (0, panic), (-1, pattern)]:
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
    if step_panics is not None and step_panics_when is not None:
        where, size = placed[-1]
        trap = ("    (if (i32.eq (local.get $op) (i32.const 3))\n"
                f"      (then (if (call $holds (local.get $ptr) (local.get $len) (i32.const {where}) (i32.const {size}))\n"
                "        (then unreachable))))\n")
    if setup_panics_on_odd_seed is not None:
        trap += ("    (if (i32.eq (local.get $op) (i32.const 1))\n"
                 "      (then (if (call $odd_seed (local.get $ptr) (local.get $len)) (then unreachable))))\n")
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
{_ODD_SEED}{_HOLDS}  (func (export "tablehost_call") (param $op i32) (param $ptr i32) (param $len i32) (result i64)
{trap}{dispatch}    (i64.const 0))
)
"""
    return bytes(wasmtime.wat2wasm(text))
