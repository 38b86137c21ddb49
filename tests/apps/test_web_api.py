"""jamb-web's API (agents/apps/web/server.py) through Flask's test client: the API plays the
engine's game, refuses what is wrong without changing anything, keeps games apart, saves
every game as a record that jamb_env.replay.records and ``jamb-play --replay`` read, shows
names as data and every figure of the rules as the ruleset defines it. Under load and
against forged records: test_web_load.py; the page in a real browser: test_web_browser.py."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

pytest.importorskip("flask", reason="jamb-web needs Flask: pip install -e '.[web]'")

from agents.apps.cli import play as play_cli  # noqa: E402
from agents.apps.cli import web as web_cli  # noqa: E402
from agents.apps.web.server import Lobby, create_app, make_server  # noqa: E402
from agents.shipped import MODELS_DIR  # noqa: E402
from jamb_env import JambEnv  # noqa: E402
from jamb_env.render.sheet import sheet_view  # noqa: E402
from jamb_env.replay.records import GameRecord, MatchRecord, read_any  # noqa: E402
from tests.helpers import slow_after


def new_game(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def move(client, gid, body, status=200):
    r = client.post(f"/api/games/{gid}/move", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def state(client, gid):
    r = client.get(f"/api/games/{gid}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def play_out(client, gid, coach="greedy"):
    """Finish game ``gid``: people follow the coach's hint, agents move by themselves."""
    s = state(client, gid)
    while not s["over"]:
        if s["human_to_move"]:
            hint = client.post(f"/api/games/{gid}/hint", json={"coach": coach}).get_json()
            s = move(client, gid, hint["move"])
        else:
            r = client.post(f"/api/games/{gid}/agent", json={})
            assert r.status_code == 200, r.get_json()
            s = r.get_json()
    return s


def test_config_names_presets_and_agents(client):
    cfg = client.get("/api/config").get_json()
    assert "classic" in cfg["presets"] and "standard" in cfg["presets"]
    assert {"greedy", "expectimax", "ppo", "search"} <= set(cfg["agents"])
    assert cfg["scoring"] == ["separate", "shared"] and cfg["max_seats"] == 5


def test_a_new_game_is_the_engines_game(client):
    s = new_game(client, ruleset="classic", seed=7)
    env = JambEnv("classic")
    env.reset(seed=7)
    view = sheet_view(env.ruleset, env.game, env.legal_mask())
    assert s["turn"]["dice"] == view["dice"] and s["turn"]["roll"] == 1 and s["turn"]["max_rolls"] == 3
    # every empty cell's shown value and state are the engine's (sheet_view)
    assert s["sheets"][0]["cells"] == [[list(c) for c in line] for line in view["cells"]]
    assert s["columns"] == list(env.ruleset.columns) and s["bonus_at"] == 60  # classic: the bonus at 60
    assert s["human_to_move"] and s["can_roll"] and s["steps"] == 0 and not s["over"]


def test_roll_write_and_the_record_on_disk(client, lobby):
    s = new_game(client, ruleset="classic", seed=7)
    gid = s["id"]
    dice = s["turn"]["dice"]
    s2 = move(client, gid, {"move": "roll", "keep": [3, 4]})
    assert s2["steps"] == 1 and s2["turn"]["roll"] == 2
    assert s2["last"][-1]["text"].startswith("reroll keep [0 0 0 1 1]")
    assert sorted(s2["turn"]["dice"]) == s2["turn"]["dice"]
    r, c = s2["rows"].index("max"), s2["columns"].index("free")
    state_, value = s2["sheets"][0]["cells"][r][c]
    assert state_ == "open"
    s3 = move(client, gid, {"move": "write", "column": "free", "row": "max"})
    assert s3["sheets"][0]["cells"][r][c] == ["written", value]
    assert s3["turn"]["roll"] == 1 and s3["steps"] == 2
    # the same game as the env playing the same actions from the same seed
    env = JambEnv("classic")
    env.reset(seed=7)
    assert env.game.dice.tolist() == dice
    (record,) = read_any(lobby.records / f"{gid}.jsonl")
    assert isinstance(record, GameRecord) and record.seed == 7 and len(record.steps) == 2
    for step in record.steps:
        env.step(step["action"])
    assert env.score == s3["seats"][0]["score"] and env.game.values[c, r] == value
    assert env.game.dice.tolist() == s3["turn"]["dice"]


