"""``tablehost check``: determinism in fresh instances, leaks and budget use per op (issue 9)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from fixtures_guest import cache_dir, guest_wasm, load_guest  # noqa: F401  (cache_dir is a fixture)
from scripted_guest import SETUP, STEP, answer, final_step, scripted_guest
from tablehost.conformance import check_module, describe_leak, first_difference, format_report
from tablehost.module import GameModule, load_module
from tablehost.selfplay import COLORS

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 3, "hearts": 4}


def test_a_module_whose_answers_follow_its_call_history_is_flagged(cache_dir: Path) -> None:  # noqa: F811
    report = check_module(load_guest("hostile_history", cache_dir), games=2, seed=3, max_plies=10)

    assert not report.ok and report.difference_count > 0
    first = report.differences[0]
    assert (first.game, first.op, first.path) == (0, "step", "allow_undo")
    assert (first.played, first.fresh) == ("false", "true")


def test_a_module_that_publishes_a_hidden_card_is_flagged(cache_dir: Path) -> None:  # noqa: F811
    report = check_module(load_guest("hostile_leaky_view", cache_dir), games=1, seed=1)

    assert report.difference_count == 0 and not report.failures
    assert {leak.viewer for leak in report.leaks} == {None, 1}  # player 2 holds the card
    assert all(leak.kinds == ["queen_of_spades"] for leak in report.leaks)


def test_first_difference_names_the_path() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ("a[1].b", "2", "3")
    assert first_difference({"a": 1}, {"a": 1.0}) == ("a", "1", "1.0")
    assert first_difference([1], [1, 2]) == (".length", "1", "2")
    assert first_difference({"x": True}, {"x": True}) is None


@pytest.mark.parametrize("name", sorted(SEATS))
def test_every_sample_game_passes_check_with_no_difference(name: str) -> None:
    path = DIST / f"{name}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    report = check_module(load_module(path.read_bytes(), name=name), games=1, seed=11, players=SEATS[name])
    assert report.ok, (report.differences[:3], report.leaks[:3], report.failures)
    assert report.calls > 1 and report.budgets["step"].calls > 0


def test_the_check_command_prints_the_report_and_fails_on_a_difference(tmp_path: Path) -> None:
    module = tmp_path / "history.wasm"
    module.write_bytes(guest_wasm("hostile_history"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "runtime"), "TABLEHOST_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "tablehost", "check", str(module), "--games", "1", "--max-plies", "4", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert run.returncode == 1, run.stderr
    report = orjson.loads(run.stdout)
    assert report["ok"] is False and report["differences"][0]["path"] == "allow_undo"
    assert set(report["budgets"]) >= {"setup", "step"}


# --- Leaks: structural, with where and when --------------------------------------------------


def _with(base: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    copied = copy.deepcopy(base)
    change(copied)
    return copied


def _leaky_module(
    setup_change: Callable[[dict[str, Any]], None] = lambda answer: None,
    step_patches: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> GameModule:
    """The scripted one-move game (:mod:`scripted_guest`) with ``setup_change`` made to its setup
    answer and ``step_patches`` added to its move; ``king`` and ``two`` lie hidden in the deck,
    ``ace`` in player 1's hand."""
    setup = _with(SETUP, setup_change)
    step = answer(STEP, patches=[*STEP["patches"], *step_patches])
    return load_module(scripted_guest(setup=setup, step=final_step(step, setup)), name="leaky")


