"""Seeds of games: every dice stream derives from ``numpy.random.SeedSequence``.

A game's dice come from one generator, ``gymnasium.utils.seeding.np_random(s)`` for an
integer ``s`` (what ``JambEnv.reset(seed=s)`` uses): the k-th die rolled is the k-th draw
of the stream it makes. Where a run needs many games, game ``i`` of a run seeded ``seed``
gets ``s = game_seed(seed, i, stage)``: 128 bits from ``SeedSequence([seed, stage, i])``,
so runs with different seeds, games with different indices and different stages share no
stream (``SeedSequence`` mixes its whole entropy; consecutive seeds are not related).

Documented sub-sequences:

* training games: ``game_seed(seed, i, STAGE_TRAIN)`` (game ``i`` of ``JambVecEnv(N,
  seed=seed)``, env ``i`` of the dummy/subproc training VecEnv);
* a run started from a model (``init_from``, a second stage): ``STAGE_FINETUNE``, so a
  second stage never replays the first stage's games even with the same seed;
* the games that train the search agent's value networks (:mod:`agents.training.value`):
  ``game_seed(seed, i, STAGE_VALUE)``, game ``i`` counted over all its iterations;
* the teacher's games of an imitation stage (:mod:`agents.training.imitation`):
  ``game_seed(seed, i, STAGE_IMITATION)``;
* evaluation: the canonical games are ``reset(seed=20_000_000 + g)`` (game ``g``,
  ``agents.evaluation.solitaire.EVAL_SEED_BASE``), validation games for model choice
  ``30_000_000 + g``; these plain integer seeds are fixed and documented, and
  ``SeedSequence`` of a single integer shares no stream with the derived training seeds.
"""

from __future__ import annotations

import numpy as np

STAGE_TRAIN = 0
STAGE_FINETUNE = 1
STAGE_VALUE = 2
STAGE_IMITATION = 3


def _check(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def game_seed(seed: int, index: int, stage: int = STAGE_TRAIN) -> int:
    """The integer seed of game ``index`` of a run seeded ``seed`` (module docstring).

    Raises:
        ValueError: a negative or non-integer argument.
    """
    entropy = [_check("seed", seed), _check("stage", stage), _check("index", index)]
    words = np.random.SeedSequence(entropy).generate_state(4, np.uint32)
    return int.from_bytes(words.tobytes(), "little")


def game_seeds(seed: int, n: int, stage: int = STAGE_TRAIN) -> list[int]:
    """``[game_seed(seed, i, stage) for i in range(n)]``."""
    return [game_seed(seed, i, stage) for i in range(_check("n", n))]