def test_illegal_moves_get_the_engines_reason_and_change_nothing(client, lobby):
    gid = new_game(client, ruleset="classic", seed=7)["id"]
    before = state(client, gid)
    path = lobby.records / f"{gid}.jsonl"
    on_disk = path.read_bytes()
    bad = [
        ({"move": "write", "column": "down", "row": "jamb"}, "not allowed"),  # down is filled from the top
        ({"move": "write", "column": "nowhere", "row": "ones"}, "column"),
        ({"move": "write", "column": "down"}, "row"),
        ({"move": "roll", "keep": [0, 1, 2, 3, 4]}, "keeping every die"),
        ({"move": "roll", "keep": [5]}, "positions"),
        ({"move": "roll", "keep": [0, 0]}, "position 0 is named twice"),  # before (J55): "position 1", 1-based
        ({"move": "roll", "keep": [1, 4, 4]}, "position 4 is named twice"),
        ({"move": "roll", "keep": "0 1"}, "list"),
        ({"move": "roll", "keep": [True]}, "list"),
        ({"move": "announce", "row": "sixes", "column": "down"}, "unknown field"),
        ({"move": "action", "action": 10**6}, "action"),
        ({"move": "action", "action": 1.5}, "action"),
        ({"move": "fly"}, "move"),
        ({}, "move"),
        ({"move": "roll", "extra": 1}, "unknown field"),
    ]
    for body, words in bad:
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == 400, (body, r.get_json())
        assert words in r.get_json()["error"], (body, r.get_json())
    # a POST that is not JSON (another site's form), an agent move when a person is to move; a hint that names no
    # coach is the server's default coach's (/api/config), and changes nothing
    assert client.post(f"/api/games/{gid}/agent").status_code == 415
    assert (
        client.post(
            f"/api/games/{gid}/hint", data="coach=greedy", content_type="application/x-www-form-urlencoded"
        ).status_code
        == 415
    )
    assert client.post(f"/api/games/{gid}/agent", json={}).status_code == 400
    hint = client.post(f"/api/games/{gid}/hint", json={})
    assert hint.status_code == 200 and hint.get_json()["coach"] == client.get("/api/config").get_json()["default_coach"]
    assert state(client, gid) == before and path.read_bytes() == on_disk


@pytest.mark.parametrize(
    "raw, content_type, status, words",
    [
        (b"{", "application/json", 400, "malformed JSON"),
        (b'{"move": "roll", "keep": [NaN]}', "application/json", 400, "malformed JSON"),
        (b"[1, 2]", "application/json", 400, "JSON object"),
        (b'{"move": "write", "move": "roll", "keep": []}', "application/json", 400, "twice"),  # was the last one
        (b"\xff\xfe", "application/json", 400, "UTF-8"),
        (b'{"move": "roll", "keep": ' + b"[" * 40 + b"]" * 40 + b"}", "application/json", 400, "levels deep"),
        (b'{"move": "roll", "keep": [], "x": 1e400}', "application/json", 400, "beyond a float"),  # as record lines
        (b'{"move": "roll"}', "text/plain", 415, "JSON"),
        (b" " * 70_000, "application/json", 413, "Too Large"),
    ],
)
def test_malformed_bodies_are_refused(client, raw, content_type, status, words):
    gid = new_game(client, seed=1)["id"]
    before = state(client, gid)
    r = client.post(f"/api/games/{gid}/move", data=raw, content_type=content_type)
    assert r.status_code == status and r.is_json and words in r.get_json()["error"], r.get_data()[:300]
    assert state(client, gid) == before


