"""``jamb_env.testing.api_test`` (the contract every solitaire door keeps: spaces, masks,
info keys, return = score, seeding, illegal actions in both modes, bad actions) on every
door and every preset: one game per door on every preset, more games on two presets (slow
beyond the first door); and that it fails a door that breaks the contract."""

from __future__ import annotations

import gymnasium as gym
import pytest

from jamb_env import JambEnv
from jamb_env.testing import DOORS, api_test
from tests.helpers import playable_presets, slow_after

FAST = ("classic", "joly")  # the standard sheet, and jokers
ENGINES = ("JambEnv", "JambVectorEnv")  # the others wrap these: every preset in the slow run
CASES = [(door, preset) for preset in playable_presets() for door in ENGINES] + [
    (door, preset) for preset in FAST for door in DOORS if door not in ENGINES
]
SLOW = [(door, preset) for preset in playable_presets() if preset not in FAST for door in DOORS if door not in ENGINES]


@pytest.mark.parametrize(
    "door, preset", slow_after(CASES, fast=[c for c in CASES if c[1] in FAST])
)  # every door on FAST
def test_every_door_keeps_the_contract(door, preset):
    api_test(door, preset, games=1)


@pytest.mark.slow
@pytest.mark.parametrize("door, preset", SLOW)
def test_the_wrapping_doors_on_every_preset(door, preset):
    api_test(door, preset, games=2, seed=7)


class DoubledRewards(gym.RewardWrapper):
    def reward(self, reward):
        return 2 * reward


class NoWarning(gym.Wrapper):
    """Ends a game on an illegal action with the penalty but never warns."""

    def step(self, action):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.env.step(action)


@pytest.mark.parametrize(
    "wrapper, message",
    [(DoubledRewards, "return .* == final score"), (NoWarning, "warns once"), (gym.wrappers.Autoreset, "")],
)
def test_api_test_fails_a_door_that_breaks_the_contract(wrapper, message):
    with pytest.raises(AssertionError, match=message):
        api_test(lambda **kw: wrapper(JambEnv(**kw)), "classic_down", games=1)
    with pytest.raises(ValueError, match="unknown door"):
        api_test("Jamb", "classic")
