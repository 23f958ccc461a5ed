"""The arena's page in headless Chromium against a real uvicorn server on a free port of 127.0.0.1: a game played
by clicks to its end, a watched game, a replay stepped both ways, the leaderboard of a real small tournament, and
with a database a named game on the Ladder tab and a game against a bot that plays over the API.

Debian's chromium drives it through Playwright's Python package (``executable_path``: no browser download);
without chromium these tests skip, saying so. With ``HPUNO_ARENA_SCREENSHOTS=DIR`` each test leaves a
screenshot of its page in DIR (docs/arena/ holds the documentation's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import httpx
import pytest
from arena_helpers import LOCAL, choose, play_through, served
from starlette.testclient import TestClient

from agents.arena import bot_client, create_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright's Python package (the dev extra)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (apt-get install chromium): the browser tests skip")
SCREENSHOTS = os.environ.get("HPUNO_ARENA_SCREENSHOTS")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("arena")
    return {"records": root / "records", "results": root / "results"}


@pytest.fixture(scope="module")
def server(folders):
    yield from served(create_app(records=str(folders["records"]), results=str(folders["results"]), allow_decks=True))  # seeded deals


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(20_000)
    yield page
    context.close()
    assert errors == []


def open_page(page, server, name: str) -> None:
    page.goto(f"{server}/#{name}")
    page.wait_for_selector("body[data-ready=true]")


def screenshot(page, name: str) -> None:
    if SCREENSHOTS:
        os.makedirs(SCREENSHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}.png"), full_page=True)


def seed_with_every_kind_of_decision(records) -> tuple[int, list[str]]:
    """A 3-player seed against the heuristic in which the test person names a colour, sends a Sorting Hat
    and challenges a Wild Draw Four (found through the API, so a change of the rules or agents finds another)."""
    with TestClient(create_app(records=str(records), allow_decks=True), base_url=LOCAL) as client:
        for seed in range(200):
            created = client.post("/api/games", json={"players": 3, "opponents": ["heuristic"], "seed": seed}).json()
            _, phases = play_through(client, created)
            if {"color", "target", "challenge"} <= set(phases) and len(phases) < 40:
                return seed, phases
    raise AssertionError("no seed in 0..199 gives a colour choice, a Sorting Hat target and a challenge")


def test_a_game_played_by_clicks_to_its_end(page, server, folders, tmp_path):
    seed, expected_phases = seed_with_every_kind_of_decision(tmp_path / "search")
    open_page(page, server, "play")
    page.select_option("#play-players", "3")
    page.fill("#play-opponents", "heuristic")
    page.fill("#play-seed", str(seed))
    page.click("#play-start")
    page.wait_for_selector("#play-table[data-renders]")
    phases, saw_hat = [], False
    while page.get_attribute("#play-table", "data-over") != "true":
        assert len(phases) < 200
        renders = int(page.get_attribute("#play-table", "data-renders"))
        phases.append(page.get_attribute("#play-table", "data-phase"))
        saw_hat |= page.locator("#play-hand .card.sorting_hat svg.hat").count() > 0
        if phases[-1] == "target" and phases.count("target") == 1:  # the Sorting Hat's target buttons
            screenshot(page, "play")
        offered = page.eval_on_selector_all("#play-table [data-action]", "nodes => nodes.map(n => n.dataset.action)")
        page.locator(f'#play-table [data-action="{choose(offered)}"]').first.click()
        page.wait_for_selector(f'#play-table:not([data-renders="{renders}"])')
    assert phases == expected_phases and saw_hat
    assert page.inner_text("#play-status").startswith("Game over")
    ended = page.eval_on_selector_all("#play-events li", "nodes => nodes.map(n => n.textContent)")
    history = page.eval_on_selector_all("#play-history li", "nodes => nodes.map(n => n.textContent)")
    assert ended and history[-len(ended):] == ended  # "How it ended" and "Game so far" both oldest first
    saved = list(folders["records"].iterdir())
    assert len(saved) == 1 and saved[0].name in page.inner_text("#play-status")
    screenshot(page, "play-over")


def test_a_watched_game_steps_and_runs_to_its_end(page, server):
    open_page(page, server, "watch")
    page.select_option("#watch-players", "2")
    page.fill("#watch-agents", "ppo_2p,heuristic")
    page.fill("#watch-seed", "4")
    page.click("#watch-start")
    page.wait_for_selector("#watch-table[data-renders]")
    assert page.locator("#watch-table .seat .mini-hand").count() == 2  # the spectator sees both hands
    for _ in range(4):
        renders = page.get_attribute("#watch-table", "data-renders")
        page.click("#watch-step")
        page.wait_for_selector(f'#watch-table:not([data-renders="{renders}"])')
        if "ppo_2p" in page.inner_text("#watch-move h3"):
            assert page.locator("#watch-move [data-probability]").count() >= 1
            screenshot(page, "watch")
    page.fill("#watch-speed", "50")
    page.dispatch_event("#watch-speed", "input")
    page.click("#watch-run")
    page.wait_for_selector('#watch-table[data-over="true"]', timeout=240_000)  # a whole game at 50 ms a move, on a loaded machine too
    assert "Game over" in page.inner_text("#watch-status")


def test_a_watched_game_keeps_playing_when_a_step_outlasts_the_delay(page, server):
    """Steps that take longer than the chosen delay (a loaded server) slow the game down; they never pause it."""
    open_page(page, server, "watch")
    page.select_option("#watch-players", "2")
    page.fill("#watch-agents", "heuristic,heuristic")
    page.click("#watch-start")
    page.wait_for_selector("#watch-table[data-renders]")

    def slow_step(route):
        time.sleep(0.3)  # six times the 50 ms delay
        route.continue_()

    page.route("**/api/games/*/step", slow_step)
    page.fill("#watch-speed", "50")
    page.dispatch_event("#watch-speed", "input")
    page.click("#watch-run")
    for _ in range(4):
        renders = page.get_attribute("#watch-table", "data-renders")
        page.wait_for_selector(f'#watch-table:not([data-renders="{renders}"])')
    assert page.inner_text("#watch-run") == "Pause"
    page.click("#watch-run")
    assert page.inner_text("#watch-run") == "Play"


def test_a_replay_steps_back_and_forth_and_changes_viewer(page, server, folders):
    with httpx.Client(base_url=server, timeout=60) as client:  # a record to replay, saved by the server (so listed at once)
        created = client.post("/api/games", json={"players": 2, "opponents": ["heuristic"], "seed": 3}).json()
        view, _ = play_through(client, created)
    open_page(page, server, "replay")
    page.wait_for_selector(f'#replay-files option[value="{view["record"]}"]', state="attached")
    page.select_option("#replay-files", view["record"])
    page.click("#replay-open")
    page.wait_for_selector('#replay-table[data-index="0"]')
    assert "the deal" in page.inner_text("#replay-title")
    for button, index in (("#replay-forward", 1), ("#replay-forward", 2), ("#replay-forward", 3), ("#replay-back", 2)):
        page.click(button)
        page.wait_for_selector(f'#replay-table[data-index="{index}"]')
    page.select_option("#replay-viewer", "1")
    page.wait_for_selector("text=player_1's hand")
    # a seat's view shows no other hand (only one a challenge showed it)
    assert page.locator("#replay-table .seat .mini-hand:not(.shown-hand)").count() == 0
    last = page.locator("#replay-jump option").count() - 1
    page.select_option("#replay-jump", str(last))
    page.wait_for_selector(f'#replay-table[data-index="{last}"]')
    assert "won the round" in page.inner_text("#replay-history")
    page.select_option("#replay-viewer", "spectator")
    page.wait_for_selector("#replay-table .seat .mini-hand")
    screenshot(page, "replay")
    page.set_input_files("#replay-upload", str(folders["records"] / view["record"]))
    page.wait_for_selector('#replay-table[data-index="0"]')


def test_the_leaderboard_of_a_real_small_tournament(page, server, folders):
    out = folders["results"] / "heuristic-vs-random-play"
    command = [sys.executable, "-m", "agents.evaluation.tournament", "heuristic", "random-play", "--players", "2",
               "--rounds", "50", "--seed", "0", "--out", str(out), "--plot"]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    open_page(page, server, "leaderboard")
    page.wait_for_selector("#ranking tr[data-agent=heuristic]")
    ranking = page.inner_text("#ranking")
    assert "random-play" in ranking and "±" in ranking and "[" in ranking
    assert "[" in page.inner_text("#pairwise")
    assert page.get_attribute("#ranking tr[data-agent=heuristic] a.card-link", "href") == "/api/agents/heuristic"
    images = page.locator(".plots img")
    assert images.count() == 2
    page.wait_for_function("[...document.querySelectorAll('.plots img')].every(i => i.complete && i.naturalWidth > 0)")
    screenshot(page, "leaderboard")


PHONE = {"width": 390, "height": 844}


def page_overflow(page) -> int:
    """How far the page is wider than the phone's screen (0: no sideways scrolling). A mobile browser widens
    its layout viewport (zooms out) to fit a page too wide: window.innerWidth must stay the screen's too."""
    return page.evaluate(f"Math.max(document.documentElement.scrollWidth, window.innerWidth) - {PHONE['width']}")


