"""jamb-web in a real browser: the server (agents/apps/web/server.py) on a free 127.0.0.1 port in a
thread, its page driven in headless Chromium through selenium (Debian's /usr/bin/chromium
and /usr/bin/chromedriver; ``make browser`` installs them). A person plays a whole classic
game by clicking dice, Roll and the sheet's cells as the coach's hints say, and watches an
agent's game to its end and in its replay page. Skipped, with the reason, without Flask,
selenium or Chromium.

With ``JAMB_WEB_SCREENSHOTS=DIR`` set, the two pictures of the README (docs/web_play.png:
playing with a hint shown, docs/web_watch.png: watching an agent) are written to DIR.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="jamb-web needs Flask: pip install -e '.[web]'")

from agents.apps.web.server import Lobby, make_server  # noqa: E402
from jamb_env.replay.records import read_any  # noqa: E402
from tests.helpers import headless_chromium  # noqa: E402

WAIT = 60  # seconds any one wait may take (a page update takes milliseconds)
#: moves made by clicking the hinted dice and cells; the rest with one click on Play hint each
BY_HAND = 16


@pytest.fixture
def server(tmp_path):
    """(base url, lobby) of a jamb-web server serving in a thread, stopped afterwards."""
    lobby = Lobby(tmp_path / "games")
    srv = make_server("127.0.0.1", 0, lobby)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/", lobby
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


@pytest.fixture
def driver(tmp_path):
    """A headless Chromium driven by selenium, or a skip that says what is missing."""
    d = headless_chromium(tmp_path / "chromium-profile")
    try:
        yield d
        errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors
    finally:
        d.quit()


def screenshot(driver, name: str) -> None:
    """The page as ``$JAMB_WEB_SCREENSHOTS/name`` (a 256-colour PNG, small enough for the
    docs), when that variable is set."""
    folder = os.environ.get("JAMB_WEB_SCREENSHOTS")
    if folder:
        import io

        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        picture = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
        picture.quantize(colors=256).save(Path(folder) / name, optimize=True)


#: what the page shows once a hint has come (None before): the hinted move, the reason, the
#: number of options, the dice kept and hinted, whether a hinted cell is marked
HINT_SHOWN = """
var box = document.getElementById("hintbox"), g = document.getElementById("game");
if (!box.getAttribute("data-move") || g.getAttribute("data-busy") !== "0") return null;
var cls = function (sel, name) { return Array.prototype.map.call(document.querySelectorAll(sel),
  function (e) { return e.classList.contains(name); }); };
return {move: JSON.parse(box.getAttribute("data-move")), reason: document.getElementById("reason").textContent,
        options: document.querySelectorAll("#options tr").length, kept: cls("#dice .die", "kept"),
        hinted: cls("#dice .die", "hinted"),
        cell_hinted: document.querySelectorAll("#sheets td.cell.hinted").length === 1};
"""


class Page:
    """The page's elements and waits (ids: agents/apps/web/page.py)."""

    def __init__(self, driver, url):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        self.d, self.By, self.wait = driver, By, WebDriverWait(driver, WAIT, poll_frequency=0.02)
        driver.get(url)
        self.wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")

    def find(self, css):
        return self.d.find_element(self.By.CSS_SELECTOR, css)

    def all(self, css):
        return self.d.find_elements(self.By.CSS_SELECTOR, css)

    def select(self, id_, value):
        from selenium.webdriver.support.ui import Select

        Select(self.find(f"#{id_}")).select_by_value(value)

    def game(self, name):
        return self.find("#game").get_attribute(name)

    def steps(self) -> int:
        return int(self.game("data-steps"))

    def until_script(self, script: str):
        """Wait until ``script`` (run in the page) returns something, and return it."""
        return self.wait.until(lambda d: d.execute_script(script))

    def idle(self):
        self.until_script('return document.getElementById("game").getAttribute("data-busy") === "0";')

    def after(self, steps: int) -> tuple[int, bool, str]:
        """Wait for the game to pass ``steps`` moves and the page to be idle; return the
        moves, whether the game is over, and the kept dice (``[0 1 ...]``) of the newest line of the log."""
        return self.until_script(f"""var g = document.getElementById("game"), n = Number(g.getAttribute("data-steps"));
            if (n <= {int(steps)} || g.getAttribute("data-busy") !== "0") return null;
            var first = document.querySelector("#log li"), last = first ? first.textContent : "";
            var m = /\\[[01 ]+\\]/.exec(last);
            return [n, g.getAttribute("data-over") === "1", m ? m[0] : ""];""")

    def new_game(self, mode: str, seed: int, **choices):
        self.select("mode", mode)
        self.find("#seed").clear()
        self.find("#seed").send_keys(str(seed))
        for id_, value in choices.items():
            self.select(id_.replace("_", "-"), value)
        self.find("#newgame").click()
        self.wait.until(lambda d: self.game("data-id"))
        self.idle()
        return self.game("data-id")

    def die(self, i: int):
        return self.find(f'#dice .die[data-i="{i}"]')

    def kept(self) -> list[bool]:
        return ["kept" in d.get_attribute("class").split() for d in self.all("#dice .die")]


