"""Game records as input (jamb_env/replay/records.py, jamb-play --load / --replay / save, jamb-web's records
folder and seats files): a contract table of forged, damaged and odd records. A record never
loads a model by itself, the reader has limits (and a fuzz test), a file of several games is
never saved over, and every bad record is one RecordError line naming the file and line."""

from __future__ import annotations

import io
import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import agents
from agents.apps.cli import play
from agents.apps.web.server import Lobby, create_app
from jamb_env import JambEnv
from jamb_env.replay.records import GameRecord, MatchRecord, RecordError, read_any, read_matches, read_records, replay
from tests.helpers import booby_trapped_model, needs_module, run_main


def finished_record_lines(seed: int = 3) -> list[str]:
    from jamb_env.replay.records import GameRecord

    env = JambEnv("classic", illegal_action="raise")
    env.reset(seed=seed)
    rec = GameRecord("classic", seed)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, done, _, _ = rec.play(env, int(rng.choice(np.flatnonzero(env.action_masks()))))
    return list(rec.lines())


def match_header(players, **over) -> dict:
    return {
        "type": "match",
        "format": 1,
        "ruleset": "classic",
        "seed": 1,
        "env": "jamb_multiplayer_v0",
        "players": list(players),
        "num_players": len(players),
        "scoring": "separate",
        **over,
    }


def write_lines(path: Path, *items) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in items), encoding="utf-8")
    return path


def play_session(monkeypatch, capsys, argv, lines=()):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


def header(**over) -> dict:
    return {"type": "game", "format": 1, "ruleset": "classic", "seed": 1, "env": "Jamb-v1", "player": "human", **over}


KEYS = [
    "type",
    "format",
    "seed",
    "ruleset",
    "player",
    "players",
    "num_players",
    "scoring",
    "action",
    "turn",
    "roll",
    "dice",
    "dice_after",
    "reward",
    "score",
    "scores",
    "text",
    "steps",
    "env",
]


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["game", "match", "step", "end", "classic", "separate", "human", 1])
)


VALUES = st.recursive(
    SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), kids, max_size=5)
    ),
    max_leaves=10,
)


TEMPLATES = [
    header(),
    match_header(["human", "greedy"]),
    {"type": "step", "action": 44},
    {"type": "step", "player": 1, "action": 44, "dice": [1, 2, 3, 4, 5], "reward": 1.0, "scores": [0, 1]},
    {"type": "end", "score": 0, "steps": 1},
    {"type": "end", "scores": [0, 0], "steps": 1},
]


HEADS = st.sampled_from([header(), match_header(["human", "greedy"])]).map(lambda h: json.dumps(h).encode())


PLAIN_STEPS = st.sampled_from(TEMPLATES[2:4]).map(lambda d: json.dumps(d).encode())


LINES = st.one_of(
    st.builds(
        lambda base, over: json.dumps({**base, **over}).encode(),
        st.sampled_from(TEMPLATES),
        st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=2),
    ),
    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6).map(lambda d: json.dumps(d).encode()),
    VALUES.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=30),
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from(
        [b"NaN", b"[" * 3000, b'{"type": "game", "seed": 1e999}', b'"\\udc00"', b"9" * 6000, b"\xff\xfe", b"\r"]
    ),
)


@pytest.fixture(scope="module")
def fuzz_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def _insert(lines: list, line, at: int) -> list:
    return lines if line is None else lines[:at] + [line] + lines[at:]


#: junk, or valid steps with at most one odd line among them
BODIES = st.lists(LINES, max_size=8) | st.builds(
    _insert, st.lists(PLAIN_STEPS, max_size=6), st.none() | LINES, st.integers(0, 6)
)


def _two_games(path: Path) -> Path:
    text = ""
    for seed in (1, 2):
        rec = GameRecord(ruleset="classic", seed=seed, player="human")
        env = JambEnv(ruleset="classic")
        env.reset(seed=seed)
        rec.play(env, int(env.action_masks().nonzero()[0][0]))
        text += rec.text()
    path.write_text(text, encoding="utf-8")
    return path


def _main(monkeypatch, capsys, argv, lines=("quit",)):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


needs_flask = needs_module("flask", "Flask (the web extra)")


needs_links = pytest.mark.skipif(
    not hasattr(os, "symlink") or os.name != "posix", reason="needs symbolic links (POSIX)"
)