def test_new_game_fields_are_checked(client, lobby):
    bad = [
        {"ruleset": "../configs/rules/classic"},
        {"ruleset": 3},
        {"seed": -1},
        {"seed": 2**32},
        {"seed": True},
        {"seed": "7"},
        {"seats": []},
        {"seats": [{"human": "a"}] * 6},
        {"seats": [{"robot": "x"}]},
        {"seats": [{"agent": "/tmp/evil.zip"}]},
        {"seats": [{"agent": "rllib:/tmp/x"}]},
        {"coach": "agents/models/classic.zip"},
        {"seats": [{"human": ""}]},
        {"seats": [{"human": "x" * 41}]},
        {"seats": [{"human": "a\x1b[2Jb"}]},
        {"seats": [{"human": "Ana\u202egnp.exe"}]},  # a bidi override turns the text after it around
        {"seats": [{"human": "\u200b"}]},  # a zero-width space only: a name that shows nothing
        {"seats": [{"human": "\u3164\u3164"}]},  # Hangul fillers: letters that show as nothing
        {"seats": [{"human": "\u2800"}]},  # the blank braille pattern
        {"seats": [{"human": "\u0301\u0301"}]},  # combining marks alone
        {"seats": [{"human": "a"}, {"agent": "greedy"}], "scoring": "both"},
        {"scoring": "shared"},  # before (I21): one seat, the scoring dropped without a word
        {"seats": [{"agent": "greedy"}], "scoring": "separate"},
        {"colour": "red"},
        {
            "ruleset": "joly",
            "seats": [{"human": "a"}, {"human": "b"}],
            "scoring": "shared",
        },  # the engine refuses jokers on one sheet
        {"ruleset": "joly", "seats": [{"agent": "ppo"}]},  # the shipped models play other rulesets
        {"ruleset": "joly", "coach": "ppo"},  # was accepted, then every hint failed
    ]
    for body in bad:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and "error" in r.get_json(), (body, r.get_json())
    assert not list(lobby.records.glob("*.jsonl")) if lobby.records.exists() else True
    for given, shown in (("e\u0301" * 40, "\u00e9" * 40), ("\uff48\uff55\uff4d\uff41\uff4e", "human")):
        r = client.post("/api/games", json={"seats": [{"human": given}]})  # 80 code points; fullwidth 'human'
        assert r.status_code == 201 and r.get_json()["seats"][0]["name"] == shown, r.get_json()


def test_unknown_games_and_routes_are_404_json(client):
    for url in (
        "/api/games/0123456789abcdef",
        "/api/games/nope",
        "/api/games/..%2f..%2fetc",
        "/api/nothing",
        "/records/0123456789abcdef.jsonl",
        "/records/0123456789abcdef.html",
    ):
        r = client.get(url)
        assert r.status_code == 404 and r.is_json and r.get_json()["error"], url
    r = client.post("/api/games/0123456789abcdef/move", json={"move": "roll"})
    assert r.status_code == 404 and "no game" in r.get_json()["error"]
    assert client.delete("/api/games").status_code == 405


def test_two_games_do_not_mix(client):
    a = new_game(client, seed=11)
    b = new_game(client, seed=11)
    assert a["id"] != b["id"] and a["turn"]["dice"] == b["turn"]["dice"]
    move(client, a["id"], {"move": "roll", "keep": []})
    move(client, a["id"], {"move": "roll", "keep": [0]})
    assert state(client, b["id"]) == {**b, "steps": 0}
    assert state(client, a["id"])["steps"] == 2


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_the_record_is_never_saved_through_a_link_put_in_its_place(client, lobby, tmp_path, link):
    """Before: a link swapped in for a live table's ``<id>.jsonl`` was written through at the
    next move, replacing the file it led to (outside the records folder)."""
    gid = new_game(client, seed=5)["id"]
    path = lobby.records / f"{gid}.jsonl"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    path.unlink()
    path.symlink_to(outside) if link == "symbolic" else os.link(outside, path)
    s = move(client, gid, {"move": "roll", "keep": []})
    assert not s["saved"] and "no longer a file of the records folder" in s["save_error"]
    assert outside.read_text() == "keep me"


