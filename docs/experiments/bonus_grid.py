"""Issue 29, "a stronger teacher": expectimax with its bonus model's per-die constants changed.

expectimax (agents/heuristic.py; its column model: agents/column_model.py) values the upper
bonus with a normal approximation: each upper row still empty is expected at ``MEAN`` dice
of its face, standard deviation ``SD`` dice (the hand-made 2.5 and 1.2). This scratch
experiment replaces the two constants and plays validation games; it is not part of the
library (the shipped expectimax keeps 2.5 / 1.2). Results: docs/results.md "What each approach adds".

    PYTHONPATH=. OMP_NUM_THREADS=1 python docs/experiments/bonus_grid.py RULESET MEAN SD GAMES SEED_BASE

prints the mean score of games ``SEED_BASE .. SEED_BASE + GAMES - 1`` (JambEnv.reset(seed=s):
the same games as ``scripts/evaluate.py --seed-base SEED_BASE``) and saves the per-game
scores to ``bonus_<ruleset>_<mean>_<sd>_<base>_<games>.npy`` for paired differences.
"""

import math
import sys

import numpy as np

from agents import column_model, heuristic
from jamb_env import JambEnv
from jamb_env.rules import kernels as rk

ruleset, mean, sd, games, base = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])


def p_bonus(self, upper, remaining):
    need = rk.bonus_floor(self.rules.arrays.P) - upper
    if not remaining:
        return (need <= 0).astype(np.float64)
    mu = sum(mean * self.face[q] for q in remaining)
    sigma = math.sqrt(sum((sd * self.face[q]) ** 2 for q in remaining))
    return 0.5 * (1.0 + column_model._erf((mu - need + 0.5) / sigma / math.sqrt(2.0)))


column_model._ColumnModel._p_bonus = p_bonus
agent, env, scores = heuristic.ExpectimaxAgent(), JambEnv(ruleset), []
for seed in range(base, base + games):
    obs, _ = env.reset(seed=seed)
    done, total = False, 0.0
    while not done:
        obs, reward, terminated, truncated, _ = env.step(agent.act(env, obs, env.action_masks()))
        total, done = total + reward, terminated or truncated
    scores.append(total)
np.save(f"bonus_{ruleset}_{mean}_{sd}_{base}_{games}.npy", np.array(scores))
print(f"{ruleset} mean {mean} sd {sd}: {np.mean(scores):.1f} over games {base}..{base + games - 1}")