def _lobby_with_a_game(tmp_path):
    lobby = Lobby(records=tmp_path)
    client = create_app(lobby).test_client()
    made = client.post(
        "/api/games", data=json.dumps({"ruleset": "classic", "seed": 3}), content_type="application/json"
    )
    assert made.status_code == 201
    return lobby, client, made.get_json()["id"]


# ---------------------------------------------------------------- the reader's limits and checks
def test_records_reject_bad_types(tmp_path):
    bad = tmp_path / "r.jsonl"
    bad.write_text(json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": True}) + "\n")
    with pytest.raises(RecordError, match="non-negative integer seed"):
        read_records(bad)
    bad.write_text(
        json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1})
        + "\n"
        + json.dumps({"type": "step", "action": True})
        + "\n"
    )
    with pytest.raises(RecordError, match="integer action"):
        read_records(bad)
    for kind, fmt in itertools.product(("game", "match"), (True, 1.0, "1")):  # was read as format 1
        head = {"type": kind, "format": fmt, "ruleset": "classic", "seed": 1}
        if kind == "match":
            head.update(players=["a", "b"], scoring="separate")
        bad.write_text(json.dumps(head) + "\n")
        with pytest.raises(RecordError, match="record format"):
            read_any(bad)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"type": "step", "action": 44, "reward": NaN}', "not JSON: NaN"),
        ('{"type": "step", "action": 44, "reward": 1e400}', "not JSON: 1e400 is beyond"),
        ('{"type": "step", "action": 1' + "0" * 5000 + "}", "not JSON"),
        ('{"type": "step", "action": 44, "text": "\\ud800"}', "lone surrogate"),
        ('{"type": "step", "action": 44, "action": 45}', "not JSON: the key 'action' is given twice"),  # as web bodies
        ('{"type": "step", "action": 44, "reward": 10000000000000000000}', "reward must be a number"),
        ('{"type": "step", "action": 44, "dice": "12345"}', "dice must be a list of integers"),
        ('{"type": "step", "action": 44, "turn": true}', "turn must be an integer"),
        ('{"type": "step", "action": 44, "text": ["x"]}', "text must be a string"),
    ],
)
def test_strict_json_and_step_fields(tmp_path, line, message):
    rec = write_lines(tmp_path / "g.jsonl", header(), line)
    with pytest.raises(RecordError, match=message):
        read_records(rec)


def test_size_line_and_count_limits(tmp_path):
    from jamb_env.replay.records import RecordLimits

    step = {"type": "step", "action": 44}
    rec = write_lines(tmp_path / "g.jsonl", header(), step, step, header(), step)
    assert len(read_any(rec)) == 2
    with pytest.raises(RecordError, match=r"g\.jsonl: more than 100 bytes"):
        read_any(rec, limits=RecordLimits(max_file_bytes=100))
    with pytest.raises(RecordError, match=r"g\.jsonl:1: a line longer than 50 bytes"):
        read_any(rec, limits=RecordLimits(max_line_bytes=50))
    with pytest.raises(RecordError, match=r"g\.jsonl:4: more than 1 games"):
        read_any(rec, limits=RecordLimits(max_games=1))
    with pytest.raises(RecordError, match=r"g\.jsonl:3: more than 1 steps in the game of line 1"):
        read_any(rec, limits=RecordLimits(max_steps=1))
    long_line = write_lines(tmp_path / "long.jsonl", header(player="x" * 70_000))
    with pytest.raises(RecordError, match=r"long\.jsonl:1: a line longer than 65,536 bytes"):
        read_records(long_line)


def test_deep_nesting_is_a_record_error_not_a_recursion_error(monkeypatch, capsys, tmp_path):
    deep = "[" * 20_000 + "]" * 20_000  # under the line limit, far over the nesting one
    rec = write_lines(tmp_path / "deep.jsonl", header(), deep)
    with pytest.raises(RecordError, match=r"deep\.jsonl:2: JSON nested more than 16 levels deep"):
        read_any(rec)
    for option in ("--replay", "--load"):
        code, out, err = play_session(
            monkeypatch, capsys, [option, str(rec)] + (["--delay", "0"] if option == "--replay" else [])
        )
        assert code == 2 and "nested more than 16 levels" in err and "Traceback" not in err
    brackets_in_strings = write_lines(tmp_path / "s.jsonl", header(player="[" * 100 + "{" * 100))
    assert read_records(brackets_in_strings)[0].player == "[" * 100 + "{" * 100  # text, not nesting