@pytest.mark.parametrize("table", ["in memory", "reloaded from its record"])
def test_a_record_another_program_wrote_is_never_saved_over(client, lobby, table):
    """Before (I37): ``jamb-play --load <records>/<id>.jsonl --save ...`` played a move and saved it,
    and the server's next move saved its own game over it: the terminal's move was lost."""
    gid = new_game(client, seed=5)["id"]
    move(client, gid, {"move": "roll", "keep": []})
    if table == "reloaded from its record":
        lobby._tables.clear()  # as after an eviction: the next request replays the record
        state(client, gid)
    path = lobby.records / f"{gid}.jsonl"
    theirs = path.read_text() + "\n"  # what the other program saved (here: one more line)
    path.write_text(theirs)
    s = move(client, gid, {"move": "roll", "keep": [0]})
    assert not s["saved"] and "was changed by another program" in s["save_error"]
    assert path.read_text() == theirs


def test_the_record_is_written_atomically(client, lobby, monkeypatch):
    gid = new_game(client, seed=5)["id"]
    path = lobby.records / f"{gid}.jsonl"
    move(client, gid, {"move": "roll", "keep": []})
    good = path.read_bytes()

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    s = move(client, gid, {"move": "roll", "keep": []})
    assert not s["saved"] and "No space left" in s["save_error"]
    assert path.read_bytes() == good  # the last good record is intact
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    monkeypatch.undo()
    s = move(client, gid, {"move": "write", "column": "free", "row": "max"})
    assert s["saved"] and len(read_any(path)[0].steps) == 3


@pytest.mark.slow  # a whole game through the API, replayed
def test_a_watched_game_replays_in_jamb_play_and_as_the_html_page(client, lobby, tmp_path):
    s = new_game(client, ruleset="classic", seed=3, seats=[{"agent": "greedy"}])
    assert not s["human_to_move"] and not s["can_roll"]
    assert client.post(f"/api/games/{s['id']}/move", json={"move": "roll"}).status_code == 400  # an agent's seat
    s = play_out(client, s["id"])
    path = lobby.records / f"{s['id']}.jsonl"
    (record,) = read_any(path)
    assert record.player == "greedy" and record.final_score == s["seats"][0]["score"] == s["result"]["scores"][0]
    log = tmp_path / "replay.txt"
    assert play_cli.main(["--replay", str(path), "--delay", "0", "--log", str(log)]) == 0
    assert f"final score {record.final_score}" in log.read_text()
    from jamb_env.replay.html import replay_html

    page = client.get(f"/records/{s['id']}.html")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.get_data(as_text=True) == replay_html(record)  # the HTML replay itself, not a second renderer
    raw = client.get(f"/records/{s['id']}.jsonl")
    assert raw.status_code == 200 and raw.get_data() == path.read_bytes()
    listed = client.get("/api/records").get_json()["games"]
    assert [g["id"] for g in listed] == [s["id"]] and listed[0]["over"] and listed[0]["scores"] == [record.final_score]


