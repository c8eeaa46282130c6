"""A person plays any sample game in the browser without the CLI: the admin creates a match with
open seats in the lobby, the lobby's Join button seats each player, and each player's page plays
by clicking what the page offers (spaces, pieces, buttons), never through the API.

Marked ``browser`` (Debian's chromium through Playwright), like ``test_browser.py``; the browser
and the web table are the session's (``browser_support.py``).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from web_support import SEATS, WebTable

pytestmark = pytest.mark.browser

if not Path("/usr/bin/chromium").exists() and not os.environ.get("TABLEHOST_REQUIRE_BROWSER"):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

MOVES = 8
"""Clicks per game: past the opening of each (bids, the first checker moves, a betting round)."""

SERVED = (
    "v => Number(document.body.dataset.version) > v && document.body.dataset.predicted === 'false'"
    " && !document.querySelector('.felt[data-predicted=\"true\"]')"
)
"""The page shows a served view newer than version ``v`` (a prediction alone does not count)."""


def _create_in_lobby(page: Any, web: WebTable, game: str) -> str:
    """Fill the game's create form with every seat left open; return the new match's id."""
    card = page.locator(f'.module[data-module-id="{web.modules[game]}"]')
    if game in ("hearts", "spades"):
        assert card.locator('input[name="seats"]').input_value() == "4", "the game's fewest seats"
    card.locator('input[name="seats"]').fill(str(SEATS[game]))
    card.locator('input[name="open"]').check()
    card.locator("button").click()
    page.wait_for_selector(f"#created[data-match-id] >> text={SEATS[game]} seat(s) open")
    return str(page.locator("#created").get_attribute("data-match-id"))


def _join_every_seat(page: Any, match_id: str, names: list[str]) -> list[str]:
    """Click the match's Join button once per name, answering its prompt; return the seat links."""
    row = page.locator(f'#match-rows tr[data-match-id="{match_id}"]')
    for joined, name in enumerate(names, start=1):
        page.once("dialog", lambda dialog, name=name: dialog.accept(name))
        row.locator("button.join").click()
        row.locator(f'a:has-text("Play as {name}")').wait_for()
        assert row.locator("a.button-link").filter(has_text="Play as").count() == joined
    assert row.locator("button.join").count() == 0, "no seat is left open"
    links = [row.locator(f'a:has-text("Play as {name}")').get_attribute("href") for name in names]
    assert all(link and link.startswith("/table#match=") for link in links)
    return [str(link) for link in links]


OFFERED = {
    "piece": ".felt .piece.offered",
    "space": ".felt .space.offered",
    "button": "#actions button.action:not([disabled])",
}
"""What the page offers a click on: spaces and pieces on the table, and the action buttons."""


def _offered(page: Any) -> list[tuple[str, int, str, str]]:
    """``(what, index, intent, label)`` of each offered target (one read of the page), cancels
    last so that play moves on; ``page.locator(OFFERED[what]).nth(index)`` is the element."""
    found: list[tuple[str, int, str, str]] = []
    for what, selector in OFFERED.items():
        described = page.eval_on_selector_all(
            selector,
            "nodes => nodes.map(n => [n.dataset.intent || (n.classList.contains('intent-cancel') ? 'cancel' : ''),"
            " n.title || n.textContent])",
        )
        found += [(what, index, intent, label) for index, (intent, label) in enumerate(described)]
    return sorted(found, key=lambda offer: offer[2] == "cancel")


@pytest.mark.parametrize("game", list(SEATS))
def test_create_join_and_play_a_match_of_each_game_by_clicking(
    browser: Any, web: WebTable, game: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    context.on("page", lambda page: page.on("pageerror", lambda exc: errors.append(str(exc))))
    try:
        lobby = context.new_page()
        lobby.goto(f"{web.url}/#admin={web.admin_token}")
        lobby.wait_for_selector(".module[data-module-id] h3")
        match_id = _create_in_lobby(lobby, web, game)
        names = ["ann", "bob", "cy", "dee"][: SEATS[game]]
        links = _join_every_seat(lobby, match_id, names)
        pages = []
        for link in links:
            page = context.new_page()
            page.goto(web.url + link)
            page.wait_for_selector(".felt")
            pages.append(page)
        assert [p.locator(".seat-bottom .seat-name").inner_text() for p in pages] == names

        rng = random.Random(game)
        clicked: list[str] = []
        live = web.registry._matches[match_id]
        for _ in range(MOVES):
            version = live.match.version  # every page shows the server's newest view, pushed
            for page in pages:
                page.wait_for_function(
                    "v => Number(document.body.dataset.version) === v && document.body.dataset.predicted === 'false'",
                    arg=version,
                    polling=50,
                    timeout=15_000,
                )
            movers = [p for p in pages if p.locator("#turn").inner_text() == "Your turn"]
            if not movers:
                assert pages[0].locator("#turn").inner_text() == "Game over"
                break
            page = rng.choice(movers)
            offers = _offered(page)
            assert offers, f"{game}: the seat to play is offered nothing to click"
            going = [o for o in offers if o[2] != "cancel"] or offers
            what, index, _, label = going[0] if rng.random() < 0.5 else rng.choice(going)
            page.bring_to_front()  # a background tab's animation frames are throttled: clicks wait
            page.locator(OFFERED[what]).nth(index).click()
            page.wait_for_function(SERVED, arg=version, timeout=15_000, polling=50)
            clicked.append(f"{what}: {label}")
        assert len(clicked) >= min(MOVES, 6), clicked
        assert live.match.version >= len(clicked), "every click was a move the server applied"
        assert errors == [] and all(not p.locator("#notice.notice-error:visible").count() for p in pages), errors
        # Each game's own inputs were clickable in the page (the first moves of each game).
        kinds = {entry.split(":")[0] for entry in clicked}
        expected = {
            "tic_tac_toe": {"space"}, "reversi": {"space"}, "checkers": {"piece"}, "dominoes": {"piece"},
            "hearts": {"piece"}, "backgammon": {"piece", "space"}, "spades": {"button"},
            "holdem": {"button"}, "risk": {"space"},
        }[game]
        assert expected <= kinds, clicked
    finally:
        context.close()