def test_the_play_page_fits_a_phone(browser, server):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(20_000)
    try:
        open_page(page, server, "play")
        assert page_overflow(page) <= 0
        page.select_option("#play-players", "4")
        page.fill("#play-opponents", "heuristic")
        page.fill("#play-seed", "11")
        page.click("#play-start")
        page.wait_for_selector("#play-table[data-renders]")
        decisions = 0
        while page.get_attribute("#play-table", "data-over") != "true" and decisions < 200:
            assert page_overflow(page) <= 0, f"the page scrolls sideways at decision {decisions}"
            assert page.locator("#play-hand .card").count() >= 1
            for box in (page.locator("#play-table [data-action]").nth(i).bounding_box()
                        for i in range(page.locator("#play-table [data-action]").count())):
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box  # every choice within the width
            if decisions == 2:
                screenshot(page, "play-phone")
            renders = page.get_attribute("#play-table", "data-renders")
            offered = page.eval_on_selector_all("#play-table [data-action]", "nodes => nodes.map(n => n.dataset.action)")
            page.locator(f'#play-table [data-action="{choose(offered)}"]').first.click()  # Playwright: visible, not covered
            page.wait_for_selector(f'#play-table:not([data-renders="{renders}"])')
            decisions += 1
        assert page.get_attribute("#play-table", "data-over") == "true" and page_overflow(page) <= 0
        assert errors == []
    finally:
        context.close()


