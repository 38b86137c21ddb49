"""Sixth hostile round: forged value network files (``search:<file.npz>``), a forged
best score in a run folder (``best.json``), an integer no float holds (YAML and JSON read
any size) in a training, RLlib or value config, a self-play run's settings, an env's
reward_scale or a run's init_from.json (jamb-plot); LegalActions stepped before reset.

Each case failed (a traceback, or a forged score taken) before its fix; now it is a clear
error, or the forged value is set aside.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from agents.search import VALUE_FORMAT, ValueNet
from agents.training.config import CONFIGS_DIR


def _forged_net(path, meta: dict, **arrays):
    meta = {"format": VALUE_FORMAT, "mean": 0.0, "std": 1.0, "ruleset": "classic_down", "layers": 1} | meta
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path


# ---------------------------------------------------------------------- value networks
@pytest.mark.parametrize(
    "meta, arrays",
    [
        ({}, {"W0": np.array(1.0, np.float32), "b0": np.zeros(1, np.float32)}),  # a scalar for a weight matrix
        ({"mean": 10**400}, {"W0": np.zeros((31, 1), np.float32), "b0": np.zeros(1, np.float32)}),  # no float holds it
    ],
    ids=["scalar-weights", "huge-mean"],
)
def test_a_forged_value_network_is_a_clear_error_not_a_traceback(tmp_path, meta, arrays):
    from agents import load

    path = _forged_net(tmp_path / "net.npz", meta, **arrays)
    with pytest.raises(ValueError, match="not a matrix and a vector|finite numbers"):
        ValueNet.load(path)
    with pytest.raises(ValueError):
        load(f"search:{path}", ruleset="classic_down")


# ---------------------------------------------------------------------- run folders
@pytest.mark.parametrize("reward", ["1" + "0" * 400, "NaN", "true"])
def test_a_forged_best_score_is_neither_taken_nor_a_traceback(tmp_path, reward):
    from agents.training import runs

    with zipfile.ZipFile(tmp_path / runs.BEST_MODEL, "w") as zf:  # model_steps reads the zip's "data" alone
        zf.writestr("data", json.dumps({"num_timesteps": 512}))
    (tmp_path / runs.BEST_RECORD).write_text(f'{{"step": 512, "mean_reward": {reward}}}')
    assert runs.best_so_far(tmp_path, {256: 0.5, 512: 0.25}) == 0.25  # the evaluation at the best model's step


# ---------------------------------------------------------------------- numbers no float holds
HUGE = 10**400  # YAML and JSON read an integer of any size; float() of it overflows


def _yaml_with(source, tmp_path, **changes):
    import yaml

    cfg = yaml.safe_load((CONFIGS_DIR / source).read_text())
    for key, value in changes.items():
        section, _, name = key.rpartition(".")
        (cfg[section] if section else cfg)[name] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _sb3_config(tmp_path):
    from agents.training.config import load_config

    load_config(_yaml_with("ppo_classic.yaml", tmp_path, **{"env.reward_scale": HUGE}))


def _rllib_config(tmp_path, key):
    from agents.training.rllib_config import load_rllib_config

    load_rllib_config(_yaml_with("rllib_classic.yaml", tmp_path, **{key: HUGE}))


def _value_config(tmp_path):
    from agents.training.value import ValueConfig

    ValueConfig(ruleset="classic_down", lr=HUGE)


def _selfplay_settings(tmp_path, key):
    from agents.training.selfplay import check_run_settings

    saved = {
        "ruleset": "classic",
        "players": 2,
        "scoring": "separate",
        "reward": "score",
        "reward_scale": 0.01,
        "seed": 0,
        "baselines": ["random"],
        "self_play": 0.8,
        "n_envs": 2,
        "n_steps": 64,
    }
    check_run_settings({**saved, key: HUGE}, tmp_path / "selfplay.json")


def _envs(tmp_path, which):
    from jamb_env import JambEnv
    from jamb_env.multiplayer import raw_env

    (JambEnv if which == "solitaire" else raw_env)(reward_scale=HUGE)


@pytest.mark.parametrize(
    "check",
    [
        _sb3_config,
        lambda p: _rllib_config(p, "reward_scale"),
        lambda p: _rllib_config(p, "lr"),
        _value_config,
        lambda p: _selfplay_settings(p, "reward_scale"),
        lambda p: _selfplay_settings(p, "self_play"),
        lambda p: _envs(p, "solitaire"),
        lambda p: _envs(p, "multiplayer"),
    ],
    ids=[
        "sb3-reward_scale",
        "rllib-reward_scale",
        "rllib-lr",
        "value-lr",
        "selfplay-reward_scale",
        "selfplay-self_play",
        "JambEnv",
        "multiplayer",
    ],
)
def test_a_number_no_float_holds_is_refused_not_an_overflow(tmp_path, check):
    from agents.training.config import ConfigError

    with pytest.raises((ConfigError, ValueError), match="number|probability|finite"):
        check(tmp_path)


def test_a_forged_init_step_count_is_unknown_not_a_plot_traceback(tmp_path, capsys):
    from torch.utils.tensorboard import SummaryWriter

    from agents.apps.cli.plot import main as plot
    from agents.training.curves import init_steps

    run = tmp_path / "run"
    writer = SummaryWriter(log_dir=str(run))
    writer.add_scalar("eval/score", 1.0, 0)
    writer.close()
    (run / "config.yaml").write_text("config_name: tiny\nruleset: classic\ninit_from: /nonexistent/model.zip\n")
    for forged in (str(HUGE), "-5", "true"):
        (run / "init_from.json").write_text(f'{{"steps_before": {forged}}}')
        assert init_steps(run, "/nonexistent/model.zip") == 0
    (run / "init_from.json").write_text(f'{{"steps_before": {HUGE}}}')
    assert plot([str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert "step count is unknown" in capsys.readouterr().err


# ---------------------------------------------------------------------- wrappers
def test_legal_actions_before_reset_says_call_reset_not_an_index_error():
    from jamb_env import JambEnv
    from jamb_env.wrappers import LegalActions

    env = LegalActions(JambEnv())
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    assert env.step(0)[4]["played_action"] == 0


def test_action_masks_before_reset_is_the_envs_reset_error_not_an_all_false_mask():
    """Its docstring says never all False; before reset it was (a sampler then draws from nothing)."""
    from jamb_env import JambEnv

    env = JambEnv()
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        env.action_masks()
    env.reset(seed=0)
    assert env.action_masks().any()
