"""Third hostile round (issue 27): files a run folder or a config names are read only if
they are regular files of a bounded size (a FIFO hung jamb-plot, jamb-train --init-from and
--resume; /dev/zero read without end), and names from files reach the terminal escaped."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest

from agents.training import runs
from jamb_env.utils.files import InputFileError, read_regular_bytes

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def test_a_fifo_or_a_device_is_refused_before_any_read(tmp_path):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="FIFO"):
        read_regular_bytes(fifo)  # returns at once: opened without blocking, checked with fstat
    with pytest.raises(InputFileError, match="not a regular file"):
        read_regular_bytes("/dev/zero")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(InputFileError, match="larger than 100 bytes"):
        read_regular_bytes(big, limit=100)


def test_run_records_that_are_fifos_are_errors_not_hangs(tmp_path):
    from agents.training.config import ConfigError

    run = tmp_path / "run"
    run.mkdir()
    for name in (runs.INIT_RECORD, runs.BEST_RECORD, runs.EVALUATIONS, "selfplay.json"):
        os.mkfifo(run / name)
    assert runs.init_record(run) == {}
    with pytest.raises(ConfigError, match="FIFO"):
        runs.read_record(run / "selfplay.json")
    (run / runs.BEST_MODEL).write_bytes(b"not a zip")
    assert runs.best_so_far(run, {}) == -np.inf
    history, means = runs.load_evaluations(run, keep_before=10)  # set aside as unreadable, with a message
    assert history["timesteps"] == [] and means == {}


def test_jamb_plot_survives_odd_init_from_values(tmp_path, capsys):
    from agents.training.curves import init_steps

    run = tmp_path / "run"
    run.mkdir()
    fifo = tmp_path / "fifo.zip"
    os.mkfifo(fifo)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data", b" " * (17 * 1024 * 1024))  # 17 MiB of spaces in a small file
    for value in (123, {"a": 1}, str(fifo), str(bomb), "/nonexist\x1b]0;pwned\x07"):
        assert init_steps(run, value) == 0
    err = capsys.readouterr().err
    assert "step count is unknown" in err and "\x1b" not in err and "\x07" not in err


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
