"""The web table in a real browser: Debian's chromium driven by Playwright (never a downloaded browser).

Marked ``browser``; ``.ci/run`` installs chromium and runs them once with the rest of the suite.
Screenshots of every sample game's table go to ``tests/output/screenshots`` (gitignored).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Self

import httpx
import orjson
import pytest

from tablehost.errors import NotOffered
from web_support import SEATS, WebTable, read_events

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parent / "output" / "screenshots"
ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.browser

if not CHROMIUM.exists() and not os.environ.get("TABLEHOST_REQUIRE_BROWSER"):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

pytest.importorskip("playwright.sync_api")


def _page(browser: Any, url: str, match_id: str, token: str) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(f"{url}/table#match={match_id}&token={token}")
    page.wait_for_selector(".felt")
    return page


def _cell(page: Any, space_id: str) -> Any:
    return page.locator(f'.space[data-space-id="{space_id}"]')


def test_two_pages_play_tic_tac_toe_to_the_end_by_clicking(browser: Any, tmp_path: Path) -> None:
    """Against `tablehost serve --http`: the real command, its registry, its event stream."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tablehost",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--data",
            str(tmp_path / "data"),
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert server.stdout is not None
        url = ""
        for line in server.stdout:
            found = re.search(r"web table on (http://\S+)/", line)
            if found:
                url = found.group(1)
                break
        assert url, "serve did not print the web table's address"
        admin = (tmp_path / "data" / "admin_token").read_text().strip()
        with httpx.Client(base_url=url, headers={"authorization": f"Bearer {admin}"}, timeout=60) as client:
            module = client.post(
                "/api/modules?name=tic_tac_toe",
                content=(ROOT / "sample_games/dist/tic_tac_toe.wasm").read_bytes(),
            )
            created = client.post(
                "/api/matches",
                json={
                    "module_id": module.json()["module_id"],
                    "seats": [{"username": "ann"}, {"username": "bob"}],
                },
            ).json()
        ann = _page(browser, url, created["match_id"], created["seats"][0]["token"])
        bob = _page(browser, url, created["match_id"], created["seats"][1]["token"])
        assert "token" not in ann.url, "the token leaves the address bar"
        for version, (page, cell) in enumerate(
            [(ann, "a1"), (bob, "b1"), (ann, "a2"), (bob, "b2"), (ann, "a3")]
        ):
            for each in (ann, bob):  # the served view (a prediction carries the next version too)
                each.wait_for_selector(f'body[data-version="{version}"][data-predicted="false"]')
            assert _cell(page, cell).get_attribute("data-intent") == "confirm"
            _cell(page, cell).click()
        for page in (ann, bob):
            page.wait_for_selector('body[data-version="5"][data-predicted="false"]')
            assert page.locator("#turn").inner_text() == "Game over"
            assert page.locator(".board .piece").count() == 5
            assert "Winner: ann" in page.locator("#result").inner_text()  # the server's result (lifecycle)
            assert page.locator(".offered").count() == 0
            assert page.errors == []
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        ann.screenshot(path=str(SCREENSHOTS / "tic_tac_toe-finished.png"))
    finally:
        server.terminate()
        server.wait(10)
        if server.stdout:
            server.stdout.close()