@pytest.mark.slow  # about 20 s here: 156 moves, each a round trip of the browser, the server and selenium
def test_a_person_plays_a_whole_classic_game_with_the_coach(server, driver, tmp_path):
    url, lobby = server
    page = Page(driver, url)
    gid = page.new_game("play", 7, coach="greedy")
    assert page.find("#status").text.startswith("Your move: turn 1/52, roll 1/3")
    assert len(page.all("#dice .die")) == 5 and page.steps() == 0
    # clicks on dice keep them; Undo takes back the last click only
    page.die(0).click()
    page.die(1).click()
    assert page.kept() == [True, True, False, False, False]
    page.find("#undo").click()
    assert page.kept() == [True, False, False, False, False]
    page.find("#undo").click()
    assert page.kept() == [False] * 5 and page.steps() == 0
    # a closed cell takes no click
    page.find('#sheets td.cell.closed[data-col="up"][data-row="ones"]').click()
    page.idle()
    assert page.steps() == 0
    shown_hint, steps, over = False, 0, False
    while not over and steps < BY_HAND:  # the first turns: ask, then click the hinted dice, Roll and cell
        page.find("#hint").click()
        look = page.until_script(HINT_SHOWN)
        move = look["move"]
        assert look["reason"] and look["options"] > 0
        if not shown_hint:
            assert move["move"] == "roll" and page.find("#hinttext").text.startswith("keep ")
            assert "points" in page.find("#unit").text and "Writing now would record" in look["reason"]
            assert look["hinted"] == [i in move["keep"] for i in range(5)]
            screenshot(driver, "web_play.png")
            shown_hint = True
        if move["move"] == "roll":  # click the dice to keep as the coach says, then Roll
            for i, kept in enumerate(look["kept"]):
                if kept != (i in move["keep"]):
                    page.die(i).click()  # each click draws the dice again: find the die afresh
            page.find("#roll").click()
        elif move["move"] == "write":
            assert look["cell_hinted"]
            page.find(f'#sheets td.cell.open[data-col="{move["column"]}"][data-row="{move["row"]}"]').click()
        else:  # an announcement
            assert move["move"] == "announce"
            page.find(f'#sheets td.cell.announce[data-row="{move["row"]}"]').click()
        steps, over, kept = page.after(steps)
        if move["move"] == "roll":  # the roll took the dice clicked: its step kept those
            assert kept == "[" + " ".join("1" if i in move["keep"] else "0" for i in range(5)) + "]"
    assert len(page.all("#sheets td.cell.written")) >= 4
    while not over:  # the rest of the game: Play hint asks the coach and plays its move, one click a move
        page.find("#playhint").click()
        steps, over, _ = page.after(steps)
    result = page.find("#result").text
    (record,) = read_any(lobby.records / f"{gid}.jsonl")
    assert record.final_score is not None and result == f"Game over: {record.final_score} points."
    assert len(page.all("#sheets td.cell.written")) == 52 and page.find("#roll").get_attribute("disabled")
    # the finished game is in the saved list, and opens again from it
    item = f'#savedlist li[data-id="{gid}"]'
    page.wait.until(lambda d: page.all(item) and f"human {record.final_score} " in page.find(item).text)
    assert "unfinished" not in page.find(item).text


