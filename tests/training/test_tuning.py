"""The library behind ``jamb-tune`` (agents/training/tuning.py), and the random play and
invariant checks behind ``jamb-soak`` and ``jamb-bench`` (jamb_env/engine/random_play.py,
jamb_env/testing/invariants.py), called directly rather than through the commands."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.training.config import CONFIGS_DIR
from tests.training.test_rllib import write_config

ROOT = Path(__file__).resolve().parents[2]


def test_trial_config_evaluates_within_the_budget_and_leaves_the_base_alone(tmp_path):
    from agents.training.tuning import load_base, trial_config

    sb3 = load_base(str(CONFIGS_DIR / "ppo_classic.yaml"), {"total_timesteps": 1000})
    freq = sb3["eval"]["freq"]
    assert freq > 1000 and trial_config(sb3, 1000)["eval"]["freq"] == 1000 and sb3["eval"]["freq"] == freq
    assert trial_config(sb3, 10**9)["eval"]["freq"] == freq
    rllib = load_base(str(write_config(tmp_path / "tiny.yaml")), {})
    assert rllib["eval_freq"] == 512 and trial_config(rllib, 100)["eval_freq"] == 100 and rllib["eval_freq"] == 512


def test_used_trial_runs_are_the_folders_of_a_search(tmp_path):
    from agents.training.tuning import used_trial_runs

    assert used_trial_runs(tmp_path / "none") == [] and used_trial_runs(tmp_path) == []
    (tmp_path / "trial_001").mkdir()  # empty: not a run
    (tmp_path / "trial_002" / "checkpoints").mkdir(parents=True)
    (tmp_path / "trial_000").mkdir()
    (tmp_path / "trial_000" / "config.yaml").write_text("x")
    assert used_trial_runs(tmp_path) == ["trial_000", "trial_002"]


def test_trials_csv_has_every_column_once_in_order():
    from agents.training.tuning import trials_csv

    text = trials_csv([{"trial": 0, "score": 1.5, "lr": 0.1}, {"trial": 1, "score": 2.0, "gamma": 0.99}])
    assert text.splitlines() == ["trial,score,lr,gamma", "0,1.5,0.1,", "1,2.0,,0.99"]


def test_sample_actions_are_legal_and_uniform():
    from jamb_env.engine.random_play import sample_actions

    rng = np.random.default_rng(0)
    masks = np.zeros((3, 5), dtype=bool)
    masks[0, [1, 3]] = True
    masks[1, 4] = True
    masks[2] = True
    draws = np.stack([sample_actions(rng, masks) for _ in range(2000)])
    assert draws.shape == (2000, 3) and draws.dtype == np.int64 and masks[np.arange(3), draws].all()
    assert set(draws[:, 0]) == {1, 3} and set(draws[:, 1]) == {4} and set(draws[:, 2]) == set(range(5))
    assert abs((draws[:, 0] == 1).mean() - 0.5) < 0.05


def test_soak_reports_its_games_and_finds_a_broken_invariant(monkeypatch):
    from jamb_env.testing import invariants

    row = invariants.soak("classic_down", games=8, num_envs=4, seed=1)
    assert (
        row["preset"] == "classic_down"
        and row["games"] >= 8
        and row["steps"] > 0
        and row["min"] <= row["mean"] <= row["max"]
    )

    class Broken(invariants.JambVecEnv):
        def step(self, actions):
            obs, rewards, dones, infos = super().step(actions)
            return obs, rewards + 1.0, dones, infos  # returns no longer add up to the score

    monkeypatch.setattr(invariants, "JambVecEnv", Broken)
    with pytest.raises(AssertionError, match="classic_down: return"):
        invariants.soak("classic_down", games=1, num_envs=2)