@pytest.mark.slow  # a whole two-player match; the watched game below keeps a whole game fast
def test_a_match_of_a_person_and_an_agent(client, lobby, tmp_path):
    s = new_game(client, ruleset="classic", seed=4, seats=[{"human": "Ana"}, {"agent": "greedy"}])
    assert s["kind"] == "match" and len(s["sheets"]) == 2 and s["seats"][0]["name"] == "Ana"
    gid = s["id"]
    if not s["human_to_move"]:
        assert client.post(f"/api/games/{gid}/move", json={"move": "roll"}).status_code == 400
    else:
        assert client.post(f"/api/games/{gid}/agent", json={}).status_code == 400
    s = play_out(client, gid)
    path = lobby.records / f"{gid}.jsonl"
    (record,) = read_any(path)
    assert isinstance(record, MatchRecord) and record.players == ["human", "greedy"]  # as jamb-play names a person
    assert record.final_scores == s["result"]["scores"]
    log = tmp_path / "match.txt"
    assert play_cli.main(["--replay", str(path), "--delay", "0", "--log", str(log)]) == 0
    assert "Final scores" in log.read_text()
    assert client.get(f"/records/{gid}.html").status_code == 400  # the HTML replay is of solitaire games


def test_a_shared_sheet_shows_owners_and_awards(client):
    s = new_game(client, ruleset="standard", seed=2, seats=[{"human": "a"}, {"human": "b"}], scoring="shared")
    assert len(s["sheets"]) == 1 and "owner" in s["sheets"][0] and "awards" in s["sheets"][0]
    first = s["to_move"]
    row = next(r for r, line in enumerate(s["sheets"][0]["cells"]) if line[s["columns"].index("free")][0] == "open")
    s = move(client, s["id"], {"move": "write", "column": "free", "row": s["rows"][row]})
    assert s["sheets"][0]["owner"][row][s["columns"].index("free")] == first and s["to_move"] == 1 - first


def test_saved_games_reload_in_a_new_server(tmp_path):
    folder = tmp_path / "games"
    c1 = create_app(Lobby(folder)).test_client()
    s = new_game(c1, ruleset="classic", seed=9, seats=[{"human": "Zoë"}, {"agent": "greedy"}], coach="expectimax")
    for _ in range(6):
        s = play_step(c1, s)
    c2 = create_app(Lobby(folder)).test_client()
    again = state(c2, s["id"])
    assert again == s
    assert play_step(c2, again)["steps"] == s["steps"] + 1


def play_step(client, s):
    gid = s["id"]
    if s["human_to_move"]:
        return move(client, gid, client.post(f"/api/games/{gid}/hint", json={"coach": "greedy"}).get_json()["move"])
    return client.post(f"/api/games/{gid}/agent", json={}).get_json()


def test_a_full_server_drops_the_oldest_table_and_reloads_it(tmp_path):
    lobby = Lobby(tmp_path / "games", max_tables=1)
    client = create_app(lobby).test_client()
    a = new_game(client, seed=1)
    move(client, a["id"], {"move": "roll", "keep": []})
    b = new_game(client, seed=2)
    assert len(lobby._tables) == 1
    assert state(client, a["id"])["steps"] == 1 and state(client, b["id"])["steps"] == 0


