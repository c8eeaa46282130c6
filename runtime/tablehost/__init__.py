"""tablehost: run turn-based games compiled to WebAssembly.

The pipeline (docs/architecture.md): module → guest → table → view → match → store → api/cli.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