def _set(*path: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(answer: dict[str, Any]) -> None:
        target: Any = answer["state"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


LEAKS_AT_SETUP = [
    (_set("spaces", 0, "public_state", value={"face": "king"}), "state.spaces[0].public_state.face", "king"),
    (_set("spaces", 2, "pieces", 0, "public_state", value={"face": "ace"}),
     "state.spaces[2].pieces[0].public_state.face", "ace"),
    (_set("players", 0, "public_state", value={"hint": ["king"]}), "state.players[0].public_state.hint[0]", "king"),
    (_set("meta_data", value={"king": True}), "state.meta_data.king", "king"),  # a key
    (_set("log", value=[{"text": "The top card is king.", "for_player": {}}]), "state.log[0].text", "king"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "path", "kind"), LEAKS_AT_SETUP, ids=[case[1] for case in LEAKS_AT_SETUP])
def test_a_leak_at_setup_says_where_and_at_setup(change: Any, path: str, kind: str) -> None:
    report = check_module(_leaky_module(change), games=1, seed=1)

    assert report.difference_count == 0 and not report.failures
    first = report.leaks[0]
    assert (first.version, first.viewer, first.kinds) == (0, None, [kind])
    assert [place.path for place in first.places] == [path]
    # The one-move game serves the state's leak again after its move; the log line only at setup.
    persisted = "" if path.startswith("state.log") else " (served until version 1: 2 versions)"
    assert describe_leak(first) == (
        f"game 0 (seed {first.seed}) at setup: spectator was served hidden kind {kind!r} at {path}{persisted}"
    )
    assert "spectator" in format_report(report) and "at setup" in format_report(report)


def test_a_hidden_kind_in_a_label_leaks_to_the_seat_it_is_offered_to() -> None:
    offer = {"action": {"type": "space_click", "space_id": "a"}, "intent": "confirm", "label": "Take the king"}
    report = check_module(_leaky_module(lambda setup: setup.update(actions={"1": [offer]})), games=1, seed=1)

    assert [(leak.version, leak.viewer, [p.path for p in leak.places]) for leak in report.leaks] == [
        (0, 1, ["actions[0].label"])
    ]


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"op": "log", "entry": {"text": "ann peeks: the king!", "for_player": {}}}, "state.log[1].text"),
        ({"op": "log", "entry": {"text": "ann peeks", "for_player": {"2": "you see the king"}}}, "state.log[1].text"),
        ({"op": "set_meta", "key": "last_seen", "value": "king"}, "state.meta_data.last_seen"),
    ],
)
def test_a_leak_made_by_a_move_is_reported_at_its_version(patch: dict[str, Any], path: str) -> None:
    report = check_module(_leaky_module(step_patches=[patch]), games=1, seed=1)

    assert report.leaks and all(leak.version == 1 for leak in report.leaks)
    viewers = {leak.viewer for leak in report.leaks}
    assert viewers == ({2} if "for_player" in patch.get("entry", {}) and patch["entry"]["for_player"] else {None, 1, 2})
    assert all([p.path for p in leak.places] == [path] and leak.kinds == ["king"] for leak in report.leaks)


def test_hidden_kinds_inside_other_strings_are_no_leak() -> None:
    """Card faces ``2b``/``2c`` are parts of the seat colours ``#c0392b``/``#2c3e50``, and ``ace``
    of ``space_click``: a correct game passes."""
    deck = [{"public_kind": "back", "private_kind": kind} for kind in ("2b", "2c", "ace")]
    log = [{"text": "seat1 draws from 12b; #2c3e50 waits", "for_player": {}}]

    def change(setup: dict[str, Any]) -> None:
        setup["state"]["spaces"][3]["pieces"] = deck
        setup["state"]["spaces"][2]["pieces"] = []
        setup["state"]["log"] = log
        setup["state"]["meta_data"] = {"theme": "#c0392b", "2b2c": "note"}
        for player, color in zip(setup["state"]["players"], COLORS):
            player["color"] = color

    module = _leaky_module(change, [{"op": "log", "entry": {"text": "seat1 takes ace_low", "for_player": {}}}])
    report = check_module(module, games=1, seed=1)
    assert report.ok, (report.leaks, report.failures, report.differences)


def test_an_upload_that_leaks_is_refused_saying_who_where_and_when(tmp_path: Path) -> None:
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.errors import ModuleError

    setup = _with(SETUP, _set("meta_data", value={"peek": "king"}))
    data = scripted_guest(setup=setup, step=final_step(STEP, setup))
    registry = MatchRegistry(tmp_path / "data", check_uploads=1)
    try:
        with pytest.raises(ModuleError) as refused:
            registry.upload_module(ADMIN, data, "leaky")
    finally:
        registry.close()
    message = str(refused.value)
    assert "viewer None" not in message and "guest/" not in message  # the leak, not a failed game
    assert "game 0 (seed " in message
    assert message.endswith(
        "at setup: spectator was served hidden kind 'king' at state.meta_data.peek (served until version 1: 2 versions)"
    )