def test_a_hearts_table_never_shows_another_seats_cards(browser: Any, web: WebTable) -> None:
    created = web.create("hearts", ["ann", "bob", "cy", "dee"])
    match_id = created["match_id"]
    me = created["seats"][0]
    traffic: list[bytes] = []
    page = browser.new_page(viewport={"width": 1280, "height": 860})

    def keep(response: Any) -> None:
        if "/api/" in response.url and not response.url.endswith("/module") and "/events" not in response.url:
            traffic.append(response.body())

    page.on("response", keep)
    page.goto(f"{web.url}/table#match={match_id}&token={me['token']}")
    page.wait_for_selector(".felt .piece")
    # The page's event stream is not readable from Playwright while it is open; the same
    # token's stream, read alongside, carries what the page is pushed.
    pushed: list[dict[str, Any]] = []
    stream = web.client(me["token"])
    reader = threading.Thread(
        target=read_events,
        args=(stream, f"/api/matches/{match_id}/events", pushed, threading.Event()),
        daemon=True,
    )
    reader.start()
    web.play_randomly(created, 16, seed=5)  # passing, then the first tricks; pushed to the page
    page.wait_for_selector(f'body[data-version="{web.registry._matches[match_id].match.version}"]')
    state = web.registry._matches[match_id].match.state
    mine = {
        p["private_kind"]
        for s in state["spaces"]
        for p in s["pieces"]
        if (p["owner"] if p["owner"] is not None else s["owner"]) == me["player_id"] and p["private_kind"]
    }
    others = {
        p["private_kind"]
        for s in state["spaces"]
        for p in s["pieces"]
        if p["public_kind"] == "back" and p["private_kind"] and p["private_kind"] not in mine
    }
    assert len(others) >= 30, "three other hands are dealt"
    shown_private = set(
        page.eval_on_selector_all("[data-private-kind]", "nodes => nodes.map(n => n.dataset.privateKind)")
    )
    assert shown_private and shown_private <= mine
    glyphs = set(page.eval_on_selector_all(".piece .glyph", "nodes => nodes.map(n => n.textContent)"))
    suit = {"H": "♥", "D": "♦", "S": "♠", "C": "♣"}
    assert not {face[:-1] + suit[face[-1]] for face in others} & glyphs
    html = page.content()
    for face in others:
        assert f'data-private-kind="{face}"' not in html
        assert f'data-kind="{face}"' not in html
    assert traffic, "the page fetched its view"
    time.sleep(0.5)
    stream.close()
    reader.join(5)
    assert len(pushed) > 5, "views were pushed"
    for text in [body.decode() for body in traffic] + [orjson.dumps(view).decode() for view in pushed]:
        for face in others:
            assert f'"private_kind":"{face}"' not in text
    page.screenshot(path=str(_shot("hearts")))
    page.close()
    spectator = _page(browser, web.url, match_id, created["spectator_token"])
    spectator.wait_for_selector(".felt .piece")
    assert spectator.locator("[data-private-kind]").count() == 0, "a spectator sees no hand"
    assert spectator.locator("#actions button").count() == 0
    spectator.screenshot(path=str(_shot("hearts-spectator")))
    spectator.close()


