"""OpenSpiel's per-player API on ``python_jamb``: no call crashes the process or lists the
chance outcomes as a player's moves (pyspiel's wrapper of Python games answers
``legal_actions(p)`` at a chance node with the chance outcomes and writes them into a mask
of ``num_distinct_actions`` entries: a heap overflow, docs/tools.md). Every node of games
on 4 presets (solitaire and multiplayer, separate and shared sheets, jokers), every
per-player method for every player, the chance player and bad players; in a child
process, so a heap corruption fails the test instead of killing pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import slow_after

pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: the openspiel extra")

ROOT = Path(__file__).resolve().parents[2]

WALK = r"""
import sys
import numpy as np
import pyspiel
import jamb_env.openspiel  # registers python_jamb

preset, players, scoring, checked = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
game = pyspiel.load_game("python_jamb", {"ruleset": preset, "players": players, "scoring": scoring})
A, C = game.num_distinct_actions(), game.max_chance_outcomes()
PER_PLAYER = ("observation_tensor", "information_state_tensor", "observation_string",
              "information_state_string", "player_return", "player_reward")


def check(state):
    cur = state.current_player()
    for p in range(players):
        moves, mask = state.legal_actions(p), state.legal_actions_mask(p)
        assert len(mask) == A, (p, len(mask))
        assert moves == np.flatnonzero(mask).tolist(), p
        assert (moves != []) == (p == cur), (p, cur, len(moves))  # only the player to move has moves
        assert all(0 <= a < A for a in moves)
        for name in PER_PLAYER:
            getattr(state, name)(p)
    assert len(state.returns()) == len(state.rewards()) == players
    chance = state.legal_actions(-1)
    assert len(state.legal_actions_mask(-1)) == C
    if state.is_chance_node():
        assert chance == [o for o, _ in state.chance_outcomes()] == state.legal_actions()
    else:
        assert chance == [] and not any(state.legal_actions_mask(-1))
        try:  # before: the engine's message about a dice outcome, not the node's kind
            state.chance_outcomes()
        except ValueError as exc:
            assert "only a chance node has outcomes" in str(exc), exc
        else:
            raise AssertionError("chance_outcomes() at a decision or terminal node was accepted")
    for bad in (players, -2, True, 1.5):
        for name in ("legal_actions", "legal_actions_mask") + PER_PLAYER:
            try:
                getattr(state, name)(bad)
            except ValueError:
                continue
            raise AssertionError(f"{name}({bad!r}) was accepted")


rng = np.random.default_rng(0)
state, nodes = game.new_initial_state(), 0
while True:
    if nodes < checked or state.is_terminal():
        check(state)
    if state.is_terminal():
        break
    if state.is_chance_node():
        ids, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(ids, p=probs)))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))
    nodes += 1
assert state.returns() == [float(x) for x in state.scores()]
print("walked", nodes, "nodes")
"""


@pytest.mark.parametrize(
    "preset, players, scoring, checked",
    slow_after(
        [
            ("classic", 1, "separate", 10**6),  # every node of a whole game
            ("joly", 1, "separate", 160),  # jokers and baskets: more actions, chance nodes after a basket
            ("six_dice_copy", 2, "separate", 160),  # 462 chance outcomes, the seating node
            ("classic_down", 3, "shared", 160),
        ]
    ),  # a subprocess each: classic in the fast suite
)
def test_every_per_player_call_at_every_node_is_safe(preset, players, scoring, checked):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", WALK, preset, str(players), scoring, str(checked)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, f"exit {out.returncode} (a negative code is a signal: a crash)\n{out.stderr[-3000:]}"
    assert "walked" in out.stdout