def test_record_step_after_the_end(tmp_path, capsys):
    from jamb_env.replay.records import replay

    lines = finished_record_lines()
    bad = tmp_path / "after_end.jsonl"
    bad.write_text("\n".join(lines + [lines[-2]]) + "\n")  # a step after the end line
    with pytest.raises(RecordError, match=rf"after_end.jsonl:{len(lines) + 1}: a step line after the end of the game"):
        read_records(bad)
    code, err = run_main("play", ["--replay", str(bad)], capsys)
    assert code == 2 and f"after_end.jsonl:{len(lines) + 1}:" in err and "Traceback" not in err
    step = json.loads(lines[-2])
    step.pop("dice")  # no dice to compare: the step itself must be refused
    bad.write_text("\n".join(lines[:-1] + [json.dumps(step)]) + "\n")  # a step after the last cell, no end line
    with pytest.raises(
        RecordError, match=rf"after_end.jsonl:{len(lines)}: step {len(lines) - 2}: a step after the game's end"
    ):
        list(replay(read_records(bad)[0]))
    code, err = run_main("play", ["--load", str(bad)], capsys)
    assert code == 2 and "a step after the game's end" in err
    bad.write_text("\n".join(lines[:-1] + [json.dumps({"type": "end", "score": 5, "steps": 2})]) + "\n")
    with pytest.raises(RecordError, match="the end line says 2 steps"):
        read_records(bad)
    bad.write_text("\n".join(lines[:-1] + [json.dumps({"type": "end", "score": "lots"})]) + "\n")
    with pytest.raises(RecordError, match="integer score"):
        read_records(bad)
    with pytest.raises(RecordError, match="is a folder"):
        read_records(tmp_path)


def test_the_library_replay_checks_a_solitaire_end_line():
    """records.replay (the one replay every reader uses) refuses an end line its steps
    contradict: a forged score, or an end line after steps that stop mid-game."""
    env = JambEnv("classic_down")
    rec = GameRecord(ruleset="classic_down", seed=7)
    env.reset(seed=7)
    done = False
    while not done:
        _, _, done, _, _ = rec.play(env, int(env.action_masks().nonzero()[0][-1]))
    assert [s for _, s in replay(rec)][-1] is rec.steps[-1]  # the true record replays
    forged = GameRecord(ruleset=rec.ruleset, seed=rec.seed, steps=rec.steps, final_score=rec.final_score + 1)
    with pytest.raises(RecordError, match="the replay scored .*, the record's end line says"):
        list(replay(forged))
    cut = GameRecord(ruleset=rec.ruleset, seed=rec.seed, steps=rec.steps[:-1], final_score=rec.final_score)
    with pytest.raises(RecordError, match="stop before the game's end"):
        list(replay(cut))
    first_write = next(k for k, s in enumerate(rec.steps) if s["text"].startswith("write"))
    again = dict(rec.steps[first_write + 1], action=rec.steps[first_write]["action"])  # that cell once more
    illegal = GameRecord(ruleset=rec.ruleset, seed=rec.seed, steps=[*rec.steps[: first_write + 1], again])
    for env in (None, JambEnv("classic_down"), JambEnv("classic_down", illegal_action="terminate")):
        with pytest.raises(RecordError, match="step .*: illegal action .* is already written"):  # the env's policy
            list(replay(illegal, env))  # aside: before, "terminate" ended the env and the replay went on


@pytest.mark.parametrize("env_ruleset", ["classic", "joly"])
def test_replay_on_an_env_of_another_ruleset_says_so(recwarn, env_ruleset):
    """replay(record, env): the env given plays the record's ruleset, or RecordError naming both
    (before: each step on the other rules, an IllegalActionWarning, then 'the env rolled other dice
    (another env version?)' or an illegal action)."""
    env = JambEnv("classic_down")
    rec = GameRecord(ruleset="classic_down", seed=7)
    env.reset(seed=7)
    for _ in range(3):
        rec.play(env, int(env.action_masks().nonzero()[0][-1]))
    with pytest.raises(RecordError, match=f"a game of classic_down; the env given plays {env_ruleset}"):
        list(replay(rec, env=JambEnv(env_ruleset)))
    assert not recwarn.list
    assert len(list(replay(rec, env=JambEnv("classic_down")))) == 3


def test_a_record_naming_a_missing_ruleset_file_is_a_record_error(tmp_path):
    rec = write_lines(tmp_path / "g.jsonl", header(ruleset=str(tmp_path / "gone.yaml")), {"type": "step", "action": 44})
    with pytest.raises(RecordError, match="gone.yaml"):
        list(replay(read_records(rec)[0]))