def test_a_record_naming_a_model_file_does_not_load_it(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    record = MatchRecord(ruleset="classic", seed=1, players=["human", "runs/x/final_model.zip"])
    record.write(folder / "0123456789abcdef.jsonl")
    client = create_app(Lobby(folder)).test_client()
    r = client.get("/api/games/0123456789abcdef")
    assert r.status_code == 400 and "does not load" in r.get_json()["error"]


def test_hints_give_the_move_the_reason_and_the_planners_values(client):
    s = new_game(client, ruleset="classic", seed=7, coach="expectimax")
    hint = client.post(f"/api/games/{s['id']}/hint", json={}).get_json()
    assert hint["coach"] == "expectimax" and hint["rated_by"] == "expectimax" and "points" in hint["unit"]
    assert hint["move"] == {"move": "roll", "keep": [3, 4]} and hint["text"] == "keep 6 6, re-roll 3 dice"
    assert "Writing now would record at most" in hint["reason"] and "best choice" in hint["reason"]
    values = [o["value"] for o in hint["options"]]
    assert values == sorted(values, reverse=True) and hint["options"][0]["chosen"] and len(values) == 4
    # a coach without values of its own is rated by the planner, and its move is always among the options shown
    ppo = client.post(f"/api/games/{s['id']}/hint", json={"coach": "ppo"}).get_json()
    assert ppo["coach"] != "expectimax" and ppo["rated_by"] == "expectimax"
    assert any(o["chosen"] for o in ppo["options"]) and ppo["reason"]
    # following the hint is a legal move; a write's reason gives its points
    s = move(client, s["id"], hint["move"])
    while s["turn"]["roll"] < 3:
        s = move(client, s["id"], {"move": "roll", "keep": []})
    hint = client.post(f"/api/games/{s['id']}/hint", json={"coach": "greedy"}).get_json()
    assert hint["move"]["move"] == "write" and re.search(r"records \d+ points now", hint["reason"])
    assert client.post(f"/api/games/{s['id']}/hint", json={"coach": "/etc/passwd"}).status_code == 400


def test_hostile_names_stay_data(client, lobby):
    name = "</script><img src=x onerror=alert(1)>&"
    s = new_game(client, seed=1, seats=[{"human": name}])
    r = client.get(f"/api/games/{s['id']}")
    assert r.mimetype == "application/json" and r.get_json()["seats"][0]["name"] == name
    (record,) = read_any(lobby.records / f"{s['id']}.jsonl")
    assert record.player == name
    page = client.get(f"/records/{s['id']}.html").get_data(as_text=True)
    assert "<img src=x" not in page and page.count("</script>") == 2
    index = client.get("/")
    assert index.mimetype == "text/html" and name not in index.get_data(as_text=True)
    # the page runs only its own files (no inline script), its replay page only its own inline one
    assert "script-src 'self'; style-src 'self';" in index.headers["Content-Security-Policy"]
    assert "script-src 'unsafe-inline'" in client.get(f"/records/{s['id']}.html").headers["Content-Security-Policy"]
    assert index.headers["X-Content-Type-Options"] == "nosniff"


def test_the_page_fetches_nothing_from_elsewhere_and_uses_text_content(client):
    page = client.get("/").get_data(as_text=True)
    files = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", page)
    assert sorted(f for f in files if f.startswith("/static/")) == [
        "/static/page.css",
        "/static/page.js",
        "/static/sheet.css",
        "/static/sheet.js",
    ]
    assert all(f.startswith(("/static/", "#")) for f in files), files  # nothing from elsewhere
    for name in ("page.js", "sheet.js", "page.css", "sheet.css"):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and r.mimetype == ("text/css" if name.endswith("css") else "text/javascript")
        text = r.get_data(as_text=True)
        assert not re.search(r"@import|url\(|\bfetch\(\s*['\"]https?:|https?://", text, flags=re.I), name
        assert "innerHTML" not in text and "document.write" not in text and "eval(" not in text, name
    for name in ("../server.py", "index.html.bak", "%2e%2e%2fserver.py"):
        assert client.get(f"/static/{name}").status_code == 404


def test_the_web_page_and_the_replay_page_share_one_sheet_drawing(client, lobby):
    """One copy of the sheet's JS and CSS: the files the web page loads are the ones the
    replay page inlines, and neither page holds a second sheetTable."""
    from jamb_env.replay.html import static_text

    sheet_js = client.get("/static/sheet.js").get_data(as_text=True)
    assert sheet_js == static_text("sheet.js") and "function sheetTable" in sheet_js
    assert client.get("/static/sheet.css").get_data(as_text=True) == static_text("sheet.css")
    assert "function sheetTable" not in client.get("/static/page.js").get_data(as_text=True)
    gid = new_game(client, seed=3, seats=[{"agent": "greedy"}])["id"]
    client.post(f"/api/games/{gid}/agent", json={})
    replay = client.get(f"/records/{gid}.html").get_data(as_text=True)
    assert replay.count("function sheetTable") == 1 and sheet_js in replay and static_text("sheet.css") in replay


@pytest.mark.parametrize("ruleset, at", [("classic", 60), ("six_dice", 61), ("six_dice_eight", 61)])
def test_the_bonus_figures_are_the_rulesets(client, ruleset, at):
    """The page's "bonus at N" and "upper/N" come from the state's ``bonus_at``: the kernels'
    bonus_floor (the threshold, one more where the bonus needs more than it: bonus_strict)."""
    from jamb_env import load_ruleset
    from jamb_env.rules import kernels as rk

    rules = load_ruleset(ruleset)
    assert rules.bonus_strict == (at == 61) and rules.bonus_threshold == 60
    s = new_game(client, ruleset=ruleset, seed=1)
    assert s["bonus_at"] == at == rk.bonus_floor(rules.arrays.P)
    page = client.get("/static/page.js").get_data(as_text=True)
    assert '"bonus at " + S.bonus_at' in page and 'p[0] + "/" + S.bonus_at' in page
    assert not re.search(r"\b60\b|bonus_threshold", page)


def test_binds_loopback_by_default_and_refuses_other_hosts(lobby):
    server = make_server(port=0, lobby=lobby)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()
    parser_default = web_cli.DEFAULT_HOST
    assert parser_default == "127.0.0.1"
    client = create_app(lobby).test_client()
    assert client.get("/api/config", headers={"Host": "evil.example"}).status_code == 400  # DNS rebinding
    assert client.get("/api/config", headers={"Host": "127.0.0.1:8000"}).status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "LOCALHOST",  # before: bound to 127.0.0.1 with no Host check (make_server compared spellings)
        "0:0:0:0:0:0:0:1",  # before: bound to ::1 with no Host check, and jamb-web printed no note either
        "::1",
    ],
)
def test_a_server_bound_to_loopback_however_spelt_refuses_other_hosts(lobby, host):
    """DNS rebinding: the Host check follows the address the socket is bound to, not how --host spells it."""
    try:
        server = make_server(host, 0, lobby)
    except OSError as exc:
        pytest.skip(f"cannot bind {host} here: {exc}")
    try:
        client = server.app.test_client()
        assert client.get("/api/config", headers={"Host": "evil.example"}).status_code == 400
        assert server.loopback  # what jamb-web's "not loopback" note reads
        bound, port = server.socket.getsockname()[:2]
        own = f"[{bound}]:{port}" if ":" in bound else f"{bound}:{port}"
        for name in (own, f"localhost:{port}"):  # before: on ::1 werkzeug refused every request, the page too
            assert client.get("/api/config", headers={"Host": name}).status_code == 200, name
    finally:
        server.server_close()


