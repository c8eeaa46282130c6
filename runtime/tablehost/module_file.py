"""Reading a module file from disk for the local commands, bounded by the module size cap.

``tablehost play``, ``simulate``, ``replay``, ``check``, ``inspect``, ``upload`` and ``bots``
read a ``.wasm`` file the user names. A file over the cap (:attr:`Limits.module_bytes
<tablehost.limits.Limits.module_bytes>`, 16 MiB by default) is refused from its size on disk
before any of it is read, and the read itself stops one byte past the cap (a FIFO or a device
such as ``/dev/zero`` reports no size), so a 300 MB file is never loaded into memory only to be
refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from tablehost.errors import ModuleError


def read_module_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the module file at ``path``, at most ``max_bytes`` of them.

    Args:
        path: the file.
        max_bytes: the module size cap, bytes.

    Returns:
        The file's bytes (``len <= max_bytes``).

    Raises:
        ModuleError: the file is over ``max_bytes`` (by its size on disk, or by reading it);
            the message says ``module is N bytes, over the M-byte limit`` as validation does.
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise ModuleError(f"module is {size} bytes, over the {max_bytes}-byte limit")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ModuleError(f"module is over the {max_bytes}-byte limit (more than {max_bytes} bytes read)")
    return data
