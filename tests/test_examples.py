"""The example scripts run as documented: each as a subprocess from the repository root
with tiny arguments, exit 0, print a plausible mean score; bad arguments are clean
argparse errors (exit 2, no traceback)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NUMBA_NUM_THREADS": "1"}
# classic: random play scores ~110, the best agents ~1,000; no game scores 5,000
PLAUSIBLE = (0.0, 5000.0)


def run_example(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, f"examples/{script}", *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def mean_score(out: str, pattern: str) -> float:
    match = re.search(pattern, out)
    assert match, f"no mean score in the output:\n{out}"
    return float(match.group(1))


def check_ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_cleanrl_ppo(tmp_path):
    run_dir = tmp_path / "run"
    out = check_ok(run_example(
        "cleanrl_ppo.py", "--total-timesteps", "1024", "--num-envs", "8", "--num-steps", "64",
        "--num-minibatches", "2", "--update-epochs", "1", "--eval-games", "2", "--run-dir", str(run_dir)))
    score = mean_score(out, r"greedy evaluation: mean score (-?[\d.]+) over 2 games")
    assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out
    assert "iteration 2/2" in out, out
    events = list(run_dir.glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0, f"no TensorBoard event file in {run_dir}"


def test_sb3_dict_obs():
    out = check_ok(run_example("sb3_dict_obs.py", "--total-timesteps", "256", "--n-envs", "2",
                               "--n-steps", "128", "--eval-games", "2"))
    assert "'action_mask': ('MultiBinary', (97,))" in out, out
    score = mean_score(out, r"deterministic evaluation: mean score (-?[\d.]+) over 2 games")
    assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out


def test_planner():
    out = check_ok(run_example("planner.py", "--games", "2"))
    for name in ("planner", "greedy"):
        score = mean_score(out, rf"{name}\s+mean\s+(-?[\d.]+) over 2 games")
        assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out


@pytest.mark.parametrize("script, args, message", [
    ("cleanrl_ppo.py", ["--num-envs", "0"], "--num-envs must be at least 1"),
    ("sb3_dict_obs.py", ["--ruleset", "no_such_preset"], "unknown ruleset 'no_such_preset'"),
])
def test_bad_arguments(tmp_path, script, args, message):
    proc = run_example(script, *args, "--run-dir", str(tmp_path / "run")) if script == "cleanrl_ppo.py" \
        else run_example(script, *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "run").exists()  # nothing written before the arguments are checked
