"""Uniformly random legal play on batches of games (the soak run, the benchmarks, random opponents)."""

from __future__ import annotations

import numpy as np


def sample_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniform legal action per game: argmax of uniform noise in [1, 2) on the legal
    entries (0 elsewhere), so a legal entry always wins even when its noise draw is 0.

    ``masks``: bool (N, A), a legal action in each row (a row without one gives action 0).
    Returns int64 (N,) action indices; draws N x A float32 numbers from ``rng``."""
    return ((rng.random(masks.shape, dtype=np.float32) + 1.0) * masks).argmax(axis=1)
