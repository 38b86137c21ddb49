"""Joly's jokers and baskets in the baselines (agents/heuristic.py, random) and in the
jamb-play commands (agents/apps/terminal.py)."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console

import agents.heuristic as H
from agents.apps.terminal import CommandError, PlaySession
from agents.heuristic import ExpectimaxAgent, GreedyAgent
from agents.random_agent import RandomAgent
from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import Action, apply_action, decode, encode, jokers_left, layout, legal_mask, score
from jamb_env.rules import kernels as K
from tests.helpers import fill, sheet, slow_after

JOLY = load_ruleset("joly")
LAY = layout(JOLY)
N = JOLY.dice
BASKET = LAY.joker_offset + 12 * N


def joker(v, die, free=False):
    return encode(JOLY, Action("joker", joker="J" if free else str(v), die=die, value=v))


def view(st, rules=JOLY):
    """The minimal env-like view the baselines read (``ruleset``, ``game``)."""
    return SimpleNamespace(ruleset=rules, game=st)


def act(agent, st, rules=JOLY):
    mask = legal_mask(rules, st)
    a = agent.act(view(st, rules), None, mask)
    assert mask[a], decode(rules, a)
    return a


def late(open_cells, dice, roll, jokers):
    """A joly sheet with every cell written (0, or the row's lowest possible value) but ``open_cells``."""
    low = {
        row: 0 if 0 in JOLY._possible_values[r] else min(JOLY._possible_values[r]) for r, row in enumerate(JOLY.rows)
    }
    written = {(c, row): low[row] for c, row in fill(JOLY, JOLY.columns) if (c, row) not in open_cells}
    return replace(sheet(JOLY, written, dice=dice, roll=roll), jokers=jokers)


@pytest.mark.parametrize("cls", [GreedyAgent, ExpectimaxAgent])
def test_five_sixes_and_a_two_at_the_last_roll_use_the_fixed_joker_six(cls):
    st = late({("free", "jamb6"), ("free", "twos")}, [2, 6, 6, 6, 6, 6], roll=3, jokers=1 << 5)
    assert act(cls(), st) == joker(6, 0)
    after = apply_action(JOLY, st, joker(6, 0))[0]
    assert decode(JOLY, act(cls(), after)) == Action("write", column="free", row="jamb6")


@pytest.mark.parametrize("cls", [GreedyAgent, ExpectimaxAgent])
def test_the_best_joker_is_chosen_and_a_free_one_only_when_needed(cls):
    st = late({("free", "jamb6"), ("free", "twos")}, [2, 6, 6, 6, 6, 6], roll=3, jokers=K.JOKERS_FULL)
    a = act(cls(), st)
    assert a == joker(6, 0)  # the fixed 6 (the free J would do the same, and is worth more)


@pytest.mark.parametrize("cls", [GreedyAgent, ExpectimaxAgent])
def test_a_hopeless_last_roll_late_in_the_game_takes_the_basket(cls):
    # the game's last cell (jamb6, five rolls), nothing alike at the last roll: 0 points now
    st = late({("free", "jamb6")}, [1, 2, 3, 4, 5, 6], roll=5, jokers=1 << K.JOKER_BASKET_SHIFT)
    assert act(cls(), st) == BASKET
    # a good last roll is written, basket or not
    st = late({("free", "jamb6")}, [6] * 6, roll=5, jokers=1 << K.JOKER_BASKET_SHIFT)
    assert decode(JOLY, act(cls(), st)).kind == "write"


@pytest.mark.parametrize("cls", [GreedyAgent, ExpectimaxAgent])
def test_no_joker_is_spent_for_nothing(cls):
    # a perfect jamb6 at the last roll: no joker or basket can improve it
    st = late({("free", "jamb6"), ("free", "ones")}, [6] * 6, roll=3, jokers=K.JOKERS_FULL)
    assert decode(JOLY, act(cls(), st)) == Action("write", column="free", row="jamb6")


@pytest.mark.parametrize("cls", [GreedyAgent, ExpectimaxAgent])
def test_the_joker_cost_falls_with_the_game(cls):
    # five sixes and a 1 at the last roll, the fixed joker 6 left: jamb6 instead of jamb
    # is worth it late in the game, not while the joker's option value is high
    early = replace(sheet(JOLY, dice=[1, 6, 6, 6, 6, 6], roll=3), jokers=1 << 5)
    assert decode(JOLY, act(cls(), early)) == Action("write", column="free", row="jamb")
    st = late({("free", "jamb6"), ("free", "jamb")}, [1, 6, 6, 6, 6, 6], roll=3, jokers=1 << 5)
    assert act(cls(), st) == joker(6, 0)
    assert H.joker_cost(JOLY, early, joker(6, 0), cls().joker_costs) == cls().joker_costs[0]
    assert H.joker_cost(JOLY, st, BASKET, cls().joker_costs) == pytest.approx(cls().joker_costs[2] * 2 / JOLY.num_cells)


def play(agent, seed, rules_name="joly"):
    env = JambEnv(rules_name)
    obs, info = env.reset(seed=seed)
    actions, done = [], False
    while not done:
        mask = env.action_masks()
        a = agent.act(env, obs, mask)
        assert mask[a], (seed, a)
        actions.append(int(a))
        obs, _, done, _, info = env.step(a)
    return actions, info["score"]


@pytest.mark.parametrize(
    "make",
    slow_after([lambda: RandomAgent(seed=1), GreedyAgent, ExpectimaxAgent], keep=1),
    ids=["random", "greedy", "expectimax"],
)
def test_agents_play_joly_legally_and_use_their_jokers(make):
    for seed in (20_000_000, 20_000_001):
        actions, score = play(make(), seed)
        kinds = [decode(JOLY, a).kind for a in actions]
        assert kinds.count("write") == JOLY.num_cells
        assert kinds.count("joker") >= 1
        if not isinstance(make(), RandomAgent):  # deterministic: the same game again is the same actions
            assert play(make(), seed) == (actions, score)


def test_expectimax_explains_jokers_with_the_values_it_compares():
    env = JambEnv("joly")
    env.reset(seed=3)
    put(env, late({("free", "jamb6"), ("free", "twos")}, [2, 6, 6, 6, 6, 6], roll=3, jokers=K.JOKERS_FULL))
    agent = ExpectimaxAgent()
    explained = agent.explain(env)
    assert {a for a, _ in explained} == set(np.flatnonzero(env.action_masks()).tolist())
    assert explained[0][0] == agent.act(env, None, env.action_masks()) == joker(6, 0)


# games of the no-jokers rulesets, pinned before jokers existed: (score, first actions)
PINNED = {
    ("classic", "greedy", 20_000_000): 773,
    ("classic", "greedy", 20_000_001): 784,
    ("classic", "expectimax", 20_000_000): 871,
    ("classic", "expectimax", 20_000_001): 881,
    ("joly_nojokers", "greedy", 20_000_000): 2330,
    ("joly_nojokers", "expectimax", 20_000_000): 3361,
}


@pytest.mark.parametrize(
    "key",
    slow_after(  # joly_nojokers with expectimax (seconds) in the slow run
        [pytest.param(k) for k in sorted(PINNED)],
        fast=[(k,) for k in PINNED if k[:2] != ("joly_nojokers", "expectimax")],
    ),
    ids=lambda k: "-".join(map(str, k)),
)
def test_rulesets_without_jokers_play_as_before(key, monkeypatch):
    rules_name, name, seed = key

    def never(*args, **kwargs):
        raise AssertionError("joker logic on a ruleset without jokers")

    monkeypatch.setattr(H, "joker_uses", never)
    monkeypatch.setattr(H, "joker_cost", never)
    agent = GreedyAgent() if name == "greedy" else ExpectimaxAgent()
    assert play(agent, seed, rules_name)[1] == PINNED[key]


# ---------------------------------------------------------------------------- jamb-play commands
def session(seed=3, rules="joly"):
    return PlaySession(rules, seed=seed, console=Console(file=None, width=160, record=True, force_terminal=False))


def put(env, st):
    """Set the env's game state to ``st`` (its stream position the fewest dice that sheet has drawn)."""
    from jamb_env.rules import stream_bounds

    env.set_state(
        replace(env.get_state(), game=st, score=score(env.ruleset, st), position=stream_bounds(env.ruleset, st)[0])
    )


def set_game(s, dice, roll=1, jokers=K.JOKERS_FULL):
    put(s.env, replace(sheet(s.env.ruleset, dice=dice, roll=roll), jokers=jokers))


def test_joker_and_basket_commands_parse_to_their_actions():
    s = session()
    set_game(s, [1, 2, 2, 4, 5, 6])
    assert s.parse("joker 6 2") == joker(6, 1)
    assert s.parse("joker 6 3") == joker(6, 1)  # equal dice: the leftmost (same effect)
    assert s.parse("JOKER J 3 1") == joker(3, 0, free=True)
    assert s.parse("j j 3 1") == joker(3, 0, free=True)
    assert s.parse("basket") == BASKET
    for a in (joker(6, 1), joker(3, 0, free=True), BASKET):
        assert s.parse(s.command_for(a)) == a  # the coach's commands type back


@pytest.mark.parametrize(
    "line, message",
    [
        ("joker", "usage: joker V DIE"),
        ("joker 6", "usage: joker V DIE"),
        ("joker J 6", "usage: joker V DIE"),
        ("joker 6 2 1", "usage: joker V DIE"),
        ("joker 7 1", "a joker's value is a face 1..6, got '7'"),
        ("joker J x 1", "a joker's value is a face 1..6, got 'x'"),
        ("joker 6 7", "dice positions are 1..6"),
        ("joker 6 6", "die 6 shows 6 already"),
        ("joker 2 1", "the joker 2 is used already"),
        ("joker J 2 1", "no free joker J left"),
        ("basket 1", "usage: basket (no arguments"),
    ],
)
def test_bad_joker_commands_say_what_was_wrong(line, message):
    s = session()
    set_game(s, [1, 2, 2, 4, 5, 6], jokers=K.JOKERS_FULL & ~(1 << 1) & ~(3 << K.JOKER_FREE_SHIFT))
    with pytest.raises(CommandError, match=re.escape(message)):
        s.parse(line)


def test_no_jokers_in_rulesets_without_them_and_no_basket_left():
    s = session(rules="classic")
    for line in ("joker 6 1", "joker J 6 1", "basket"):
        with pytest.raises(CommandError, match="classic has no jokers"):
            s.parse(line)
    with pytest.raises(CommandError, match="commands: keep, reroll, announce, write, hint"):
        s.parse("dance")
    s = session()
    with pytest.raises(CommandError, match="commands: keep, reroll, announce, write, joker, basket, hint"):
        s.parse("dance")
    set_game(s, [1, 2, 3, 4, 5, 6], jokers=0)
    with pytest.raises(CommandError, match="basket is not allowed: no basket left"):
        s.parse("basket")


def test_joker_commands_play_and_the_status_shows_the_jokers_left():
    s = session()
    dice = s.env.game.dice.tolist()
    die = next(i for i, d in enumerate(dice) if d != 6 and (i == 0 or dice[i - 1] != d))
    assert "jokers left: 1 2 3 4 5 6 J J K K" in _status(s)
    assert s.handle(f"joker 6 {die + 1}") == "move"
    assert sorted(dice[:die] + dice[die + 1 :] + [6]) == s.env.game.dice.tolist()
    assert "jokers left: 1 2 3 4 5 J J K K" in _status(s)
    assert s.handle("basket") == "move"
    assert s.env.game.roll == 1 and jokers_left(JOLY, s.env.game)["baskets"] == 1
    assert "jokers left: 1 2 3 4 5 J J K" in _status(s)
    assert [step["text"] for step in s.record.steps] == [f"joker 6 on die {die + 1}", "basket"]
    s.handle("help")
    out = s.console.export_text()
    assert "joker 6 2" in out and "joker J 5 1" in out and "basket" in out
    assert "jokers left" not in _status(session(rules="classic"))


def _status(s):
    from agents.apps.terminal import status_line

    return status_line(s.env)


def test_the_coach_advises_jokers_as_commands():
    s = session()
    s.coach = ExpectimaxAgent()
    put(s.env, late({("free", "jamb6"), ("free", "twos")}, [2, 6, 6, 6, 6, 6], roll=3, jokers=K.JOKERS_FULL))
    s.handle("hint")
    out = s.console.export_text()
    assert "coach (expectimax): joker 6 1" in out and "basket" in out
