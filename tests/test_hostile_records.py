"""Hostile game records and ruleset files against jamb-play and the record reader: a record
never loads a model by itself, nothing from a file drives the terminal, the reader has
limits (and a fuzz test), every signal that ends a session saves, and file names taken
from a ruleset's name stay inside their folder."""

import base64
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import agents
from agents import registry
from agents.apps.cli import play
from jamb_env import JambEnv
from jamb_env.replay.records import GameRecord, MatchRecord, RecordError, read_any, read_matches, read_records, replay

ROOT = Path(__file__).resolve().parents[1]
ESC = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"  # OSC title, clear screen, C1 CSI, a bidi override


def header(**over) -> dict:
    return {"type": "game", "format": 1, "ruleset": "classic", "seed": 1, "env": "Jamb-v1", "player": "human", **over}


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


def run_main(monkeypatch, capsys, argv, lines=()):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


class _Marker:
    """Unpickling it makes the folder ``path``: proof that the pickled payload ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return os.mkdir, (self.path,)


def booby_trapped_model(path: Path, marker: Path) -> Path:
    """A file shaped like an SB3 model zip whose ``data`` holds a pickled object (as SB3
    saves policy classes): loading it with MaskablePPO.load runs ``os.mkdir(marker)``."""
    payload = base64.b64encode(pickle.dumps(_Marker(str(marker)))).decode()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":serialized:": payload}}))
    return path


# ---------------------------------------------------------------------- 1. a record loads no model
def test_a_match_record_never_loads_the_model_it_names(monkeypatch, capsys, tmp_path):
    marker = tmp_path / "payload_ran"
    model = booby_trapped_model(tmp_path / "model.zip", marker)
    rec = write_lines(tmp_path / "m.jsonl", match_header(["human", str(model)]))
    code, out, err = run_main(
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
    code, out, err = run_main(monkeypatch, capsys, ["--load", str(rec)], ["quit"])
    assert calls == [] and code == 2 and "cannot load by itself" in err


def test_the_user_names_the_seats_again_to_load_a_file_seat(monkeypatch, capsys, tmp_path):
    calls = []
    greedy = agents.registry.load("greedy")
    monkeypatch.setattr(agents, "load", lambda spec, **kw: calls.append(spec) or greedy)
    model = str(tmp_path / "model.zip")
    rec = write_lines(tmp_path / "m.jsonl", match_header(["human", model]))
    out_file = tmp_path / "out.jsonl"
    code, out, err = run_main(
        monkeypatch, capsys, ["--load", str(rec), "--players", "human", model, "--save", str(out_file)], ["quit"]
    )
    assert code == 0, err
    assert calls == [model]  # asked for on the command line: loaded
    assert read_matches(out_file)[0].players == ["human", model]
    code, out, err = run_main(monkeypatch, capsys, ["--load", str(rec), "--players", "human", "greedy"], ["quit"])
    assert code == 2 and "are not the record's seats human" in err and calls == [model]


def test_a_ruleset_name_cannot_point_the_shipped_model_outside_models(tmp_path):
    marker = tmp_path / "payload_ran"
    booby_trapped_model(tmp_path / "evil.zip", marker)
    name = os.path.relpath(tmp_path / "evil", registry.MODELS_DIR)  # ../../tmp/.../evil
    rules = tmp_path / "rules.yaml"
    rules.write_text(f"schema_version: 1\nname: {json.dumps(name)}\nextends: classic\ncolumns: [down]\n")
    for spec in ("ppo", "hybrid"):
        with pytest.raises(ValueError, match="not a plain file name"):
            agents.load(spec, ruleset=str(rules))
    assert not marker.exists()
    assert (
        registry.shipped_name("classic_down") and not registry.shipped_name("../x") and not registry.shipped_name(".x")
    )


# ---------------------------------------------------------------------- 2. nothing drives the terminal
def test_printable_escapes_controls_and_keeps_text():
    from jamb_env.render.sheet import printable

    assert printable("a\x1b[2Jb\x07\u202e\r\x9b\ud800\u2028") == "a\\x1b[2Jb\\x07\\u202e\\x0d\\x9b\\ud800\\u2028"
    assert printable("Jamb Ž č 日本 ○ ·") == "Jamb Ž č 日本 ○ ·"
    assert printable("a\nb") == "a\\x0ab" and printable("a\nb", newlines=True) == "a\nb"


def test_replay_shows_a_hostile_player_name_escaped(monkeypatch, capsys, tmp_path):
    name = f"{ESC}[bold red]boss[/]:smile:"
    rec = write_lines(tmp_path / "g.jsonl", header(player=name), {"type": "step", "action": 200})
    code, out, err = run_main(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out + err
    assert "replaying \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202e[bold red]boss[/]:smile: on classic" in out
    assert code == 2 and "step 0" in err


def test_match_replay_escapes_seats_and_step_texts(monkeypatch, capsys, tmp_path):
    from jamb_env.multiplayer import raw_env

    env = raw_env(ruleset="classic", num_players=2)
    env.reset(seed=1)
    record = MatchRecord(ruleset="classic", seed=1, players=[f"human{ESC}", f"greedy{ESC}"])
    for _ in range(3):  # the last legal action: a write
        record.play(env, int(env.observe(env.agent_selection)["action_mask"].nonzero()[0][-1]))
    for step in record.steps:
        step["text"] = f"write{ESC}"
    rec = tmp_path / "m.jsonl"
    record.write(rec)
    code, out, err = run_main(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "human\\x1b]0;pwned" in out and "write\\x1b]0;pwned" in out


def hostile_ruleset(tmp_path: Path) -> Path:
    rules = tmp_path / "hostile.yaml"
    rules.write_text(
        'schema_version: 1\nname: "ev\\e]0;pwned\\ail"\ntitle: "T\\e[2J"\nextends: classic\ncolumns: [down]\n'
    )
    return rules


def test_a_ruleset_name_with_escapes_is_refused_when_it_loads(monkeypatch, capsys, tmp_path):
    """A name or title with control characters never reaches a terminal: the ruleset
    loader refuses it (second hostile round), and the command says so in one escaped line."""
    from jamb_env.utils.errors import RulesetError

    rules = hostile_ruleset(tmp_path)
    with pytest.raises(RulesetError, match="control character"):
        JambEnv(str(rules), render_mode="ansi")
    code, out, err = run_main(
        monkeypatch, capsys, ["--watch", "greedy", "--ruleset", str(rules), "--log", str(tmp_path / "watch.txt")]
    )
    assert code == 2 and "control character" in err and "\x1b" not in out + err


def test_error_messages_quoting_a_file_are_escaped(monkeypatch, capsys, tmp_path):
    rec = write_lines(tmp_path / "g.jsonl", header(ruleset=f"{tmp_path}/no{ESC}.yaml"))
    code, out, err = run_main(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
    assert code == 2 and err.startswith("error: ") and "\x1b" not in err and "\\x1b]0;pwned" in err


# ---------------------------------------------------------------------- 3. limits, and a fuzz test
def test_deep_nesting_is_a_record_error_not_a_recursion_error(monkeypatch, capsys, tmp_path):
    deep = "[" * 20_000 + "]" * 20_000  # under the line limit, far over the nesting one
    rec = write_lines(tmp_path / "deep.jsonl", header(), deep)
    with pytest.raises(RecordError, match=r"deep\.jsonl:2: JSON nested more than 16 levels deep"):
        read_any(rec)
    for option in ("--replay", "--load"):
        code, out, err = run_main(
            monkeypatch, capsys, [option, str(rec)] + (["--delay", "0"] if option == "--replay" else [])
        )
        assert code == 2 and "nested more than 16 levels" in err and "Traceback" not in err
    brackets_in_strings = write_lines(tmp_path / "s.jsonl", header(player="[" * 100 + "{" * 100))
    assert read_records(brackets_in_strings)[0].player == "[" * 100 + "{" * 100  # text, not nesting


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


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"type": "step", "action": 44, "reward": NaN}', "not JSON: NaN"),
        ('{"type": "step", "action": 44, "reward": 1e400}', "not JSON: 1e400 is beyond"),
        ('{"type": "step", "action": 1' + "0" * 5000 + "}", "not JSON"),
        ('{"type": "step", "action": 44, "text": "\\ud800"}', "lone surrogate"),
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


def test_a_record_naming_a_missing_ruleset_file_is_a_record_error(tmp_path):
    rec = write_lines(tmp_path / "g.jsonl", header(ruleset=str(tmp_path / "gone.yaml")), {"type": "step", "action": 44})
    with pytest.raises(RecordError, match="gone.yaml"):
        list(replay(read_records(rec)[0]))


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


# ---------------------------------------------------------------------- 4. every ending signal saves
def start(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "play.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


SIGNALS = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_watching_saves_the_record(tmp_path, sig):
    rec = tmp_path / "w.jsonl"
    proc = start(["--watch", "greedy", "--seed", "3", "--delay", "0.05", "--record", str(rec)])
    try:
        seen = 0
        for line in proc.stdout:  # the game is under way once a few steps are shown
            seen += "turn " in line and ", roll " in line
            if seen >= 3:
                break
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    name = signal.Signals(sig).name
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {name} after" in err and "Traceback" not in err
    record = read_records(rec)[0]
    assert 3 <= len(record.steps) < 60 and record.final_score is None
    assert len(list(replay(record))) == len(record.steps)  # a valid prefix of the game


@pytest.mark.slow
def test_sigterm_at_a_match_prompt_saves_the_match(tmp_path):
    save = tmp_path / "m.jsonl"
    proc = start(["--players", "human", "greedy", "--seed", "4", "--save", str(save)], stdin=subprocess.PIPE)
    try:
        for line in proc.stdout:
            if "your turn" in line:
                break
        proc.send_signal(signal.SIGTERM)  # waiting at the prompt for the person's command
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    moved = re.search(rf"stopped by SIGTERM after (\d+) moves; the match is saved in {re.escape(str(save))}", err)
    assert moved and "Traceback" not in err, err
    record = read_matches(save)[0]
    assert record.players == ["human", "greedy"] and len(record.steps) == int(moved.group(1))


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
