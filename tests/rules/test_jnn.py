"""The `jnn` preset: the strongest public Jamb agent's house rules (issue 18, RULES.md §5),
each rule on hand-built sheets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jamb_env import load_ruleset
from jamb_env.rules import apply_action, layout
from tests.helpers import can_reroll, fill, open_cells, sheet, slow_after

JNN = load_ruleset("jnn")
LAY = layout(JNN)
U = ("ones", "twos", "threes", "fours", "fives", "sixes")


def test_sheet_and_turns():
    assert (JNN.dice, JNN.rolls, JNN.last_turn_rolls, JNN.num_cells) == (6, 3, 5, 52)
    assert JNN.columns == ("down", "free", "up", "announce")
    assert JNN.rows == U + ("max", "min", "trilling", "straight", "full", "poker", "jamb")


@pytest.mark.parametrize(
    "row,dice,value",
    [
        ("fives", [5, 5, 5, 5, 5, 5], 25),  # upper rows count at most 5 dice
        ("max", [1, 2, 6, 6, 6, 6], 26),  # the 5 highest
        ("min", [1, 2, 6, 6, 6, 6], 21),  # the 5 lowest
        ("trilling", [2, 2, 2, 5, 5, 5], 35),  # 3 x the highest face shown 3 times + 20
        ("straight", [1, 2, 3, 4, 5, 5], 45),
        ("straight", [2, 3, 4, 5, 6, 6], 50),
        ("straight", [1, 2, 3, 4, 5, 6], 50),  # 1-6 counts as large
        ("full", [6, 6, 6, 5, 5, 1], 68),  # 3 x 6 + 2 x 5 + 40
        ("full", [2, 2, 2, 6, 6, 6], 62),  # best choice: 3 x 6 + 2 x 2 + 40
        ("full", [4, 4, 4, 4, 4, 1], 0),  # a != b
        ("poker", [3, 3, 3, 3, 6, 6], 62),  # 4 x face + 50
        ("jamb", [4, 4, 4, 4, 4, 4], 80),  # 5 x face + 60
    ],
)
def test_row_values(row, dice, value):
    assert JNN.score(row, dice) == value


def test_bonus_at_60_and_the_difference_clamped_at_zero():
    assert JNN.column_score(dict(zip(U, (3, 6, 9, 12, 10, 18)))) == 58
    assert JNN.column_score(dict(zip(U, (4, 6, 9, 12, 10, 18)))) == 59
    assert JNN.column_score(dict(zip(U, (5, 6, 9, 12, 10, 18)))) == 60 + 30  # exactly 60 earns it
    assert JNN.column_score(dict(zip(U, (3, 6, 9, 12, 15, 12)))) == 57
    # ones 3, max 20, min 25: max - min < 0 gives 0, not -15
    assert JNN.column_score({"ones": 3, "max": 20, "min": 25}) == 3
    assert JNN.column_score({"ones": 3, "max": 26, "min": 9}) == 3 + 51
    assert load_ruleset("classic").column_score({"ones": 3, "max": 20, "min": 25}) == 3 - 15  # unclamped elsewhere


def announce_cells(st):
    return {row for col, row in open_cells(JNN, st) if col == "announce"}


def test_a_pure_roll_may_be_written_in_the_announce_column_unannounced():
    st = sheet(JNN, dice=[1, 2, 3, 4, 6, 6], roll=1)
    assert st.pure == 0  # hand-built; the engine marks roll 1 pure
    st = replace(st, pure=1)
    assert announce_cells(st) == set(JNN.rows)
    nothing_kept, _ = apply_action(JNN, st, 0, dice=[6] * 6)
    assert nothing_kept.pure == 1 and announce_cells(nothing_kept) == set(JNN.rows)
    kept, _ = apply_action(JNN, st, 0b010000, dice=[6] * 5)  # keeps one 6 (the leftmost): not pure
    assert kept.pure == 0 and announce_cells(kept) == set()


def test_announcing_is_forced_when_only_announce_cells_are_left():
    written = fill(JNN, ["down", "free", "up"]) | fill(JNN, ["announce"], JNN.rows[1:])
    st = sheet(JNN, written, dice=[1, 1, 2, 3, 4, 5], roll=1)
    st = replace(st, pure=1)
    assert open_cells(JNN, st) == set()  # no pure write and no re-roll: announce
    assert not can_reroll(JNN, st)
    from jamb_env.rules import legal_mask

    mask = legal_mask(JNN, st)  # the one legal action: announce the last cell
    assert mask.sum() == 1 and mask[LAY.announce_offset]  # announce/ones


def test_the_engine_marks_pure_rolls():
    from jamb_env import JambEnv

    env = JambEnv(ruleset="jnn")
    env.reset(seed=0)
    assert env.game.pure == 1
    seg = env._encoder.segments["pure"].slice
    assert env.observe()[seg].tolist() == [1.0]
    env.step(0b000001)  # keeps the lowest die
    assert env.game.pure == 0 and env.observe()[seg].tolist() == [0.0]
    env.step(0)  # keeps nothing
    assert env.game.pure == 1


@pytest.mark.parametrize("name", slow_after(["greedy", "expectimax"]))
def test_baselines_play_jnn_legally_and_use_pure_rolls(name):
    from agents import load
    from jamb_env import JambEnv

    agent, env = load(name, ruleset="jnn"), JambEnv(ruleset="jnn", illegal_action="raise")
    pure_writes = 0
    for seed in range(2):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            st = env.game
            a = agent.act(env, obs, env.action_masks())
            act = env.decode_action(a)
            pure_writes += act.kind == "write" and act.column == "announce" and st.announced < 0
            obs, _, done, _, info = env.step(a)  # raises on an illegal action
    assert pure_writes > 0  # announce cells taken by a pure roll, unannounced