def test_cli_refuses_a_records_folder_another_server_saves_in(tmp_path, capsys, monkeypatch):
    """Two servers on one records folder each held a game in memory and saved over the other's moves."""
    from agents.training.run_lock import hold_run_dir

    served = []
    monkeypatch.setattr(web_cli, "make_server", lambda *a, **k: served.append(a))
    with hold_run_dir(tmp_path / "games"):  # the first server's hold (flock: per open file, so in-process too)
        rc = web_cli.main(["--port", "0", "--records", str(tmp_path / "games")])
    assert rc == 2 and not served  # before: it served
    assert "is saving games there; one server per records folder" in capsys.readouterr().err


def test_cli_refuses_bad_arguments(tmp_path, capsys):
    for argv in (
        ["--port", "70000"],
        ["--max-records", "0"],
        ["--agent", str(tmp_path / "none.zip")],
        ["--agent", "nobody"],
        ["--agent", str(tmp_path)],
        ["--agent", "/etc/passwd"],  # before (I19): offered on the page, every game with it a 400
        ["--agent", f"search:{tmp_path / 'notes.npz'}"],
        ["--agent", str(tmp_path / "run")],  # its final_model.zip is no model
        ["--agent", f"rllib:{tmp_path / 'no_checkpoint'}"],  # before (J86): offered, every use a 400
    ):
        (tmp_path / "notes.npz").write_text("my notes")
        (tmp_path / "run").mkdir(exist_ok=True)
        (tmp_path / "run" / "final_model.zip").write_bytes(b"")
        with pytest.raises(SystemExit) as exc:
            web_cli.main(argv)
        assert exc.value.code == 2, argv
    shutil.copyfile(MODELS_DIR / "classic.zip", tmp_path / "run" / "final_model.zip")
    assert web_cli.agent_spec(str(tmp_path / "run")) == str(tmp_path / "run" / "final_model.zip")


