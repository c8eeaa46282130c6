"""Test modules for the guest boundary, built from the hand-written WAT in ``tests/wat/``.

``echo_guest.wat`` is a complete ABI v1 guest; a ``hostile_*.wat`` or ``state_miss.wat`` file
holds a replacement for its ``$on_call`` hook (plus any helpers), spliced in by :func:`guest_wasm`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.module import GameModule, load_module

WAT_DIR = Path(__file__).parent / "wat"
_HOOK = """  (func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (i64.const 0))"""

PLAYERS = [
    {"player_id": 1, "username": "ann", "color": "#d33"},
    {"player_id": 2, "username": "bob", "color": "#33d"},
]
ACTION = {"type": "space_click", "space_id": "a"}


def wat_module(name: str) -> bytes:
    """The binary of the standalone module ``tests/wat/<name>.wat``."""
    return bytes(wasmtime.wat2wasm((WAT_DIR / f"{name}.wat").read_text()))


def guest_wasm(variant: str | None = None) -> bytes:
    """The echo guest, or the echo guest with ``tests/wat/<variant>.wat`` as its ``$on_call``."""
    text = (WAT_DIR / "echo_guest.wat").read_text()
    if variant is not None:
        assert _HOOK in text, "echo_guest.wat changed its $on_call hook"
        text = text.replace(_HOOK, (WAT_DIR / f"{variant}.wat").read_text())
    return bytes(wasmtime.wat2wasm(text))


def offering_guest_wasm(variant: str) -> bytes:
    """:func:`guest_wasm` ``(variant)`` whose setup also offers seat 1 one action (``space_click`` ``a``),
    so a client can submit a move that reaches the variant's ``$on_call``."""
    offer = r"{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}"
    nothing_offered = r"\"actions\":{\"1\":[]}"
    text = (WAT_DIR / "echo_guest.wat").read_text()
    assert _HOOK in text and nothing_offered in text, "echo_guest.wat changed its hook or its setup response"
    text = text.replace(_HOOK, (WAT_DIR / f"{variant}.wat").read_text())
    return bytes(wasmtime.wat2wasm(text.replace(nothing_offered, r"\"actions\":{\"1\":[" + offer + "]}")))


def load_guest(
    variant: str | None, cache_dir: Path, limits: Limits = DEFAULT_LIMITS
) -> GameModule:
    """Load :func:`guest_wasm` ``(variant)`` with a per-test compiled-code cache."""
    return load_module(guest_wasm(variant), limits=limits, cache_dir=cache_dir, name=variant or "echo")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A fresh compiled-code cache directory."""
    return tmp_path / "modules"
