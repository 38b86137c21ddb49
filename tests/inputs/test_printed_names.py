"""Names from files shown to a user: player, seat, ruleset and file names from records,
rulesets and run folders reach the terminal with their control characters escaped, and
figures draw TeX markup as text."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.apps.cli import play
from jamb_env import JambEnv
from jamb_env.replay.records import MatchRecord
from jamb_env.utils.errors import RulesetError
from tests.helpers import needs_fifo

ESC = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"  # OSC title, clear screen, C1 CSI, a bidi override


def header(**over) -> dict:
    return {"type": "game", "format": 1, "ruleset": "classic", "seed": 1, "env": "Jamb-v1", "player": "human", **over}


def write_lines(path: Path, *items) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in items), encoding="utf-8")
    return path


def play_session(monkeypatch, capsys, argv, lines=()):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


def hostile_ruleset(tmp_path: Path) -> Path:
    rules = tmp_path / "hostile.yaml"
    rules.write_text(
        'schema_version: 1\nname: "ev\\e]0;pwned\\ail"\ntitle: "T\\e[2J"\nextends: classic\ncolumns: [down]\n'
    )
    return rules


ESCAPE = "\x1b]0;pwned\x07"


MARKUP = "$\\frac{$"  # matplotlib's mathtext cannot parse it: a ValueError when the figure is drawn


def test_printable_escapes_controls_and_keeps_text():
    from jamb_env.render.sheet import printable

    assert printable("a\x1b[2Jb\x07\u202e\r\x9b\ud800\u2028") == "a\\x1b[2Jb\\x07\\u202e\\x0d\\x9b\\ud800\\u2028"
    assert printable("Jamb Ž č 日本 ○ ·") == "Jamb Ž č 日本 ○ ·"
    assert printable("a\nb") == "a\\x0ab" and printable("a\nb", newlines=True) == "a\nb"


def test_replay_shows_a_hostile_player_name_escaped(monkeypatch, capsys, tmp_path):
    name = f"{ESC}[bold red]boss[/]:smile:"
    rec = write_lines(tmp_path / "g.jsonl", header(player=name), {"type": "step", "action": 200})
    code, out, err = play_session(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
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
    code, out, err = play_session(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "human\\x1b]0;pwned" in out and "write\\x1b]0;pwned" in out


def test_a_ruleset_name_with_escapes_is_refused_when_it_loads(monkeypatch, capsys, tmp_path):
    """A name or title with control characters never reaches a terminal: the ruleset
    loader refuses it, and the command says so in one escaped line."""

    rules = hostile_ruleset(tmp_path)
    with pytest.raises(RulesetError, match="control character"):
        JambEnv(str(rules), render_mode="ansi")
    code, out, err = play_session(
        monkeypatch, capsys, ["--watch", "greedy", "--ruleset", str(rules), "--log", str(tmp_path / "watch.txt")]
    )
    assert code == 2 and "control character" in err and "\x1b" not in out + err


def test_error_messages_quoting_a_file_are_escaped(monkeypatch, capsys, tmp_path):
    rec = write_lines(tmp_path / "g.jsonl", header(ruleset=f"{tmp_path}/no{ESC}.yaml"))
    code, out, err = play_session(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"])
    assert code == 2 and err.startswith("error: ") and "\x1b" not in err and "\\x1b]0;pwned" in err


def test_plot_escapes_the_name_of_a_file_its_glob_matched(tmp_path, capsys):
    from agents.apps.cli.plot import main

    (tmp_path / f"a{ESCAPE}b").write_text("")  # what runs/* matched: a file, not a run folder
    assert main([str(tmp_path / f"a{ESCAPE}b"), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b]0;pwned\\x07" in err  # before: the raw escape sequence


def test_tune_escapes_the_names_of_trial_runs_it_refuses(tmp_path, capsys):
    pytest.importorskip("optuna")
    from agents.apps.cli.tune import main

    trial = tmp_path / "out" / f"trial_{ESCAPE}"
    trial.mkdir(parents=True)
    (trial / "config.yaml").write_text("seed: 0\n")
    with pytest.raises(SystemExit) as exc:
        main(["--out", str(tmp_path / "out"), "--trials", "1", "--steps", "16"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "\x1b" not in err and "\\x1b]0;pwned\\x07" in err


def test_resume_escapes_the_names_of_the_temporary_files_it_removes(tmp_path, capsys):
    from agents.training.runs import remove_killed_writes  # what jamb-train --resume runs first

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / f".best.json.tmp-{ESCAPE}").write_text("")
    (tmp_path / "checkpoints" / f".model_32_steps.zip.tmp-{ESCAPE}").write_text("")
    assert len(remove_killed_writes(tmp_path)) == 2
    out = capsys.readouterr().out
    assert "\x1b" not in out and out.count("\\x1b]0;pwned\\x07") == 2  # before: the raw escape sequences


@needs_fifo
def test_names_from_files_reach_the_terminal_escaped(tmp_path, capsys):
    from torch.utils.tensorboard import SummaryWriter

    from agents.apps.cli.plot import main as plot
    from agents.evaluation.solitaire import record_file_name

    run = tmp_path / "run"
    writer = SummaryWriter(log_dir=str(run))
    writer.add_scalar("eval/score", 1.0, 0)
    writer.add_scalar("eval/baseline_x\x1b]0;PWNED\x07\x1b[31mRED", 2.0, 0)
    writer.close()
    assert plot([str(run), "--tag", "nosuch", "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "has no scalar" in err and "\x1b" not in err and "\\x1b]0;PWNED" in err
    name = record_file_name("/tmp/g/m\x1b]0;PWN\x07\x1b[31mX.zip")
    assert name.isprintable() and "/" not in name and name.endswith(".jsonl")


def test_names_with_tex_markup_are_drawn_as_text(tmp_path):
    from agents.evaluation.solitaire import plot_scores
    from agents.training.curves import curves_figure, save_figure

    curve = (np.array([0, 1, 2]), np.array([1.0, 2.0, 3.0]))
    fig = curves_figure({(MARKUP, MARKUP): [curve]}, {MARKUP: {MARKUP: 5.0}}, MARKUP, MARKUP)
    save_figure(fig, tmp_path / "curves.png")  # a baseline tag of an event file, a config name: data
    assert (tmp_path / "curves.png").stat().st_size > 0
    games = [{"score": s} for s in (100, 200, 300)]
    labels = {f"/models/{MARKUP}.zip": games, "greedy": games}  # a file name a glob matched
    plot_scores(labels, tmp_path / "scores.png", MARKUP)
    assert (tmp_path / "scores.png").stat().st_size > 0


def test_names_with_control_characters_make_a_well_formed_svg(tmp_path):
    """A config name, ruleset or baseline tag holding ESC or BEL (a run's files are data) is
    drawn escaped: before, the raw character made the SVG malformed XML."""
    import xml.etree.ElementTree as ET

    from agents.evaluation.solitaire import plot_scores
    from agents.training.curves import curves_figure, save_figure

    curve = (np.array([0, 1, 2]), np.array([1.0, 2.0, 3.0]))
    fig = curves_figure({(ESC, ESC): [curve]}, {ESC: {ESC: 5.0}}, ESC, ESC)
    save_figure(fig, tmp_path / "curves.svg")
    games = [{"score": s} for s in (100, 200, 300)]
    plot_scores({f"/models/{ESC}.zip": games, "greedy": games}, tmp_path / "scores.svg", ESC)
    for name in ("curves.svg", "scores.svg"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        ET.fromstring(text.encode("utf-8"))  # well-formed XML
        assert "\x1b" not in text and "\x07" not in text, name
