"""The example scripts run as documented: each as a subprocess from the repository root
with tiny arguments, exit 0, print a plausible mean score; bad arguments are clean
argparse errors (exit 2, no traceback)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# this checkout's package, whichever one the interpreter has installed
ENV = {
    **os.environ,
    "NUMBA_NUM_THREADS": "1",
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
}
# classic: random play scores ~110, the best agents ~1,000; no game scores 5,000
PLAUSIBLE = (0.0, 5000.0)


def run_example(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, f"examples/{script}", *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def mean_score(out: str, pattern: str) -> float:
    match = re.search(pattern, out)
    assert match, f"no mean score in the output:\n{out}"
    return float(match.group(1))


def check_ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


@pytest.mark.slow  # a short training run in a subprocess
def test_cleanrl_ppo(tmp_path):
    run_dir = tmp_path / "run"
    out = check_ok(
        run_example(
            "cleanrl_ppo.py",
            "--total-timesteps",
            "1024",
            "--num-envs",
            "8",
            "--num-steps",
            "64",
            "--num-minibatches",
            "2",
            "--update-epochs",
            "1",
            "--eval-games",
            "2",
            "--run-dir",
            str(run_dir),
            "--seed",
            "4294967295",
        )
    )  # the largest seed numpy takes
    score = mean_score(out, r"greedy evaluation: mean score (-?[\d.]+) over 2 games")
    assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out
    assert "iteration 2/2" in out, out
    events = list(run_dir.glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0, f"no TensorBoard event file in {run_dir}"


@pytest.mark.slow  # a short training run in a subprocess
def test_sb3_dict_obs():
    out = check_ok(
        run_example(
            "sb3_dict_obs.py",
            "--total-timesteps",
            "256",
            "--n-envs",
            "2",
            "--n-steps",
            "128",
            "--eval-games",
            "2",
            "--seed",
            "4294967295",
        )
    )  # the largest seed
    assert "'action_mask': ('MultiBinary', (97,))" in out, out
    score = mean_score(out, r"deterministic evaluation: mean score (-?[\d.]+) over 2 games")
    assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out


@pytest.mark.slow  # a subprocess; tests/rules/test_rule_readers.py runs the planner example in process
def test_planner():
    out = check_ok(run_example("planner.py", "--games", "2"))
    for name in ("planner", "greedy"):
        score = mean_score(out, rf"{name}\s+mean\s+(-?[\d.]+) over 2 games")
        assert PLAUSIBLE[0] < score < PLAUSIBLE[1], out


@pytest.mark.slow  # a subprocess each; test_bad_arguments_in_process below checks every message in process
@pytest.mark.parametrize(
    "script, args, message",
    [
        ("cleanrl_ppo.py", ["--num-envs", "0"], "--num-envs must be at least 1"),
        ("sb3_dict_obs.py", ["--ruleset", "no_such_preset"], "unknown ruleset 'no_such_preset'"),
        ("cleanrl_ppo.py", ["--seed", "4294967296"], "--seed must be an integer in 0..4294967295"),
        ("sb3_dict_obs.py", ["--seed", "4294967296"], "--seed must be an integer in 0..4294967295"),
        ("cleanrl_ppo.py", ["--ruleset", "/no/such.yaml"], "ruleset file not found: /no/such.yaml"),
    ],
)
def test_bad_arguments(tmp_path, script, args, message):
    """As a subprocess: exit 2, the message, no traceback, nothing written."""
    proc = (
        run_example(script, "--run-dir", str(tmp_path / "run"), *args)
        if script == "cleanrl_ppo.py"
        else run_example(script, *args)
    )
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "run").exists()  # nothing written before the arguments are checked


def load_example(script: str):
    spec = importlib.util.spec_from_file_location(f"example_{script[:-3]}", ROOT / "examples" / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the scripts run main() only as __main__
    return module


@pytest.fixture(scope="module")
def examples():
    return {script: load_example(script) for script in ("cleanrl_ppo.py", "sb3_dict_obs.py")}


@pytest.mark.parametrize("script", ["cleanrl_ppo.py", "sb3_dict_obs.py"])
@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "4294967296"], "--seed must be an integer in 0..4294967295"),
        (["--seed", "-1"], "--seed must be an integer in 0..4294967295"),
        (["--ruleset", "/no/such.yaml"], "--ruleset /no/such.yaml: ruleset file not found"),
        (["--ruleset", "{tmp}"], "--ruleset {tmp}: is a folder; give a preset name or a rules YAML file"),
        (["--ruleset", "{tmp}/rules.yaml/"], "give a preset name or a rules YAML file"),  # a folder named like a file
        (["--eval-games", "100001"], "--eval-games must be in 1..100,000, got 100,001"),
        (["--torch-threads", "100000"], "--torch-threads must be in 1.."),
        (["--torch-threads", "0"], "--torch-threads must be at least 1"),
        (["--ENVS", "65537"], "--ENVS must be in 1..65,536, got 65,537"),
    ],
)
def test_bad_arguments_in_process(examples, tmp_path, capsys, script, args, message):
    """``parse_args`` of both examples: a parser error (exit 2) naming the argument and what
    it allows; nothing created."""
    (tmp_path / "rules.yaml").mkdir()
    envs = "--num-envs" if script == "cleanrl_ppo.py" else "--n-envs"
    args = [a.replace("{tmp}", str(tmp_path)).replace("--ENVS", envs) for a in args]
    message = message.replace("{tmp}", str(tmp_path)).replace("--ENVS", envs)
    run_dir = ["--run-dir", str(tmp_path / "run")] if script == "cleanrl_ppo.py" else []
    with pytest.raises(SystemExit) as exc:
        examples[script].parse_args(run_dir + args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "where, message",
    [
        ("file", "--run-dir {path} is a file, not a folder"),
        ("file/run", "--run-dir: cannot create the folder {path}: {tmp}/file is a file, not a folder"),
        ("", "--run-dir is empty"),
    ],
)
def test_cleanrl_refuses_a_run_dir_it_cannot_write(examples, tmp_path, capsys, where, message):
    (tmp_path / "file").write_text("keep")
    path = str(tmp_path / where) if where else ""
    with pytest.raises(SystemExit) as exc:
        examples["cleanrl_ppo.py"].parse_args(["--run-dir", path])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message.format(path=path, tmp=tmp_path) in err, err
    assert (tmp_path / "file").read_text() == "keep"


def test_cleanrl_creates_its_run_dir_when_the_arguments_are_good(examples, tmp_path):
    args = examples["cleanrl_ppo.py"].parse_args(["--run-dir", str(tmp_path / "a" / "b"), "--seed", "4294967295"])
    assert (tmp_path / "a" / "b").is_dir() and args.seed == 2**32 - 1
