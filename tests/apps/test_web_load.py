"""jamb-web under load and against what a client or a record can do to it: no table is
dropped under a request (no acknowledged move lost), agents are shared across tables,
the records folder and the connections are bounded, a stalled or oversized request ends
(408 / 413, connection closed), and the Saved games list shows only what the replay says.

The servers here listen on 127.0.0.1 only, on a free port, with small caps."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("flask", reason="jamb-web needs Flask: pip install -e '.[web]'")

import agents  # noqa: E402
from agents.apps.web import server as web  # noqa: E402
from agents.apps.web.server import Lobby, create_app, make_server  # noqa: E402
from jamb_env.replay.records import GameRecord, read_any, replay  # noqa: E402


@pytest.fixture
def serve(tmp_path):
    """``serve(lobby, **options)`` -> the port of a jamb-web server in a thread (stopped
    afterwards)."""
    started = []

    def start(lobby, **options):
        srv = make_server("127.0.0.1", 0, lobby, **options)
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        started.append((srv, thread))
        return srv.server_port

    yield start
    for srv, thread in started:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def call(port: int, method: str, path: str, body=None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def next_move(s: dict) -> dict:
    """A legal move from state ``s`` (a re-roll while one is left, else the first open cell)."""
    if s["turn"]["roll"] < s["turn"]["max_rolls"] and s["can_roll"]:
        return {"move": "roll", "keep": []}
    for r, line in enumerate(s["sheets"][0]["cells"]):
        for c, (state, _) in enumerate(line):
            if state == "open":
                return {"move": "write", "column": s["columns"][c], "row": s["rows"][r]}
    return {"move": "roll", "keep": []}


def race(threads: list[threading.Thread], switch_interval: float, timeout: float) -> None:
    """Start ``threads`` and join each (``timeout`` s) with the interpreter switching threads every
    ``switch_interval`` seconds (more interleavings), then the usual interval again."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout)
    finally:
        sys.setswitchinterval(interval)


# ---------------------------------------------------------------------- tables under load
@pytest.mark.slow
def test_no_acknowledged_move_is_lost_with_one_table_in_memory(tmp_path, serve):
    """8 clients, two to each of 4 games, racing moves through a server that keeps one
    table in memory (every request evicts another's table): each game's record holds
    exactly the moves the server acknowledged. Before: a table evicted under a request
    was reloaded as a second copy, and the two saved over each other's moves."""
    lobby = Lobby(tmp_path / "games", max_tables=1)
    port = serve(lobby)
    ids = [call(port, "POST", "/api/games", {"seed": g})[1]["id"] for g in range(4)]
    acked = {gid: 0 for gid in ids}
    count, lock = [4], threading.Lock()

    def client(gid: str) -> None:
        for _ in range(30):
            status, s = call(port, "GET", f"/api/games/{gid}")
            assert status == 200, s
            if s["over"]:
                return
            status, after = call(port, "POST", f"/api/games/{gid}/move", next_move(s))
            assert status in (200, 400), after  # 400: the other client's move came first
            with lock:
                count[0] += 2
                acked[gid] += status == 200

    threads = [threading.Thread(target=client, args=(gid,)) for gid in ids for _ in range(2)]
    race(threads, 1e-4, 300)  # threads switch often: more interleavings of lookups, evictions and saves
    assert not any(t.is_alive() for t in threads) and count[0] <= 2000
    assert sum(acked.values()) > 100
    for gid in ids:
        (record,) = read_any(lobby.records / f"{gid}.jsonl")
        assert len(record.steps) == acked[gid], gid
        assert len(list(replay(record))) == acked[gid]
        assert call(port, "GET", f"/api/games/{gid}")[1]["steps"] == acked[gid]
    assert len(lobby._tables) <= 1  # the cap holds once no request holds a table


def test_a_held_table_is_never_dropped(tmp_path):
    lobby = Lobby(tmp_path / "games", max_tables=1)
    with lobby.create({"seed": 1}) as a:
        with lobby.create({"seed": 2}) as b:
            assert lobby._tables == {a.id: a, b.id: b}  # over the cap while both are held
        assert list(lobby._tables) == [a.id]  # b, idle, dropped; a still held
        with lobby.hold(b.id) as again:
            assert again is not b and again.record.steps == b.record.steps  # reloaded from its record
    assert len(lobby._tables) == 1


