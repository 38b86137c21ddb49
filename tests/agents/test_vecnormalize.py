"""``agents.load`` and VecNormalize (agents/ppo_agent.py): a model trained on normalised
observations is never played on raw ones. Its statistics (``vecnormalize.pkl`` beside it,
or in RL Baselines3 Zoo's ``<run>/<env id>/`` folder) are applied, which needs the trust
flag (the file is a pickle); without them it is refused with a message saying why."""

from __future__ import annotations

import functools
import os
import shutil

import numpy as np
import pytest

RULESET = "classic_down"


@functools.cache
def _trained(tmp_root: str, norm_obs: bool) -> str:
    """A MaskablePPO trained 128 steps under VecNormalize (rewards always normalised), saved with
    its statistics in ``<tmp_root>/<obs|reward>/``; returns that folder."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    from jamb_env import JambVecEnv

    folder = f"{tmp_root}/{'obs' if norm_obs else 'reward'}"
    os.makedirs(folder)
    env = VecNormalize(JambVecEnv(2, RULESET, seed=0), norm_obs=norm_obs, norm_reward=True)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [16]}
    )
    model.learn(128)
    model.save(f"{folder}/model.zip")
    env.save(f"{folder}/vecnormalize.pkl")
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("vecnormalize"))
    return lambda norm_obs: _trained(root, norm_obs)


def test_a_model_of_normalised_observations_without_its_statistics_is_refused(runs, tmp_path):
    import agents

    alone = tmp_path / "model.zip"
    shutil.copy(f"{runs(True)}/model.zip", alone)
    for trusted in (False, True):
        with pytest.raises(ValueError, match=r"trained under VecNormalize\(norm_obs=True\) and no vecnormalize.pkl"):
            agents.load(str(alone), ruleset=RULESET, trusted=trusted)


def test_its_statistics_are_a_pickle_loaded_only_when_trusted(runs):
    import agents

    with pytest.raises(
        ValueError, match="VecNormalize statistics model.zip was trained with are a pickle.*--trust-model"
    ):
        agents.load(f"{runs(True)}/model.zip", ruleset=RULESET)


def test_trusted_the_agent_plays_on_the_normalised_observations(runs):
    """The agent's input is VecNormalize's own normalisation of the raw observation."""
    from stable_baselines3.common.vec_env import VecNormalize

    import agents
    from jamb_env import JambEnv, JambVecEnv

    folder = runs(True)
    agent = agents.load(f"{folder}/model.zip", ruleset=RULESET, trusted=True)
    venv = VecNormalize.load(f"{folder}/vecnormalize.pkl", JambVecEnv(1, RULESET, seed=5))
    venv.training = False
    env = JambEnv(RULESET)
    obs, _ = env.reset(seed=5)
    for _ in range(20):
        mask = env.action_masks()
        expected, _ = agent.model.predict(venv.normalize_obs(obs), action_masks=mask, deterministic=True)
        assert np.allclose(agent.normalized(obs), venv.normalize_obs(obs))
        action = agent.act(env, obs, mask)
        assert action == int(expected)
        obs, *_ = env.step(action)


def test_rl_zoos_layout_is_found(runs, tmp_path):
    """rl-zoo: ``<run>/<env id>.zip`` beside ``<run>/<env id>/vecnormalize.pkl``."""
    import agents

    run = tmp_path / "ppo_mask" / "Jamb-v1_1"
    (run / "Jamb-v1").mkdir(parents=True)
    shutil.copy(f"{runs(True)}/model.zip", run / "Jamb-v1.zip")
    shutil.copy(f"{runs(True)}/vecnormalize.pkl", run / "Jamb-v1" / "vecnormalize.pkl")
    agent = agents.load(str(run / "Jamb-v1.zip"), ruleset=RULESET, trusted=True)
    assert agent._normalization is not None


def test_a_model_of_normalised_rewards_only_plays_on_raw_observations(runs, tmp_path):
    import agents

    alone = tmp_path / "model.zip"
    shutil.copy(f"{runs(False)}/model.zip", alone)
    agent = agents.load(str(alone), ruleset=RULESET)  # nothing to apply, nothing refused
    obs = np.linspace(0, 1, agent.observation_size, dtype=np.float32)
    assert agent.normalized(obs) is obs


def test_export_refuses_a_model_of_normalised_observations(runs, tmp_path):
    from agents.export import export_model

    with pytest.raises(ValueError, match="VecNormalize"):
        export_model(f"{runs(True)}/model.zip", tmp_path / "copy.zip")
    assert not (tmp_path / "copy.zip").exists()