@given(head=st.one_of(HEADS, HEADS, LINES), lines=BODIES, crlf=st.booleans())
@example(head=json.dumps(header()).encode(), lines=[b"[" * 20_000 + b"]" * 20_000], crlf=False)
@example(head=json.dumps(header()).encode(), lines=[b'{"type": "step", "action": 1, "reward": NaN}'], crlf=False)
def test_fuzz_the_record_reader(fuzz_folder, head, lines, crlf):
    """Arbitrary bytes and JSON-ish lines: the reader gives a RecordError or records that
    write back to the same records; nothing else."""
    path = fuzz_folder / "f.jsonl"
    path.write_bytes((b"\r\n" if crlf else b"\n").join([head, *lines]))
    try:
        records = read_any(path)
    except RecordError:
        event("a RecordError")
        return
    event("records read")
    assert records and all(isinstance(r, (GameRecord, MatchRecord)) for r in records)
    again = fuzz_folder / "again.jsonl"
    again.write_text("".join(r.text() for r in records), encoding="utf-8")
    assert read_any(again) == records


# ---------------------------------------------------------------- a record never loads a model by itself
def test_a_match_record_never_loads_the_model_it_names(monkeypatch, capsys, tmp_path):
    marker = tmp_path / "payload_ran"
    model = booby_trapped_model(tmp_path / "model.zip", marker)
    rec = write_lines(tmp_path / "m.jsonl", match_header(["human", str(model)]))
    code, out, err = play_session(
        monkeypatch, capsys, ["--load", str(rec), "--save", str(tmp_path / "out.jsonl")], ["quit"]
    )
    assert not marker.exists(), "the model named in the record was loaded (its pickled payload ran)"
    assert code == 2 and "Traceback" not in err
    assert "name a file, which a record cannot load by itself" in err
    assert f"--players human {model}" in err  # says how to load it on purpose
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("seat", ["hybrid:{}", "search:{}", "rllib:{}", "{}"])
def test_no_file_seat_of_a_record_reaches_the_loader(monkeypatch, capsys, tmp_path, seat):
    calls = []
    monkeypatch.setattr(agents, "load", lambda spec, **kw: calls.append(spec) or agents.registry.load("greedy"))
    name = seat.format(tmp_path / "thing.zip")
    rec = write_lines(tmp_path / "m.jsonl", match_header(["human", name]))
    code, out, err = play_session(monkeypatch, capsys, ["--load", str(rec)], ["quit"])
    assert calls == [] and code == 2 and "cannot load by itself" in err


def test_the_user_names_the_seats_again_to_load_a_file_seat(monkeypatch, capsys, tmp_path):
    calls = []
    greedy = agents.registry.load("greedy")
    monkeypatch.setattr(agents, "load", lambda spec, **kw: calls.append(spec) or greedy)
    model = str(tmp_path / "model.zip")
    rec = write_lines(tmp_path / "m.jsonl", match_header(["human", model]))
    out_file = tmp_path / "out.jsonl"
    code, out, err = play_session(
        monkeypatch, capsys, ["--load", str(rec), "--players", "human", model, "--save", str(out_file)], ["quit"]
    )
    assert code == 0, err
    assert calls == [model]  # asked for on the command line: loaded
    assert read_matches(out_file)[0].players == ["human", model]
    code, out, err = play_session(monkeypatch, capsys, ["--load", str(rec), "--players", "human", "greedy"], ["quit"])
    assert code == 2 and "are not the record's seats human" in err and calls == [model]


# ---------------------------------------------------------------- files of several games
def test_a_file_of_several_games_is_loaded_only_with_game(monkeypatch, capsys, tmp_path):
    games = _two_games(tmp_path / "games.jsonl")
    before = games.read_bytes()
    code, out, err = _main(monkeypatch, capsys, ["--load", str(games)], ["quit"])
    assert code == 2 and "holds 2 games" in err and "Traceback" not in err
    assert games.read_bytes() == before  # nothing overwritten


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_saving_over_a_file_of_several_games_is_refused(monkeypatch, capsys, tmp_path, spelling):
    games = _two_games(tmp_path / "games.jsonl")
    before = games.read_bytes()
    save = {
        "same": games,
        "dot": tmp_path / "." / "x" / ".." / "games.jsonl",
        "symlink": tmp_path / "link.jsonl",
        "hardlink": tmp_path / "hard.jsonl",
    }[spelling]
    (tmp_path / "x").mkdir()
    if spelling == "symlink":
        save.symlink_to(games)
    if spelling == "hardlink":
        os.link(games, save)
    code, out, err = _main(monkeypatch, capsys, ["--load", str(games), "--game", "1", "--save", str(save)])
    assert code == 2 and err.startswith("error: ") and "holds 2 games" in err and "--save OTHER" in err, err
    assert "Traceback" not in err and games.read_bytes() == before