@pytest.mark.slow
def test_agents_are_loaded_once_per_agent_and_ruleset(tmp_path, monkeypatch):
    """Every table seats and asks the same copy of an agent (a model coach is tens of MB:
    before, each table loaded its own)."""
    loads = []
    real = agents.load
    monkeypatch.setattr(agents, "load", lambda spec, **kw: loads.append((spec, kw.get("ruleset"))) or real(spec, **kw))
    client = create_app(Lobby(tmp_path / "games")).test_client()
    for seed in range(3):
        s = client.post("/api/games", json={"seed": seed, "seats": [{"agent": "greedy"}]}).get_json()
        assert client.post(f"/api/games/{s['id']}/agent", json={}).status_code == 200
        s = client.post("/api/games", json={"seed": seed, "coach": "greedy"}).get_json()
        assert client.post(f"/api/games/{s['id']}/hint", json={}).status_code == 200
    assert sorted(loads) == [("expectimax", "classic"), ("greedy", "classic")]  # expectimax: the planner
    client.post("/api/games", json={"ruleset": "standard", "seats": [{"agent": "greedy"}]})
    assert loads[-1] == ("greedy", "standard")


def test_a_random_agent_stays_each_tables_own_and_replays_its_seed(tmp_path):
    client = create_app(Lobby(tmp_path / "games")).test_client()
    games = []
    for _ in range(2):
        s = client.post("/api/games", json={"seed": 5, "seats": [{"agent": "random"}]}).get_json()
        for _ in range(6):
            s = client.post(f"/api/games/{s['id']}/agent", json={}).get_json()
        games.append([m["text"] for m in s["last"]])
    assert games[0] == games[1]  # the same seed, the same game


# ---------------------------------------------------------------------- the records folder
def finished_record(tmp_path) -> str:
    """A finished game's record text (greedy on classic, seed 3)."""
    from jamb_env import JambEnv

    env, record = JambEnv("classic"), GameRecord("classic", 3, "greedy")
    env.reset(seed=3)
    greedy = agents.load("greedy", ruleset="classic")
    while record.final_score is None:
        record.play(env, greedy.act(env, env.observe(), env.action_masks()))
    return record.text()