def test_free_text_leaks_a_kind_as_a_whole_word_only() -> None:
    from tablehost.conformance import _WordFinder

    finder = _WordFinder({"2b", "queen_of_spades", "Q"})
    assert finder.kinds_in("seat1 plays 2b.") == ["2b"]
    assert finder.kinds_in("(2b) and queen_of_spades") == ["2b", "queen_of_spades"]
    assert finder.kinds_in("#c0392b, 2bx, x2b, 2b_low, queen_of_spades2") == []
    assert finder.kinds_in("Q") == ["Q"] and finder.kinds_in("Q wins") == []  # one character: whole text only


# --- A leak that persists is said once -------------------------------------------------------

OFFER_A = {"action": {"type": "space_click", "space_id": "a"}, "intent": "confirm", "label": "a"}
PEEK = _set("meta_data", value={"peek": "king"})  # 'king' lies hidden in the deck from setup on


def _endless_wasm(setup_change: Callable[[dict[str, Any]], None] = PEEK) -> bytes:
    """A game that never ends: player 1 clicks ``a`` again and again and the state stays as setup
    left it (the move's patches change nothing), so a leak made at setup is served at every version."""
    from tablehost.table import Table

    setup = _with(SETUP, setup_change)
    patches = [{"op": "set_meta", "key": "peek", "value": "king"}, {"op": "set_active_players", "player_ids": [1]}]
    table = Table(setup["state"])
    table.apply(patches)
    step = answer(STEP, patches=patches, actions={"1": [OFFER_A]}, state=table.state)
    return scripted_guest(setup=setup, step=step)


def _endless_module() -> GameModule:
    return load_module(_endless_wasm(), name="endless")


def test_a_leak_that_persists_is_reported_once_with_its_first_and_last_version() -> None:
    report = check_module(_endless_module(), games=1, seed=1, max_plies=6)  # versions 0 to 6

    assert report.difference_count == 0 and not report.failures
    assert [(leak.version, leak.viewer, leak.kinds) for leak in report.leaks] == [
        (0, None, ["king"]), (0, 1, ["king"]), (0, 2, ["king"])
    ]  # one per viewer, not one per viewer and version (21)
    for leak in report.leaks:
        assert [(p.path, p.kind, p.last_version, p.versions) for p in leak.places] == [
            ("state.meta_data.peek", "king", 6, 7)
        ]
    assert describe_leak(report.leaks[0]).endswith(
        "at setup: spectator was served hidden kind 'king' at state.meta_data.peek (served until version 6: 7 versions)"
    )
    assert "  leaks: 3\n" in format_report(report) and not report.ok


def test_each_game_says_its_own_leaks_once() -> None:
    report = check_module(_endless_module(), games=2, seed=1, max_plies=3)

    assert [(leak.game, leak.viewer) for leak in report.leaks] == [(0, None), (0, 1), (0, 2), (1, None), (1, 1), (1, 2)]
    assert all(leak.places[0].last_version == 3 and leak.places[0].versions == 4 for leak in report.leaks)


def test_the_check_command_prints_a_persisting_leak_once_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tablehost.cli import main

    module = tmp_path / "endless.wasm"
    module.write_bytes(_endless_wasm())
    code = main(["check", str(module), "--games", "1", "--max-plies", "4", "--json"])
    report = orjson.loads(capsys.readouterr().out)

    assert code == 1 and report["ok"] is False
    assert report["leaks"][0] == {
        "game": 0, "seed": report["leaks"][0]["seed"], "version": 0, "viewer": None, "kinds": ["king"],
        "places": [{"path": "state.meta_data.peek", "kind": "king", "last_version": 4, "versions": 5}],
    }
    assert len(report["leaks"]) == 3
