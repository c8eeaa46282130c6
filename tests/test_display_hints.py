"""Display hints (docs/abi.md section 19): every sample game's hints follow the schema and tell
nothing about a deal (the same for every seed), and pieces' own hints follow it too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tablehost.guest import GuestPool
from tablehost.match import Match, PlayerInfo
from tablehost.module import load_module
from web_support import DIST, HINTED

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "display.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA)


def _start(game: str, seed: int) -> tuple[Match, GuestPool]:
    pool = GuestPool(load_module((DIST / f"{game}.wasm").read_bytes(), name=game))
    players = [PlayerInfo(n, f"p{n}", "#123456") for n in range(1, HINTED[game] + 1)]
    return Match.start(pool, players, match_id=f"m-{seed}", module_sha256="x", seed=seed), pool


@pytest.mark.parametrize("game", list(HINTED))
def test_hints_follow_the_schema_and_are_the_same_for_every_deal(game: str) -> None:
    hints: list[Any] = []
    for seed in (1, 2, 3):
        match, pool = _start(game, seed)
        try:
            display = match.state["meta_data"]["display"]
        finally:
            pool.close()
        errors = [e.message for e in VALIDATOR.iter_errors(display)]
        assert not errors, errors
        hints.append(display)
    assert hints[0] == hints[1] == hints[2]
    spaces = set(hints[0].get("spaces", {}))
    match, pool = _start(game, 1)
    pool.close()
    assert spaces <= {s["space_id"] for s in match.state["spaces"]}, "hints name only real spaces"


def test_the_schema_refuses_what_the_page_would_ignore() -> None:
    assert list(VALIDATOR.iter_errors({"kinds": {"x": {"color": "red; background: url(x)"}}}))
    assert list(VALIDATOR.iter_errors({"spaces": {"a1": {"layout": "spiral"}}}))
    assert list(VALIDATOR.iter_errors({"kind_rules": [{"suffixes": {}, "separator": "-"}]}))
    assert not list(VALIDATOR.iter_errors({"kind_rules": [{"separator": "-", "joiner": "|"}]}))


def test_a_dominoes_tile_on_the_line_carries_its_pips_in_line_order() -> None:
    match, pool = _start("dominoes", 4)
    try:
        leader = match.active_player_ids[0]
        offer = next(a for a in match.actions_for(leader) if a["intent"] != "undo")
        match.submit(leader, offer["action"])
        tile = next(s for s in match.state["spaces"] if s["space_id"] == "line")["pieces"][0]
    finally:
        pool.close()
    glyph = tile["public_state"]["display"]["glyph"]
    assert glyph == f"{tile['public_state']['left']}│{tile['public_state']['right']}"
    assert not list(VALIDATOR.iter_errors({"kinds": {"t": tile["public_state"]["display"]}}))