def test_the_records_folder_keeps_at_most_max_records_games(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    done = finished_record(tmp_path)
    for i in range(3):  # the oldest three: finished
        (folder / f"{i:016x}.jsonl").write_text(done)
        (folder / f"{i:016x}.json").write_text("{}")
        time.sleep(0.01)
    lobby = Lobby(folder, max_records=4)
    client = create_app(lobby).test_client()
    ids = [client.post("/api/games", json={"seed": n}).get_json()["id"] for n in range(4)]
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 8 and f"{0:016x}.jsonl" not in names and f"{2:016x}.jsonl" not in names
    assert {f"{i}.jsonl" for i in ids} <= set(names) and f"{0:016x}.json" not in names  # seats files go too
    r = client.post("/api/games", json={"seed": 9})  # every game left is unfinished: nothing is deleted
    assert r.status_code == 503 and "unfinished" in r.get_json()["error"]
    assert sorted(p.name for p in folder.iterdir()) == names


def test_new_games_racing_for_the_last_place_never_overshoot_max_records(tmp_path):
    """8 threads create games at once in a folder with room for 3: exactly 3 are saved, the
    rest refused (503). Before: the room was made under a lock but the record saved after
    it, so every racer saw the same free places and the folder overshot its cap."""
    lobby = Lobby(tmp_path / "games", max_records=3)
    client = create_app(lobby).test_client()
    statuses, lock = [], threading.Lock()

    def create(seed: int) -> None:
        status = client.post("/api/games", json={"seed": seed}).status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    race(threads, 1e-5, 60)
    assert sorted(statuses) == [201] * 3 + [503] * 5
    assert len(list(lobby.records.glob("*.jsonl"))) == 3


def test_a_records_folder_replaced_by_a_file_is_a_503_not_a_traceback(tmp_path):
    lobby = Lobby(tmp_path / "games")
    client = create_app(lobby).test_client()
    assert client.post("/api/games", json={"seed": 1}).status_code == 201
    for p in lobby.records.iterdir():
        p.unlink()
    lobby.records.rmdir()
    lobby.records.write_text("not a folder")  # gone while the server runs, a file in its place
    r = client.post("/api/games", json={"seed": 2})
    assert r.status_code == 503 and "records folder cannot be used" in r.get_json()["error"]
    assert lobby.records.read_text() == "not a folder"


@pytest.mark.parametrize("where", ["seats file", "last record line"])
def test_json_nested_past_pythons_stack_in_the_records_folder_is_no_error(tmp_path, where):
    """A seats file, or the last line of a record, of 60,000 ``[`` (RecursionError in
    json.loads): before, reopening the game, or every new game once the folder was full,
    answered 500. Now the seats file reads as none and the record as unfinished."""
    lobby = Lobby(tmp_path / "games", max_records=2)
    client = create_app(lobby).test_client()
    gid = client.post("/api/games", json={"seed": 1}).get_json()["id"]
    if where == "seats file":
        (lobby.records / f"{gid}.json").write_text("[" * 60_000)
        lobby._tables.clear()  # out of memory: the next request reloads the game from its files
        r = client.get(f"/api/games/{gid}")
        assert r.status_code == 200 and r.get_json()["id"] == gid
    else:
        (lobby.records / f"{0:016x}.jsonl").write_text(finished_record(tmp_path) + "[" * 60_000 + "\n")
        r = client.post("/api/games", json={"seed": 2})
        assert r.status_code == 503 and "unfinished" in r.get_json()["error"]


# ---------------------------------------------------------------------- what the Saved games list shows
def forged(path, **change) -> None:
    """Rewrite record lines: ``change[k]`` a dict of fields for line ``k`` (0: the header, -1: the last)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for k, fields in change.items():
        lines[int(k)].update(fields)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_the_saved_games_list_shows_what_the_replay_says(client, lobby):
    """A hand-edited record's step scores, rewards and texts and its end score are not
    shown: the list and the reopened game come from the replay, and a record whose end
    line the replay contradicts is listed as broken. Before: a 75-point game listed at 125,
    a record that fails replay at 999."""
    s = client.post("/api/games", json={"seed": 3, "seats": [{"agent": "greedy"}]}).get_json()
    for _ in range(10):
        s = client.post(f"/api/games/{s['id']}/agent", json={}).get_json()
    true_score, texts = s["seats"][0]["score"], [m["text"] for m in s["last"]]
    path = lobby.records / f"{s['id']}.jsonl"
    forged(path, **{"-1": {"score": true_score + 50, "reward": 99.0, "text": "write free/jamb"}, "1": {"text": "x"}})
    (listed,) = client.get("/api/records").get_json()["games"]
    assert listed["scores"] == [true_score] and listed["steps"] == 10 and not listed["over"]
    lobby._tables.clear()  # reopened from the record: the engine's steps
    again = client.get(f"/api/games/{s['id']}").get_json()
    assert [m["text"] for m in again["last"]] == texts and again["last"][-1]["reward"] != 99.0
    assert again["seats"][0]["score"] == true_score
    page = client.get(f"/records/{s['id']}.html").get_data(as_text=True)
    assert '"reward":99.0' not in page and "free/jamb" not in page
    # a finished game whose end line says 999
    s = client.post("/api/games", json={"seed": 4, "seats": [{"agent": "greedy"}]}).get_json()
    while not s["over"]:
        s = client.post(f"/api/games/{s['id']}/agent", json={}).get_json()
    path = lobby.records / f"{s['id']}.jsonl"
    forged(path, **{"-1": {"score": 999}})
    broken = next(g for g in client.get("/api/records").get_json()["games"] if g["id"] == s["id"])
    assert "scores" not in broken and "999" in broken["error"] and "replay scored" in broken["error"]


# ---------------------------------------------------------------------- requests that stall or overflow
def raw(port: int, data: bytes, *, then: bytes = b"", wait: float = 20.0) -> tuple[bytes, float]:
    """Send ``data`` (and ``then`` after a pause), read until the server closes the
    connection; (what came back, seconds until it closed). A connection still open after
    ``wait`` seconds fails the test."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        if then:
            time.sleep(0.2)
            s.sendall(then)
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except TimeoutError:
            pytest.fail(f"the connection was still open after {wait} s; got {got[:200]!r}")
        except ConnectionResetError:
            pass
    return got, time.monotonic() - start


HEAD = b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def chunked(body: bytes, size: int = 4096) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def test_a_chunked_body_over_the_limit_is_413_and_closed(tmp_path, serve, capsys):
    """Before: the body was cut at 64 KiB, answered 400 "malformed JSON", and the connection
    left open until the client gave up; then each refused body printed a traceback in the
    server's console (the drained reader had no ``close``)."""
    port = serve(Lobby(tmp_path / "games"))
    body = b'{"seed": 1, "ruleset": "' + b"a" * 100_000 + b'"}'
    got, seconds = raw(port, HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(body))
    assert got.startswith(b"HTTP/1.1 413 ") and b"at most 65536 bytes" in got, got[:300]
    assert seconds < 10
    got, _ = raw(port, HEAD + b"Content-Length: 100002\r\n\r\n" + body[:100_002])
    assert got.startswith(b"HTTP/1.1 413 "), got[:300]
    small = b'{"seed": 1}'  # a chunked body within the limit is a body like any other
    got, _ = raw(port, HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(small, 4))
    assert got.startswith(b"HTTP/1.1 201 "), got[:300]
    assert len(list((tmp_path / "games").glob("*.jsonl"))) == 1  # one game made: by the last
    assert "Traceback" not in capsys.readouterr().err


def test_a_stalled_request_gets_408_and_frees_its_thread(tmp_path, serve, monkeypatch):
    """Before: a body that never came held its thread for ever."""
    monkeypatch.setattr(web, "READ_TIMEOUT", 1.0, raising=False)
    port = serve(Lobby(tmp_path / "games"))
    got, seconds = raw(port, HEAD + b"Content-Length: 100\r\n\r\n" + b'{"seed": ')
    assert got.startswith(b"HTTP/1.1 408 ") and b"did not arrive within 1 s" in got, got[:300]
    assert seconds < 8
    got, seconds = raw(port, b"POST /api/ga")  # a request line that never ends: closed
    assert seconds < 8
    assert call(port, "GET", "/api/config")[0] == 200


def test_a_request_trickled_byte_by_byte_is_cut_at_its_deadline(tmp_path, serve, monkeypatch):
    """Each read waits at most the read timeout, and a whole request at most twice it. Before:
    a byte every few seconds never tripped the per-read timeout, so a handful of such clients
    held every connection slot for as long as they liked."""
    monkeypatch.setattr(web, "READ_TIMEOUT", 1.0, raising=False)
    port = serve(Lobby(tmp_path / "games"))
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        with pytest.raises(OSError):  # the server ends the connection: a reset or a broken pipe
            for byte in HEAD + b"X-Pad: " + b"a" * 100:
                s.sendall(bytes([byte]))
                time.sleep(0.5)
                if time.monotonic() - start > 15:
                    pytest.fail("the trickled request was still read after 15 s")
                s.settimeout(0.01)
                with contextlib.suppress(TimeoutError):
                    if s.recv(4096) == b"":
                        raise ConnectionResetError("closed")
                s.settimeout(10)
    assert time.monotonic() - start < 6
    assert call(port, "GET", "/api/config")[0] == 200


def test_connections_beyond_the_cap_are_refused_at_once(tmp_path, serve, monkeypatch):
    monkeypatch.setattr(web, "READ_TIMEOUT", 5.0, raising=False)
    port = serve(Lobby(tmp_path / "games"), max_connections=2)
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
    try:
        time.sleep(0.3)
        got, seconds = raw(port, b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert got.startswith(b"HTTP/1.1 503 ") and b"busy" in got and seconds < 3, got[:200]
    finally:
        for s in stalled:
            s.close()
    deadline = time.monotonic() + 10
    while call(port, "GET", "/api/config")[0] != 200:  # the slots come back as the stalled ones end
        assert time.monotonic() < deadline
        time.sleep(0.2)
