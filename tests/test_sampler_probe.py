"""An ``ismcts`` bot is refused up front for a module that cannot sample hidden information.

A hidden-information game whose module lacks ``Game::sample_hidden`` refuses every ismcts
search with ``no_sampler``; the server asks the module once (:mod:`tablehost.sampler_probe`) and
refuses such a bot seat at CreateMatch, and ``play``/``simulate`` refuse it before the first
game, in the same words. The odd guests here are scripted wasm modules (tests/scripted_guest.py)
declaring hidden information and answering the search op as the SDK does without a sampler.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scripted_guest import scripted_guest
from tablehost import cli
from tablehost.api.auth import ADMIN
from tablehost.api.faults import InvalidRequest
from tablehost.api.registry import MatchRegistry
from tablehost.guest import GuestPool
from tablehost.metadata import read_metadata
from tablehost.module import load_module
from tablehost.sampler_probe import no_sampler_refusal, samples_hidden

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
OP_METADATA, OP_SEARCH = 6, 8
HIDDEN = {"metadata": {"min_players": 2, "max_players": 2, "hidden_information": True}}


def refusing(code: str) -> bytes:
    """A hidden-information guest whose search refuses with the guest error ``code``."""
    error = {"error": {"code": code, "message": f"scripted {code}"}}
    return scripted_guest(more={OP_METADATA: HIDDEN, OP_SEARCH: error})


def probe(wasm: bytes, tmp_path: Path) -> bool | None:
    pool = GuestPool(load_module(wasm, cache_dir=tmp_path))
    try:
        return samples_hidden(pool, read_metadata(pool), 2, {})
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("search_answer", "expected"),
    [
        ({"error": {"code": "no_sampler", "message": "none"}}, False),
        ({"error": {"code": "no_action", "message": "after the sampler check"}}, True),
        ({"error": {"code": "bad_request", "message": "odd"}}, None),
        (b"not json", None),
        (None, None),  # no search op at all (null answer): cannot tell
    ],
)
def test_the_probe_reads_only_no_sampler_as_no_sampler(search_answer: Any, expected: bool | None, tmp_path: Path) -> None:
    more: dict[int, Any] = {OP_METADATA: HIDDEN}
    if search_answer is not None:
        more[OP_SEARCH] = search_answer
    assert probe(scripted_guest(more=more), tmp_path) is expected


def test_a_real_game_with_a_sampler_is_found_to_sample(tmp_path: Path) -> None:
    pool = GuestPool(load_module((DIST / "hearts.wasm").read_bytes(), cache_dir=tmp_path))
    try:
        metadata = read_metadata(pool)
        assert samples_hidden(pool, metadata, 4, {o.name: o.default for o in metadata.options}) is True
    finally:
        pool.close()


def test_create_match_refuses_an_ismcts_seat_of_a_module_without_a_sampler(tmp_path: Path) -> None:
    reg = MatchRegistry(tmp_path, synchronous="NORMAL")
    try:
        without = reg.upload_module(ADMIN, refusing("no_sampler"), "no-sampler").sha256
        with pytest.raises(InvalidRequest) as refused:
            reg.create_match(ADMIN, without, [("ann", ""), ("", "", False, "ismcts:10")])
        assert str(refused.value) == no_sampler_refusal("ismcts:10")
        assert reg.list_matches(ADMIN) == [] and reg._samplers == {without: False}  # nothing stored; asked once
        with pytest.raises(InvalidRequest):  # answered from the cache, in the lobby too
            reg.create_match(ADMIN, without, [("", "", True), ("", "", False, "ismcts:5")])
        # Other bots still play it; a module past the sampler check gets its ismcts seat.
        assert reg.create_match(ADMIN, without, [("ann", ""), ("", "", False, "random")]).match_id
        with_sampler = reg.upload_module(ADMIN, refusing("no_action"), "sampler").sha256
        assert reg.create_match(ADMIN, with_sampler, [("ann", ""), ("", "", False, "ismcts:10")]).match_id
    finally:
        reg.close()


@pytest.mark.parametrize("command", [["play"], ["simulate", "--games", "2"]])
def test_play_and_simulate_refuse_it_before_the_first_game_in_the_same_words(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "no_sampler.wasm"
    module.write_bytes(refusing("no_sampler"))
    status = cli.main([command[0], str(module), "--bots", "ismcts:10,random", *command[1:]])
    err = capsys.readouterr().err
    assert status == 2 and no_sampler_refusal("ismcts:10") in err, err
