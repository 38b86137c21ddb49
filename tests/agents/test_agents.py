"""Baselines, exact solvers and the evaluation harness (agents/)."""

import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from agents.columnwise import ColumnwiseAgent
from agents.evaluation.solitaire import paired_differences, run_games, t_interval
from agents.optimal import ColumnSolver, OptimalAgent
from agents.shipped import MODELS_DIR
from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import apply_action, is_over, layout, legal_mask, new_game, reroll_count, start_turn
from tests.helpers import slow_after

ROOT = Path(__file__).resolve().parents[2]


def toy(tmp_path, name, **data):
    path = tmp_path / f"{name}.yaml"
    base = {
        "schema_version": 1,
        "name": name,
        "rolls": 3,
        "columns": ["down"],
        "scoring": {"bonus": {"threshold": 14, "points": 10, "per_point": 0}},
    }
    base.update(data)
    path.write_text(yaml.safe_dump(base))
    return load_ruleset(path)


def brute_force(rules, outcomes):
    """Expected score of optimal play by explicit search of the game tree through the
    rules engine (no dice tables): ``outcomes(k)`` lists (dice, probability) for k dice."""
    lay = layout(rules)
    memo = {}

    def key(st):
        return st.values.tobytes(), st.filled.tobytes(), st.roll, tuple(st.dice), st.turn

    def turn_start(st):
        if is_over(rules, st):
            return 0.0
        k = key(st)
        if k not in memo:
            memo[k] = sum(p * decide(start_turn(rules, st, d)) for d, p in outcomes(rules.dice))
        return memo[k]

    def decide(st):
        k = key(st)
        if k in memo:
            return memo[k]
        best = -math.inf
        for a in np.flatnonzero(legal_mask(rules, st)):
            if a < lay.num_holds:
                ev = sum(p * decide(apply_action(rules, st, a, d)[0]) for d, p in outcomes(reroll_count(rules, a)))
            else:
                nxt, pts = apply_action(rules, st, a)
                ev = pts + turn_start(nxt)
            best = max(best, ev)
        memo[k] = best
        return best

    return turn_start(new_game(rules))


def ordered(k):
    return [(d, 6.0**-k) for d in itertools.product(range(1, 7), repeat=k)]


def multisets(k):
    out = []
    for d in itertools.combinations_with_replacement(range(1, 7), k):
        ways = math.factorial(k)
        for f in set(d):
            ways //= math.factorial(d.count(f))
        out.append((d, ways / 6.0**k))
    return out


def test_optimal_equals_brute_force_on_toy_sheets(tmp_path):
    """2 dice, rows twos/fives/sixes, bonus 10 at 14, 3 rolls with holds, down and up."""
    for col in ("down", "up"):
        rules = toy(tmp_path, f"toy_{col}", dice=2, rows=["twos", "fives", "sixes"], columns=[col])
        solver = OptimalAgent(rules).solver
        assert solver.expected_score == pytest.approx(brute_force(rules, ordered), abs=1e-9)


@pytest.mark.slow  # 30 s of brute force; the toy sheets above keep the contract in the fast suite
def test_optimal_equals_brute_force_on_difference(tmp_path):
    """5 dice, rows ones/max/min (the difference), one roll a turn."""
    rules = toy(tmp_path, "toy_diff", dice=5, rolls=1, rows=["ones", "max", "min"])
    assert OptimalAgent(rules).expected_score == pytest.approx(brute_force(rules, multisets), abs=1e-9)
    rules = toy(tmp_path, "toy_diff_up", dice=5, rolls=1, rows=["ones", "max", "min"], columns=["up"])
    assert OptimalAgent(rules).expected_score == pytest.approx(brute_force(rules, multisets), abs=1e-9)