# ------------------------------------------------------------ an arena as users start it: no seeds for a person,
# --results naming one tournament's folder, a records folder of more than a page


RESULTS = {
    "config": {"agents": ["heuristic", "random"], "num_players": 2, "rounds_per_table": 10, "unit": "round", "seed": 0},
    "ranking": [{"rank": rank, "agent": agent, "mu": mu, "sigma": 2.0, "ordinal": mu - 6, "win_rate": rate, "low": rate - 0.1,
                 "high": rate + 0.1, "fair_share": 0.5, "mean_points": 10.0, "seat_rounds": 10}
                for rank, agent, mu, rate in ((1, "heuristic", 30.0, 0.8), (2, "random", 20.0, 0.2))],
    "pairwise": None,
}


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """An arena as ``hpuno-arena`` starts it: no --allow-decks; --results is one tournament's folder; 150 records."""
    root = tmp_path_factory.mktemp("plain")
    (root / "tournament").mkdir()
    (root / "tournament" / "results.json").write_text(json.dumps(RESULTS))
    (root / "records").mkdir()
    for index in range(150):
        (root / "records" / f"old-{index:03d}.json").write_text("{}")
    app = create_app(records=str(root / "records"), results=str(root / "tournament"))
    for url in served(app):
        yield url, app, root


def test_the_leaderboard_of_one_tournaments_folder(page, plain):
    url, _, _ = plain
    open_page(page, url, "leaderboard")
    page.wait_for_selector("#ranking tr[data-agent=heuristic]")
    assert "(the results folder)" in page.inner_text("#results-sets") and "null" not in page.inner_text("#leaderboard")


