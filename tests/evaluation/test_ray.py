"""``jamb-evaluate --ray`` and ``jamb-tune --ray`` (agents/evaluation/ray_backend.py, agents/training/tuning.py).

Ray is an optional extra (``make install-ray``): without it these tests are skipped, all
but the one checking that ``--ray`` then says how to install it. Each test that runs Ray
starts its own local Ray with 2 CPUs (``--jobs 2``) in a fresh process and stops it.
"""

from __future__ import annotations

import csv
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from agents.training.config import CONFIGS_DIR
from tests.helpers import needs_module

ROOT = Path(__file__).resolve().parents[2]
needs_ray = needs_module("ray", "Ray")


def tool(name: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", f"agents.apps.cli.{name}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def closed_port() -> int:
    """A local port nothing listens on (it was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_ray
@pytest.mark.slow
def test_ray_evaluation_is_the_local_evaluation(tmp_path):
    """The same seeds, tables and files: only where the chunks of games run differs."""
    common = ["--agents", "greedy", "random", "--games", "6", "--no-progress"]
    local = tool("evaluate", *common, "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr[-2000:]
    remote = tool("evaluate", *common, "--ray", "--jobs", "2", "--out", str(tmp_path / "ray"))
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert remote.stdout == local.stdout and "| greedy | 6 |" in local.stdout
    for tail in ("_games.csv", ".csv"):
        assert (tmp_path / f"ray{tail}").read_text() == (tmp_path / f"local{tail}").read_text()
    games = list(csv.DictReader((tmp_path / "ray_games.csv").open()))
    assert [int(g["seed"]) for g in games] == list(range(20_000_000, 20_000_006)) * 2  # the canonical seeds, per agent
    assert (tmp_path / "ray.png").stat().st_size > 0


@needs_ray
@pytest.mark.slow
def test_ray_tune_tiny_search(tmp_path):
    out = tmp_path / "tune"
    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())  # the default, with fewer planner games
    cfg["imitation"].update(games=20, epochs=1, jobs=1)
    cfg["eval"].update(episodes=10, n_envs=10)
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(cfg))
    proc = tool(
        "tune",
        "--ray",
        "--jobs",
        "2",
        "--config",
        str(tmp_path / "base.yaml"),
        "--ruleset",
        "classic_down",
        "--trials",
        "2",
        "--steps",
        "1024",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "best: trial" in proc.stdout and "Configuration for experiment" not in proc.stdout  # our lines, not Tune's
    rows = list(csv.DictReader((out / "trials.csv").open()))
    assert sorted(int(r["trial"]) for r in rows) == [0, 1]
    assert list(rows[0])[:3] == ["trial", "score", "wall_s"] and "learning_rate" in rows[0]  # the local tuner's columns
    from agents.training.config import load_config

    best = load_config(out / "best_config.yaml")  # a valid training config
    assert best["ruleset"] == "classic_down" and best["algo"]["n_steps"] in (128, 256, 512)
    assert (out / "trial_000" / "final_model.zip").is_file() and (out / "trial_001" / "final_model.zip").is_file()


@needs_ray
def test_ray_address_without_a_cluster_fails_fast(tmp_path):
    address = f"127.0.0.1:{closed_port()}"
    for name, args in (
        ("evaluate", ["--agents", "greedy", "--games", "2", "--no-progress", "--out", str(tmp_path / "e")]),
        ("tune", ["--trials", "1", "--steps", "64", "--out", str(tmp_path / "t")]),
    ):
        start = time.perf_counter()
        proc = tool(name, *args, "--ray", "--address", address, timeout=120)
        took = time.perf_counter() - start
        assert proc.returncode == 2, (name, proc.stderr[-2000:])
        assert f"cannot reach a Ray cluster at {address}" in proc.stderr and "ray start --head" in proc.stderr, (
            proc.stderr
        )
        assert "Traceback" not in proc.stderr and took < 60, (name, took)
    assert not list(tmp_path.glob("e*")) and not (tmp_path / "t" / "trials.csv").exists()


def test_ray_flags_without_ray_say_how_to_install_it(monkeypatch, capsys, tmp_path):
    """Runs with or without Ray: an import of ray that fails gives the install hint, exit 2."""
    from agents.apps.cli import evaluate, tune

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code = evaluate.main(["--agents", "greedy", "--games", "2", "--no-progress", "--ray", "--out", str(tmp_path / "e")])
    assert code == 2 and "Ray is not installed: make install-ray" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        tune.main(["--ray", "--trials", "1", "--steps", "64", "--out", str(tmp_path / "t")])
    assert exc.value.code == 2 and "Ray is not installed: make install-ray" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written, no folder made
    for argv, message in (
        (["--address", "h:1"], "--address is for --ray"),
        (["--ray", "--players", "2", "--agents", "greedy", "random"], "--ray plays solitaire"),
    ):
        with pytest.raises(SystemExit):
            evaluate.main(["--games", "2", *argv])
        assert message in capsys.readouterr().err
    for argv, message in (
        (["--jobs", "2"], "--jobs is for --ray"),
        (["--scheduler", "median"], "--scheduler is for --ray"),
    ):
        with pytest.raises(SystemExit):
            tune.main(argv)
        assert message in capsys.readouterr().err


def test_trial_progress_is_read_from_the_evaluations(tmp_path):
    """What a Ray trial reports to ASHA between evaluations: the mean true score (the mean
    evaluation return over reward_scale) of each evaluation past the last one reported."""
    import numpy as np

    from agents.training.runs import save_evaluations
    from agents.training.tuning import new_evaluations

    assert new_evaluations(tmp_path, 0, 0.01) == []  # no evaluation yet
    save_evaluations(
        tmp_path,
        {"timesteps": [1024, 2048], "results": [[1.0, 2.0], [3.0, 4.0]], "ep_lengths": [[130, 130], [130, 130]]},
    )
    assert new_evaluations(tmp_path, 0, 0.01) == [(1024, 150.0), (2048, 350.0)]
    assert np.allclose([s for _, s in new_evaluations(tmp_path, 1024, 0.01)], [350.0])
    assert new_evaluations(tmp_path, 2048, 0.01) == []
