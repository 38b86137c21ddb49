"""JambEnv's doors to other tools: rgb_array pictures, the mask inside a Dict observation,
masked samplers over the terminal step (the mask contract itself: tests/conformance)."""

import gymnasium as gym
import numpy as np
import pytest

import jamb_env  # noqa: F401  (registers Jamb-v1)
from jamb_env import JambEnv
from tests.helpers import random_legal, slow_after


def _categorical(mask):
    """A -inf-masked Categorical sample (raises ValueError on an all-False mask)."""
    import torch

    logits = torch.where(torch.as_tensor(np.asarray(mask), dtype=torch.bool), 0.0, -torch.inf)
    return int(torch.distributions.Categorical(logits=logits, validate_args=True).sample())


# ---------------------------------------------------------------------------- pictures
@pytest.mark.parametrize("preset", slow_after(["classic", "nokaut"]))
def test_rgb_array_has_one_shape_and_changes_after_a_write(preset):
    env = JambEnv(preset, render_mode="rgb_array")
    assert env.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    before_reset = env.render()
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3 and first.shape == before_reset.shape
    first[:] = 0  # a new array each call
    first = env.render()
    assert first.any()
    write = int(np.flatnonzero(env.action_masks())[-1])
    assert env.decode_action(write).kind == "write"
    env.step(write)
    after = env.render()
    assert after.shape == first.shape and (after != first).any()
    rng, done = np.random.default_rng(0), False
    while not done:
        _, _, done, _, _ = env.step(random_legal(env, rng))
        assert env.render().shape == first.shape
    env.reset(seed=1)
    assert env.render().shape == first.shape


@pytest.mark.slow  # a whole game rendered to frames; the rgb_array test above keeps rendering fast
def test_render_collection_takes_the_frames():
    """RecordVideo needs moviepy; RenderCollection gathers the same frames."""
    env = gym.wrappers.RenderCollection(gym.make("Jamb-v1", render_mode="rgb_array"))
    env.reset(seed=0)
    rng, done = np.random.default_rng(1), False
    while not done:
        _, _, done, _, _ = env.step(random_legal(env.unwrapped, rng))
    frames = env.render()
    assert len(frames) > 52 and np.stack(frames).dtype == np.uint8  # stack fails on differing shapes


def test_make_vec_env_with_the_registered_id():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env("Jamb-v1", n_envs=2, seed=0)
    assert vec.get_attr("render_mode") == ["rgb_array", "rgb_array"]
    obs = vec.reset()
    assert obs.shape == (2, *JambEnv().observation_space.shape)
    masks = get_action_masks(vec)
    assert masks.shape == (2, vec.action_space.n) and masks.any(axis=1).all()
    vec.step(masks.argmax(axis=1))
    images = vec.get_images()
    assert len(images) == 2 and images[0].shape == images[1].shape and images[0].dtype == np.uint8
    vec.close()


# ---------------------------------------------------------------------------- Dict observation
def test_gym_make_passes_the_option():
    env = gym.make("Jamb-v1", mask_in_observation=True)
    obs, _ = env.reset(seed=0)
    assert list(env.observation_space.spaces) == ["action_mask", "observation"]  # sorted, on every gymnasium
    assert isinstance(obs, dict) and env.observation_space.contains(obs)
    assert env.observation_space["action_mask"].n == env.action_space.n


def test_maskable_ppo_multi_input_policy_learns_on_the_dict():
    from sb3_contrib import MaskablePPO

    env = JambEnv(mask_in_observation=True)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


# ---------------------------------------------------------------------------- masked samplers
def test_masked_sampler_survives_the_terminal_step_with_autoreset():
    env = gym.wrappers.Autoreset(JambEnv())
    _, info = env.reset(seed=2)
    ends = steps_after_end = 0
    while steps_after_end < 3:
        _, _, terminated, _, info = env.step(_categorical(info["action_mask"]))
        if terminated:
            ends += 1
            assert info["action_mask"].all()
        elif ends:
            steps_after_end += 1
            assert info["turn"] < steps_after_end and not info["action_mask"].all()  # a new game
    assert ends == 1


def test_masked_sampler_survives_the_terminal_step_in_sync_vector_env():
    envs = gym.vector.SyncVectorEnv([lambda: JambEnv(mask_in_observation=True)] * 2)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, _ = envs.reset(seed=[0, 1])
    ended = np.zeros(2, dtype=bool)
    for _ in range(400):
        obs, _, terminated, _, _ = envs.step(np.array([_categorical(m) for m in obs["action_mask"]]))
        assert obs["action_mask"][terminated].all() and obs["action_mask"].any(axis=1).all()
        ended |= terminated
        if ended.all():
            break
    assert ended.all()
    envs.step(np.array([_categorical(m) for m in obs["action_mask"]]))  # the step after an end resets
    envs.close()


# ---------------------------------------------------------------------------- bad options