def test_a_persons_seed_is_not_offered_and_older_records_are_listed_on_demand(page, plain):
    url, _, _ = plain
    open_page(page, url, "play")
    assert not page.is_visible("#play-seed")
    open_page(page, url, "replay")
    page.wait_for_selector("#replay-files option >> nth=99", state="attached")
    assert page.locator("#replay-files option").count() == 100
    page.click("#replay-more")
    page.wait_for_selector("#replay-files option >> nth=149", state="attached")
    assert page.locator("#replay-files option").count() == 150 and page.is_hidden("#replay-more")


def test_a_watch_says_where_its_record_went_and_shows_no_stray_null(page, plain):
    url, _, root = plain
    open_page(page, url, "watch")
    page.select_option("#watch-players", "2")
    page.fill("#watch-agents", "heuristic")
    page.fill("#watch-seed", "3")
    page.click("#watch-start")
    page.wait_for_selector("#watch-table[data-renders]")
    assert "null" not in page.inner_text("#watch-table")
    page.fill("#watch-speed", "50")
    page.dispatch_event("#watch-speed", "input")
    page.click("#watch-run")
    page.wait_for_selector('#watch-table[data-over="true"]', timeout=120_000)
    saved = sorted(path.name for path in (root / "records").glob("arena-*.json"))
    assert len(saved) == 1 and f"Saved as {saved[0]}" in page.inner_text("#watch-status")


def test_a_failure_shows_the_servers_message(page, plain):
    url, _, _ = plain
    open_page(page, url, "watch")
    page.route("**/api/watch", lambda route: route.fulfill(status=500, content_type="text/plain", body="Internal Server Error"))
    page.click("#watch-start")
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error") == "Internal Server Error (HTTP 500)"
    page.unroute("**/api/watch")
    page.fill("#watch-agents", "nobody-like-this")
    page.click("#watch-start")
    page.wait_for_selector("#error:has-text('unknown agent')")
    assert "(HTTP 400)" in page.inner_text("#error")


def test_a_slow_first_search_game_says_the_search_player_is_being_prepared(page, plain):
    url, app, _ = plain
    arena = app.state.arena
    release = threading.Event()

    def held(body, person, client, make=arena.add_game):  # the game is made once the test has seen the notice
        assert release.wait(60), "the test never released the new game"
        return make(body, person, client)

    arena.search_ready.clear()  # as while the command compiles the search player at start
    arena.add_game = held
    try:
        open_page(page, url, "watch")
        page.select_option("#watch-players", "2")
        page.fill("#watch-agents", "search,heuristic")
        page.click("#watch-start")
        page.wait_for_selector("#waiting:not([hidden])")
        assert "Preparing the search player" in page.inner_text("#waiting")
        release.set()
        page.wait_for_selector("#watch-table[data-renders]")
        assert page.is_hidden("#waiting")
    finally:
        release.set()
        del arena.add_game
        arena.search_ready.set()


def play_by_clicks(page, limit: int = 500) -> None:
    """Click the page's game to its end, waiting out the turns of others (a bot's too) between clicks."""
    page.wait_for_selector("#play-table[data-renders]")
    for _ in range(limit):
        page.wait_for_function("() => document.querySelector('#play-table').dataset.over === 'true'"
                               " || document.querySelectorAll('#play-table [data-action]').length > 0", timeout=60_000)
        if page.get_attribute("#play-table", "data-over") == "true":
            return
        renders = page.get_attribute("#play-table", "data-renders")
        offered = page.eval_on_selector_all("#play-table [data-action]", "nodes => nodes.map(n => n.dataset.action)")
        page.locator(f'#play-table [data-action="{choose(offered)}"]').first.click()
        page.wait_for_selector(f'#play-table:not([data-renders="{renders}"])')
    raise AssertionError(f"the game did not end in {limit} clicks")


@pytest.fixture(scope="module")
def ladder_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("ladder")
    yield from served(create_app(records=str(root / "records"), db=root / "arena.sqlite3", allow_decks=True))


