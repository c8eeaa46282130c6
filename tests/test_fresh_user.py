"""Small command-line and API findings of a fresh user (issue 9 follow-up): each refusal says
what is wrong in the user's own terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablehost import cli_remote
from tablehost.errors import NothingToUndo, UndoRefused
from tablehost.guest import GuestPool
from tablehost.match import UNDO_ACTION, Match
from tablehost.module import load_module
from tablehost.selfplay import default_players

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"


@pytest.fixture
def tic_tac_toe(tmp_path: Path) -> Match:
    module = load_module((DIST / "tic_tac_toe.wasm").read_bytes(), name="tic_tac_toe", cache_dir=tmp_path)
    return Match.start(GuestPool(module), default_players(2), match_id="fresh", seed=1)


def test_undo_with_nothing_to_undo_says_so(tic_tac_toe: Match) -> None:
    for asked in (lambda: tic_tac_toe.undo(1), lambda: tic_tac_toe.submit_view_action(1, UNDO_ACTION),
                  lambda: tic_tac_toe.submit_view_action(1, {"type": "button_click",
                                                            "button": {"id": "tablehost.undo"}})):
        with pytest.raises(NothingToUndo) as refused:
            asked()
        assert refused.value.code == "match/nothing_to_undo"
        assert "no move to take back" in str(refused.value)
    tic_tac_toe.submit_view_action(1, tic_tac_toe.actions_for(1)[0]["action"])
    with pytest.raises(UndoRefused) as other:
        tic_tac_toe.undo(2)  # a move is in force, but it is seat 1's
    assert not isinstance(other.value, NothingToUndo) and other.value.code == "match/undo_refused"


VIEW = {"actions": [{"action": {"type": "space_click", "space_id": "a"}}], "game_over": False, "viewer": 1,
        "active_player_ids": [1], "version": 3}


@pytest.mark.parametrize(("choice", "says"), [
    ('{"type": "space_click", "index": 100000000000000000000000}',
     "action.index is 100000000000000000000000, which is not a 64-bit integer"),
    ('{"action": {"type": "x", "n": [1, -99999999999999999999]}}', "action.action.n[1] is -99999999999999999999"),
    ('{"type": "space_click", "x": NaN}', "is neither an action index nor JSON"),
])
def test_a_json_action_with_an_integer_past_64_bits_is_shown_as_given(choice: str, says: str) -> None:
    with pytest.raises(SystemExit) as refused:
        cli_remote._chosen_action(choice, VIEW)
    assert says in str(refused.value.code)
    assert "e+" not in str(refused.value.code)


def test_a_json_action_within_64_bits_is_kept_exact() -> None:
    action = cli_remote._chosen_action('{"type": "piece_click", "space_id": "a", "index": 18446744073709551615}', VIEW)
    assert action == {"type": "piece_click", "space_id": "a", "index": 2**64 - 1}
    assert cli_remote._chosen_action("0", VIEW) == {"type": "space_click", "space_id": "a"}
    assert cli_remote._chosen_action("undo", VIEW) == UNDO_ACTION


@pytest.mark.parametrize("command", [["play"], ["simulate", "--games", "1"], ["check"], ["inspect"]])
def test_a_huge_module_file_is_refused_by_its_size_before_it_is_read(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tracemalloc

    from tablehost import cli
    from tablehost.limits import DEFAULT_LIMITS

    huge = tmp_path / "huge.wasm"
    with huge.open("wb") as handle:  # sparse: 300 MB on paper, nothing on disk
        handle.truncate(300 * 1000 * 1000)
    tracemalloc.start()
    try:
        status = cli.main([command[0], str(huge), *command[1:]])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 2
    assert f"module is 300000000 bytes, over the {DEFAULT_LIMITS.module_bytes}-byte limit" in capsys.readouterr().err
    assert peak < 20 * 1024 * 1024  # the file was never read into memory


def test_a_module_file_without_a_size_is_read_only_up_to_the_cap() -> None:
    from tablehost.errors import ModuleError
    from tablehost.module_file import read_module_file

    with pytest.raises(ModuleError, match="over the 4096-byte limit"):
        read_module_file("/dev/zero", 4096)  # reports size 0 and never ends
    assert read_module_file(DIST / "tic_tac_toe.wasm", 16 * 1024 * 1024) == (DIST / "tic_tac_toe.wasm").read_bytes()
