"""Fifth hostile round: jamb-web's records folder (symbolic links, forged seats files),
its names (a lone surrogate), the ``best`` agent's agents/models/best.json (a path) and the
imitation stage's chunk files (forged arrays, a FIFO, a huge shape).

Each case failed (a file read or written outside its folder, a file loaded from a path
data named, a game that cannot be reloaded, a hang, a traceback or forged data trained
on) before its fix; now it is refused, skipped or a clear error.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from agents.apps.web.server import Lobby, create_app  # Flask is imported only when an app is made
from tests.helpers import finishes, needs_fifo, needs_module

needs_links = pytest.mark.skipif(
    not hasattr(os, "symlink") or os.name != "posix", reason="needs symbolic links (POSIX)"
)


# ---------------------------------------------------------------------- the best agent
@pytest.mark.parametrize(
    "spec",
    [
        "/tmp/evil.zip",
        "../evil.zip",
        "hybrid:/tmp/evil.zip",
        "search:/tmp/evil.npz",
        "rllib:/tmp/run",
        "agents/models/classic.zip",
    ],
)
def test_a_best_file_naming_a_path_is_refused_not_loaded(tmp_path, monkeypatch, spec):
    from agents import load, shipped

    best = tmp_path / "best.json"
    best.write_text(json.dumps({"classic": {"agent": spec}}))
    monkeypatch.setattr(shipped, "BEST_FILE", best)
    with pytest.raises(ValueError, match="not a built-in agent"):
        shipped.best_agent("classic")
    with pytest.raises(ValueError, match="not a built-in agent"):
        load("best", ruleset="classic")


@needs_fifo
def test_a_best_file_that_is_a_fifo_is_an_error_not_a_hang(tmp_path, monkeypatch):
    from agents import shipped

    best = tmp_path / "best.json"
    os.mkfifo(best)
    monkeypatch.setattr(shipped, "BEST_FILE", best)
    with pytest.raises(ValueError, match="unreadable"):
        finishes(lambda: shipped.best_agent("classic"))


# ---------------------------------------------------------------------- jamb-web
needs_flask = needs_module("flask", "Flask (the web extra)")


@needs_flask
def test_a_name_with_a_lone_surrogate_is_refused_so_every_saved_game_reloads(client, lobby):
    r = client.post("/api/games", data='{"seats": [{"human": "a\\ud800"}]}', content_type="application/json")
    assert r.status_code == 400 and "surrogate" in r.get_json()["error"]
    assert not lobby.records.exists() or not list(lobby.records.glob("*.jsonl"))


@needs_links
@needs_flask
def test_a_linked_record_is_no_game_and_its_target_is_neither_served_nor_written(client, lobby, tmp_path):
    gid = client.post("/api/games", json={"seed": 1}).get_json()["id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.jsonl"
    victim.write_bytes((lobby.records / f"{gid}.jsonl").read_bytes())
    before = victim.read_bytes()
    link = "0123456789abcdef"
    os.symlink(victim, lobby.records / f"{link}.jsonl")
    secret = outside / "secret.txt"
    secret.write_text("secret\n")
    os.symlink(secret, lobby.records / "1111111111111111.jsonl")
    assert client.get("/records/1111111111111111.jsonl").status_code == 404
    assert client.get(f"/records/{link}.jsonl").status_code == 404
    assert client.get(f"/api/games/{link}").status_code == 404
    r = client.post(f"/api/games/{link}/move", json={"move": "roll", "keep": []})
    assert r.status_code == 404
    assert victim.read_bytes() == before
    assert [g["id"] for g in client.get("/api/records").get_json()["games"]] == [gid]


@needs_links
@needs_flask
def test_a_linked_seats_file_is_neither_read_nor_written_through(tmp_path):
    lobby = Lobby(tmp_path / "games")
    client = create_app(lobby).test_client()
    gid = client.post("/api/games", json={"seed": 1}).get_json()["id"]
    meta = lobby.records / f"{gid}.json"
    meta.unlink()
    target = tmp_path / "outside.json"
    os.symlink(target, meta)  # dangling: the next save would create the file outside the folder
    fresh = create_app(Lobby(tmp_path / "games")).test_client()
    assert fresh.post(f"/api/games/{gid}/move", json={"move": "roll", "keep": []}).status_code == 200
    assert not target.exists()
    target.write_text(json.dumps({"seats": [{"kind": "human", "name": "read from outside"}]}))
    again = create_app(Lobby(tmp_path / "games")).test_client()
    assert again.get(f"/api/games/{gid}").get_json()["seats"][0]["name"] != "read from outside"


@needs_flask
def test_a_forged_seats_file_name_is_checked_like_a_requests(client, lobby):
    gid = client.post("/api/games", json={"seed": 1}).get_json()["id"]
    meta = lobby.records / f"{gid}.json"
    for name in ("a\x1b[2J\x00b", "x" * 500, "a\ud800"):
        meta.write_text(json.dumps({"seats": [{"kind": "human", "name": name}]}))
        fresh = create_app(Lobby(lobby.records)).test_client()
        r = fresh.get(f"/api/games/{gid}")
        assert r.status_code == 200 and r.get_json()["seats"][0]["name"] == "human", name


# ---------------------------------------------------------------------- imitation chunks
SEEDS = [5, 6]


def chunk(**over):
    c = {
        "obs": np.zeros((4, 3), np.float32),
        "mask": np.ones((4, 2), bool),
        "action": np.array([0, 1, 0, 1], np.int16),
        "reward": np.zeros(4, np.float32),
        "done": np.array([0, 1, 0, 1], bool),
        "seeds": np.asarray(["5", "6"]),
    }
    c.update(over)
    return c


def read(path):
    from agents.training.imitation import _read_chunk

    return finishes(lambda: _read_chunk(path, SEEDS, 3, 2))


def test_a_true_chunk_is_read(tmp_path):
    np.savez(tmp_path / "c.npz", **chunk())
    assert read(tmp_path / "c.npz") is not None


@pytest.mark.parametrize(
    "forged",
    [
        {"action": np.array([7, 1, -3, 1], np.int16)},  # beyond the action space
        {"mask": np.zeros((4, 2), bool)},  # an action the mask forbids (log-prob -inf)
        {"obs": np.full((4, 3), np.nan, np.float32)},
        {"reward": np.full(4, np.inf, np.float32)},
        {"obs": np.full((4, 3), "x")},  # strings of the right shape
        {"action": np.array([0.5, 1, 0, 1.5])},
        {"mask": np.ones((4, 2), np.int64) * 3},
    ],
)
def test_a_forged_chunk_is_played_again_not_trained_on(tmp_path, forged):
    np.savez(tmp_path / "c.npz", **chunk(**forged))
    assert read(tmp_path / "c.npz") is None


def test_a_chunk_holding_a_pickle_is_not_unpickled(tmp_path):
    np.savez(tmp_path / "c.npz", **chunk(obs=np.array([[object()] * 3] * 4, dtype=object)))
    assert read(tmp_path / "c.npz") is None


@needs_fifo
def test_a_chunk_that_is_a_fifo_is_played_again_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "c.npz")
    assert read(tmp_path / "c.npz") is None


def test_a_chunk_declaring_a_huge_array_is_played_again_not_a_memory_error(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 3)})
    with zipfile.ZipFile(tmp_path / "c.npz", "w") as z:
        for key, value in chunk().items():
            if key == "obs":
                z.writestr("obs.npy", header.getvalue() + b"\0" * 64)
            else:
                buf = io.BytesIO()
                np.save(buf, value)
                z.writestr(f"{key}.npy", buf.getvalue())
    assert read(tmp_path / "c.npz") is None


# --- the imitation record and the teacher -------------------------------------------

SETTINGS = {"games": 4, "teacher": "expectimax", "epochs": 1}


@pytest.mark.parametrize(
    "history",
    ["loss", [1, 2], [{"loss": "x"}], [{"loss": None}], [{"loss": float("nan")}], [{"loss": [1]}], [{"loss": True}]],
)
def test_an_imitation_record_with_a_forged_history_is_imitated_again(tmp_path, monkeypatch, history):
    """A resumed run reuses imitation_model.zip only with a record imitate() could have written
    (its history is logged as numbers); before the fix a forged history was a traceback."""
    from agents.training import imitation, weights

    (tmp_path / imitation.RECORD_FILE).write_text(json.dumps({"settings": SETTINGS, "history": history}))
    (tmp_path / imitation.MODEL_FILE).write_bytes(b"weights")
    monkeypatch.setattr(weights, "load_policy_weights", lambda model, path: None)
    monkeypatch.setattr(imitation, "imitate", lambda *args, **kw: "imitated again")
    assert imitation.start_from_teacher(None, {"imitation": SETTINGS}, tmp_path) == "imitated again"


def test_a_sound_imitation_record_is_reused(tmp_path, monkeypatch):
    from agents.training import imitation, weights

    record = {"settings": SETTINGS, "history": [{"loss": 1.5, "agreement": 0.9, "seconds": 2}]}
    (tmp_path / imitation.RECORD_FILE).write_text(json.dumps(record))
    (tmp_path / imitation.MODEL_FILE).write_bytes(b"weights")
    monkeypatch.setattr(weights, "load_policy_weights", lambda model, path: None)
    monkeypatch.setattr(imitation, "imitate", lambda *args, **kw: "imitated again")
    assert imitation.start_from_teacher(None, {"imitation": SETTINGS}, tmp_path) == record


@pytest.mark.parametrize(
    "teacher,ruleset,plays",
    [
        ("optimal", "classic", False),
        ("optimal", "classic_down", True),
        ("search", "jnn", False),
        ("search", "classic_down", True),
        ("columnwise", "joly", False),
        ("expectimax", "joly", True),
    ],
)
def test_a_teacher_that_cannot_play_the_ruleset_is_a_config_error(tmp_path, teacher, ruleset, plays):
    """Before the fix the teacher failed in the imitation stage, after the run folder was written."""
    from agents.training.config import ConfigError, load_config

    path = tmp_path / "c.yaml"
    path.write_text(f"ruleset: {ruleset}\ntotal_timesteps: 1000\nimitation:\n  games: 4\n  teacher: {teacher}\n")
    if plays:
        assert load_config(path)["imitation"]["teacher"] == teacher
    else:
        with pytest.raises(ConfigError, match=f"imitation.teacher.*{teacher} cannot teach {ruleset}"):
            load_config(path)
