"""Joly's jokers and baskets (RULES.md §6): the action layout, each decided interaction on
hand-built states, the batched engine against the core, the observation and the chance API."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from jamb_env import IllegalActionError, JambEnv, load_ruleset
from jamb_env.rules import (
    Action,
    action_to_string,
    apply_action,
    chance_outcomes,
    decode,
    encode,
    first_roll_outcomes,
    jokers_left,
    layout,
    legal_mask,
    new_game,
    start_turn,
    why_illegal,
)
from jamb_env.rules import kernels as K
from tests.helpers import random_legal, sheet

JOLY = load_ruleset("joly")
LAY = layout(JOLY)
N = JOLY.dice


def joker(v, die, free=False):
    return encode(JOLY, Action("joker", joker="J" if free else str(v), die=die, value=v))


BASKET = LAY.joker_offset + 12 * N


def full(st, jokers=K.JOKERS_FULL):
    """``st`` with the jokers left set (every joker by default)."""
    return replace(st, jokers=jokers)


def test_layout_adds_joker_actions_after_the_writes_only_with_jokers():
    plain = layout(load_ruleset("joly_nojokers"))
    assert LAY.write_offset == plain.write_offset and LAY.joker_offset == plain.num_actions
    assert LAY.num_actions == plain.num_actions + 12 * N + 1 == 263
    assert layout(load_ruleset("classic")).num_actions == 97  # unchanged
    assert new_game(JOLY).jokers == K.JOKERS_FULL and new_game(load_ruleset("classic")).jokers == 0
    assert jokers_left(JOLY, new_game(JOLY)) == {"fixed": [1, 2, 3, 4, 5, 6], "free": 2, "baskets": 2}


def test_every_joker_action_decodes_and_encodes_back():
    for a in range(LAY.joker_offset, LAY.num_actions):
        act = decode(JOLY, a)
        assert act.kind in ("joker", "basket") and encode(JOLY, act) == a
    assert action_to_string(JOLY, joker(5, 2)) == "joker 5 on die 3"
    assert action_to_string(JOLY, joker(4, 0, free=True)) == "joker J=4 on die 1"
    assert action_to_string(JOLY, BASKET) == "basket"
    with pytest.raises(ValueError, match="no jokers"):
        encode(load_ruleset("classic"), Action("basket"))
    with pytest.raises(ValueError, match="fixed joker 3 has value 3"):
        encode(JOLY, Action("joker", joker="3", die=0, value=4))
    with pytest.raises(ValueError, match="sorted dice position"):
        encode(JOLY, Action("joker", joker="J", die=6, value=4))


def test_a_fixed_joker_sets_one_die_and_is_used_up():
    st = full(sheet(JOLY, dice=[1, 2, 2, 4, 5, 6], roll=2))
    new, pts = apply_action(JOLY, st, joker(6, 1))  # the first 2 becomes a 6
    assert pts == 0 and new.roll == 2 and new.dice.tolist() == [1, 2, 4, 5, 6, 6]
    assert jokers_left(JOLY, new)["fixed"] == [1, 2, 3, 4, 5]
    assert "used already" in why_illegal(JOLY, new, joker(6, 0))
    assert not legal_mask(JOLY, new)[joker(6, 0)]


def test_joker_legality_decisions():
    st = full(sheet(JOLY, dice=[1, 2, 2, 4, 5, 6], roll=1))  # roll 1 of the turn: allowed
    assert why_illegal(JOLY, st, joker(6, 0)) is None
    assert "shows 6 already" in why_illegal(JOLY, st, joker(6, 5))  # no waste
    assert "leftmost" in why_illegal(JOLY, st, joker(6, 2))  # the second 2: another index of the same effect
    mask = legal_mask(JOLY, st)
    assert not mask[joker(6, 5)] and not mask[joker(6, 2)] and mask[joker(6, 1)] and mask[BASKET]
    # free jokers: two, any value
    st2, _ = apply_action(JOLY, st, joker(3, 0, free=True))
    assert st2.dice.tolist() == [2, 2, 3, 4, 5, 6]
    st3, _ = apply_action(JOLY, st2, joker(1, 0, free=True))
    assert st3.dice.tolist() == [1, 2, 3, 4, 5, 6]
    assert jokers_left(JOLY, st3)["free"] == 0
    assert "no free joker" in why_illegal(JOLY, st3, joker(1, 0, free=True))
    # no joker before the turn's first roll, nor once the game is over
    assert not legal_mask(JOLY, new_game(JOLY))[LAY.joker_offset :].any()


def test_a_joker_after_the_last_roll_counts_in_the_write():
    st = full(sheet(JOLY, dice=[6, 6, 6, 6, 6, 2], roll=3))
    st, _ = apply_action(JOLY, st, joker(6, 0))
    assert st.dice.tolist() == [6] * 6
    _, pts = apply_action(JOLY, st, LAY.write_offset + JOLY.cell("free", "jamb6"))
    assert pts == 36 + 60  # jamb6 = 6 x face + 60


def test_a_basket_restarts_the_turn_and_keeps_the_announcement_and_the_jokers_used():
    st = full(sheet(JOLY, dice=[1, 2, 3, 4, 5, 6], roll=1))
    st, _ = apply_action(
        JOLY, st, LAY.announce_offset + int(np.flatnonzero(LAY.announce_cells == JOLY.cell("announce", "sixes"))[0])
    )
    st, _ = apply_action(JOLY, st, 0b111111 & ~1, dice=[1])  # re-roll one die: roll 2
    st, _ = apply_action(JOLY, st, 0b111110, dice=[2])
    st, _ = apply_action(JOLY, st, joker(5, 0))  # a joker, then the basket
    assert st.roll == 3
    st, _ = apply_action(JOLY, st, BASKET, dice=[6, 6, 6, 1, 1, 1])
    assert st.roll == 1 and st.dice.tolist() == [1, 1, 1, 6, 6, 6]
    assert st.announced == JOLY.cell("announce", "sixes")  # the announcement stands
    assert jokers_left(JOLY, st) == {"fixed": [1, 2, 3, 4, 6], "free": 2, "baskets": 1}
    # inside the restarted turn: jokers again, and the second basket
    assert why_illegal(JOLY, st, joker(6, 0)) is None
    st, _ = apply_action(JOLY, st, BASKET, dice=[2, 2, 2, 2, 2, 2])
    assert jokers_left(JOLY, st)["baskets"] == 0 and "no basket left" in why_illegal(JOLY, st, BASKET)
    with pytest.raises(ValueError, match="basket needs the n dice"):
        apply_action(JOLY, full(sheet(JOLY, dice=[1, 2, 3, 4, 5, 6])), BASKET)


def test_a_basket_is_allowed_at_an_announced_cells_last_roll():
    st = full(sheet(JOLY, dice=[1, 2, 3, 4, 5, 6], roll=5, announced=("announce", "jamb6")))
    mask = legal_mask(JOLY, st)
    writes = np.flatnonzero(mask[LAY.write_offset : LAY.joker_offset])
    assert writes.tolist() == [JOLY.cell("announce", "jamb6")]  # the write is forced ("automatic")
    assert mask[BASKET]


def test_chance_api_treats_the_basket_as_rolling_every_die():
    st = full(sheet(JOLY, dice=[1, 2, 3, 4, 5, 6], roll=3))
    got = chance_outcomes(JOLY, st, BASKET)
    nxt = new_game(JOLY)
    want = first_roll_outcomes(JOLY, nxt)
    assert [(d.tolist(), p) for d, p in got] == [(d.tolist(), p) for d, p in want]
    with pytest.raises(ValueError, match=f"not a re-roll.*the basket {BASKET}"):
        chance_outcomes(JOLY, st, joker(6, 0))  # a joker is not a chance action
    with pytest.raises(IllegalActionError, match="no basket left"):
        chance_outcomes(JOLY, full(st, jokers=0), BASKET)


def test_env_plays_jokers_and_shows_them_in_the_observation():
    env = JambEnv(ruleset="joly")
    env.reset(seed=3)
    obs = env.observe()
    start = env._encoder.segments["jokers"].slice
    assert obs[start].tolist() == [1.0] * 6 + [1.0, 1.0]
    dice = env.game.dice
    a = joker(6 if dice[0] != 6 else 1, 0)
    obs, reward, term, trunc, info = env.step(a)
    assert reward == 0 and not term
    assert obs[start].sum() == 7.0
    obs, *_ = env.step(BASKET)
    assert obs[start][7] == 0.5 and env.game.roll == 1


def test_random_games_with_jokers_use_them_all_and_end_exactly():
    env = JambEnv(ruleset="joly")
    rng = np.random.default_rng(0)
    used = 0
    for seed in range(6):
        env.reset(seed=seed)
        total = 0.0
        while True:
            mask = env.action_masks()
            joker_actions = np.flatnonzero(mask[LAY.joker_offset :])
            a = (
                LAY.joker_offset + int(rng.choice(joker_actions))
                if len(joker_actions) and rng.random() < 0.5
                else random_legal(env, rng)
            )
            used += a >= LAY.joker_offset
            _, r, term, _, info = env.step(a)
            total += r
            if term:
                break
        assert total == info["score"] and env.game.turn == JOLY.num_cells
        assert jokers_left(JOLY, env.game) == {"fixed": [], "free": 0, "baskets": 0}
    assert used == 6 * 10


def test_start_turn_keeps_the_jokers():
    st = full(new_game(JOLY), jokers=5)
    assert start_turn(JOLY, st, [1, 2, 3, 4, 5, 6]).jokers == 5
