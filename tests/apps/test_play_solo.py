"""scripts/play.py (agents/apps/cli/play.py): a person's game through scripted input, save/resume, watch, replay."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.apps.cli import play
from jamb_env import Action, JambEnv, load_ruleset
from jamb_env.replay.records import RecordError, read_records, replay

ROOT = Path(__file__).resolve().parents[2]

ROWS = load_ruleset("classic").rows


def full_game_commands() -> list[str]:
    """52 moves that are legal whatever the dice: free, then down, up, announce."""
    cmds = [f"write free {r}" for r in ROWS]
    cmds += [f"w d {r}" for r in ROWS]  # prefixes work
    cmds += [f"write up {r}" for r in reversed(ROWS)]
    for r in ROWS:
        cmds += [f"announce {r}", f"write announce {r}"]
    return cmds


def expected_score(seed: int, cmds: list[str]) -> int:
    """Play the same moves straight on the env."""
    env = JambEnv("classic", illegal_action="raise")
    env.reset(seed=seed)
    for cmd in cmds:
        words = cmd.split()
        if words[0] == "announce":
            action = Action("announce", column="announce", row=words[1])
        else:
            action = Action("write", column={"d": "down"}.get(words[1], words[1]), row=words[2])
        env.step(env.encode_action(action))
    return env.score


def run_play(monkeypatch, capsys, argv, lines):
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = play.main(argv + ["--width", "120"])
    return code, capsys.readouterr().out


def test_full_game_to_the_end(monkeypatch, capsys, tmp_path):
    cmds = full_game_commands()
    save = tmp_path / "game.jsonl"
    code, out = run_play(monkeypatch, capsys, ["--seed", "11", "--save", str(save)], cmds)
    score = expected_score(11, cmds)
    assert code == 0 and f"Game over: {score} points." in out
    record = read_records(save)[0]
    assert record.final_score == score and len(record.steps) == 65 and record.seed == 11
    env = None
    for env, _ in replay(record):  # noqa: B007 (the env after the last step)
        pass
    assert env.score == score and all(int(f) == (1 << 13) - 1 for f in env.game.filled)


def test_invalid_commands_get_messages_and_change_nothing(monkeypatch, capsys):
    bad = [
        "",
        "dance",
        "keep 0",
        "keep 1 1",
        "keep 6",
        "keep 1 2 3 4 5",
        "write",
        "write down jamb",
        "write sideways ones",
        "write free yahtzee",
        "announce",
        "announce jamb jamb",
        "reroll x",
        "w t",
        "save",
    ]
    code, out = run_play(monkeypatch, capsys, ["--seed", "2"], bad + ["quit"])
    assert code == 0
    for message in (
        "unknown command 'dance'",
        "dice positions are 1..5",
        "named twice",
        "keeping every die is not a re-roll",
        "usage: write COLUMN ROW",
        "down/jamb is not allowed",
        "unknown or ambiguous column 'sideways'",
        "unknown or ambiguous row 'yahtzee'",
        "usage: announce ROW",
        "save where?",
    ):
        assert message in out, message
    assert "> write" not in out.split("Type help")[1].split("\n>")[0]  # no move was made


def test_announce_rules_in_play(monkeypatch, capsys):
    code, out = run_play(monkeypatch, capsys, ["--seed", "4"], ["reroll", "announce full", "quit"])
    assert "announcing is only allowed right after the first roll" in out


def test_save_and_resume_reaches_the_same_end(monkeypatch, capsys, tmp_path):
    cmds = full_game_commands()
    save = tmp_path / "half.jsonl"
    run_play(monkeypatch, capsys, ["--seed", "8", "--save", str(save)], cmds[:30] + ["quit"])
    assert len(read_records(save)[0].steps) == 30
    code, out = run_play(monkeypatch, capsys, ["--load", str(save)], cmds[30:])
    assert "resumed" in out and f"Game over: {expected_score(8, cmds)} points." in out
    assert read_records(save)[0].final_score == expected_score(8, cmds)  # the save follows the game


def test_end_of_input_keeps_the_game(monkeypatch, capsys, tmp_path):
    save = tmp_path / "eof.jsonl"
    code, out = run_play(monkeypatch, capsys, ["--seed", "1", "--save", str(save)], ["write free ones"])
    assert code == 0 and "end of input" in out and len(read_records(save)[0].steps) == 1


def test_coach_hint(monkeypatch, capsys):
    code, out = run_play(monkeypatch, capsys, ["--seed", "5", "--coach", "expectimax"], ["hint", "quit"])
    from agents.apps.terminal import PlaySession

    session = PlaySession("classic", seed=5, coach=agents.load("expectimax", ruleset="classic"))
    env = session.env
    best = session.command_for(session.coach.act(env, env.observe(), env.action_masks()))
    assert f"coach (expectimax): {best}" in out
    assert "relative to each row's par" in out
    code, out = run_play(
        monkeypatch, capsys, ["--seed", "5", "--ruleset", "classic_down", "--coach", "optimal"], ["hint", "quit"]
    )
    assert "coach (optimal):" in out and "expected final score" in out
    code, out = run_play(monkeypatch, capsys, ["--seed", "5"], ["hint", "quit"])
    assert "no coach" in out


@pytest.mark.slow  # two jamb-play subprocesses; the in-process tests below record and replay
def test_watch_log_and_replay(tmp_path):
    log, rec = tmp_path / "watch.txt", tmp_path / "watch.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "play.py"),
            "--watch",
            "greedy",
            "--seed",
            "9",
            "--log",
            str(log),
            "--record",
            str(rec),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    record = read_records(rec)[0]
    assert f"greedy scored {record.final_score} points" in text and "turn 52, roll" in text
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "play.py"), "--replay", str(rec), "--log", str(tmp_path / "r.txt")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and f"final score {record.final_score}" in (tmp_path / "r.txt").read_text()


def test_bad_records(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "step", "action": 3}\n')
    with pytest.raises(RecordError, match="before any game header"):
        read_records(bad)
    bad.write_text("not json\n")
    with pytest.raises(RecordError, match="not JSON"):
        read_records(bad)
    bad.write_text(
        json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1})
        + "\n"
        + json.dumps({"type": "step", "action": 96})
        + "\n"
    )
    with pytest.raises(RecordError, match="step 0"):
        list(replay(read_records(bad)[0]))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "play.py"), "--replay", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and f"error: {bad}:2: step 0" in proc.stderr  # names the file and line


def test_evaluation_records_replay(tmp_path):
    from agents.evaluation.solitaire import run_games

    results = run_games(["expectimax"], "standard", [3], progress=False, record=True)
    game = results["expectimax"][0]
    env = None
    for env, _ in replay(game["record"]):  # noqa: B007 (the env after the last step)
        pass
    assert env.score == game["score"] == sum(step["reward"] for step in game["record"].steps)


# ---------------------------------------------------------------- hostile input, Ctrl-C, atomic saves
def play_exit(argv, capsys):
    """play.main(argv): (exit status, stdout, stderr), argparse errors included."""
    try:
        code = play.main(argv + ([] if "--width" in argv else ["--width", "120"]))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def interrupt_after(monkeypatch, lines):
    """console.input gives ``lines``, then raises KeyboardInterrupt (Ctrl-C at the prompt)."""
    from rich.console import Console

    feed = iter(lines)

    def fake_input(self, prompt=""):
        try:
            return next(feed)
        except StopIteration:
            raise KeyboardInterrupt from None

    monkeypatch.setattr(Console, "input", fake_input)


def test_ctrl_c_in_a_game_saves_and_exits(monkeypatch, capsys, tmp_path):
    save = tmp_path / "g.jsonl"
    interrupt_after(monkeypatch, ["write free ones", "write free twos"])
    code, out, err = play_exit(["--seed", "3", "--save", str(save)], capsys)
    assert code == 130 and "Traceback" not in err
    assert f"interrupted after 2 moves; the game is saved in {save}" in err
    assert len(read_records(save)[0].steps) == 2
    interrupt_after(monkeypatch, ["write free threes"])  # resumed, then Ctrl-C again: saved where it was loaded from
    code, out, err = play_exit(["--load", str(save)], capsys)
    assert code == 130 and len(read_records(save)[0].steps) == 3
    interrupt_after(monkeypatch, [])
    code, out, err = play_exit(["--seed", "3"], capsys)
    assert code == 130 and "not saved" in err


def test_ctrl_c_while_watching_and_replaying(monkeypatch, capsys, tmp_path):
    calls = []

    def sleep(seconds):
        calls.append(seconds)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(play.time, "sleep", sleep)
    rec = tmp_path / "w.jsonl"
    code, out, err = play_exit(["--watch", "random", "--seed", "2", "--delay", "0.01", "--record", str(rec)], capsys)
    assert (
        code == 130
        and f"interrupted after 3 moves; the game so far (3 moves) is in {rec}" in err
        and "Traceback" not in err
    )
    assert len(read_records(rec)[0].steps) == 3
    calls.clear()
    code, out, err = play_exit(["--replay", str(rec), "--delay", "0.01"], capsys)
    assert code == 130 and "interrupted" in err and "Traceback" not in err


def test_markup_in_names_is_printed_literally(monkeypatch, capsys, tmp_path):
    rec = tmp_path / "m[red].jsonl"
    for player in ("[bold]x[/", "[red]", "[/]"):
        rec.write_text(
            json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1, "player": player})
            + "\n"
            + json.dumps({"type": "step", "action": int(np.flatnonzero(_first_mask())[0])})
            + "\n"
        )
        code, out, err = play_exit(["--replay", str(rec), "--delay", "0"], capsys)
        assert code == 0, err
        assert f"replaying {player} on classic" in out
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    code, out, err = play_exit(["--load", str(rec), "--save", str(tmp_path / "s[b].jsonl")], capsys)
    assert code == 0 and f"resumed {rec}" in out, err
    assert f"saved to {tmp_path / 's[b].jsonl'}" in out


def _first_mask():
    env = JambEnv("classic")
    env.reset(seed=1)
    return env.action_masks()


def test_autosave_is_atomic(monkeypatch, capsys, tmp_path):
    import jamb_env.utils.files as files

    save = tmp_path / "g.jsonl"
    run_play(monkeypatch, capsys, ["--seed", "6", "--save", str(save)], ["write free ones", "quit"])
    good = save.read_text()
    writes = []
    real = files.atomic_write_text
    monkeypatch.setattr(
        files, "atomic_write_text", lambda path, text, **kw: (writes.append(Path(path)), real(path, text, **kw))[1]
    )
    run_play(monkeypatch, capsys, ["--load", str(save)], ["write free twos", "write free threes", "quit"])
    assert writes.count(save) == 3  # after each move and on quit, all through the atomic helper
    good = save.read_text()
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    code, out = run_play(monkeypatch, capsys, ["--load", str(save)], ["write free fours", "quit"])
    assert "could not save" in out and "No space left on device" in out
    assert save.read_text() == good  # the previous good save is intact
    assert [p.name for p in tmp_path.iterdir()] == ["g.jsonl"]  # and no temporary file is left


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--watch", "random", "--save", "x.jsonl"], "--save cannot be used with watching (use --record"),
        (["--replay", "x.jsonl", "--watch", "random"], "--watch cannot be used with a replay"),
        (["--record", "x.jsonl"], "--record cannot be used with an interactive game"),
        (["--log", "x.txt"], "--log cannot be used with an interactive game"),
        (["--game", "1"], "--game cannot be used with an interactive game"),
        (["--replay", "no_such_file.jsonl"], "no such file"),
        (["--load", "."], "a folder, not a game record file"),
        (["--save", "."], "is a folder; give a file name"),
        (["--watch", "random", "--game", "-1"], "--game"),
        (["--seed", "many"], "invalid int value"),
        (["--width", "100000"], "--width must be 40..10000"),
        (["--watch", ""], "--watch: empty"),
    ],
)
def test_play_refuses_options_it_would_ignore(capsys, argv, message):
    code, out, err = play_exit(argv, capsys)
    assert code == 2 and message in err, err


def test_unknown_agents_and_rulesets(capsys):
    for argv, message in (
        (["--watch", "nosuch"], "unknown agent 'nosuch'"),
        (["--ruleset", "nope"], "unknown ruleset 'nope'"),
        (["--coach", "nosuch"], "unknown agent 'nosuch'"),
    ):
        code, out, err = play_exit(argv, capsys)
        assert code == 2 and message in err and "Traceback" not in err, err


def test_markup_in_a_ruleset_title_is_drawn_literally(tmp_path):
    import yaml
    from rich.console import Console

    from agents.apps.terminal import PlaySession

    path = tmp_path / "r.yaml"
    path.write_text(
        yaml.safe_dump({"schema_version": 1, "name": "marked", "extends": "classic_down", "title": "[bold]Jamb[/"})
    )
    buf = io.StringIO()
    session = PlaySession(str(path), 1, console=Console(file=buf, width=120))
    session.draw()
    assert "[bold]Jamb[/: 0" in buf.getvalue()


def test_a_saved_game_another_session_saved_since_is_not_saved_over(monkeypatch, capsys, tmp_path):
    """Before (I50, I37): two ``jamb-play --load g.jsonl`` (or one and a jamb-web serving it): the
    second one's saves replaced the first one's saved moves, and neither was told."""
    save = tmp_path / "g.jsonl"
    run_play(monkeypatch, capsys, ["--seed", "6", "--save", str(save)], ["write free ones", "quit"])
    theirs = []

    class OtherSessionSaves(io.StringIO):  # the other session saves while this one waits for a command
        def readline(self, *args):
            line = super().readline(*args)
            if line.startswith("write free threes"):
                save.write_text(save.read_text() + "\n")
                theirs.append(save.read_text())
            return line

    monkeypatch.setattr(sys, "stdin", OtherSessionSaves("write free twos\nwrite free threes\nquit\n"))
    play.main(["--load", str(save), "--width", "120"])
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "another program changed it since this session saved or loaded it" in out
    assert theirs and save.read_text() == theirs[0]  # the other session's save is kept
