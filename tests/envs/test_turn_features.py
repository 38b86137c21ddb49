"""Jamb-v1 turn features (target, cell_reach, cell_hold): hand-computed values, v0 layout,
registry."""

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

import jamb_env
from jamb_env import JambEnv, load_ruleset
from jamb_env import rules as core
from jamb_env.engine.observation import ObservationEncoder
from tests.helpers import playable_presets


def encode(ruleset, dice, roll, column="free"):
    """(rules, reach (R,) points, hold (R, n) bits) of ``column`` on an empty sheet."""
    rules = load_ruleset(ruleset)
    enc = ObservationEncoder(rules)
    st = core.start_turn(rules, core.new_game(rules), np.array(dice, dtype=np.int8))
    obs = enc.encode(replace(st, roll=roll))
    seg, R, n = enc.segments, rules.num_rows, rules.dice
    c = rules.columns.index(column)
    reach = obs[seg["cell_reach"].slice][c * R : (c + 1) * R] * rules.row_max
    hold = obs[seg["cell_hold"].slice].reshape(-1, R, n)[c]
    return rules, reach, hold


def test_target_is_the_write_and_announce_mask():
    rules = load_ruleset("classic")
    env = JambEnv(rules)
    obs, _ = env.reset(seed=1)
    R = rules.num_rows
    target = obs[env.observation_layout["target"][0] :][: rules.num_cells].reshape(-1, R)
    # roll 1: down's first row, up's last row, every free cell and every announce cell
    assert target.sum(axis=1).tolist() == [1, 1, R, R]
    assert target[0, 0] == 1 and target[1, R - 1] == 1
    down_only = encode("classic", [1, 1, 2, 5, 6], roll=2, column="down")[1]
    assert down_only[0] > 0 and not down_only[1:].any()  # other down cells are not open


def test_sixes_with_one_re_roll_left():
    # keep the 6, re-roll four dice once: 6 * (1 + 4/6) = 10 points expected (RULES.md §3)
    rules, reach, hold = encode("classic", [1, 2, 3, 4, 6], roll=2)
    r = rules.rows.index("sixes")
    assert reach[r] == pytest.approx(10.0, abs=1e-4)
    assert hold[r].tolist() == [0, 0, 0, 0, 1]


def test_sixes_with_two_re_rolls_left():
    # each of the four other dice becomes a 6 within two rolls with p = 11/36
    rules, reach, hold = encode("classic", [1, 1, 2, 5, 6], roll=1)
    r = rules.rows.index("sixes")
    assert reach[r] == pytest.approx(6 * (1 + 4 * 11 / 36), abs=1e-4)
    assert hold[r].tolist() == [0, 0, 0, 0, 1]
    assert hold[rules.rows.index("ones")].tolist() == [1, 1, 0, 0, 0]


def test_min_aims_low_and_max_aims_high():
    rules, reach, hold = encode("classic", [1, 1, 2, 5, 6], roll=2)
    mn, mx = rules.rows.index("min"), rules.rows.index("max")
    # min: keep 1, 1, 2 and re-roll two dice only if that lowers the sum (expected 3.5 each
    # > 5 and 6): 1 + 1 + 2 + 3.5 + 3.5 = 11
    assert reach[mn] == pytest.approx(11.0, abs=1e-4)
    assert hold[mn].tolist() == [1, 1, 1, 0, 0]
    # max: keep 5 and 6, re-roll three dice: 11 + 3 * 3.5 = 21.5 (a 5 re-rolled: 4.25 < 5)
    assert reach[mx] == pytest.approx(21.5, abs=1e-4)
    assert hold[mx].tolist() == [0, 0, 0, 1, 1]


def test_last_roll_is_the_value_now_and_no_hold():
    rules, reach, hold = encode("classic", [2, 2, 2, 3, 3], roll=3)
    assert reach[rules.rows.index("full")] == rules.score("full", [2, 2, 2, 3, 3], roll=3)
    assert reach[rules.rows.index("twos")] == 6
    assert not hold.any()


@pytest.mark.parametrize("preset", playable_presets())
def test_turn_features_inside_bounds_and_v0_layout_drops_them(preset):
    v1, v0 = JambEnv(preset), JambEnv(preset, turn_features=False)
    rules = v1.ruleset
    assert v1.observation_space.shape[0] == v0.observation_space.shape[0] + rules.num_cells * (2 + rules.dice)
    o1, _ = v1.reset(seed=4)
    o0, _ = v0.reset(seed=4)
    assert v1.observation_space.contains(o1) and v0.observation_space.contains(o0)
    seg = v1.observation_layout
    start = seg["target"][0]
    size = seg["target"][1] + seg["cell_reach"][1] + seg["cell_hold"][1]
    assert size == rules.num_cells * (2 + rules.dice)
    assert np.array_equal(np.delete(o1, np.s_[start : start + size]), o0)


def test_both_versions_registered():
    assert jamb_env.ENV_ID == "Jamb-v1"
    assert gym.make("Jamb-v1").observation_space.shape == (226 + 52 * 7,)
    with pytest.warns(DeprecationWarning):
        assert gym.make("Jamb-v0").observation_space.shape == (226,)


def test_hand_column_plans_no_re_roll():
    # standard has a hand column: written only after roll 1, so its plan is "write now"
    rules = load_ruleset("standard")
    assert "hand" in rules.columns
    _, reach, hold = encode("standard", [1, 1, 2, 5, 6], roll=1, column="hand")
    values = np.array([rules.score(row, [1, 1, 2, 5, 6], roll=1, column="hand") for row in rules.rows])
    assert np.allclose(reach, values, atol=1e-3) and not hold.any()
    _, free_reach, free_hold = encode("standard", [1, 1, 2, 5, 6], roll=1, column="free")
    high = np.array(rules.rows) != "min"  # min aims low
    assert free_hold.any() and (free_reach[high] >= values[high] - 1e-3).all()


def test_last_turn_plans_its_extra_rolls():
    # standard's last turn allows 5 rolls: at roll 3 a re-roll is still planned
    rules = load_ruleset("standard")
    assert rules.last_turn_rolls > rules.rolls
    enc = ObservationEncoder(rules)
    st = core.start_turn(rules, core.new_game(rules), np.array([1, 2, 3, 4, 6], dtype=np.int8))
    c, r = rules.columns.index("free"), rules.rows.index("jamb")
    full = (1 << rules.num_rows) - 1
    filled = np.full(len(rules.columns), full, dtype=st.filled.dtype)
    filled[c] = full & ~(1 << r)
    last = replace(st, filled=filled, turn=rules.num_cells - 1, roll=3)
    normal = replace(st, roll=3)
    seg, n, R = enc.segments, rules.dice, rules.num_rows
    cell = c * R + r
    obs_last, obs_normal = enc.encode(last), enc.encode(normal)
    assert obs_last[seg["target"].start + cell] == 1
    assert obs_last[seg["cell_hold"].slice][cell * n : (cell + 1) * n].any()
    assert obs_last[seg["cell_reach"].start + cell] > 0  # a jamb is still possible
    assert not obs_normal[seg["cell_hold"].slice][cell * n : (cell + 1) * n].any()  # roll 3 of 3


@pytest.mark.parametrize("bad", ["false", "yes", None, 2, 0.0])
def test_turn_features_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="turn_features must be True"):
        JambEnv("classic", turn_features=bad)