def test_a_person_plays_under_a_name_and_finds_it_on_the_ladder_tab(browser, ladder_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(20_000)
    open_page(page, ladder_server, "play")
    assert page.is_visible("#play-name") and page.is_visible("#ladder-link")
    page.fill("#play-opponents", "heuristic")
    page.fill("#play-seed", "3")
    page.fill("#play-name", "heuristic")  # an agent's name is refused, on the page
    page.click("#play-start")
    page.wait_for_selector("#error:not([hidden])")
    assert "an agent's" in page.inner_text("#error")
    page.fill("#play-name", "alice")
    page.click("#play-start")
    play_by_clicks(page)
    page.click("#ladder-link")
    page.wait_for_selector("#ladder-table tr[data-name=alice]")
    rows = page.eval_on_selector_all("#ladder-table tr[data-name]", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    kinds = {row[1]: (row[2], row[4]) for row in rows}  # another test of this server's may add its own names
    assert kinds["alice"] == ("person", "1") and kinds["heuristic"] == ("agent", "1")
    screenshot(page, "ladder")
    context.close()
    assert errors == []


def test_a_names_rating_history_is_plotted_a_point_a_rated_game(browser, ladder_server):
    with httpx.Client(base_url=ladder_server, timeout=30) as client:
        for seed in (11, 12, 13):  # three rated games of carol's, played over the API
            created = client.post("/api/games", json={"players": 2, "opponents": ["random"], "seed": seed, "name": "carol"})
            assert created.status_code == 200, created.text
            assert play_through(client, created.json())[0]["over"]
        history = client.get("/api/ladder/carol").json()["history"]
    assert len(history) == 3
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(20_000)
    open_page(page, ladder_server, "ladder")
    page.click("#ladder-table button[data-history=carol]")
    page.wait_for_selector("#ladder-plot circle.mu")
    points = page.eval_on_selector_all("#ladder-plot circle.mu", "nodes => nodes.map(n => [n.dataset.game, Number(n.dataset.mu), "
                                       "Number(n.getAttribute('cx')), Number(n.getAttribute('cy'))])")
    assert [point[0] for point in points] == [entry["game"] for entry in history]
    assert [point[1] for point in points] == pytest.approx([entry["mu"] for entry in history])
    xs, ys = [point[2] for point in points], [point[3] for point in points]
    assert xs == sorted(xs) and len(set(xs)) == 3
    ranks = lambda values: sorted(range(3), key=values.__getitem__)  # noqa: E731
    assert ranks([-y for y in ys]) == ranks([entry["mu"] for entry in history])  # a higher mu is drawn higher up
    assert page.locator("#ladder-plot polygon.band").count() == 1 and "carol (person)" in page.inner_text("#ladder-history")
    page.click("#ladder-table button[data-history=random]")  # another name: its own history replaces carol's
    page.wait_for_selector("#ladder-history h3:has-text('random (agent)')")
    assert page.locator("#ladder-plot circle.mu").count() == 3
    screenshot(page, "ladder-history")
    context.close()
    assert errors == []


def test_an_arena_without_a_database_shows_no_ladder(page, server):
    open_page(page, server, "play")
    assert not page.is_visible("#play-name") and not page.is_visible("#ladder-link")


def test_a_person_plays_a_bot_on_the_page_while_the_bot_plays_over_the_api(browser, ladder_server):
    with httpx.Client(base_url=ladder_server, timeout=30) as client:
        secret = bot_client.register(client, "zeta")
        stop = threading.Event()
        moves = []
        runner = threading.Thread(target=lambda: moves.append(
            bot_client.play(client, secret, "heuristic", wait=0.2, until=stop.is_set)), daemon=True)
        runner.start()
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.set_default_timeout(20_000)
        try:
            open_page(page, ladder_server, "play")
            page.fill("#play-opponents", "bot:zeta")
            page.fill("#play-seed", "5")
            page.fill("#play-name", "bob")
            page.click("#play-start")
            play_by_clicks(page)
            assert page.inner_text("#play-status").startswith("Game over")
        finally:
            stop.set()
            runner.join(30)
            context.close()
        assert errors == [] and moves and moves[0] > 0
        rows = {row["name"]: row for row in client.get("/api/ladder").json()["players"]}
        assert rows["zeta"]["kind"] == "bot" and rows["zeta"]["games"] == 1 and rows["bob"]["games"] == 1
