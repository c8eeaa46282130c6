"""Validate game modules and compile them with a deterministic engine, caching compiled code.

A game module is a core wasm module with no imports and the exports of docs/abi.md.
:func:`validate_module` checks the bytes without compiling; :func:`load_module` validates,
then loads compiled code from the on-disk cache (keyed by the module's sha256, the wasmtime
version, the engine settings and the host machine) or compiles and stores it. With
``isolated=True`` (uploads) validation and compilation run in a child process under
``limits.compile_ms`` and ``limits.compile_memory_bytes`` (:mod:`tablehost._compile_child`);
this process only maps the artifact the child wrote.

Artifacts are loaded with ``Module.deserialize_file``, so wasmtime maps the file and can
initialise each instance's memory copy-on-write from it (a cheap instantiation per match).

The cache directory must be writable only by the host's user: compiled code read from it is
executed as is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import wasmtime

from tablehost._epoch import TICKER
from tablehost._wasm_binary import PAGE_BYTES, WASM_MAGIC, FuncSignature, WasmFormatError, read_declarations
from tablehost.errors import ModuleError
from tablehost.limits import DEFAULT_LIMITS, Limits

log = structlog.get_logger(__name__)

CACHE_DIR_ENV = "TABLEHOST_CACHE_DIR"
"""Environment variable naming the compiled-code cache directory."""

DEFAULT_CACHE_DIR = Path("~/.cache/tablehost/modules")

ABI_FUNCTIONS: dict[str, FuncSignature] = {
    "tablehost_abi_v1": FuncSignature((), ("i32",)),
    "tablehost_alloc": FuncSignature(("i32",), ("i32",)),
    "tablehost_dealloc": FuncSignature(("i32", "i32"), ()),
    "tablehost_call": FuncSignature(("i32", "i32", "i32"), ("i64",)),
    "tablehost_panic_message": FuncSignature((), ("i64",)),
}
"""Every function export of ABI v1 with its exact signature (docs/abi.md "Exports")."""

MEMORY_EXPORT = "memory"

WASMTIME_VERSION = importlib.metadata.version("wasmtime")


@dataclass(frozen=True)
class ModuleInfo:
    """What validation learned about a module.

    Attributes:
        sha256: hex digest of the module bytes; the module's identity everywhere.
        size_bytes: length of the module bytes.
        exports: export names in the module's order.
        imports: ``"module.name"`` of each import (always empty for a valid module).
        initial_memory_bytes: initial size of the exported memory, bytes.
        max_memory_bytes: the memory's declared maximum in bytes, or ``None`` when unbounded.
    """

    sha256: str
    size_bytes: int
    exports: list[str]
    imports: list[str]
    initial_memory_bytes: int
    max_memory_bytes: int | None


@dataclass(frozen=True)
class GameModule:
    """A validated, compiled module ready for :class:`tablehost.guest.GuestPool`.

    Attributes:
        info: the validation result.
        name: a display name (the caller's, else the first 12 hex digits of the sha256).
        engine: the shared engine the code was compiled for (one per ``limits.stack_bytes``).
        wasm_module: the compiled :class:`wasmtime.Module`.
        limits: the budgets the module was validated under; pools default to them.
        from_cache: ``True`` when the compiled code came from the disk cache (no compilation).
    """

    info: ModuleInfo
    name: str
    engine: wasmtime.Engine
    wasm_module: wasmtime.Module
    limits: Limits
    from_cache: bool = False

    @property
    def sha256(self) -> str:
        """Hex sha256 of the module bytes."""
        return self.info.sha256


def validate_module(data: bytes, limits: Limits = DEFAULT_LIMITS) -> ModuleInfo:
    """Check that ``data`` is an ABI v1 game module that fits ``limits``, without compiling it.

    Checks, in order: size cap (``limits.module_bytes``), wasm magic, wasm validity under the
    deterministic feature set, zero imports, every ABI export with its kind and signature,
    initial memory within ``limits.memory_bytes``.

    Args:
        data: the module bytes.
        limits: budgets; ``module_bytes`` and ``memory_bytes`` apply here.

    Returns:
        The module's :class:`ModuleInfo`.

    Raises:
        ModuleError: the first check that failed, named in the message (``sha256`` field set).
    """
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > limits.module_bytes:
        raise ModuleError(
            f"module is {len(data)} bytes, over the {limits.module_bytes}-byte limit", sha256=digest
        )
    if data[:4] != WASM_MAGIC:
        raise ModuleError("not a wasm module (the bytes do not start with \\0asm)", sha256=digest)
    try:
        wasmtime.Module.validate(make_engine(limits), data)
        decl = read_declarations(data)
    except (wasmtime.WasmtimeError, WasmFormatError) as exc:
        raise ModuleError(f"invalid wasm module: {_first_line(exc)}", sha256=digest) from exc
    if decl.imports:
        raise ModuleError(
            f"module imports {', '.join(decl.imports)}; game modules may import nothing", sha256=digest
        )
    for name, signature in ABI_FUNCTIONS.items():
        export = decl.exports.get(name)
        if export is None:
            raise ModuleError(f"module does not export {name} (required by ABI v1)", sha256=digest)
        if export.signature != signature:
            raise ModuleError(
                f"export {name} is {_describe(export.kind, export.signature)}, "
                f"ABI v1 requires {_describe('func', signature)}",
                sha256=digest,
            )
    memory = decl.exports.get(MEMORY_EXPORT)
    if memory is None or memory.memory_pages is None:
        raise ModuleError("module does not export its linear memory as 'memory'", sha256=digest)
    initial_pages, max_pages = memory.memory_pages
    initial_bytes = initial_pages * PAGE_BYTES
    if initial_bytes > limits.memory_bytes:
        raise ModuleError(
            f"initial memory is {initial_bytes} bytes, over the {limits.memory_bytes}-byte limit",
            sha256=digest,
        )
    return ModuleInfo(
        sha256=digest,
        size_bytes=len(data),
        exports=list(decl.exports),
        imports=[],
        initial_memory_bytes=initial_bytes,
        max_memory_bytes=None if max_pages is None else max_pages * PAGE_BYTES,
    )


def engine_settings(limits: Limits) -> dict[str, bool | int]:
    """The deterministic wasmtime ``Config`` settings for ``limits`` (also the cache key's part).

    NaNs are canonicalised; threads, relaxed SIMD, GC, exceptions, memory64, multi-memory and
    the component model are off; fuel and epoch interruption are on; the wasm stack is capped at
    ``limits.stack_bytes``; linear memory never moves (the host keeps its base address).
    """
    return {
        "cranelift_nan_canonicalization": True,
        "wasm_threads": False,
        "wasm_relaxed_simd": False,
        "wasm_gc": False,
        "wasm_function_references": False,
        "wasm_exceptions": False,
        "wasm_memory64": False,
        "wasm_multi_memory": False,
        "wasm_component_model": False,
        "consume_fuel": True,
        "epoch_interruption": True,
        "max_wasm_stack": limits.stack_bytes,
        "memory_may_move": False,
    }


_engines: dict[int, wasmtime.Engine] = {}
_engines_lock = threading.Lock()


def make_engine(limits: Limits = DEFAULT_LIMITS) -> wasmtime.Engine:
    """The process-wide engine for ``limits`` (one per ``stack_bytes``), ticked by the epoch thread.

    Args:
        limits: only ``stack_bytes`` selects the engine; other budgets apply per store and call.

    Returns:
        A :class:`wasmtime.Engine` with :func:`engine_settings`.
    """
    with _engines_lock:
        engine = _engines.get(limits.stack_bytes)
        if engine is None:
            config = wasmtime.Config()
            for name, value in engine_settings(limits).items():
                setattr(config, name, value)
            engine = wasmtime.Engine(config)
            _engines[limits.stack_bytes] = engine
            TICKER.register(engine)
        return engine


def load_module(
    data: bytes,
    *,
    limits: Limits = DEFAULT_LIMITS,
    cache_dir: Path | None = None,
    name: str | None = None,
    isolated: bool = False,
) -> GameModule:
    """Validate ``data`` and return it compiled, from the disk cache when possible.

    Args:
        data: the module bytes.
        limits: budgets the module is validated and compiled under.
        cache_dir: compiled-code cache directory; default ``$TABLEHOST_CACHE_DIR``, else
            ``~/.cache/tablehost/modules``. A cache that cannot be written only costs a recompile
            (but an ``isolated`` load needs it).
        name: display name for logs and tools.
        isolated: validate and compile in a child process capped at ``limits.compile_ms`` and
            ``limits.compile_memory_bytes`` (untrusted uploads).

    Returns:
        The :class:`GameModule`.

    Raises:
        ModuleError: validation failed, wasmtime could not compile the module, or (isolated)
            compilation went over its time or memory cap.
    """
    if isolated:
        return _load_isolated(data, limits, _cache_dir(cache_dir), name)
    info = validate_module(data, limits)
    engine = make_engine(limits)
    path = _cache_dir(cache_dir) / f"{cache_key(info.sha256, limits)}.cwasm"
    compiled = _read_cached(engine, path)
    from_cache = compiled is not None
    if compiled is None:
        try:
            compiled = wasmtime.Module(engine, data)
        except wasmtime.WasmtimeError as exc:
            raise ModuleError(f"module did not compile: {_first_line(exc)}", sha256=info.sha256) from exc
        _write_atomically(path, bytes(compiled.serialize()))
    log.info("module.loaded", sha256=info.sha256, name=name, from_cache=from_cache, size_bytes=info.size_bytes)
    return GameModule(
        info=info,
        name=name or info.sha256[:12],
        engine=engine,
        wasm_module=compiled,
        limits=limits,
        from_cache=from_cache,
    )


def _load_isolated(data: bytes, limits: Limits, cache_dir: Path, name: str | None) -> GameModule:
    """:func:`load_module` with validation and compilation in a capped child process."""
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > limits.module_bytes:
        raise ModuleError(f"module is {len(data)} bytes, over the {limits.module_bytes}-byte limit", sha256=digest)
    engine = make_engine(limits)
    path = cache_dir / f"{cache_key(digest, limits)}.cwasm"
    info_json = _compile_in_child(data, limits, path, digest)
    compiled = _read_cached(engine, path)
    if compiled is None:
        raise ModuleError("the compiled module could not be stored in the cache", sha256=digest)
    info = ModuleInfo(**info_json)
    log.info("module.loaded", sha256=digest, name=name, from_cache=False, size_bytes=info.size_bytes, isolated=True)
    return GameModule(info=info, name=name or digest[:12], engine=engine, wasm_module=compiled, limits=limits)


def _compile_in_child(data: bytes, limits: Limits, artifact: Path, digest: str) -> dict[str, Any]:
    """Run :mod:`tablehost._compile_child`; return the ModuleInfo fields it printed.

    Raises:
        ModuleError: the module is invalid, or the child went over ``compile_ms`` or
            ``compile_memory_bytes`` (it is killed at the time cap).
    """
    artifact.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "tablehost._compile_child", json.dumps(dataclasses.asdict(limits)), str(artifact)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as child:
        try:
            out, err = child.communicate(data, timeout=limits.compile_ms / 1000.0)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise ModuleError(
                f"validating and compiling the module took longer than its {limits.compile_ms} ms cap",
                sha256=digest, budget="compile_ms",
            ) from None
    lines = out.decode(errors="replace").strip().splitlines()
    answer = _last_json(lines)
    if child.returncode == 0 and answer is not None and "sha256" in answer:
        return answer
    if answer is not None and "error" in answer:
        raise ModuleError(str(answer["error"]), sha256=digest)
    text = err.decode(errors="replace")
    if any(sign in text for sign in _OUT_OF_MEMORY_SIGNS) or child.returncode in (-signal.SIGABRT, -signal.SIGKILL):
        raise ModuleError(
            f"validating and compiling the module needed more than its {limits.compile_memory_bytes // (1024 * 1024)} "
            f"MiB memory cap", sha256=digest, budget="compile_memory_bytes",
        )
    last = text.strip().splitlines()[-1] if text.strip() else f"exit status {child.returncode}"
    raise ModuleError(f"compiling the module failed: {last}", sha256=digest)


_OUT_OF_MEMORY_SIGNS = ("MemoryError", "memory allocation", "can't start new thread", "Cannot allocate memory")
"""What a child capped by ``RLIMIT_AS`` writes when the cap stops it."""


def _last_json(lines: list[str]) -> dict[str, Any] | None:
    for line in reversed(lines):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def cache_key(sha256: str, limits: Limits) -> str:
    """File stem of a compiled artifact: changes with the module, wasmtime, the engine settings or the host.

    Args:
        sha256: hex digest of the module bytes.
        limits: the budgets (only engine settings enter the key).

    Returns:
        ``"<sha256>-<16 hex digits>"``.
    """
    settings = sorted(engine_settings(limits).items())
    fingerprint = f"wasmtime={WASMTIME_VERSION};machine={platform.machine()};{settings}"
    return f"{sha256}-{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}"


def _cache_dir(explicit: Path | None) -> Path:
    if explicit is not None:
        return Path(explicit)
    return Path(os.environ.get(CACHE_DIR_ENV) or DEFAULT_CACHE_DIR).expanduser()


def _read_cached(engine: wasmtime.Engine, path: Path) -> wasmtime.Module | None:
    if not path.is_file():
        return None
    try:
        # Mapped from the file: instance memories can be initialised copy-on-write from it.
        return wasmtime.Module.deserialize_file(engine, str(path))
    except wasmtime.WasmtimeError as exc:
        # Incompatible or damaged artifact: recompile and overwrite it.
        log.warning("module.cache_unusable", path=str(path), error=_first_line(exc))
        return None


def _write_atomically(path: Path, payload: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cwasm")
        try:
            with os.fdopen(fd, "wb") as tmp:
                tmp.write(payload)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.replace(tmp_name, path)
        except BaseException:
            os.unlink(tmp_name)
            raise
    except OSError as exc:
        log.warning("module.cache_write_failed", path=str(path), error=str(exc))


def _describe(kind: str, signature: FuncSignature | None) -> str:
    if kind != "func" or signature is None:
        return f"a {kind}"
    return f"func ({', '.join(signature.params)}) -> ({', '.join(signature.results)})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
