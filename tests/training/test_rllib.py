"""``jamb-train --engine rllib`` (agents/training/rllib_train.py) and ``agents.load("rllib:...")``.

RLlib comes with the optional ``ray`` extra (``make install-ray``): without it the tests
that need it are skipped. The training tests share one tiny run (a local Ray with 2 CPUs,
1,024 env steps, a 16-unit network, 2 evaluation games) in a fresh process, then resume it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from agents.training.config import CONFIGS_DIR
from tests.helpers import needs_module, repeated_steps, scalars

ROOT = Path(__file__).resolve().parents[2]
needs_rllib = needs_module("ray.rllib", "RLlib")

TINY = {
    "engine": "rllib",
    "ruleset": "classic",
    "seed": 3,
    "total_timesteps": 1024,
    "num_cpus": 2,
    "num_env_runners": 0,
    "num_envs_per_env_runner": 4,
    "rollout_fragment_length": 64,
    "train_batch_size": 256,
    "minibatch_size": 128,
    "num_epochs": 1,
    "hidden_sizes": [16],
    "eval_freq": 512,
    "eval_games": 2,
    "checkpoint_freq": 512,
    "keep_checkpoints": 2,
}


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


def write_config(path: Path, base: dict = TINY, **changes) -> Path:
    path.write_text(yaml.safe_dump({**base, **changes}), encoding="utf-8")
    return path


def train_tiny(folder: Path, base: dict = TINY) -> tuple[Path, str]:
    """A finished training run of the config ``base`` in ``folder / "run"`` and its stdout."""
    run = folder / "run"
    proc = tool(
        "train", "--config", str(write_config(folder / "tiny.yaml", base)), "--run-dir", str(run), "--no-progress"
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return run, proc.stdout


# ---------------------------------------------------------------------------- config errors (no Ray started)
@pytest.mark.parametrize(
    "changes, message",
    [
        ({"minibatch_size": 4096}, "key 'minibatch_size': 4096 is more than train_batch_size 256"),
        ({"num_env_runners": -1}, "key 'num_env_runners': expected an integer >= 0"),
        ({"lr": "fast"}, "key 'lr': expected a number in (0.0, 1.0]"),
        ({"gamma": 1.5}, "key 'gamma': expected a number in (0.0, 1.0]"),
        ({"hidden_sizes": []}, "key 'hidden_sizes': expected a non-empty list"),
        ({"rollout_fragment_length": "often"}, "key 'rollout_fragment_length': expected a positive integer or 'auto'"),
        ({"eval_games": 0}, "key 'eval_games': expected a positive integer"),
        ({"seed": True}, "key 'seed': expected an integer"),
        ({"n_steps": 128}, "key 'n_steps': unknown; allowed: engine, ruleset"),
    ],
)
def test_bad_config_values_are_named(tmp_path, changes, message):
    assert_refused(write_config(tmp_path / "bad.yaml", **changes), message)


def assert_refused(path: Path, message: str) -> None:
    """load_rllib_config(path) raises a ConfigError naming the file and saying ``message``."""
    from agents.training.config import ConfigError
    from agents.training.rllib_config import load_rllib_config

    with pytest.raises(ConfigError) as exc:
        load_rllib_config(path)
    assert message in str(exc.value) and Path(path).name in str(exc.value)


def test_the_shipped_config_is_valid():
    from agents.training.rllib_config import load_rllib_config

    cfg = load_rllib_config(CONFIGS_DIR / "rllib_classic.yaml")
    assert cfg["engine"] == "rllib" and cfg["ruleset"] == "classic" and cfg["eval_seed"] == 30_000_000


@pytest.mark.slow  # seven jamb-train subprocesses
def test_cli_errors_exit_2_without_a_traceback(tmp_path):
    bad = write_config(tmp_path / "bad.yaml", gamma=2)
    good = write_config(tmp_path / "good.yaml")
    sb3 = CONFIGS_DIR / "ppo_classic.yaml"
    cases = [
        (["--engine", "rllib", "--config", str(bad)], "key 'gamma': expected a number in (0.0, 1.0], got 2"),
        (["--engine", "rllib", "--config", str(tmp_path / "nope.yaml")], "training config not found"),
        (["--resume", str(tmp_path / "norun")], "not a run folder"),
        (["--engine", "sb3", "--config", str(good)], "is an RLlib config"),
        (["--engine", "rllib", "--config", str(sb3)], "is an SB3 config"),
        (["--config", str(good), "--init-from", "x.zip"], "--init-from is for the SB3 engine"),
        (["--config", str(sb3), "--address", "h:1"], "--address joins a Ray cluster, for --engine rllib"),
    ]
    for argv, message in cases:
        proc = (
            tool("train", *argv, "--run-dir", str(tmp_path / "run")) if "--resume" not in argv else tool("train", *argv)
        )
        assert proc.returncode == 2, (argv, proc.stderr[-2000:])
        assert message in proc.stderr and "Traceback" not in proc.stderr, (argv, proc.stderr[-2000:])
    assert not (tmp_path / "run").exists()


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    from agents import load

    (tmp_path / "empty").mkdir()
    for path, message in (
        (tmp_path / "nope", "no such file or folder"),
        (tmp_path / "empty", "no RLlib checkpoint in"),
    ):
        with pytest.raises(FileNotFoundError, match=message):
            load(f"rllib:{path}")
    with pytest.raises(ValueError, match="needs a path after the colon"):
        load("rllib:")
    proc = tool("evaluate", "--agents", f"rllib:{tmp_path / 'nope'}", "greedy", "--games", "2", "--no-progress")
    assert proc.returncode == 2 and "no RLlib checkpoint at" in proc.stderr and "Traceback" not in proc.stderr


def test_rllib_agent_without_ray_says_how_to_install(monkeypatch, tmp_path):
    from agents import load

    for name in ("class_and_ctor_args.pkl", "module_state.pkl"):  # looks like an RLModule folder
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setitem(sys.modules, "ray.rllib", None)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ValueError, match="RLlib is not installed: make install-ray"):
        load(f"rllib:{tmp_path}")


# ---------------------------------------------------------------------------- training, resume, playing
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A finished 1,024-step run (checkpoints at 512 and 1,024) and its stdout."""
    return train_tiny(tmp_path_factory.mktemp("rllib"))


