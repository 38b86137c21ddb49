"""Gymnasium's and SB3's env checkers on every observation kind of JambEnv, and the order
that keeps the illegal-action guard working (``warnings.simplefilter("error",
IllegalActionWarning)``, docs/tools.md): the checkers' random steps ignore the mask, so
they run on an env of their own inside ``catch_warnings`` (or before the guard); TorchRL's
construction probe (``EnvCreator``: reset, one random step) samples a legal action once
the env carries TorchRL's ``ActionMask`` transform, so it runs under the guard as it is."""

from __future__ import annotations

import importlib.util
import multiprocessing
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from jamb_env import IllegalActionWarning, JambEnv

KINDS = [{}, {"mask_dtype": "bool"}, {"mask_in_observation": True}, {"mask_in_observation": True, "mask_dtype": "bool"}]


@pytest.mark.parametrize("preset", ["classic", "joly"])
@pytest.mark.parametrize("kwargs", KINDS, ids=["box", "box-bool", "dict", "dict-bool"])
def test_the_checkers_pass_in_the_documented_order(preset, kwargs):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)  # the guard the docs recommend
        with pytest.warns(IllegalActionWarning):  # what an unguarded checker prints
            with warnings.catch_warnings():
                warnings.simplefilter("always", IllegalActionWarning)
                unguarded = JambEnv(preset, **kwargs)
                unguarded.action_space.seed(5)  # the checker's one unseeded random step: illegal at seed 5
                check_env(unguarded, skip_render_check=True)
        with warnings.catch_warnings():  # the documented order: the checkers on envs of their own
            warnings.simplefilter("ignore", IllegalActionWarning)
            check_env(JambEnv(preset, render_mode="rgb_array", **kwargs))
            sb3_check_env(JambEnv(preset, **kwargs), warn=False)
        env = JambEnv(preset, **kwargs)  # the env that trains: the guard holds
        env.reset(seed=0)
        with pytest.raises(IllegalActionWarning, match="illegal action"):
            env.step(int(np.flatnonzero(~env.action_masks())[0]))


@pytest.fixture(scope="module")
def torchrl():
    if importlib.util.find_spec("torchrl") is None:
        pytest.skip("torchrl is not installed: the `torchrl` extra (pip install -e '.[torchrl]')")
    multiprocessing.get_start_method()  # importing torchrl would set "spawn" for the whole worker
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import torchrl

    return torchrl


def masked_env():
    """The docs/tools.md recipe: the bool mask in the observation and TorchRL's ActionMask."""
    from torchrl.envs import ActionMask, GymEnv, TransformedEnv

    return TransformedEnv(
        GymEnv("Jamb-v1", mask_in_observation=True, mask_dtype="bool", categorical_action_encoding=True), ActionMask()
    )


def test_torchrl_construction_probes_are_legal_under_the_guard(torchrl):
    import torch
    from torchrl.envs import EnvCreator, ParallelEnv

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        for _ in range(10):  # each probe: reset and one random step, sampled from the masked spec
            EnvCreator(masked_env)
        env = ParallelEnv(2, masked_env)  # builds an EnvCreator: its probe too
        assert env.batch_size == torch.Size([2])
        env.close(raise_if_closed=False)
