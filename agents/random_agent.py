"""The uniform random baseline: a uniform choice among the legal actions."""

from __future__ import annotations

import numpy as np

from agents.base import checked_mask
from jamb_env.engine.doors import check_seed


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator.

    ``seed``: None (fresh entropy) or a non-negative integer; ValueError otherwise (a bool,
    a float, a negative number)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(check_seed(seed))

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(checked_mask(env, mask))))