@needs_rllib
@pytest.mark.slow
def test_training_writes_the_tags_and_checkpoints(tiny_run):
    run, out = tiny_run
    tags = scalars(run)
    for tag in (
        "jamb/score",
        "eval/score",
        "eval/baseline_random",
        "eval/baseline_greedy",
        "eval/baseline_expectimax",
        "train/policy_loss",
    ):
        assert tag in tags, sorted(tags)
    assert tags["eval/score"] == [512, 1024]
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["checkpoint_000000000512", "checkpoint_000000001024"]
    state = json.loads((run / "checkpoints" / ckpts[-1] / "jamb_state.json").read_text())
    assert state["env_steps"] == 1024 and state["start"] == 0
    assert yaml.safe_load((run / "config.yaml").read_text())["engine"] == "rllib"
    with np.load(run / "evaluations.npz") as ev:
        assert list(ev["timesteps"]) == [512, 1024] and ev["results"].shape == (2, 2)
    assert "eval score:" in out and "greedy:" in out


@needs_rllib
@pytest.mark.slow
def test_agent_plays_legal_games_greedily(tiny_run):
    from agents import load
    from agents.evaluation.solitaire import play_game
    from jamb_env import JambEnv

    run, _ = tiny_run
    agent = load(f"rllib:{os.path.relpath(run)}", ruleset="classic")  # a relative path too
    env = JambEnv("classic", illegal_action="raise")  # an illegal action would raise
    first = [play_game(agent, env, seed)["score"] for seed in (20_000_000, 20_000_001)]
    assert first == [play_game(agent, env, seed)["score"] for seed in (20_000_000, 20_000_001)]  # deterministic
    obs, info = env.reset(seed=1)
    masks = np.stack([info["action_mask"].astype(bool)] * 3)
    masks[1, :] = False
    masks[1, 40] = True
    actions = agent.act_batch(np.stack([obs] * 3), masks)
    assert actions.shape == (3,) and actions[1] == 40 and masks[0, actions[0]]
    with pytest.raises(ValueError, match="trained on another ruleset"):
        load(f"rllib:{run}", ruleset="six_dice")


@needs_rllib
@pytest.mark.slow
def test_resume_continues_the_step_count(tiny_run, tmp_path):
    import shutil

    run, _ = tiny_run
    resumed = tmp_path / "run"
    shutil.copytree(run, resumed)
    ckpts = resumed / "checkpoints"
    # what a kill leaves: a half-written checkpoint (hidden temporary folder) and one without its state file
    (ckpts / ".checkpoint_000000001536.tmp-dead").mkdir()
    shutil.copytree(ckpts / "checkpoint_000000001024", ckpts / "checkpoint_000000009999")
    (ckpts / "checkpoint_000000009999" / "jamb_state.json").unlink()
    proc = tool("train", "--resume", str(resumed), "--total-timesteps", "1536", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "removed" in proc.stdout and "skipping checkpoint" in proc.stdout and "incomplete checkpoint" in proc.stdout
    assert f"resuming from {ckpts / 'checkpoint_000000001024'} (step 1024)" in proc.stdout
    assert not (ckpts / ".checkpoint_000000001536.tmp-dead").exists()
    state = json.loads((ckpts / "checkpoint_000000001536" / "jamb_state.json").read_text())
    assert state["env_steps"] == 1536 and state["start"] == 1
    assert "checkpoint_000000000512" not in os.listdir(ckpts)  # keep_checkpoints: 2 (the incomplete one is not counted)
    tags = scalars(resumed)
    assert tags["eval/score"] == [512, 1024, 1536]  # one curve, no step twice
    assert tags["time/fps"] == [256, 512, 768, 1024, 1280, 1536]  # every iteration once: the count went on from 1024
    assert tags["jamb/score"] == sorted(set(tags["jamb/score"]))
    assert repeated_steps(resumed) == {}
    proc = tool(
        "evaluate",
        "--agents",
        f"rllib:{resumed}",
        "greedy",
        "--games",
        "2",
        "--no-progress",
        "--out",
        str(tmp_path / "ev"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"| rllib:{resumed} | 2 |" in proc.stdout and "paired difference" in proc.stdout
