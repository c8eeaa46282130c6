"""Module text made safe for a terminal: control characters escaped.

A module writes log lines, labels, kinds and names; printed raw, an escape sequence among
them could move the cursor, recolour or rewrite the screen, or forge lines of output. The
CLI passes every line holding module text through :func:`escape_controls`.
"""

from __future__ import annotations

__all__ = ["escape_controls"]

_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROLS.update({ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r", ord("\x1b"): "\\e"})
# Characters that reorder or hide text on the line (bidirectional overrides and isolates).
_CONTROLS.update({code: f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def escape_controls(text: str) -> str:
    """``text`` with C0 and C1 control characters, DEL and bidi overrides written as escapes.

    ``"\\x1b[2J"`` becomes ``"\\e[2J"``, a newline ``"\\n"``, other controls ``"\\xNN"``;
    every other character is kept. The result holds no control character.
    """
    return text.translate(_CONTROLS)
