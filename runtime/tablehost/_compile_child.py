"""The child process that validates and compiles an uploaded module under a memory cap.

Run as ``python -m tablehost._compile_child LIMITS_JSON ARTIFACT_PATH`` with the module bytes
on standard input. It caps its own address space (``RLIMIT_AS`` = ``compile_memory_bytes``)
before wasmtime is imported, validates the bytes with :func:`tablehost.module.validate_module`,
compiles them with the same engine settings as the server, writes the serialized artifact to
``ARTIFACT_PATH`` (atomically) and prints the :class:`~tablehost.module.ModuleInfo` as one JSON
line. A module that is not valid prints ``{"error": "..."}`` and exits 3; running out of memory
ends the process some other way, which the parent reports (:func:`tablehost.module.load_module`).
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys

EXIT_INVALID = 3


def main(argv: list[str]) -> int:
    """Validate and compile stdin's module; see the module docstring. Returns the exit status."""
    limits_json, artifact = argv
    fields = json.loads(limits_json)
    cap = int(fields["compile_memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an abort at the cap must not dump its memory

    from pathlib import Path

    import wasmtime

    from tablehost.errors import ModuleError
    from tablehost.limits import Limits
    from tablehost.module import _write_atomically, make_engine, validate_module

    limits = Limits(**fields)
    data = sys.stdin.buffer.read()
    try:
        info = validate_module(data, limits)
        compiled = wasmtime.Module(make_engine(limits), data)
    except ModuleError as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        return EXIT_INVALID
    except wasmtime.WasmtimeError as exc:
        print(json.dumps({"error": f"module did not compile: {str(exc).strip().splitlines()[0]}"}), flush=True)
        return EXIT_INVALID
    _write_atomically(Path(artifact), bytes(compiled.serialize()))
    print(json.dumps(dataclasses.asdict(info)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
