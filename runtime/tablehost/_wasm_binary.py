"""Read the import, export and memory declarations of a core wasm binary without compiling it.

Only the sections :mod:`tablehost.module` needs are decoded (type, import, function, memory,
export); every other section is skipped by its length. The caller validates the bytes with
wasmtime first, so this reader may assume well-formed input under the engine's feature set
(no GC types, no memory64, no custom page sizes) and reports anything else as
:class:`WasmFormatError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WASM_MAGIC = b"\0asm"
WASM_VERSION_1 = b"\x01\0\0\0"
PAGE_BYTES = 65536

_SECTION_TYPE, _SECTION_IMPORT, _SECTION_FUNCTION, _SECTION_MEMORY, _SECTION_EXPORT = 1, 2, 3, 5, 7
_FUNC_TYPE_FORM = 0x60
_VALUE_TYPES = {0x7F: "i32", 0x7E: "i64", 0x7D: "f32", 0x7C: "f64", 0x7B: "v128", 0x70: "funcref", 0x6F: "externref"}
_EXTERN_KINDS = {0: "func", 1: "table", 2: "memory", 3: "global", 4: "tag"}


class WasmFormatError(ValueError):
    """The bytes use a form this reader does not decode (or are truncated)."""


@dataclass(frozen=True)
class FuncSignature:
    """A function type: value type names such as ``"i32"``, in order."""

    params: tuple[str, ...]
    results: tuple[str, ...]


@dataclass(frozen=True)
class Export:
    """One export: ``kind`` is ``func``/``table``/``memory``/``global``/``tag``.

    ``signature`` is set for functions; ``memory_pages`` (initial, maximum or ``None``) for memories.
    """

    name: str
    kind: str
    signature: FuncSignature | None = None
    memory_pages: tuple[int, int | None] | None = None


@dataclass
class WasmDeclarations:
    """What a module imports and exports.

    Attributes:
        imports: ``"module.name"`` of every import, in order.
        exports: every export by name.
        memories: ``(initial_pages, max_pages or None)`` of each memory the module defines.
    """

    imports: list[str] = field(default_factory=list)
    exports: dict[str, Export] = field(default_factory=dict)
    memories: list[tuple[int, int | None]] = field(default_factory=list)


class _Reader:
    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise WasmFormatError("unexpected end of section")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def uleb(self) -> int:
        result = shift = 0
        while True:
            value = self.byte()
            result |= (value & 0x7F) << shift
            if not value & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise WasmFormatError("LEB128 integer too long")

    def name(self) -> str:
        length = self.uleb()
        if self.pos + length > self.end:
            raise WasmFormatError("name runs past its section")
        raw = self.data[self.pos : self.pos + length]
        self.pos += length
        return raw.decode("utf-8", errors="replace")

    def value_type(self) -> str:
        code = self.byte()
        if code not in _VALUE_TYPES:
            raise WasmFormatError(f"unsupported value type 0x{code:02x}")
        return _VALUE_TYPES[code]

    def limits(self) -> tuple[int, int | None]:
        flags = self.byte()
        if flags & ~0x03:
            raise WasmFormatError(f"unsupported limits flags 0x{flags:02x} (memory64 or custom pages)")
        initial = self.uleb()
        maximum = self.uleb() if flags & 0x01 else None
        return initial, maximum


def read_declarations(data: bytes) -> WasmDeclarations:
    """Decode imports, exports and memories of a core wasm module.

    Args:
        data: the module bytes (already validated by wasmtime).

    Returns:
        The module's :class:`WasmDeclarations`.

    Raises:
        WasmFormatError: not a core wasm v1 binary, or a form this reader does not decode.
    """
    if data[:4] != WASM_MAGIC:
        raise WasmFormatError("missing the wasm magic bytes \\0asm")
    if data[4:8] != WASM_VERSION_1:
        raise WasmFormatError("not a core wasm module of binary version 1 (a component?)")
    decl = WasmDeclarations()
    types: list[FuncSignature] = []
    func_types: list[int] = []
    raw_exports: list[tuple[str, int, int]] = []
    reader = _Reader(data, 8)
    while reader.pos < reader.end:
        section_id = reader.byte()
        size = reader.uleb()
        body = _Reader(data, reader.pos, reader.pos + size)
        if body.end > len(data):
            raise WasmFormatError("section runs past the end of the module")
        reader.pos = body.end
        if section_id == _SECTION_TYPE:
            types = [_read_func_type(body) for _ in range(body.uleb())]
        elif section_id == _SECTION_IMPORT:
            for _ in range(body.uleb()):
                decl.imports.append(f"{body.name()}.{body.name()}")
                _skip_import_desc(body)
        elif section_id == _SECTION_FUNCTION:
            func_types = [body.uleb() for _ in range(body.uleb())]
        elif section_id == _SECTION_MEMORY:
            decl.memories = [body.limits() for _ in range(body.uleb())]
        elif section_id == _SECTION_EXPORT:
            for _ in range(body.uleb()):
                name = body.name()
                kind = body.byte()
                raw_exports.append((name, kind, body.uleb()))
    for name, kind, index in raw_exports:
        decl.exports[name] = _describe_export(decl, name, kind, index, types, func_types)
    return decl


def _read_func_type(body: _Reader) -> FuncSignature:
    form = body.byte()
    if form != _FUNC_TYPE_FORM:
        raise WasmFormatError(f"unsupported type form 0x{form:02x}")
    params = tuple(body.value_type() for _ in range(body.uleb()))
    results = tuple(body.value_type() for _ in range(body.uleb()))
    return FuncSignature(params, results)


def _skip_import_desc(body: _Reader) -> None:
    kind = body.byte()
    if kind in (0, 4):  # func type index; tag: attribute byte then type index
        if kind == 4:
            body.byte()
        body.uleb()
    elif kind == 1:
        body.value_type()
        body.limits()
    elif kind == 2:
        body.limits()
    elif kind == 3:
        body.value_type()
        body.byte()
    else:
        raise WasmFormatError(f"unknown import kind {kind}")


def _describe_export(
    decl: WasmDeclarations,
    name: str,
    kind: int,
    index: int,
    types: list[FuncSignature],
    func_types: list[int],
) -> Export:
    # Imported functions and memories come first in their index spaces; a module with imports
    # is refused before its exports matter, so only defined items are resolved here.
    kind_name = _EXTERN_KINDS.get(kind, f"kind{kind}")
    if decl.imports:
        return Export(name, kind_name)
    if kind_name == "func" and index < len(func_types) and func_types[index] < len(types):
        return Export(name, kind_name, signature=types[func_types[index]])
    if kind_name == "memory" and index < len(decl.memories):
        return Export(name, kind_name, memory_pages=decl.memories[index])
    return Export(name, kind_name)
