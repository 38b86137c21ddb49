"""A value network measured against the exact solver on a one-column sheet (``jamb-train-value --error-vs-optimal``)."""

from __future__ import annotations

import numpy as np

from agents.search import ValueNet, sheet_prior, sheet_sample
from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import layout


def value_error_vs_optimal(net: ValueNet, ruleset: str, seeds: list[int]) -> dict:
    """On a one-column sheet (``optimal`` agent): play ``seeds`` optimally and compare the
    network with the exact value (expected points still to come under optimal play) of
    every afterstate visited (the agent's value: prior + network); {"states", "mae",
    "bias", "prior_mae"} in points (last writes excluded; ``prior_mae``: the prior alone)."""
    from agents.optimal import OptimalAgent

    rules = load_ruleset(ruleset)
    agent = OptimalAgent(ruleset)
    solver = agent.solver
    env = JambEnv(ruleset=ruleset)
    lay = layout(rules)
    feats, exact, priors = [], [], []
    for s in seeds:
        obs, _ = env.reset(seed=int(s))
        done = False
        while not done:
            a = agent.act(env, obs, env.action_masks())
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
            if lay.is_write(a) and not done:
                st = env.game
                k, x = solver.state_of(st.values[0], int(st.filled[0]))
                exact.append(float(solver.V[k][solver.states[k][x]]))
                priors.append(sheet_prior(rules, st))
                feats.append(sheet_sample(rules, st))
    err = np.array(priors) + net(np.array(feats)) - np.array(exact)
    prior_err = np.array(priors) - np.array(exact)
    return {
        "states": len(err),
        "mae": float(np.abs(err).mean()),
        "bias": float(err.mean()),
        "prior_mae": float(np.abs(prior_err).mean()),
    }
