"""Value iteration with exact one-turn backups (``jamb-train-value``, ``target: backup``):
the backup is exact, the λ-targets are what the docstring says, and a run resumes by round."""

from __future__ import annotations

import numpy as np
import pytest

from agents.optimal import solver_for
from agents.search import LeafSearch, ValueNet, cell_value_index
from agents.training import value as V
from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import layout

SEEDS = [30_000_000 + g for g in range(6)]


class ExactLeaves(LeafSearch):
    """The search agent with the exact solver's value at its leaves (one-column sheets):
    writing ``v`` is worth its points plus the optimal value of the sheet after."""

    name = "exact"

    def __init__(self, ruleset: str):
        super().__init__(load_ruleset(ruleset))
        self.solver = solver_for(self.rules, 0)

    def leaf_tables(self, st, cells):
        solver, out = self.solver, {}
        k, x = solver.state_of(st.values[0], int(st.filled[0]))
        for cell in cells:
            values = cell_value_index(self.rules)[cell][0]
            after = [solver.states[k + 1][solver._next(k, x, int(v))] for v in values]
            out[cell] = (values, solver._points(k, x, values) + solver.V[k + 1][after])
        return out

    def exact(self, st) -> float:
        k, x = self.solver.state_of(st.values[0], int(st.filled[0]))
        return float(self.solver.V[k][self.solver.states[k][x]])


def exact_games(seeds):
    """Per game: (backups B, the exact values V of the afterstates, the points of each write)."""
    agent = ExactLeaves("classic_down")
    env = JambEnv(ruleset="classic_down")
    lay = layout(env.ruleset)
    out = []
    for s in seeds:
        obs, _ = env.reset(seed=s)
        B, exact, points, done = [], [], [], False
        while not done:
            a = agent.act(env, obs, env.action_masks())
            obs, r, done, _, _ = env.step(a)
            if lay.is_write(a):
                points.append(r)
                if not done:
                    B.append(agent.fresh_turn_value(env, env.game))
                    exact.append(agent.exact(env.game))
        out.append((np.array(B), np.array(exact), np.array(points, dtype=float)))
    return out


def test_the_backup_of_the_exact_value_is_the_exact_value():
    """With the solver's values as V, B(s) is the solver's value of s, to 1e-6 points."""
    for B, exact, _ in exact_games(SEEDS[:3]):
        assert len(B) == 12
        np.testing.assert_allclose(B, exact, rtol=0, atol=1e-6)


def test_lambda_one_targets_average_to_the_return():
    """λ = 1 with the exact V: G_t = B_t (each later term B_k - V(s_k) is 0), and over the
    games the targets average to the points that followed (within their sampling error)."""
    games = exact_games(range(20_000_000, 20_000_040))
    G0, returns = [], []
    for B, exact, points in games:
        n = len(B)
        feats = np.zeros((n, 1), np.float32)
        g = (feats, exact, np.zeros(n + 1), 0.0, B)  # prior = exact, network 0: V = exact
        _, Y = V.targets([g], None, lam=1.0)
        np.testing.assert_allclose(Y + exact, B, atol=1e-6)
        G0.append(Y[0] + exact[0])
        returns.append(points[1:].sum())
    diff = np.array(returns) - np.array(G0)
    assert abs(diff.mean()) < 3 * diff.std(ddof=1) / np.sqrt(len(diff)) + 1e-9


def test_return_targets_monte_carlo_and_lambda():
    """``target: return``: Monte Carlo without a network, the λ-return of prior + network with one."""
    feats = np.zeros((2, 3), np.float32)  # afterstates of writes 1 and 2; write 3 ends the game
    prior = np.array([1.0, 0.5])
    games = [(feats, prior, np.array([1.0, 2.0, 3.0]), 6.0, None)]
    _, mc = V.targets(games, None, 0.5)
    np.testing.assert_allclose(mc, np.array([5.0, 3.0]) - prior)  # the return minus the prior
    ten = ValueNet([(np.zeros((3, 1), np.float32), np.zeros(1, np.float32))], 10.0, 1.0, {"ruleset": "classic"})
    _, lam = V.targets(games, ten, 0.5)  # V(s_1) = prior 0.5 + network 10
    np.testing.assert_allclose(lam, np.array([2.0 + 0.5 * 10.5 + 0.5 * 3.0, 3.0]) - prior)
    _, one = V.targets(games, ten, 1.0)
    np.testing.assert_allclose(one, mc)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_lambda_targets_follow_the_path(lam):
    """G_t = B_t + λ (G_{t+1} - V(s_{t+1})), G = B at the last afterstate; the network's
    target is G minus the prior."""
    B, prior, v = np.array([10.0, 7.0, 3.0]), np.array([1.0, 2.0, 4.0]), np.array([5.0, 6.0, 8.0])
    expected = np.zeros(3)
    expected[2] = B[2]
    expected[1] = B[1] + lam * (expected[2] - v[2])
    expected[0] = B[0] + lam * (expected[1] - v[1])

    class Net:
        def __call__(self, X):
            return v - prior

    game = (np.zeros((3, 1), np.float32), prior, np.zeros(4), 0.0, B)
    _, Y = V.targets([game], Net(), lam)
    np.testing.assert_allclose(Y, expected - prior)


def test_a_backup_run_logs_validation_and_resumes_by_round(tmp_path):
    cfg = dict(ruleset="classic_down", iterations=2, games=4, hidden=(8,), epochs=1, workers=1, valid_games=2)
    first = V.ValueConfig(**cfg, target="backup")
    out = tmp_path / "run"
    one = V.ValueConfig(**{**cfg, "iterations": 1}, target="backup")
    V.train_value(one, out, log=lambda *_: None)
    rows = V._read_history(out)
    assert [r["policy"] for r in rows] == ["search(prior)"]
    V.train_value(first, out, resume=True, log=lambda *_: None)
    rows = V._read_history(out)
    assert [r["policy"] for r in rows] == ["search(prior)", "search(iter 0)"]
    assert all(float(r["valid_mean"]) > 0 and float(r["cpu_s"]) >= 0 for r in rows)
    net = V.ValueNet.load(out / "value.npz")
    assert net.meta["target"] == "backup" and net.meta["iteration"] == 1
    with pytest.raises(ValueError, match="target"):
        V.train_value(V.ValueConfig(**{**cfg, "iterations": 3}), out, resume=True, log=lambda *_: None)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("target", "td", "target must be 'return' or 'backup'"),
        ("valid_games", -1, "valid_games"),
        ("valid_games", 1.5, "integer"),
    ],
)
def test_bad_value_settings_are_refused(key, value, message):
    with pytest.raises(ValueError, match=message):
        V.ValueConfig(ruleset="classic_down", **{key: value})
