"""pytest-benchmark versions of scripts/bench.py's env loops (agents/apps/bench.py): ``pytest benchmarks/``.

Not part of ``make test`` (timings are measurements, not tests).
"""

import numpy as np
import pytest

from jamb_env import JambEnv, JambVecEnv
from jamb_env.engine.random_play import sample_actions


@pytest.mark.parametrize("preset", ["classic", "six_dice"])
def test_single_env_1000_steps(benchmark, preset):
    env = JambEnv(preset)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    actions = []

    def run():
        for _ in range(1000):
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            if env.step(a)[2]:
                env.reset()
        actions.append(1)

    benchmark(run)


@pytest.mark.parametrize("preset", ["classic", "six_dice"])
@pytest.mark.parametrize("num_envs", [64, 1024, 4096])
def test_vec_env_step(benchmark, preset, num_envs):
    env = JambVecEnv(num_envs, preset, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(sample_actions(rng, env.action_masks()))
    actions = [sample_actions(rng, env.action_masks())]

    def run():
        env.step(actions[0])
        actions[0] = sample_actions(rng, env.action_masks())

    benchmark(run)