def _shot(game: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{game}.png"


class SlowRegistry:
    """Wraps ``registry.submit``: waits ``delay_s``, then refuses when ``refuse`` is set, else submits."""

    def __init__(self, web: WebTable, delay_s: float) -> None:
        self.registry = web.registry
        self.real = web.registry.submit
        self.delay_s = delay_s
        self.refuse = False
        self.started = threading.Event()

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        self.started.set()
        time.sleep(self.delay_s)
        if self.refuse:
            raise NotOffered("refused by the test")
        return self.real(*args, **kwargs)

    def __enter__(self) -> Self:
        self.registry.submit = self.submit  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self.registry.submit = self.real  # type: ignore[method-assign]


def test_prediction_shows_a_move_before_the_server_and_rolls_back_a_refusal(
    browser: Any, web: WebTable
) -> None:
    created = web.create("tic_tac_toe")
    match_id = created["match_id"]
    page = _page(browser, web.url, match_id, created["seats"][0]["token"])
    page.wait_for_selector('body[data-version="0"]')
    live = web.registry._matches[match_id]
    with SlowRegistry(web, delay_s=2.0) as slow:
        page.wait_for_timeout(300)  # the module is fetched and compiled in the worker
        _cell(page, "b2").click()
        page.wait_for_selector('.felt[data-predicted="true"] .space[data-space-id="b2"] .piece', timeout=1500)
        assert live.match.version == 0, "shown before the server applied it"
        assert page.locator("#turn").inner_text() == "Sending…"
        page.wait_for_selector('.felt[data-predicted="false"]', timeout=5000)
        assert live.match.version == 1
        assert _cell(page, "b2").locator(".piece").count() == 1

        other = _page(browser, web.url, match_id, created["seats"][1]["token"])
        other.wait_for_selector('body[data-version="1"]')
        other.wait_for_timeout(300)
        slow.refuse = True
        _cell(other, "a1").click()
        other.wait_for_selector(
            '.felt[data-predicted="true"] .space[data-space-id="a1"] .piece', timeout=1500
        )
        other.wait_for_selector('.felt[data-predicted="false"]', timeout=5000)
        assert _cell(other, "a1").locator(".piece").count() == 0, "the refused move is rolled back"
        assert "match/not_offered" in other.locator("#notice").inner_text()
        assert live.match.version == 1
        other.close()
    page.close()


def test_a_push_equal_to_the_shown_view_redraws_nothing(browser: Any, web: WebTable) -> None:
    """The stream's first push repeats the view just fetched, and the match list only adds the
    title, and the page's own connection only changes ``connected``, which the table does not show:
    none of them replaces the table's nodes (a redraw raced the backgammon test's measurements).
    Two versions shown make exactly two drawings of the table."""
    created = web.create("tic_tac_toe")
    path = f"/api/matches/{created['match_id']}"
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    page.add_init_script(
        """document.addEventListener('DOMContentLoaded', () => {
            window.draws = 0;
            new MutationObserver(records => {
                for (const r of records) window.draws += [...r.addedNodes].filter(n => n.classList && n.classList.contains('felt')).length;
            }).observe(document.getElementById('table'), { childList: true });
        });"""
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{web.url}/table#match={created['match_id']}&token={created['seats'][1]['token']}")
    page.wait_for_selector('body[data-version="0"]')
    page.wait_for_function("() => document.getElementById('title').textContent.includes('Tic')")
    with web.client(created["seats"][0]["token"]) as first:
        offer = first.get(f"{path}/view").json()["actions"][0]
        assert first.post(f"{path}/actions", json={"action": offer["action"], "version": 0}).status_code == 200
    page.wait_for_selector('body[data-version="1"]')  # the stream is live: it pushed version 1
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.draws") == 2, "a view equal to the one shown was drawn again"
    assert page.locator(".board .piece").count() == 1
    assert errors == []
    page.close()


def test_a_move_that_draws_randomness_or_picks_a_hidden_piece_is_not_predicted(
    browser: Any, web: WebTable
) -> None:
    """Dominoes: a draw from the boneyard is a click on hidden tiles the server picks among."""
    match_id, seat = _dominoes_position_with_a_draw(web)
    page = _page(browser, web.url, match_id, seat["token"])
    page.wait_for_timeout(300)
    with SlowRegistry(web, delay_s=1.5):
        page.locator('.space[data-space-id="boneyard"] .piece.offered').first.click()
        page.wait_for_timeout(800)
        assert page.locator('.felt[data-predicted="true"]').count() == 0
    page.close()


def _dominoes_position_with_a_draw(web: WebTable) -> tuple[str, dict[str, Any]]:
    """A dominoes match whose active seat is offered a draw from the boneyard: its id and that
    seat. A deal can end (a domino) before any draw comes up, so up to 10 deals are tried."""
    for _ in range(10):
        created = web.create("dominoes")
        match_id = created["match_id"]
        live = web.registry._matches[match_id]
        for _ in range(40):
            if live.match.game_over:
                break
            active = live.match.active_player_ids[0]
            seat = next(s for s in created["seats"] if s["player_id"] == active)
            with web.client(seat["token"]) as client:
                view = client.get(f"/api/matches/{match_id}/view").json()
            if any(a["action"].get("space_id") == "boneyard" for a in view["actions"]):
                return match_id, seat
            web.play_randomly(created, 1, seed=len(live.match.history))
    raise AssertionError("no draw from the boneyard came up in 10 dominoes deals")


@pytest.mark.parametrize("game", list(SEATS))
def test_screenshot_of_every_sample_game(browser: Any, web: WebTable, game: str) -> None:
    created = web.create(game)
    # Enough moves to show each game in play: spades' bids and half a trick, Risk's placing.
    moves = {"tic_tac_toe": 3, "hearts": 80, "spades": 10, "holdem": 5, "risk": 30}.get(game, 8)
    web.play_randomly(created, moves, seed=7)
    active = web.registry._matches[created["match_id"]].match.active_player_ids
    seat = next((s for s in created["seats"] if s["player_id"] in active), created["seats"][0])
    page = _page(browser, web.url, created["match_id"], seat["token"])  # the seat to play: offers show
    page.wait_for_timeout(300)
    assert page.locator(".piece, .badge").count() > 0  # Risk's armies are badges, not pieces
    assert page.errors == []
    # What each game's display hints draw (docs/abi.md section 19).
    cells = {"tic_tac_toe": 9, "reversi": 64, "checkers": 32, "backgammon": 28, "risk": 42}
    if game in cells:
        assert page.locator(".board .cell").count() == cells[game]
    facts = page.eval_on_selector_all(".table-facts .fact-label", "nodes => nodes.map(n => n.textContent)")
    if game == "backgammon":
        assert page.locator(".board .piece.shape-disc").count() == 30, "fifteen checkers a side"
        assert page.locator(".board .cell.layout-column.shape-triangle-down").count() == 12
        assert "Dice" in facts and "⚀" <= page.locator(".fact-dice .fact-value").first.inner_text()[0] <= "⚅"
        # Each side reads the points in its own numbers, as the game's labels and log say them.
        own = "19" if seat["player_id"] == created["seats"][0]["player_id"] else "6"
        assert _cell(page, "point-19").locator(".cell-label").inner_text() == own
    if game == "risk":
        assert page.locator(".board .cell .badge").count() == 42, "every territory shows its armies"
        assert page.locator(".board .cell.held").count() == 42, "and its holder's colour"
        assert {"North America", "Australia"} <= set(facts)
    if game == "spades":
        captions = page.eval_on_selector_all(
            ".space[data-space-id='trick'] .caption", "ns => ns.map(n => n.textContent)"
        )
        assert captions and set(captions) <= {"p1", "p2", "p3", "p4"}, "who played each card of the trick"
        assert {"Round", "Seats 1+3"} <= set(facts)
    if game == "holdem":
        assert {"Pot", "Street"} <= set(facts)
        assert page.locator(".seat .seat-facts").count() == 3, "every seat shows its stack"
    page.screenshot(path=str(_shot(game)))
    page.close()


def test_the_admin_creates_a_match_in_the_lobby_and_a_seat_link_opens_its_table(
    browser: Any, web: WebTable
) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(f"{web.url}/#admin={web.admin_token}")
    assert "admin=" not in page.url, "the token leaves the address bar"
    page.wait_for_selector(".module[data-module-id] h3")
    names = page.eval_on_selector_all(".module h3", "nodes => nodes.map(n => n.innerText)")
    # The table page's form of a title: underscores read as hyphens, the first letter capitalised.
    assert "Tic-tac-toe" in names
    assert sorted(names) == sorted(game.replace("_", "-").capitalize() for game in SEATS)
    page.set_input_files("#upload-form input", str(ROOT / "sample_games/dist/reversi.wasm"))
    page.wait_for_selector("#notice:has-text('Uploaded 1 module')")
    card = page.locator(f'.module[data-module-id="{web.modules["tic_tac_toe"]}"]')
    card.locator('input[name="names"]').fill("ann, bob")
    card.locator('input[name="seats"]').fill("2")
    card.locator("button").click()
    page.wait_for_selector("#created .seat-links li[data-player-id='1'] a")
    page.screenshot(path=str(_shot("lobby")))
    href = page.locator("#created .seat-links li[data-player-id='1'] a").get_attribute("href")
    assert href.startswith("/table#match=")
    table = browser.new_page(viewport={"width": 1100, "height": 800})
    table.goto(web.url + href)
    table.wait_for_selector(".felt .board")
    assert table.locator("#turn").inner_text() == "Your turn"
    assert table.locator(".seat-bottom .seat-name").inner_text() == "ann"
    page.wait_for_selector("#match-rows tr")
    assert table.locator("#title").inner_text() == "Tic-tac-toe"
    assert page.locator("#match-rows tr td").first.inner_text() == "Tic-tac-toe", (
        "the lobby uses the same title"
    )
    table.close()
    page.close()


def test_the_lobby_gives_a_seat_to_a_server_bot_that_answers_at_the_table(browser: Any, web: WebTable) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(f"{web.url}/#admin={web.admin_token}")
    card = page.locator(f'.module[data-module-id="{web.modules["tic_tac_toe"]}"]')
    card.wait_for()
    card.locator('input[name="names"]').fill("ann")
    card.locator('input[name="bots"]').fill("3=random")
    card.locator("button").click()
    page.wait_for_selector("#notice:has-text('is not SEAT=BOT for one of seats 1 to 2')")
    card.locator('input[name="bots"]').fill("2=random, 2=first")
    card.locator("button").click()
    page.wait_for_selector("#notice:has-text('seat 2 is given a bot twice')")
    card.locator('input[name="bots"]').fill("2=mcts:300")
    card.locator("button").click()
    page.wait_for_selector("#created .seat-links li[data-player-id='2'] .bot-seat")
    assert page.locator("#notice").is_hidden(), "the earlier refusal is cleared"
    assert page.locator("#created .seat-links li[data-player-id='2'] a").count() == 0, "a bot seat has no link"
    href = page.locator("#created .seat-links li[data-player-id='1'] a").get_attribute("href")
    table = browser.new_page(viewport={"width": 1100, "height": 800})
    table.goto(web.url + href)
    table.wait_for_selector('body[data-version="0"][data-predicted="false"]')
    _cell(table, "b2").click()
    table.wait_for_selector('body[data-version="2"][data-predicted="false"]')  # ann's move, then the bot's
    assert table.locator(".board .piece").count() == 2
    assert table.locator("#turn").inner_text() == "Your turn"
    table.close()
    page.close()


def _hostile_display_module() -> bytes:
    """The echo guest (tests/wat) whose setup answers a table of markup and bad hints."""
    from fixtures_guest import WAT_DIR

    text = (WAT_DIR / "echo_guest.wat").read_text()
    start = text.index('(data (i32.const 1024) "')
    end = text.index("\n", start)
    # Facts, badges, captions and owner paths (section 19) aim at markup, styles, the prototype
    # chain and values of the wrong type; the page must draw text or nothing.
    facts = (
        '"table_facts":[{"path":["n"],"label":"<b>n</b>","color":"red;x:url(x)"},{"path":["constructor"]},'
        '{"path":["__proto__","x"]},{"path":["d"],"as":"dice"},{"path":["o"]},{"path":["w"],"as":"player"},'
        '{"path":["z"],"omit":[0]}],'
    )
    hinted_space = (
        '{"label":"<i>l</i>","color":"url(javascript:alert(5))","badge":{"path":["a"]},'
        '"owner_path":["o"],"caption":{"path":["by"]}}'
    )
    state = (
        '{"active_player_ids":[1],"players":[],"spaces":[{"space_id":"<img src=x onerror=alert(1)>",'
        '"kind":"<script>alert(2)</script>","public_state":{"a":"<img src=y>","o":"<b>1</b>"},'
        '"pieces":[{"public_kind":"<b>k</b>","public_state":{"by":"<i>c</i>"}}]}],'
        '"meta_data":{"n":"<script>8</script>","d":[1,9],"o":{"a":1},"w":99,"z":0,'
        '"display":{' + facts + '"title":"<script>alert(3)</script>","kinds":{"<b>k</b>":'
        '{"glyph":"<svg onload=alert(4)>","color":"red;background:url(x)"}},'
        '"spaces":{"<img src=x onerror=alert(1)>":' + hinted_space + "}}},"
        '"log":[{"text":"<script>alert(6)</script>"}]}'
    )
    # Seat 1 is offered a click (a game offering nobody anything is refused as match/stuck).
    answer = (
        '{"state":' + state + ',"patches":[],"rng_used":false,"score_labels":["Points"],"scores":{},'
        '"game_over":false,"actions":{"1":[{"action":{"type":"space_click","space_id":'
        '"<img src=x onerror=alert(1)>"},"intent":"choice","label":"go"}]},"echo":'
    )
    # Over the echo guest's 1 KiB per op: this setup answer lives at 16 KiB instead.
    segment = '(data (i32.const 16384) "' + answer.replace('"', '\\"') + '\\00")'
    multiply = "(local.set $prefix (i32.mul (local.get $op) (i32.const 1024)))"
    assert multiply in text, "echo_guest.wat changed how it finds an op's answer"
    moved = "(local.set $prefix (select (i32.const 16384) (i32.mul (local.get $op) (i32.const 1024)) (i32.eq (local.get $op) (i32.const 1))))"
    import wasmtime

    return bytes(wasmtime.wat2wasm((text[:start] + segment + text[end:]).replace(multiply, moved)))


def test_a_modules_text_and_hints_never_become_markup_or_styles(browser: Any, web: WebTable) -> None:
    from tablehost.api.auth import ADMIN

    stored = web.registry.upload_module(ADMIN, _hostile_display_module(), "hostile")
    created = web.registry.create_match(ADMIN, stored.sha256, [("ann", ""), ("bob", "")])
    token = created.seats[0][1]
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{web.url}/table#match={created.match_id}&token={token}")
    page.wait_for_selector(".felt .piece")
    page.wait_for_timeout(300)
    assert dialogs == []
    assert page.locator("img, svg, b, i").count() == 0
    assert page.locator("script").count() == 1, "only the page's own module script"
    assert page.locator(".space-label").text_content() == "<i>l</i>"
    assert page.locator(".piece .glyph").inner_text() == "<svg onl"  # glyphs are 8 characters at most
    assert page.locator("#log li").inner_text() == "<script>alert(6)</script>"
    assert page.locator("#title").inner_text() == "<script>alert(3)</script>"
    assert page.locator(".piece").evaluate("n => n.style.getPropertyValue('--piece-color')") == ""
    assert page.locator(".space").first.evaluate("n => n.style.getPropertyValue('--space-color')") == ""
    # The new hints: text as text, a bad colour ignored, and nothing for the prototype chain,
    # dice outside 1..6, an object, a player who is not seated, an omitted value, or an owner
    # that is not a player id.
    labels = page.eval_on_selector_all(".fact-label", "nodes => nodes.map(n => n.textContent)")
    assert labels == ["<b>n</b>"]
    assert page.locator(".fact-value").inner_text() == "<script>8</script>"
    assert page.locator(".fact").evaluate("n => n.style.getPropertyValue('--fact-color')") == ""
    assert page.locator(".badge").inner_text() == "<img src=y>"
    assert page.locator(".space.held").count() == 0
    assert page.locator(".piece .caption").inner_text() == "<i>c</i>"
    assert dialogs == []
    page.close()


def test_choice_cancel_and_undo_in_checkers(browser: Any, web: WebTable) -> None:
    """Selecting a man is a choice the game lets the player take back: the page shows the
    destinations, a cancel button, and the platform's undo."""
    created = web.create("checkers")
    page = _page(browser, web.url, created["match_id"], created["seats"][0]["token"])
    assert page.locator("#undo").is_hidden()
    man = page.locator('.space[data-space-id="c3"] .piece')
    assert man.get_attribute("data-intent") == "choice"
    man.click()
    page.wait_for_selector('body[data-version="1"]')
    page.wait_for_selector("#undo:visible")
    assert page.locator(".action.intent-cancel").count() == 1
    destinations = page.eval_on_selector_all(".cell.offered", "nodes => nodes.map(n => n.dataset.spaceId)")
    assert sorted(destinations) == ["b4", "d4"]
    page.locator("#undo").click()
    page.wait_for_selector('body[data-version="2"]')
    assert page.locator(".cell.offered").count() == 0
    assert page.locator("#undo").is_hidden()
    assert man.get_attribute("data-intent") == "choice"
    page.close()


def test_a_waiting_match_lists_its_seated_names_and_open_seats(browser: Any, web: WebTable) -> None:
    from tablehost.api.auth import ADMIN

    created = web.registry.create_match(
        ADMIN, web.modules["hearts"], [("ann", "", False)] + [("", "", True)] * 3
    )
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(f"{web.url}/#admin={web.admin_token}")
    row = page.locator(f'#match-rows tr[data-match-id="{created.match_id}"]')
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[1] == "ann, open (seat 2), open (seat 3), open (seat 4)"
    assert cells[3] == "waiting for 3 players"
    page.close()


def test_a_seats_table_opened_while_the_match_waits_draws_and_plays_once_it_starts(
    browser: Any, web: WebTable
) -> None:
    """A waiting match's view was `"state": {}`: a seat's table opened before the last join threw
    on `state.players` and drew nothing, and its rules (`/module`) were a 404."""
    from tablehost.api.auth import ADMIN

    created = web.registry.create_match(ADMIN, web.modules["tic_tac_toe"], [("ann", "", False), ("", "", True)])
    page = _page(browser, web.url, created.match_id, created.seats[0][1])  # waits for the table
    assert page.locator("#turn").inner_text() == "Waiting"
    with web.client(created.spectator_token) as invited:
        joined = invited.post(f"/api/matches/{created.match_id}/join", json={"username": "bob"})
        assert joined.status_code == 201, joined.text
    _cell(page, "b2").wait_for()  # the event stream went on to the started match
    _cell(page, "b2").click()
    page.wait_for_selector('body[data-version="1"][data-predicted="false"]')
    assert page.locator(".board .piece").count() == 1
    assert page.errors == []
    page.close()


RING_PX = 3
"""The offered ring around a piece (``box-shadow: 0 0 0 3px`` in style.css)."""
LIFT_PX = 6
"""How far a hovered card of a fanned hand rises (``translateY(-6px)`` in style.css)."""


def test_a_space_label_never_sits_under_its_cards(browser: Any, web: WebTable) -> None:
    created = web.create("hearts")  # the pass: every card of the seat's hand is offered
    page = _page(browser, web.url, created["match_id"], created["seats"][0]["token"])
    page.wait_for_selector(".seat-bottom .space .piece.offered")
    # For each labelled space: the gap between its label's bottom and its highest piece's top.
    gaps = page.eval_on_selector_all(
        ".felt .space",
        """spaces => spaces.flatMap(space => {
            const label = space.querySelector(':scope > .space-label');
            const pieces = [...space.querySelectorAll('.piece')];
            if (!label || !pieces.length) return [];
            const top = Math.min(...pieces.map(p => p.getBoundingClientRect().top));
            return [[space.dataset.spaceId, space.classList.contains('layout-fan'),
                     top - label.getBoundingClientRect().bottom]];
        })""",
    )
    assert any(fan for _, fan, _ in gaps), "the hand is drawn as a fan"
    for space_id, fan, gap in gaps:
        room = RING_PX + (LIFT_PX if fan else 0)
        assert gap >= room, f"{space_id}: the label's bottom is {gap}px above its cards, under {room}px"
    page.screenshot(path=str(_shot("hearts-hand")))
    page.close()


def _centre(page: Any, space_id: str) -> tuple[float, float]:
    box = _cell(page, space_id).bounding_box()
    assert box is not None, space_id
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_each_backgammon_seat_sees_the_board_from_its_own_side(browser: Any, web: WebTable) -> None:
    """Display hint ``seat_flips``: black sees the rows the other way up, so each side's home board
    (its points 1-6, where it bears off) is at its own bottom right; a spectator sees white's side."""
    created = web.create("backgammon")
    white, black = created["seats"]
    for who, token in (
        ("white", white["token"]),
        ("black", black["token"]),
        ("spectator", created["spectator_token"]),
    ):
        page = _page(browser, web.url, created["match_id"], token)
        page.wait_for_selector(".board .cell")
        home, away = ("point-24", "point-1") if who == "black" else ("point-1", "point-24")
        tray = "off-black" if who == "black" else "off-white"
        (home_x, home_y), (away_x, away_y) = _centre(page, home), _centre(page, away)
        left_x, _ = _centre(page, "point-12" if who != "black" else "point-13")
        tray_x, tray_y = _centre(page, tray)
        assert home_y > away_y and home_x > left_x, f"{who}: the home board is not at the bottom right"
        assert abs(home_x - away_x) < 1, f"{who}: the 1-points face each other across the board"
        assert tray_x > home_x and abs(tray_y - home_y) < 1, f"{who}: the own tray is beside the home board"
        # The checkers pile from the board's edge, and the points point inwards, whoever looks.
        bottom = _cell(page, home)
        assert "anchor-bottom" in (bottom.get_attribute("class") or "")
        assert "shape-triangle-up" in (bottom.get_attribute("class") or "")
        assert page.locator(".board .cell.shape-triangle-down").count() == 12
        if who != "spectator":
            assert bottom.locator(".cell-label").inner_text() == "1", f"{who} counts from its own home"
        flip = page.locator(".board").first.get_attribute("data-flip")
        assert flip == ("rows" if who == "black" else "none")
        assert page.errors == []
        page.screenshot(path=str(_shot(f"backgammon-{who}")))
        page.close()


def test_a_board_flip_the_page_cannot_read_is_ignored(browser: Any, web: WebTable) -> None:
    """The orientation rule itself (render.js ``boardFlip``/``orientCell``), in the page: an unknown
    word, a seat not named or a spectator draws the board as its hints say."""
    created = web.create("tic_tac_toe")
    page = _page(browser, web.url, created["match_id"], created["seats"][0]["token"])
    results = page.evaluate(
        """async () => {
            const { boardFlip, orientCell } = await import('/static/render.js');
            const cell = { row: 0, col: 1, anchor: 'top', shape: 'triangle-down', label: 'x' };
            const flips = { '1': 'rows', '2': 'both', '3': 'sideways', '4': 'cols' };
            return [1, 2, 3, 4, 5, null].map(viewer => {
                const flip = boardFlip(flips, viewer);
                return [viewer, flip, orientCell(cell, flip, 2, 13)];
            }).concat([[0, boardFlip('rows', 1), null], [0, boardFlip({ '1': 'rows' }, '1'), null]]);
        }"""
    )
    none = {"rows": False, "cols": False}
    as_drawn = {"row": 0, "col": 1, "anchor": "top", "shape": "triangle-down", "label": "x"}
    upside_down = {"row": 1, "col": 1, "anchor": "bottom", "shape": "triangle-up", "label": "x"}
    assert results == [
        [1, {"rows": True, "cols": False}, upside_down],
        [2, {"rows": True, "cols": True}, {**upside_down, "col": 11}],
        [3, none, as_drawn],
        [4, {"rows": False, "cols": True}, {**as_drawn, "col": 11}],
        [5, none, as_drawn],
        [None, none, as_drawn],
        [0, none, None],  # not an object
        [0, none, None],  # a viewer that is not a seat id
    ]
    page.close()
