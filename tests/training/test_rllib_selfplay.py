"""RLlib self-play (``players`` in an RLlib config): the PettingZoo AEC env through RLlib's
``PettingZooEnv``, one shared policy for every seat, evaluated against ``greedy``.

The config checks need no Ray; the training tests (skipped without RLlib) share one tiny
2-player run (a local Ray with 2 CPUs, 1,024 env steps, a 16-unit network, 2 evaluation
seeds in both seat orders), then resume it.
"""

from __future__ import annotations

import json
import shutil

import pytest

from agents.training.config import CONFIGS_DIR
from tests.helpers import repeated_steps
from tests.training.test_rllib import ROOT, assert_refused, needs_rllib, scalars, tool, train_tiny
from tests.training.test_rllib import write_config as write_rllib_config

TINY = {
    "engine": "rllib",
    "ruleset": "classic",
    "players": 2,
    "scoring": "separate",
    "reward": "score",
    "seed": 3,
    "total_timesteps": 1024,
    "num_cpus": 2,
    "num_env_runners": 0,
    "num_envs_per_env_runner": 2,
    "rollout_fragment_length": 128,
    "train_batch_size": 256,
    "minibatch_size": 128,
    "num_epochs": 1,
    "hidden_sizes": [16],
    "eval_freq": 512,
    "eval_games": 2,
    "checkpoint_freq": 512,
    "keep_checkpoints": 2,
}


def write_config(path, **changes):
    return write_rllib_config(path, TINY, **changes)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"players": 1}, "key 'players': expected an integer in 2..5"),
        ({"players": 6}, "key 'players': expected an integer in 2..5"),
        ({"players": "two"}, "key 'players': expected an integer in 2..5"),
        ({"scoring": "mixed"}, "key 'scoring': expected 'separate' or 'shared', got 'mixed'"),
        ({"reward": "points"}, "key 'reward': expected 'score', 'win' or 'margin', got 'points'"),
    ],
)
def test_bad_selfplay_values_are_named(tmp_path, changes, message):
    assert_refused(write_config(tmp_path / "bad.yaml", **changes), message)


def test_the_shipped_selfplay_config_is_valid():
    from agents.training.rllib_config import load_rllib_config

    cfg = load_rllib_config(ROOT / "configs" / "rllib_selfplay_standard.yaml")
    assert (cfg["ruleset"], cfg["players"], cfg["scoring"], cfg["reward"]) == ("standard", 2, "separate", "score")
    assert load_rllib_config(CONFIGS_DIR / "rllib_classic.yaml")["players"] is None  # solitaire


def test_cli_bad_players_exits_2(tmp_path):
    proc = tool(
        "train", "--config", str(write_config(tmp_path / "bad.yaml", players=7)), "--run-dir", str(tmp_path / "run")
    )
    assert proc.returncode == 2 and "key 'players': expected an integer in 2..5" in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.startswith("error: ") and proc.stderr.rstrip().endswith("got 7") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def selfplay_run(tmp_path_factory):
    return train_tiny(tmp_path_factory.mktemp("rllib_selfplay"), TINY)


@needs_rllib
@pytest.mark.slow
def test_selfplay_writes_the_tags_and_checkpoints(selfplay_run):
    from agents import load
    from agents.evaluation.matches import play_match

    run, out = selfplay_run
    tags = scalars(run)
    assert tags["selfplay/win_rate_vs_greedy"] == [512, 1024] and tags["selfplay/margin_vs_greedy"] == [512, 1024]
    assert "selfplay/episode_return" in tags and "train/policy_loss" in tags, sorted(tags)
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["checkpoint_000000000512", "checkpoint_000000001024"]
    assert (run / "checkpoints" / ckpts[-1] / "learner_group" / "learner" / "rl_module" / "shared_policy").is_dir()
    assert json.loads((run / "checkpoints" / ckpts[-1] / "jamb_state.json").read_text())["env_steps"] == 1024
    assert "vs greedy:       win rate" in out
    agent = load(f"rllib:{run}", ruleset="classic")  # the shared policy plays any seat of a 2-player table
    greedy = load("greedy", ruleset="classic")
    for policies in ([agent, greedy], [greedy, agent]):
        result = play_match("classic", policies, seed=20_000_000)  # an illegal action would raise
        assert len(result["scores"]) == 2


@needs_rllib
@pytest.mark.slow
def test_selfplay_resume_continues_the_step_count(selfplay_run, tmp_path):
    run, _ = selfplay_run
    resumed = tmp_path / "run"
    shutil.copytree(run, resumed)
    shutil.rmtree(
        resumed / "checkpoints" / "checkpoint_000000001024"
    )  # as if killed before that checkpoint: 1024 is logged already
    proc = tool("train", "--resume", str(resumed), "--total-timesteps", "1536", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"resuming from {resumed / 'checkpoints' / 'checkpoint_000000000512'} (step 512)" in proc.stdout
    assert "moved to events_abandoned_1.tfrecord" in proc.stdout
    state = json.loads((resumed / "checkpoints" / "checkpoint_000000001536" / "jamb_state.json").read_text())
    assert state["env_steps"] == 1536 and state["start"] == 1
    assert scalars(resumed)["selfplay/win_rate_vs_greedy"] == [512, 1024, 1536]
    assert repeated_steps(resumed) == {}  # read raw: the killed attempt's 1024 is out of the events files
