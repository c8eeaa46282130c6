"""Fixtures shared by the browser tests: one chromium and one web table for the whole session
(starting a browser and compiling the nine sample games once keeps the browser tests quick)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from web_support import WebTable, web_table

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium: Playwright drives the system browser, nothing is downloaded."""


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless chromium (Playwright's ``Browser``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebTable]:
    """A registry served over HTTP with every sample game uploaded."""
    with web_table(tmp_path_factory.mktemp("browser")) as table:
        yield table