@pytest.mark.slow  # 400 games a preset
@pytest.mark.parametrize("preset", ["classic_down", "classic_up"])
def test_optimal_simulation_agrees_with_expectation(preset):
    agent = OptimalAgent(preset)
    scores = np.array(
        [g["score"] for g in run_games(["optimal"], preset, range(400), progress=False)["optimal"]], dtype=float
    )
    se = scores.std(ddof=1) / math.sqrt(len(scores))
    assert abs(scores.mean() - agent.expected_score) < 3 * se


@pytest.mark.slow  # two subprocesses
def test_single_column_presets_and_cli():
    for preset in ("classic_down", "classic_up", "yu48_down", "standard_down"):
        rules = load_ruleset(preset)
        assert len(rules.columns) == 1 and rules.rows == load_ruleset(preset.split("_")[0]).rows
    assert load_ruleset("standard_down").last_turn_rolls == 5
    out = subprocess.run(
        [sys.executable, "-m", "agents.optimal", "classic_down"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and out.stdout.strip() == f"{OptimalAgent('classic_down').expected_score:.4f}"
    bad = subprocess.run([sys.executable, "-m", "agents.optimal", "classic"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "one down or up column" in bad.stderr


@pytest.mark.slow  # 150 games
def test_columnwise_expectation_is_the_sum_of_single_column_optima():
    rules = load_ruleset("classic")
    cw = ColumnwiseAgent(rules)
    down = OptimalAgent("classic_down").expected_score
    up = OptimalAgent("classic_up").expected_score
    # down, free and announce are all played top-down; classic's last turn has 3 rolls
    assert cw.expected_score == pytest.approx(3 * down + up, abs=1e-9)
    scores = np.array(
        [g["score"] for g in run_games(["columnwise"], "classic", range(150), progress=False)["columnwise"]],
        dtype=float,
    )
    assert abs(scores.mean() - cw.expected_score) < 3 * scores.std(ddof=1) / math.sqrt(len(scores))


def test_solver_state_space_is_small():
    solver = ColumnSolver(load_ruleset("classic_up"), list(range(12, -1, -1)))
    assert max(len(s) for s in solver.states) < 5000


@pytest.mark.parametrize(
    "base, kind", slow_after([("classic", "up"), ("jnn", "down"), ("six_dice", "down")], fast=[("six_dice", "down")])
)
def test_solver_reads_order_and_points_off_the_kernels(tmp_path, base, kind):
    """The exact solver restates no rule: its row order is the kind's front
    (kernels.column_fronts), its last turn kernels.max_rolls', and along random columns
    (jnn: difference_clamp; six_dice: bonus_strict) the points it credits every possible
    write are kernels.column_gains of the real column."""
    from agents.optimal import fixed_order
    from jamb_env.rules import kernels as rk

    path = tmp_path / f"{base}_{kind}.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "name": f"{base}_{kind}", "extends": base, "columns": [kind]}))
    rules = load_ruleset(path)
    assert rules.difference_clamp == (base == "jnn") and rules.bonus_strict == (base == "six_dice")
    assert fixed_order(rules, kind) == rk.column_fronts(kind, rules.rows)[0]
    solver = OptimalAgent(rules).solver
    assert solver.rolls[-1] == rk.max_rolls(rules.num_cells - 1, rules.arrays.P) == rules.last_turn_rolls
    rng = np.random.default_rng(0)
    R = rules.num_rows
    for _ in range(20):
        values, filled = np.zeros(R, dtype=np.int64), 0
        for k, row in enumerate(solver.order):
            step, x = solver.state_of(values, filled)
            assert step == k
            candidates = solver._values[k]
            real = np.zeros(len(candidates), dtype=np.int64)
            rk.column_gains(
                values,
                filled,
                row,
                candidates,
                rules.arrays,
                real,
                np.zeros(4, dtype=np.int64),
                np.zeros(R, dtype=np.int64),
            )
            assert solver._points(k, x, candidates).tolist() == real.tolist()
            values[row], filled = rng.choice(candidates), filled | 1 << row


@pytest.mark.slow
def test_expectimax_beats_greedy_beats_random():
    """150 seeded classic games each; every paired 95% CI excludes zero."""
    results = run_games(["random", "greedy", "expectimax"], "classic", list(range(150)), jobs=1, progress=False)
    pairs = {(a, b): (d, ci) for a, b, d, ci in paired_differences(results)}
    d, ci = pairs[("random", "greedy")]
    assert d + ci < 0
    d, ci = pairs[("greedy", "expectimax")]
    assert d + ci < 0


@pytest.mark.slow  # expectimax games on nine presets
def test_agents_play_legally_on_every_column_kind():
    """greedy and expectimax on presets with every column kind (raise mode catches illegal moves)."""
    for preset in (
        "standard",
        "master",
        "nokaut",
        "six_dice",
        "six_dice_variation",
        "six_dice_copy",
        "joly",
        "jnn",
        "tests/rules/every_column.yaml",
    ):
        run_games(["greedy", "expectimax"], preset, [1], progress=False)


def test_load_errors():
    with pytest.raises(ValueError, match="unknown agent"):
        agents.load("smart")
    with pytest.raises(FileNotFoundError):
        agents.load("no/such/model.zip")
    with pytest.raises(ValueError, match="one down or up column"):
        agents.load("optimal", ruleset="classic")
    with pytest.raises(ValueError, match="columnwise plays"):
        agents.load("columnwise", ruleset="standard")


def test_parse_spec_is_what_load_and_evaluate_read():
    from agents.registry import AgentSpec, parse_spec

    assert parse_spec("greedy") == AgentSpec("greedy", None) and parse_spec("ppo") == ("ppo", None)
    assert parse_spec("search:net.npz") == ("search", "net.npz") and parse_spec("hybrid:") == ("hybrid", "")
    assert parse_spec("rllib:runs/r") == ("rllib", "runs/r") and parse_spec("rllib:x.zip").kind == "rllib"
    assert parse_spec("m.zip") == ("model", "m.zip") and parse_spec("runs/a/final_model") == (
        "model",
        "runs/a/final_model",
    )
    for bad in ("smart", "", None):
        with pytest.raises(ValueError, match="unknown agent|an agent is a name"):
            parse_spec(bad)


def test_t_interval():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert t_interval(x) == pytest.approx(3.182446 * np.std(x, ddof=1) / 2, rel=1e-5)


@pytest.mark.slow  # a subprocess of scripts/evaluate.py with two workers
def test_evaluate_cli_end_to_end(tmp_path):
    out = tmp_path / "ev" / "classic"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "evaluate.py"),
            "--agents",
            "random",
            "greedy",
            "columnwise",
            "--games",
            "4",
            "--jobs",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| random − greedy |" in proc.stdout and "540.6199" in proc.stdout
    summary = (out.parent / "classic.csv").read_text().splitlines()
    assert summary[0].startswith("agent,games,mean") and len(summary) == 4
    games = (out.parent / "classic_games.csv").read_text().splitlines()
    assert len(games) == 1 + 3 * 4
    assert (out.parent / "classic.png").stat().st_size > 1000
    bad = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--agents", "wizard", "--games", "3"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "unknown agent" in bad.stderr


@pytest.mark.parametrize("preset", slow_after(sorted(p.stem for p in MODELS_DIR.glob("*.zip")), fast=["classic_up"]))
def test_shipped_models_play_legal_games_on_the_raw_env(preset):
    """agents/models/<preset>.zip acts on the raw JambEnv observation with its mask (issue 6)."""
    from agents.evaluation.solitaire import play_game
    from jamb_env import JambEnv

    agent = agents.load("ppo", ruleset=preset)
    env = JambEnv(preset, illegal_action="raise")  # an illegal action would raise
    result = play_game(agent, env, seed=20_000_000)
    assert result["steps"] >= env.ruleset.num_cells and env.game.turn == env.ruleset.num_cells


def test_ppo_without_a_shipped_model_names_what_is_shipped():
    with pytest.raises(ValueError, match="no shipped PPO model for ruleset 'yu48'.*shipped: "):
        agents.load("ppo", ruleset="yu48")


@pytest.mark.slow  # a whole game of PPO and hybrid; hybrid keeps its legal game in the fast suite
def test_hybrid_holds_are_planned_holds_and_the_rest_is_the_policy():
    """hybrid (issue 6): every hold it plays is the observation's ``cell_hold`` plan of a
    target cell; where the policy's own choice is not a re-roll, it plays that choice."""
    from jamb_env import JambEnv

    ppo, hybrid = agents.load("ppo", ruleset="classic"), agents.load("hybrid", ruleset="classic")
    env = JambEnv("classic", illegal_action="raise")
    seg = env.observation_layout
    n, lay = env.ruleset.dice, layout(env.ruleset)
    obs, _ = env.reset(seed=20_000_000)
    done, holds = False, 0
    while not done:
        mask = env.action_masks()
        mine, theirs = hybrid.act(env, obs, mask), ppo.act(env, obs, mask)
        if theirs >= lay.num_holds:
            assert mine == theirs
        if mine < lay.num_holds:
            holds += 1
            start, size = seg["target"][:2]
            target = obs[start : start + size] > 0
            start, size = seg["cell_hold"][:2]
            plans = obs[start : start + size].reshape(-1, n)[target]
            assert ((plans == ((mine >> np.arange(n)) & 1)).all(axis=1)).any()
        obs, _, done, _, _ = env.step(mine)
    assert holds > 20 and env.game.turn == env.ruleset.num_cells


@pytest.mark.parametrize("preset", slow_after(["standard", "master", "nokaut", "six_dice"], fast=["master"]))
def test_hybrid_plays_legally_on_every_column_kind(preset, tmp_path):
    from sb3_contrib import MaskablePPO

    from jamb_env import JambEnv

    MaskablePPO("MlpPolicy", JambEnv(preset), n_steps=64, batch_size=64, seed=0).save(tmp_path / "m.zip")
    run_games([f"hybrid:{tmp_path / 'm.zip'}"], preset, [1], progress=False)  # raise mode
    with pytest.raises(FileNotFoundError, match="hybrid:"):
        agents.load(f"hybrid:{tmp_path / 'none.zip'}", ruleset=preset)
    with pytest.raises(ValueError, match="needs a model path"):
        agents.load("hybrid:", ruleset=preset)
    from agents.evaluation.solitaire import expand_specs

    assert [label for label, _, _ in expand_specs([f"hybrid:{tmp_path}/*.zip"])] == [f"hybrid:{tmp_path / 'm.zip'}"]


@pytest.mark.parametrize("name", ["random", "ppo", "hybrid", "greedy", "expectimax"])
def test_an_agent_choosing_from_the_mask_refuses_one_with_no_legal_action(name):
    """Before (I34): ppo answered action 0 for a mask with no legal action (random raised), and
    a mask of None was a TypeError; None now means the env's own mask."""
    env = JambEnv(ruleset="classic")
    obs, _ = env.reset(seed=3)
    agent = agents.load(name, ruleset="classic")
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(env, obs, np.zeros(env.action_space.n, dtype=bool))
    with pytest.raises(ValueError, match="one flag"):
        agent.act(env, obs, np.ones((2, env.action_space.n), dtype=bool))
    assert env.action_masks()[agent.act(env, obs, None)]


def test_every_agent_refuses_an_unknown_ruleset():
    """Before (J62): greedy, expectimax and random took any ruleset name."""
    for name in ("greedy", "expectimax", "random", "columnwise"):
        with pytest.raises(ValueError, match="unknown ruleset 'nope'"):
            agents.load(name, ruleset="nope")


def test_run_games_refuses_a_chunk_below_one():
    """Before (J63): chunk=-1 played no game and said nothing; chunk=0 was range()'s error."""
    for chunk in (0, -1):
        with pytest.raises(ValueError, match="chunk must be a positive integer"):
            run_games(["greedy"], "classic", [1, 2], chunk=chunk)