@pytest.mark.slow  # a browser test
def test_watching_an_agent_to_the_end_and_its_replay(server, driver):
    url, lobby = server
    page = Page(driver, url)
    gid = page.new_game("watch", 3, watch_agent="greedy")
    page.select("speed", "0")
    assert page.find("#controls").get_attribute("class") == "hidden"  # nothing for a person to click
    page.wait.until(lambda d: page.steps() >= 20)
    page.find("#pause").click()
    page.idle()
    paused_at = page.steps()
    assert page.find("#pause").text == "Resume" and page.steps() == paused_at
    screenshot(driver, "web_watch.png")
    page.find("#agent-step").click()
    page.after(paused_at)
    assert page.steps() == paused_at + 1
    page.find("#pause").click()
    page.wait.until(lambda d: page.game("data-over") == "1")
    (record,) = read_any(lobby.records / f"{gid}.jsonl")
    assert record.player == "greedy" and page.find("#result").text == f"Game over: {record.final_score} points."
    assert page.steps() == len(record.steps)
    # the replay page (jamb_env/replay/html.py) steps through the same game
    driver.get(page.find("#replay-link").get_attribute("href"))
    driver.find_element(page.By.ID, "last").click()
    assert int(driver.find_element(page.By.ID, "score").text) == record.final_score
    # a reload of the game's address opens it again from the server
    driver.get(f"{url}#g={gid}")
    page.wait.until(lambda d: page.game("data-id") == gid and page.game("data-over") == "1")


@pytest.mark.slow  # a browser test
def test_a_match_of_a_person_and_an_agent_on_a_shared_sheet(server, driver):
    url, lobby = server
    page = Page(driver, url)
    page.select("mode", "table")
    rows = page.all("#seats .seatrow")
    assert len(rows) == 2
    name = "Ana <b>&amp;</b>"
    page.find("#seats .seatrow .seat-name").clear()
    page.find("#seats .seatrow .seat-name").send_keys(name)
    from selenium.webdriver.support.ui import Select

    Select(page.all("#seats .seatrow .seat-kind")[1]).select_by_value("agent:greedy")
    page.select("scoring", "shared")
    page.find("#seed").send_keys("5")
    page.find("#newgame").click()
    page.wait.until(lambda d: page.game("data-id"))
    gid = page.game("data-id")
    page.select("speed", "0")
    chips = [c.text for c in page.all("#seatsbar .seatchip")]
    assert chips[0] == f"P1 {name}: 0" and chips[1].startswith("P2 greedy (agent)")  # the name as text, not markup
    assert len(page.all("#sheets table.sheet")) == 1 and "shared sheet" in page.find("#sheets .caption").text
    while True:  # the person plays the coach's moves; the agent moves by itself between their turns
        state = page.until_script(
            'var g = document.getElementById("game"); if (g.getAttribute("data-busy") !== "0") return null; '
            'return g.getAttribute("data-over") === "1" ? "over" : '
            'g.getAttribute("data-human") === "1" ? "person" : null;'
        )
        if state == "over":
            break
        steps = page.steps()
        page.find("#playhint").click()
        page.after(steps)
    result = page.find("#result").text
    assert result.startswith(f"Final scores: P1 {name} ") and ("Winner: " in result or "Tied: " in result)
    owners = {o.text for o in page.all("#sheets td.cell.written .owner")}
    assert owners == {"P1", "P2"}
    (record,) = read_any(lobby.records / f"{gid}.jsonl")
    assert record.players == ["human", "greedy"] and record.scoring == "shared"
    assert {s["player"] for s in record.steps} == {0, 1} and record.final_scores is not None
    assert len(page.all("#sheets td.cell.written")) == 52
