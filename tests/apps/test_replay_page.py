"""jamb_env/replay/html.py and ``scripts/play.py --html``: one self-contained page that steps
through a game; checked as text and in headless Chromium (selenium with Debian's
/usr/bin/chromium and /usr/bin/chromedriver; ``make browser`` installs them)."""

from __future__ import annotations

import json
import re

import pytest

from agents.apps.cli import play
from jamb_env.replay.html import page_data, replay_html
from jamb_env.replay.records import GameRecord, RecordError, read_records
from tests.helpers import headless_chromium


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A greedy game of classic watched with --record and --html: (record, page path)."""
    folder = tmp_path_factory.mktemp("html")
    rec, out, log = folder / "g.jsonl", folder / "g.html", folder / "g.txt"
    code = play.main(
        [
            "--watch",
            "greedy",
            "--seed",
            "3",
            "--record",
            str(rec),
            "--html",
            str(out),
            "--delay",
            "0",
            "--log",
            str(log),
        ]
    )
    assert code == 0
    return read_records(rec)[0], out


def embedded_data(page: str) -> dict:
    blocks = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, flags=re.S)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def test_page_is_one_file_with_the_game_as_json(game):
    record, out = game
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing to fetch: no http(s) src/href, no external script, style sheet or font
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, flags=re.I)
    assert not re.search(r"<link\b|@import|url\(", page, flags=re.I)
    assert page.count("<script") == 2  # the data and the inline script
    data = embedded_data(page)
    steps = data["steps"]
    assert len(steps) == len(record.steps) + 1  # the start, then after every step
    assert steps[0]["score"] == 0 and steps[0]["action"] is None and len(steps[0]["dice"]) == 5
    assert [s["score"] for s in steps[1:]] == [s["score"] for s in record.steps]
    assert [s["action"] for s in steps[1:]] == [s["text"] for s in record.steps]
    assert steps[-1]["score"] == record.final_score == data["final_score"]
    for k, (step, item) in enumerate(zip(record.steps, steps[1:])):
        assert item["before"] == step["dice"] and item["dice"] == (
            step["dice_after"] if k < len(record.steps) - 1 else []
        )
        if step["text"].startswith("reroll"):
            assert item["kept"] == [c == "1" for c in step["text"].split("[")[1].rstrip("]").split()]
        else:
            assert item["kept"] is None and item["target"] is not None
    assert page == replay_html(record)  # the CLI writes exactly the page of the record


def test_names_cannot_break_out_of_the_page():
    record = GameRecord(ruleset="classic", seed=1, player="</script><script>alert(1)</script> @DATA@ <!--")
    page = replay_html(record)
    assert "alert(1)</script>" not in page and page.count("</script>") == 2
    assert embedded_data(page)["player"] == record.player  # the JSON still reads back exactly
    assert "&lt;/script&gt;" in page.split("</title>")[0]


def test_a_record_that_does_not_replay_raises_record_error():
    with pytest.raises(RecordError, match="step 0"):
        replay_html(GameRecord(ruleset="classic", seed=1, steps=[{"action": 96, "dice": [9, 9, 9, 9, 9]}]))
    with pytest.raises(RecordError, match="unknown ruleset"):
        replay_html(GameRecord(ruleset="no_such_rules", seed=1))
    with pytest.raises(RecordError, match="stop before the game's end"):
        page_data(GameRecord(ruleset="classic", seed=1, final_score=0))


# ---------------------------------------------------------------------------- in a browser
@pytest.mark.slow  # a browser test
def test_page_in_headless_chromium(game, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    record, out = game
    n = len(record.steps)
    driver = headless_chromium(tmp_path / "chromium-profile", window="1000,1100")
    try:
        driver.get(out.resolve().as_uri())
        text = lambda id_: driver.find_element(By.ID, id_).text.strip()  # noqa: E731
        click = lambda id_: driver.find_element(By.ID, id_).click()  # noqa: E731
        assert driver.execute_script("return document.readyState") == "complete"
        assert text("step") == f"step 0 / {n}" and text("score") == "0"
        assert len(driver.find_elements(By.CSS_SELECTOR, "#sheet td.written")) == 0
        assert len(driver.find_elements(By.CSS_SELECTOR, "#dice .die[data-face]")) == 5
        for k in range(1, 6):
            click("next")
            step = record.steps[k - 1]
            assert text("step") == f"step {k} / {n}"
            assert text("score") == str(step["score"])
            assert text("action") == step["text"]
            assert [
                int(d.get_attribute("data-face")) for d in driver.find_elements(By.CSS_SELECTOR, "#before .die")
            ] == step["dice"]
            if step["text"].startswith("reroll"):
                kept = [c == "1" for c in step["text"].split("[")[1].rstrip("]").split()]
                shown = [
                    "kept" in d.get_attribute("class").split()
                    for d in driver.find_elements(By.CSS_SELECTOR, "#before .die")
                ]
                assert shown == kept
        click("prev")
        assert text("step") == f"step 4 / {n}" and text("score") == str(record.steps[3]["score"])
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
        assert text("step") == f"step 5 / {n}"
        click("last")
        assert text("step") == f"step {n} / {n}"
        assert int(text("score")) == record.final_score
        assert "final score" in text("now")
        written = driver.find_elements(By.CSS_SELECTOR, "#sheet td.written")
        assert len(written) == 52 and not driver.find_element(By.ID, "next").is_enabled()
        driver.save_screenshot(str(tmp_path / "last.png"))
        click("first")
        assert text("step") == f"step 0 / {n}" and text("score") == "0"
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
        assert int(text("score")) == record.final_score
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


def test_a_game_with_jokers_makes_a_page():
    """Before (K08, K09): a Joly game that played a joker or the basket (an action naming no
    cell) ended ``jamb-play --html`` in "None is not in list" and the web's replay page in a 500."""
    from agents import load
    from agents.evaluation.solitaire import play_game
    from jamb_env import JambEnv

    record = play_game(load("greedy", ruleset="joly"), JambEnv("joly"), 3, record=True)["record"]
    data = page_data(record)
    jokers = [s for s in data["steps"] if s["kind"] not in (None, "reroll", "write", "announce")]
    assert jokers and all(s["target"] is None for s in jokers)  # the greedy game of seed 3 plays one
    assert "<script" in replay_html(record)
