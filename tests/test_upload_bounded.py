"""Bounded upload (issue 9): validation and compilation of an upload run in a child process
under a time and a memory cap; over a cap the upload is refused with a clear reason, and the
host keeps serving meanwhile. The compiled artifact lands in the cache the server loads from."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import wasmtime

from fixtures_guest import _HOOK, PLAYERS, WAT_DIR, cache_dir, guest_wasm  # noqa: F401  (cache_dir is a fixture)
from tablehost.errors import ModuleError
from tablehost.guest import GuestPool
from tablehost.limits import Limits, MiB
from tablehost.module import cache_key, load_module


def many_functions(count: int) -> bytes:
    """The echo guest plus ``count`` tiny functions: cheap to validate, costly to compile."""
    text = (WAT_DIR / "echo_guest.wat").read_text()
    funcs = "".join(f"(func $f{i} (result i32) (i32.const {i}))\n" for i in range(count))
    return bytes(wasmtime.wat2wasm(text.replace(_HOOK, _HOOK + "\n" + funcs)))


def test_an_isolated_load_matches_an_in_process_one_and_fills_the_cache(cache_dir: Path) -> None:  # noqa: F811
    isolated = load_module(guest_wasm(), cache_dir=cache_dir, isolated=True, name="echo")
    artifact = cache_dir / f"{cache_key(isolated.sha256, isolated.limits)}.cwasm"

    assert artifact.is_file()
    again = load_module(guest_wasm(), cache_dir=cache_dir)
    assert again.from_cache and again.info == isolated.info
    assert GuestPool(isolated).setup(PLAYERS, 1, "m:0")["printed"] == "setup ran\n"


def test_an_invalid_upload_is_refused_by_the_child_with_the_reason(cache_dir: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleError, match="does not export tablehost_panic_message"):
        load_module(bytes(wasmtime.wat2wasm((WAT_DIR / "missing_export.wat").read_text())), cache_dir=cache_dir,
                    isolated=True)


def test_a_compilation_over_its_time_cap_is_refused_within_the_cap(cache_dir: Path) -> None:  # noqa: F811
    data = many_functions(20_000)
    started = time.monotonic()
    with pytest.raises(ModuleError, match="longer than its 300 ms cap") as refused:
        load_module(data, cache_dir=cache_dir, isolated=True, limits=Limits(compile_ms=300))
    assert refused.value.budget == "compile_ms"
    assert time.monotonic() - started < 5.0  # killed at the cap, not after compiling


def test_a_compilation_over_its_memory_cap_is_refused(cache_dir: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleError, match="more than its 128 MiB memory cap") as refused:
        load_module(many_functions(3_000), cache_dir=cache_dir, isolated=True,
                    limits=Limits(compile_memory_bytes=128 * MiB))
    assert refused.value.budget == "compile_memory_bytes"


def test_matches_are_served_while_an_upload_compiles(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_module(guest_wasm(), cache_dir=cache_dir))
    outcome: list[BaseException] = []

    def upload() -> None:
        try:
            load_module(many_functions(60_000), cache_dir=cache_dir, isolated=True, limits=Limits(compile_ms=1_500))
        except ModuleError as exc:
            outcome.append(exc)

    uploading = threading.Thread(target=upload)
    uploading.start()
    served = 0
    while uploading.is_alive():
        pool.setup(PLAYERS, served, f"m{served}:0")
        served += 1
    uploading.join()
    assert served > 10  # the host kept answering during the whole upload
    assert outcome and "1500 ms cap" in str(outcome[0])


def test_a_server_that_checks_uploads_refuses_a_history_dependent_module(tmp_path: Path) -> None:
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    registry = MatchRegistry(tmp_path / "data", check_uploads=1)
    try:
        with pytest.raises(ModuleError, match="failed tablehost check with 2 players: call 1 \\(step\\).*allow_undo"):
            registry.upload_module(ADMIN, guest_wasm("hostile_history"), "history")
        assert registry.list_modules(ADMIN) == []
        sample = Path(__file__).resolve().parents[1] / "sample_games" / "dist" / "tic_tac_toe.wasm"
        if sample.exists():
            assert registry.upload_module(ADMIN, sample.read_bytes(), "tic_tac_toe").newly_stored
    finally:
        registry.close()


def test_the_upload_check_plays_every_declared_player_count_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablehost.api import registry as registry_module
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    sample = Path(__file__).resolve().parents[1] / "sample_games" / "dist" / "dominoes.wasm"  # declares 2..4
    played: list[tuple[int, int]] = []
    real_check = registry_module.check_module

    def recording_check(module, *, games, seed, players, limits, **more):  # type: ignore[no-untyped-def]
        played.append((players, games))
        return real_check(module, games=games, seed=seed, players=players, limits=limits, **more)

    monkeypatch.setattr(registry_module, "check_module", recording_check)
    for override, expected in ((None, [(2, 2), (3, 1), (4, 1)]), (3, [(3, 4)])):
        played.clear()
        registry = MatchRegistry(tmp_path / f"data-{override}", check_uploads=4, check_players=override)
        try:
            registry.upload_module(ADMIN, sample.read_bytes(), "dominoes")
        finally:
            registry.close()
        assert played == expected
