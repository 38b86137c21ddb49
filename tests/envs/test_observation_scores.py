"""Every observation feature that names a score agrees with the ruleset's own scoring.

On random states of every preset, ``written``, ``value_now``, ``upper_sum``,
``upper_to_bonus`` and ``difference`` are computed from the game's scoring (the sheet
values, the value a write would record, :func:`jamb_env.rules.score_parts`, the
column parts and the bonus rule), not from the observation's own code. This is the
test that caught the observation restating the difference without ``difference_clamp``
(``jnn``) and the bonus threshold without ``bonus_strict`` (``six_dice``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jamb_env import JambEnv
from jamb_env import rules as core
from jamb_env.rules import kernels as rk
from tests.helpers import playable_presets, slow_after

ROOT = Path(__file__).resolve().parents[2]
RULESETS = playable_presets() + [str(ROOT / "tests" / "rules" / "every_column.yaml")]


def _segment(env, obs, name):
    start, size, _, _ = env.observation_layout[name]
    return obs[start : start + size]


def _points_to_bonus(P, upper: int) -> int:
    """The fewest points that make the bonus rule pay, searched on the rule itself."""
    for x in range(10_000):
        if rk.bonus(upper + x, P) > 0:
            return x
    raise AssertionError("the bonus rule never pays")


def _states(name, games=3, every=3):
    env = JambEnv(ruleset=name, illegal_action="raise")
    rng = np.random.default_rng(7)
    for g in range(games):
        obs, info = env.reset(seed=1000 + g)
        done, step = False, 0
        while not done:
            if step % every == 0:
                yield env, obs, env.game
            obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            step += 1


@pytest.mark.parametrize("name", slow_after(RULESETS), ids=lambda n: Path(n).stem)
def test_score_features_follow_the_rulesets_scoring(name):
    checked = 0
    for env, obs, st in _states(name):
        rules, ra = env.ruleset, env.ruleset.arrays
        P = ra.P
        C, R = len(rules.columns), rules.num_rows
        fconst = env._encoder.arrays.fconst
        row_max = np.tile(rules.row_max.astype(np.float32), C)
        written = st.values.reshape(-1).astype(np.float32) / row_max
        assert np.allclose(_segment(env, obs, "written"), written)
        now = np.zeros(C * R, dtype=np.float32)
        if st.roll:
            for cell in range(C * R):
                c, r = divmod(cell, R)
                if not st.filled[c] >> r & 1:  # what writing it now would record
                    after, _ = core.apply_action(rules, st, layout_write(rules) + cell, check=False)
                    now[cell] = after.values[c, r] / row_max[cell]
        assert np.allclose(_segment(env, obs, "value_now"), now)
        parts = core.score_parts(rules, st)
        upper_rows = np.flatnonzero(ra.is_upper)
        ups, diffs = [], []
        for c in range(C):
            out = np.zeros(4, dtype=np.int64)
            rk.column_parts(st.values[c].astype(np.int64), int(st.filled[c]), ra, out)
            ups.append(int(out[0]))
            diffs.append(int(out[2]))
        assert sum(ups) == parts["upper"] and sum(diffs) == parts["difference"]
        if len(upper_rows):
            assert np.allclose(_segment(env, obs, "upper_sum"), np.array(ups) / fconst[0])
            floor = _points_to_bonus(P, 0)
            togo = [min(_points_to_bonus(P, u), floor) / max(floor, 1) for u in ups]
            assert np.allclose(_segment(env, obs, "upper_to_bonus"), togo), (ups, togo)
        if P[rk.P_ONES] >= 0:
            assert np.allclose(_segment(env, obs, "difference"), np.array(diffs) / fconst[2]), diffs
        checked += 1
    assert checked > 20


def layout_write(rules) -> int:
    return core.layout(rules).write_offset
