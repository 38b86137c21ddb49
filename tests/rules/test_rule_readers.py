"""What reads a rule outside the kernels reads the kernels' one definition, and so agrees
with the engine on every option: the points a write credits (``write_gains``, the write
kernel's), the multiset key (``face_weight``) and the planner example (examples/planner.py:
its credited points, its bonus, its difference and each column's write window), on a
ruleset with ``bonus_strict``, ``bonus_per_point``, ``difference_clamp``, a ``second``
column and a ``maximal`` column."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import dice_tables, kernels, layout, write_gains

ROOT = Path(__file__).resolve().parents[2]
#: classic's rows with every scoring option and the column kinds the planner once restated
OPTIONS = {
    "schema_version": 1,
    "name": "every_option",
    "extends": "classic",
    "columns": ["second", "down", "maximal"],
    "scoring": {"bonus": {"threshold": 60, "points": 30, "per_point": 2}},
    "options": {"bonus_strict": True, "difference_clamp": True},
}


@pytest.fixture
def planner_module(monkeypatch):
    """examples/planner.py as a module (registered while the test runs: dataclasses need it)."""
    spec = importlib.util.spec_from_file_location("planner_example", ROOT / "examples" / "planner.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def options_rules(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "every_option.yaml"
    path.write_text(yaml.safe_dump(OPTIONS))
    return load_ruleset(path)


def test_the_planner_credits_what_the_engine_credits(planner_module, options_rules):
    """A whole game of the planner: at every write, the points it credits (its value with
    the column model switched off) and write_gains are the env's reward."""
    planner = planner_module.Planner(options_rules)
    planner._potential = lambda c, values, filled: 0.0  # only the credited points left
    env = JambEnv(ruleset=options_rules, illegal_action="raise")
    env.reset(seed=7)
    lay, done, writes = layout(options_rules), False, 0
    while not done:
        st = env.game
        action = planner.act(env)
        if lay.is_write(action):
            cell = action - lay.write_offset
            value = options_rules.cell_values[st.roll - 1, st.dice_index, cell]
            credited = planner._write_values(st, cell)[np.searchsorted(planner.uniq[cell], value)]
            gained = int(write_gains(options_rules, st, cell, [value])[0])
        _, reward, done, _, _ = env.step(action)
        if lay.is_write(action):
            assert credited == gained == reward, (action, credited, gained, reward)
            writes += 1
    assert writes == options_rules.num_cells


@pytest.mark.parametrize("preset", ["classic", "six_dice", "joly_nojokers", "OPTIONS"])
def test_the_planner_s_bonus_is_the_kernel_s(planner_module, options_rules, preset):
    """With the upper sum certain, the planner's expected bonus is kernels.bonus: strict
    (six_dice: nothing at 60), per point (joly_nojokers: 30 + 2 per point over 60)."""
    rules = options_rules if preset == "OPTIONS" else load_ruleset(preset)
    planner = planner_module.Planner(rules)
    P = rules.arrays.P
    assert [planner.expected_bonus(u, 0.0) for u in range(50, 80)] == [kernels.bonus(u, P) for u in range(50, 80)]
    high = planner.expected_bonus(70, 5.0)
    assert 0 < planner.expected_bonus(50, 5.0) < high < kernels.bonus(90, P)


def test_the_planner_s_pars_keep_to_each_column_s_write_window(planner_module, options_rules):
    """``second`` is written right after roll 2 only: aiming at a row there is worth less
    than in ``down`` (three rolls), and ``min`` is higher."""
    planner = planner_module.Planner(options_rules)
    second, down = planner.par  # (C, R)
    low = options_rules.rows.index("min")
    others = [r for r in range(options_rules.num_rows) if r != low]
    assert (second[others] <= down[others] + 1e-9).all() and (second[others] < down[others]).any()
    assert second[low] > down[low]


def test_the_planner_example_runs(planner_module, capsys):
    scores = planner_module.compare(games=2)
    assert set(scores) == {"planner", "greedy"}
    assert all(len(s) == 2 and all(isinstance(x, int) and 0 < x < 2000 for x in s) for s in scores.values())
    assert planner_module.main(["--games", "1"]) == 0
    out = capsys.readouterr().out
    assert "planner  mean" in out and "greedy   mean" in out and "planner - greedy" in out


@pytest.mark.parametrize("n", [5, 6])
def test_one_multiset_key(n):
    """The tables' index and the engine's set_dice read the one key (face_weight): every
    multiset, its dice in any order, maps to its own index both ways."""
    tables, rng = dice_tables(n), np.random.default_rng(n)
    rules = load_ruleset("classic" if n == 5 else "six_dice")
    key_to_index, P = rules.arrays.key_to_index, rules.arrays.P
    for m, dice in enumerate(tables.sorted_dice):
        faces = rng.permutation(dice).astype(np.int64)
        assert tables.index(faces) == m
        sorted_out = np.zeros(n, dtype=np.int64)
        assert kernels.set_dice(faces.copy(), sorted_out, P, key_to_index) == m
        assert (sorted_out == dice).all()


def test_write_gains_refuses_a_written_cell_and_a_cell_off_the_sheet(classic):
    from jamb_env.rules import apply_action, new_game, start_turn

    st = start_turn(classic, new_game(classic), [1, 1, 1, 2, 3])
    st, _ = apply_action(classic, st, layout(classic).write_offset)  # down/ones
    with pytest.raises(ValueError, match="cell down/ones is already written"):
        write_gains(classic, st, 0, [3])
    with pytest.raises(ValueError, match="a cell index is an integer in 0..51"):
        write_gains(classic, st, 52, [3])
