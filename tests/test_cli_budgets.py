"""The budget options shared by every command that runs guests (tablehost.cli_budgets)."""

from __future__ import annotations

import argparse
import os

import orjson
import pytest

from fixtures_guest import guest_wasm
from tablehost import cli
from tablehost.cli_budgets import add_budget_options, budget_argv, guest_slots_from_args, limits_from_args
from tablehost.guest.scheduler import RUN_SLOTS, SLOTS_ENV
from tablehost.limits import DEFAULT_LIMITS, KiB, MiB


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_budget_options(parser, replaying=True)
    return parser.parse_args(argv)


def test_options_beat_the_environment_which_beats_the_defaults() -> None:
    environ = {"TABLEHOST_WALL_MS": "900", "TABLEHOST_FUEL": "1234", "TABLEHOST_STACK_KIB": "1024"}
    limits = limits_from_args(parse(["--wall-ms", "40", "--memory-mib", "8", "--wall-factor", "3"]), environ)

    assert (limits.wall_ms, limits.fuel_per_call, limits.memory_bytes) == (40, 1234, 8 * MiB)
    assert limits.stack_bytes == 1024 * KiB and limits.replay_wall_factor == 3
    assert limits.response_bytes == DEFAULT_LIMITS.response_bytes
    assert limits_from_args(parse([]), {}) == DEFAULT_LIMITS


@pytest.mark.parametrize(("argv", "environ", "named"), [
    (["--fuel", "0"], {}, "--fuel"),
    ([], {"TABLEHOST_WALL_MS": "-5"}, "TABLEHOST_WALL_MS"),
    ([], {"TABLEHOST_MEMORY_MIB": "lots"}, "TABLEHOST_MEMORY_MIB"),
])
def test_a_bad_budget_names_its_option_or_variable(argv: list[str], environ: dict[str, str], named: str) -> None:
    with pytest.raises(SystemExit, match=named):
        limits_from_args(parse(argv), environ)


def test_inspect_prints_the_budgets_in_force(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    module = tmp_path / "echo.wasm"
    module.write_bytes(guest_wasm())
    monkeypatch.setenv("TABLEHOST_FUEL", "5000000")
    monkeypatch.setenv("TABLEHOST_CACHE_DIR", str(tmp_path / "cache"))

    assert cli.main(["inspect", str(module), "--json", "--wall-ms", "75", "--stack-kib", "256"]) == 0

    budgets = orjson.loads(capsys.readouterr().out)["budgets"]
    assert (budgets["wall_ms"], budgets["fuel_per_call"], budgets["stack_bytes"]) == (75, 5_000_000, 256 * KiB)
    assert budgets["replay_wall_factor"] == DEFAULT_LIMITS.replay_wall_factor


@pytest.mark.parametrize(("argv", "environ"), [
    (["play", "MODULE", "--fuel", "0"], {}),
    (["inspect", "MODULE"], {"TABLEHOST_WALL_MS": "soon"}),
    (["simulate", "MODULE", "--memory-mib", "-1"], {}),
    (["check", "MODULE"], {"TABLEHOST_GUEST_SLOTS": "0"}),
    (["play", "MODULE", "--guest-slots", "0"], {}),
    (["simulate", "MODULE"], {"TABLEHOST_GUEST_SLOTS": "two"}),
])
def test_a_bad_budget_is_bad_input_exit_2_like_other_bad_input(
    tmp_path, capsys, monkeypatch, argv: list[str], environ: dict[str, str]  # type: ignore[no-untyped-def]
) -> None:
    module = tmp_path / "echo.wasm"
    module.write_bytes(guest_wasm())
    monkeypatch.setenv("TABLEHOST_CACHE_DIR", str(tmp_path / "cache"))
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    argv = [str(module) if arg == "MODULE" else arg for arg in argv]

    assert cli.main(argv) == 2
    assert "must be" in capsys.readouterr().err
    assert cli.main(["play", str(tmp_path / "missing.wasm")]) == 2  # as other bad input does


def test_guest_slots_come_from_the_option_then_the_environment_then_the_cores() -> None:
    assert guest_slots_from_args(parse(["--guest-slots", "3"]), {SLOTS_ENV: "5"}) == 3
    assert guest_slots_from_args(parse([]), {SLOTS_ENV: "5"}) == 5
    assert guest_slots_from_args(parse([]), {}) >= 1
    assert guest_slots_from_args(parse(["--guest-slots", "2"]), {SLOTS_ENV: "junk"}) == 2  # the option wins
    with pytest.raises(SystemExit, match="--guest-slots"):
        guest_slots_from_args(parse(["--guest-slots", "-1"]), {})
    with pytest.raises(SystemExit, match=SLOTS_ENV):
        limits_from_args(parse([]), {SLOTS_ENV: "0"})


def test_budget_argv_hands_on_the_options_given_guest_slots_included() -> None:
    assert budget_argv(parse(["--fuel", "9", "--guest-slots", "3"])) == ["--fuel", "9", "--guest-slots", "3"]
    assert budget_argv(parse([])) == []


def test_guest_slots_size_the_run_slots_and_inspect_shows_them(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    module = tmp_path / "echo.wasm"
    module.write_bytes(guest_wasm())
    monkeypatch.setenv("TABLEHOST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(SLOTS_ENV, raising=False)  # restored after the test: the command sets it
    before = RUN_SLOTS.slots
    try:
        assert cli.main(["inspect", str(module), "--json", "--guest-slots", "3"]) == 0
        assert RUN_SLOTS.slots == 3
        assert os.environ[SLOTS_ENV] == "3"  # worker processes started later get the same
    finally:
        RUN_SLOTS.resize(before)

    assert orjson.loads(capsys.readouterr().out)["budgets"]["guest_slots"] == 3