def test_jokers_are_moves_by_action_id(client):
    s = new_game(client, ruleset="joly", seed=7)
    assert s["turn"]["jokers"] and s["other_moves"]
    first = s["other_moves"][0]
    s = move(client, s["id"], {"move": "action", "action": first["action"]})
    assert s["steps"] == 1 and s["last"][-1]["text"] == first["text"]
    assert all(m["text"].startswith(("joker", "basket")) for m in s["other_moves"])


@pytest.mark.parametrize("signum, code", slow_after([(2, 130), (15, 143)]))  # a server subprocess each
def test_the_command_serves_until_a_signal(tmp_path, signum, code):
    """``python scripts/web.py --port 0``: it prints its loopback address, answers there, and
    Ctrl-C (SIGINT) or SIGTERM stops it with 128 + the signal and a message."""
    import signal
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, str(root / "scripts" / "web.py"), "--port", "0", "--records", str(tmp_path / "g")],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        address = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert address, line
        with urllib.request.urlopen(address.group(0) + "api/config", timeout=60) as answer:
            assert "classic" in json.loads(answer.read())["presets"]
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code and "stopped" in err and "every game is saved" in err


@pytest.mark.slow  # a subprocess importing the web stack
def test_the_server_imports_neither_rich_nor_the_terminal_game():
    """jamb-web sits on the session module (agents/apps/session.py), not on the terminal
    app: serving a game loads no rich."""
    import subprocess
    import sys

    code = (
        "import sys; from agents.apps.web.server import Lobby, create_app; "
        "c = create_app(Lobby(None)).test_client(); "
        "gid = c.post('/api/games', json={'seed': 1}).get_json()['id']; "
        "assert c.post(f'/api/games/{gid}/move', json={'move': 'roll', 'keep': []}).status_code == 200; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich' or m == 'agents.apps.terminal'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize(
    "bound",
    [{"max_records": 0}, {"max_records": -5}, {"max_records": 2.7}, {"max_records": "10"}, {"max_tables": 0}],
)
def test_the_lobby_bounds_are_positive_integers(tmp_path, bound):
    # before: int()ed and taken; max_records -5 deleted every finished game of the folder before each new one
    with pytest.raises(ValueError, match=next(iter(bound))):
        Lobby(tmp_path / "games", **bound)


def test_a_model_of_other_rules_is_refused_at_the_table(tmp_path):
    """Before (I49): a model trained on other rules of the same shapes sat at a classic table with
    the warning on the server's stderr only; the page said nothing."""
    from sb3_contrib import MaskablePPO

    from agents.model_files import RULESET_ATTRIBUTE

    model = MaskablePPO.load(MODELS_DIR / "classic.zip", device="cpu")
    setattr(model, RULESET_ATTRIBUTE, {"name": "elsewhere", "digest": "0" * 16})
    model.save(tmp_path / "other.zip")
    client = create_app(Lobby(tmp_path / "games", agents=[str(tmp_path / "other.zip")])).test_client()
    r = client.post("/api/games", json={"ruleset": "classic", "seats": [{"agent": str(tmp_path / "other.zip")}]})
    assert r.status_code == 400 and "trained on ruleset 'elsewhere'" in r.get_json()["error"], r.get_json()
