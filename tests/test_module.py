"""Module validation, the deterministic engine and the compiled-code cache (tablehost.module)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import wasmtime
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures_guest import cache_dir, guest_wasm, wat_module  # noqa: F401  (cache_dir is a fixture)
from tablehost.errors import ModuleError
from tablehost.limits import DEFAULT_LIMITS, KiB
from tablehost.module import (
    ABI_FUNCTIONS,
    CACHE_DIR_ENV,
    cache_key,
    load_module,
    make_engine,
    validate_module,
)

ECHO = guest_wasm()


def test_valid_module_is_described() -> None:
    info = validate_module(ECHO)

    assert info.imports == []
    assert set(info.exports) == {"memory", *ABI_FUNCTIONS}
    assert info.size_bytes == len(ECHO)
    assert info.initial_memory_bytes == 2 * 65536
    assert info.max_memory_bytes is None
    assert len(info.sha256) == 64


def test_wasi_import_is_refused_by_name() -> None:
    with pytest.raises(ModuleError, match=r"wasi_snapshot_preview1\.fd_write"):
        validate_module(wat_module("wasi_import"))


def test_missing_export_is_refused_by_name() -> None:
    with pytest.raises(ModuleError, match="tablehost_panic_message"):
        validate_module(wat_module("missing_export"))


def test_wrong_signature_is_refused_with_both_signatures() -> None:
    with pytest.raises(ModuleError, match=r"tablehost_call is func \(i32, i32, i32\) -> \(i32\).*-> \(i64\)"):
        validate_module(wat_module("wrong_signature"))


def test_memory_must_be_exported() -> None:
    wat = (Path(__file__).parent / "wat" / "missing_export.wat").read_text()
    wat = wat.replace('(memory (export "memory") 1)', "(memory 1)").replace(
        '(func (export "tablehost_call")',
        '(func (export "tablehost_panic_message") (result i64) (i64.const 0))\n  (func (export "tablehost_call")',
    )
    with pytest.raises(ModuleError, match="'memory'"):
        validate_module(bytes(wasmtime.wat2wasm(wat)))


def test_non_wasm_bytes_are_refused() -> None:
    with pytest.raises(ModuleError, match="not a wasm module"):
        validate_module(b"#!/bin/sh\necho hi\n")


def test_size_cap_applies_before_anything_else() -> None:
    with pytest.raises(ModuleError, match=f"{len(ECHO)} bytes, over the 100-byte limit"):
        validate_module(ECHO, DEFAULT_LIMITS.tightened(module_bytes=100))


def test_initial_memory_over_the_cap_is_refused() -> None:
    with pytest.raises(ModuleError, match="initial memory is 131072 bytes"):
        validate_module(ECHO, DEFAULT_LIMITS.tightened(memory_bytes=64 * KiB))


@pytest.mark.parametrize(
    "body",
    [
        # relaxed SIMD results differ between CPUs
        (
            "(func (param v128 v128 v128) (result v128)"
            " (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2)))"
        ),
        # shared memory and atomics are threads
        "(memory 1 1 shared)",
    ],
    ids=["relaxed_simd", "threads"],
)
def test_nondeterministic_features_are_refused(body: str) -> None:
    with pytest.raises(ModuleError, match="invalid wasm module"):
        validate_module(bytes(wasmtime.wat2wasm(f"(module {body})")))


def test_engine_canonicalises_nans() -> None:
    # 0/0 gives a NaN whose sign bit depends on the CPU unless NaNs are canonicalised.
    wat = """(module (func (export "nan") (result i32)
        (i32.reinterpret_f32 (f32.div (f32.const 0) (f32.const 0)))))"""
    engine = make_engine()
    store = wasmtime.Store(engine)
    store.set_fuel(1000)
    store.set_epoch_deadline(1000)
    nan = wasmtime.Instance(store, wasmtime.Module(engine, wat), []).exports(store)["nan"]
    assert isinstance(nan, wasmtime.Func)
    assert struct.pack("<i", nan(store)) == struct.pack("<I", 0x7FC00000)


def test_one_engine_per_stack_size() -> None:
    assert make_engine() is make_engine(DEFAULT_LIMITS.tightened(wall_ms=1))
    assert make_engine() is not make_engine(DEFAULT_LIMITS.tightened(stack_bytes=64 * KiB))


def test_second_load_comes_from_the_cache(cache_dir: Path) -> None:  # noqa: F811
    first = load_module(ECHO, cache_dir=cache_dir, name="echo")
    second = load_module(ECHO, cache_dir=cache_dir)

    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.sha256 == first.sha256 == first.info.sha256
    assert first.name == "echo" and second.name == first.sha256[:12]
    assert [p.name for p in cache_dir.iterdir()] == [f"{cache_key(first.sha256, DEFAULT_LIMITS)}.cwasm"]


def test_cache_key_follows_engine_settings_not_call_budgets() -> None:
    sha = "ab" * 32
    assert cache_key(sha, DEFAULT_LIMITS) == cache_key(sha, DEFAULT_LIMITS.tightened(wall_ms=5, fuel_per_call=9))
    assert cache_key(sha, DEFAULT_LIMITS) != cache_key(sha, DEFAULT_LIMITS.tightened(stack_bytes=64 * KiB))


def test_damaged_artifact_is_recompiled_and_replaced(cache_dir: Path) -> None:  # noqa: F811
    load_module(ECHO, cache_dir=cache_dir)
    (artifact,) = cache_dir.iterdir()
    artifact.write_bytes(b"garbage")

    again = load_module(ECHO, cache_dir=cache_dir)

    assert not again.from_cache
    assert load_module(ECHO, cache_dir=cache_dir).from_cache
    assert [p.name for p in cache_dir.iterdir()] == [artifact.name]  # no temporary files left


def test_cache_dir_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "env-cache"))
    load_module(ECHO)
    assert load_module(ECHO).from_cache
    assert len(list((tmp_path / "env-cache").iterdir())) == 1


def test_unwritable_cache_only_costs_a_recompile(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert not load_module(ECHO, cache_dir=blocker / "modules").from_cache


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_module_error(tail: bytes) -> None:
    try:
        validate_module(b"\0asm\x01\0\0\0" + tail)
    except ModuleError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(ECHO) - 1))
def test_truncated_module_is_refused_unless_only_custom_sections_were_cut(length: int) -> None:
    try:
        info = validate_module(ECHO[:length])
    except ModuleError:
        return
    assert info.exports == validate_module(ECHO).exports  # the cut fell before the trailing "name" section
