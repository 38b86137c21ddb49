"""Twelfth hostile round: files a user hands to jamb-play and jamb-plot.

Each case failed before its fix: the in-game ``save FILE`` command of ``jamb-play`` (a
solitaire game or a match) wrote over any existing file, another saved game or not,
where ``--save FILE`` refuses it (round 10); ``jamb-plot --x minutes`` of a run whose
TensorBoard wall times are not finite or go backwards (a damaged file, a clock set back)
wrote a figure with an empty or wrong curve (numpy's "Mean of empty slice" its only sign);
``jamb-train --run-dir DIR`` of a folder holding no run but files of a run's names
(``agents/models/`` and its ``best.json``) replaced them; ``jamb-train-value --out DIR`` of a folder
holding a ``value.npz`` (no value run) replaced that network; ``jamb-plot runs/*`` matching a
file, and ``jamb-tune --out`` of a folder with trial runs, and ``jamb-train --resume`` removing a
run's cut-short temporary files, printed the names from the disk raw, a name's escape
sequences driving the terminal.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agents.apps.terminal import MatchSession, PlaySession


# ---------------------------------------------------------------------- the in-game save FILE over an existing file
def test_the_in_game_save_command_refuses_to_replace_an_existing_file(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(
        '{"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}\n'
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n")
    before = {p: p.read_text() for p in (other, notes)}
    out = io.StringIO()
    console = Console(file=out, width=200)
    own, fresh = tmp_path / "own.jsonl", tmp_path / "fresh.jsonl"
    for session in (
        PlaySession("classic", 1, console=console),
        MatchSession("classic", 1, ["human", "human"], console=console),
    ):
        for path in (other, notes):  # before: "saved to ..." and the file replaced by this game
            session.handle(f"save {path}", save_path=own)
        assert {p: p.read_text() for p in (other, notes)} == before
        assert out.getvalue().count("the file exists") == 2
        out.truncate(0), out.seek(0)
        session.handle(f"save {fresh}", save_path=own)  # a new file, then the same one again: saved
        session.handle(f"save {fresh}", save_path=own)
        session.handle(f"save {own}", save_path=own)  # the session's own file
        assert out.getvalue().count("saved to") == 3 and "exists" not in out.getvalue()
        out.truncate(0), out.seek(0)
        fresh.unlink(), own.unlink()


# ---------------------------------------------------------------------- jamb-plot --x minutes of bad wall times
@pytest.mark.parametrize("walls", [(float("nan"),) * 3, (5.0, 3.0, 1.0), (1.0, float("inf"), 3.0)])
def test_plot_minutes_refuses_wall_times_that_are_not_finite_or_go_back(tmp_path, capsys, walls):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    from agents.apps.cli.plot import main

    run = tmp_path / "classic__ppo_classic__0__x"
    writer = EventFileWriter(str(run))
    for i, wall in enumerate(walls):
        writer.add_event(
            Event(
                wall_time=wall,
                step=100 * (i + 1),
                summary=Summary(value=[Summary.Value(tag="eval/score", simple_value=100.0 + i)]),
            )
        )
    writer.close()
    out = tmp_path / "curves.png"
    assert main([str(run), "--x", "minutes", "--out", str(out)]) == 2  # before: 0, an empty or wrong curve
    err = capsys.readouterr().err
    assert "wall-clock time" in err and "--x steps" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main([str(run), "--out", str(out)]) == 0 and out.exists()  # the steps axis does not need them


# ---------------------------------------------------------------------- jamb-train --run-dir of a run's file names
def test_a_new_run_refuses_a_folder_holding_files_a_run_writes(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from agents.apps.cli.train import main

    models = tmp_path / "models"
    models.mkdir()
    best = models / "best.json"
    best.write_text('{"classic": {"agent": "ppo", "mean": 1066.3}}\n')
    config = tmp_path / "c.yaml"
    config.write_text(
        "total_timesteps: 32\nenv: {n_envs: 2}\nalgo: {n_steps: 16, batch_size: 16, n_epochs: 1}\n"
        "eval: {freq: 16, episodes: 2, n_envs: 2}\ncheckpoint: {freq: 16}\n"
    )
    before = best.read_text()
    assert main(["--config", str(config), "--run-dir", str(models), "--no-progress"]) == 2  # before: 0
    assert "best.json" in capsys.readouterr().err
    assert best.read_text() == before and sorted(p.name for p in models.iterdir()) == ["best.json"]


# ---------------------------------------------------------------------- jamb-train-value --out with a network
def test_a_new_value_run_refuses_a_folder_holding_a_network_of_its_names(tmp_path, capsys):
    pytest.importorskip("torch")
    from agents.apps.cli.train_value import main

    out = tmp_path / "downloads"
    out.mkdir()
    net = out / "value.npz"
    net.write_bytes(b"PK\x05\x06" + bytes(18))  # any file of that name: someone's network
    before = net.read_bytes()
    argv = [
        "--ruleset",
        "classic_down",
        "--out",
        str(out),
        "--iterations",
        "1",
        "--games",
        "2",
        "--first-games",
        "2",
        "--epochs",
        "1",
    ]
    with pytest.raises(SystemExit) as exc:  # before: trained, and value.npz became the new network
        main(argv)
    assert exc.value.code == 2 and "value.npz" in capsys.readouterr().err
    assert net.read_bytes() == before and [p.name for p in out.iterdir()] == ["value.npz"]


# ---------------------------------------------------------------------- file names from the disk printed raw
ESCAPE = "\x1b]0;pwned\x07"


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