def test_a_multi_game_file_resumes_into_another_file(monkeypatch, capsys, tmp_path):
    games = _two_games(tmp_path / "games.jsonl")
    before = games.read_bytes()
    code, out, err = _main(
        monkeypatch, capsys, ["--load", str(games), "--game", "1", "--save", str(tmp_path / "one.jsonl")]
    )
    assert code == 0, err
    assert games.read_bytes() == before and read_records(tmp_path / "one.jsonl")[0].seed == 2


# ---------------------------------------------------------------- jamb-web's records folder and seats files
@needs_flask
def test_a_name_with_a_lone_surrogate_is_refused_so_every_saved_game_reloads(client, lobby):
    r = client.post("/api/games", data='{"seats": [{"human": "a\\ud800"}]}', content_type="application/json")
    assert r.status_code == 400 and "surrogate" in r.get_json()["error"]
    assert not lobby.records.exists() or not list(lobby.records.glob("*.jsonl"))


@needs_links
@needs_flask
@pytest.mark.parametrize("link_kind", ["symbolic", "hard"])  # a hard link was served: a second name, no link bit
def test_a_linked_record_is_no_game_and_its_target_is_neither_served_nor_written(client, lobby, tmp_path, link_kind):
    make_link = os.symlink if link_kind == "symbolic" else os.link
    gid = client.post("/api/games", json={"seed": 1}).get_json()["id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.jsonl"
    victim.write_bytes((lobby.records / f"{gid}.jsonl").read_bytes())
    before = victim.read_bytes()
    link = "0123456789abcdef"
    make_link(victim, lobby.records / f"{link}.jsonl")
    secret = outside / "secret.txt"
    secret.write_text("secret\n")
    make_link(secret, lobby.records / "1111111111111111.jsonl")
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


@needs_module("flask", "Flask (the web extra)")
@pytest.mark.parametrize(
    "seats_file",
    [
        "[]",
        '"x"',
        "null",
        "\x00\x01",
        "[" * 100_000 + "]" * 100_000,
        '{"seats": [[1]]}',
        '{"seats": [{"kind": "human", "name": [1]}]}',
        '{"coach": {"a": 1}}',
        '{"coach": NaN}',
    ],
)
def test_a_forged_seats_file_of_any_shape_reloads_the_game(tmp_path, seats_file):
    lobby, client, id = _lobby_with_a_game(tmp_path)
    (tmp_path / f"{id}.json").write_text(seats_file)
    lobby._tables.clear()  # the server restarted: the table comes back from its files
    got = client.get(f"/api/games/{id}")
    assert got.status_code == 200, got.get_data(as_text=True)
    assert got.get_json()["seats"][0]["kind"] == "human"


@needs_module("flask", "Flask (the web extra)")
@pytest.mark.parametrize("ruleset", ["/etc/passwd", "../../x.yaml"])
def test_a_record_naming_a_ruleset_path_is_refused_by_the_server_unread(tmp_path, ruleset):
    lobby, client, id = _lobby_with_a_game(tmp_path)
    path = tmp_path / f"{id}.jsonl"
    head, *rest = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps(dict(json.loads(head), ruleset=ruleset)), *rest]) + "\n")
    lobby._tables.clear()
    got = client.get(f"/api/games/{id}")
    assert got.status_code == 400 and "not a preset of this server" in got.get_json()["error"]


@pytest.mark.parametrize(
    "record, says",
    [
        (GameRecord(ruleset="classic", seed=-1), "seed"),
        (GameRecord(ruleset="classic", seed=True), "seed"),
        (GameRecord(ruleset="classic", seed=1.5), "seed"),
        (GameRecord(ruleset="classic", seed=1, steps=[{"action": "x"}]), "action"),
        (GameRecord(ruleset="classic", seed=1, final_score=float("nan")), "NaN"),
    ],
)
def test_a_record_is_written_only_if_it_reads_back(tmp_path, record, says):
    """Before (J35): the writer wrote what its own reader then refused."""
    path = tmp_path / "g.jsonl"
    with pytest.raises(RecordError, match=says):
        record.write(path)
    assert not path.exists()
