"""Multiplayer Jamb (RULES.md §6): the match core (jamb_env.rules.match) and the PettingZoo
AEC env (jamb_env.multiplayer)."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, performance_benchmark, seed_test

from jamb_env import IllegalActionError, RulesetError, multiplayer
from jamb_env.rules import game as core
from jamb_env.rules import list_rulesets, load_ruleset
from jamb_env.rules import match as M
from tests.helpers import slow_after

PRESETS = list_rulesets()
ANSWER_PRESETS = [p for p in PRESETS if "answer" in load_ruleset(p).columns]


def random_match(rules, num_players, scoring, rng, on_step=None):
    """Play a random legal match on the core; check the invariants on the way. Returns
    (final state, points credited to each player's sheet, steps)."""
    ms = M.new_match(rules, num_players, scoring, first=M.seat(num_players, lambda k: rng.integers(1, 7, k)))
    ms = M.start_turn(rules, ms, rng.integers(1, 7, rules.dice))
    credited, steps = [0] * num_players, 0
    lay = core.layout(rules)
    while True:
        mask = M.legal_mask(rules, ms)
        assert mask.any(), f"dead end: {rules.name} {scoring} {num_players} players, step {steps}"
        a = int(rng.choice(np.flatnonzero(mask)))
        dice = rng.integers(1, 7, core.reroll_count(rules, a)) if core.reroll_count(rules, a) else None
        before = ms
        ms, points = M.apply_action(rules, ms, a, dice)
        credited[before.to_move] += points
        steps += 1
        if on_step:
            on_step(before, a, ms)
        if lay.is_write(a):
            if M.is_over(rules, ms):
                # the game ends exactly when the last cell is written
                assert all(st.turn == rules.num_cells for st in ms.sheets)
                return ms, credited, steps
            assert not all(core.is_over(rules, st) for st in ms.sheets)
            ms = M.start_turn(rules, ms, rng.integers(1, 7, rules.dice))


def _games(n_fast: int):
    cases = []
    for preset in PRESETS:
        rules = load_ruleset(preset)
        for scoring in M.SCORING_MODES:
            if scoring == "shared" and (rules.derived_columns or rules.jokers):
                continue
            for players in range(M.MIN_PLAYERS, M.MAX_PLAYERS + 1):
                cases.append((preset, scoring, players))
    return cases


@pytest.mark.parametrize(
    "preset,scoring,players", slow_after(_games(1), fast=[("classic", "separate", 2), ("classic", "shared", 2)])
)
def test_random_matches_keep_the_invariants(preset, scoring, players):
    rules = load_ruleset(preset)
    rng = np.random.default_rng([players, len(preset), M.SCORING_MODES.index(scoring)])
    for _ in range(3):
        ms, credited, _ = random_match(rules, players, scoring, rng)
        if scoring == "separate":
            assert credited == M.scores(rules, ms) == [core.score(rules, st) for st in ms.sheets]
        else:
            assert sum(M.scores(rules, ms)) == sum(t for p, t in M.column_awards(rules, ms) if p >= 0)


@pytest.mark.slow
@pytest.mark.parametrize("scoring", M.SCORING_MODES)
def test_hundreds_of_random_matches(scoring):
    rng = np.random.default_rng(7 + M.SCORING_MODES.index(scoring))
    for k in range(300):
        preset = ["classic", "standard", "classic_down", "yu48", "six_dice"][k % 5]
        random_match(load_ruleset(preset), 2 + k % 4, scoring, rng)


@pytest.mark.parametrize("preset", slow_after(ANSWER_PRESETS, fast=["standard"]))
def test_the_answer_obligation_passes_to_the_next_player_and_is_honoured(preset):
    rules = load_ruleset(preset)
    lay = core.layout(rules)
    ans = lay.answer_column
    R = rules.num_rows
    seen = {"obliged": 0}

    def check(before, a, after):
        if not lay.is_write(a):
            return
        cell = a - lay.write_offset
        writer, nxt = before.to_move, (before.to_move + 1) % before.num_players
        # whoever was obliged wrote the answer cell
        due = before.sheets[writer].answer_due
        if due >= 0 and rules.answer_forced:
            assert cell == ans * R + due, f"{preset}: obligation to answer row {due} not honoured"
        if M.is_over(rules, after):
            return
        assert after.sheets[writer].answer_due == -1  # the writer never obliges themselves
        c, r = divmod(cell, R)
        expect = r if c in lay.announce_columns and not (int(before.sheets[nxt].filled[ans]) >> r) & 1 else -1
        assert after.sheets[nxt].answer_due == expect
        seen["obliged"] += expect >= 0
        if expect >= 0:  # no announcing while obliged
            st = M.start_turn(rules, after, np.ones(rules.dice, np.int64))
            assert not M.legal_mask(rules, st)[lay.announce_offset : lay.write_offset].any()

    rng = np.random.default_rng(3)
    for players in (2, 3, 5):
        random_match(rules, players, "separate", rng, on_step=check)
    assert seen["obliged"] > 0


@pytest.mark.parametrize("scoring", slow_after(M.SCORING_MODES, fast=["shared"]))
def test_the_copy_column_offers_the_row_the_previous_player_wrote(scoring):
    rules = load_ruleset("six_dice_copy")
    lay = core.layout(rules)
    R, copy = rules.num_rows, rules.columns.index("copy")
    seen = {"copied": 0}

    def check(before, a, after):
        if not lay.is_write(a):
            return
        cell = a - lay.write_offset
        writer = before.to_move
        seen["copied"] += (
            cell // R == copy and before.sheets[writer if scoring == "separate" else 0].copy_row == cell % R
        )
        if M.is_over(rules, after):
            return
        nxt = (writer + 1) % before.num_players
        assert after.to_move == nxt
        if scoring == "separate":
            assert after.sheets[writer].copy_row == -1
            assert after.sheets[nxt].copy_row == cell % R  # the next player may copy this row
        else:
            assert after.sheets[0].copy_row == cell % R

    rng = np.random.default_rng(11)
    for players in (2, 3, 5):
        random_match(rules, players, scoring, rng, on_step=check)
    assert seen["copied"] > 0


def _shared_with(rules, cells: dict[tuple[str, str], tuple[int, int]], players=2) -> M.MatchState:
    """A shared sheet with the given (column, row) -> (value, owner) written."""
    ms = M.new_match(rules, players, "shared")
    st = ms.sheets[0].copy()
    owner = ms.owner.copy()
    values, filled = st.values.copy(), st.filled.copy()
    for (col, row), (value, who) in cells.items():
        c, r = rules.columns.index(col), rules.rows.index(row)
        values[c, r], owner[c, r] = value, who
        filled[c] |= 1 << r
    st = core.GameState(values, filled, st.dice, turn=len(cells))
    return M.MatchState((st,), 0, 0, players, owner)


def test_shared_sheet_awards_each_column_by_the_rule():
    rules = load_ruleset("classic_down")
    # more non-zero entries wins, whoever wrote the zeros
    ms = _shared_with(
        rules,
        {
            ("down", "ones"): (3, 0),
            ("down", "twos"): (4, 1),
            ("down", "threes"): (9, 1),
            ("down", "fours"): (0, 0),
            ("down", "fives"): (0, 0),
        },
    )
    total = core.column_totals(rules, ms.sheets[0])["down"]
    assert total == 16
    assert M.column_awards(rules, ms) == [(1, 16)]
    assert M.scores(rules, ms) == [0, 16]
    # a tie goes to the owner of the first non-zero entry counting up from the bottom
    ms = _shared_with(
        rules,
        {("down", "ones"): (3, 1), ("down", "twos"): (4, 0), ("down", "full"): (0, 1), ("down", "trilling"): (0, 1)},
    )
    assert M.column_awards(rules, ms) == [(0, 7)]
    ms = _shared_with(rules, {("down", "ones"): (3, 0), ("down", "twos"): (4, 1)})
    assert M.column_awards(rules, ms) == [(1, 7)]
    # no non-zero entry: nobody
    ms = _shared_with(rules, {("down", "ones"): (0, 0), ("down", "twos"): (0, 1)})
    assert M.column_awards(rules, ms) == [(-1, 0)] and M.scores(rules, ms) == [0, 0]


def test_shared_tie_among_three_goes_to_a_tied_player():
    rules = load_ruleset("classic_down")
    ms = _shared_with(
        rules,
        {
            ("down", "ones"): (1, 0),
            ("down", "twos"): (2, 1),
            ("down", "threes"): (3, 0),
            ("down", "fours"): (4, 1),
            ("down", "fives"): (5, 2),
        },
        players=3,
    )
    assert M.column_awards(rules, ms) == [(1, 15)]  # 0 and 1 tied on two entries; 2 wrote the bottom one


def test_seating_lowest_die_starts_ties_reroll_among_the_tied():
    rolls = iter([[3, 1, 1, 5], [4, 2]])
    asked = []

    def roll(k):
        asked.append(k)
        return np.array(next(rolls))

    assert M.seat(4, roll) == 2 and asked == [4, 2]
    assert M.seat(3, lambda k: np.array([6, 5, 4])) == 2


def test_bad_matches_are_refused_clearly():
    rules = load_ruleset("classic")
    for bad in (1, 6, "2", 2.0, True):
        with pytest.raises(ValueError, match="num_players must be an integer in 2..5"):
            M.new_match(rules, bad)
    with pytest.raises(ValueError, match="scoring must be one of"):
        M.new_match(rules, 2, "common")
    with pytest.raises(RulesetError, match="derived column"):
        M.new_match(load_ruleset("nokaut"), 2, "shared")
    with pytest.raises(ValueError, match="first must be a player"):
        M.new_match(rules, 2, first=2)
    with pytest.raises(ValueError, match="reward must be 'score', 'win' or 'margin'"):
        multiplayer.env(reward="points")
    with pytest.raises(ValueError, match="reward_scale"):
        multiplayer.env(reward_scale=0)
    with pytest.raises(ValueError, match="render_mode"):
        multiplayer.env(render_mode="video")


def test_win_reward_is_rank_based_and_sums_to_zero():
    assert M.ranks_reward([10, 5]) == [1.0, -1.0]
    assert M.ranks_reward([7, 7]) == [0.0, 0.0]
    r = M.ranks_reward([30, 10, 20, 10])
    assert r == [1.0, -2 / 3, 1 / 3, -2 / 3] and abs(sum(r)) < 1e-12


def test_the_match_result_shares_a_tied_win_for_any_number_of_players():
    res = M.result([30, 10, 30, 20])
    assert res.win.tolist() == [0.5, 0.0, 0.5, 0.0]  # tied on top: the win is shared
    assert res.margin.tolist() == [0, -20, 0, -10]
    assert res.rank.tolist() == M.ranks_reward([30, 10, 30, 20]) == [2 / 3, -1.0, 2 / 3, -1 / 3]
    assert M.result([5, 5, 5]).win.tolist() == [1 / 3] * 3 and M.result([9, 2]).win.tolist() == [1.0, 0.0]
    batch = M.result([[1, 2], [3, 3], [4, 0]])  # k games at once
    assert batch.win.tolist() == [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]] and batch.margin.tolist() == [
        [-1, 1],
        [0, 0],
        [4, -4],
    ]
    assert M.margins([[1, 2], [4, 0]], [0, 0]).tolist() == [-1, 4]
    with pytest.raises(ValueError, match="2 or more players"):
        M.result([5])


# ------------------------------------------------------------------ the AEC env
@pytest.mark.parametrize("scoring", M.SCORING_MODES)
@pytest.mark.parametrize("players", slow_after([2, 5]))
def test_pettingzoo_api_test(scoring, players):
    api_test(multiplayer.env(ruleset="classic", num_players=players, scoring=scoring), num_cycles=300)


@pytest.mark.parametrize("scoring", slow_after(M.SCORING_MODES, fast=["shared"]))
def test_pettingzoo_seed_test(scoring):
    seed_test(lambda: multiplayer.env(ruleset="standard", num_players=3, scoring=scoring), num_cycles=300)


def play_env(env, rng, seed):
    """Random legal play to the end; returns (returns per agent, last infos, actions)."""
    env.reset(seed=seed)
    returns = {a: 0.0 for a in env.possible_agents}
    actions = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        returns[agent] += reward
        if term or trunc:
            assert obs["action_mask"].all()  # all ones once over
            env.step(None)
            continue
        assert obs["action_mask"].any()
        assert env.observation_space(agent).contains(obs)
        for other in env.agents:  # only the player to move has actions
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        actions.append(a)
        env.step(a)
    return returns, info, actions


@pytest.mark.parametrize(
    "preset,scoring,players",
    slow_after(
        [("classic", "separate", 2), ("standard", "separate", 3), ("classic", "shared", 2), ("standard", "shared", 4)],
        fast=["classic"],
    ),
)
def test_env_returns_equal_scores_and_same_seed_same_game(preset, scoring, players):
    rng = np.random.default_rng(0)
    env = multiplayer.env(ruleset=preset, num_players=players, scoring=scoring)
    returns, info, actions = play_env(env, rng, seed=11)
    scores = info["scores"]
    assert [returns[a] for a in env.possible_agents] == scores
    assert env.unwrapped.match.sheets[0].turn == load_ruleset(preset).num_cells
    # the same seed and the same actions replay the same game
    env.reset(seed=11)
    for a in actions:
        env.step(a)
        while env.agents and (env.terminations[env.agent_selection]):
            env.step(None)
    assert env.unwrapped._scores == scores


@pytest.mark.parametrize("reward", ["win", "margin"])
def test_win_and_margin_rewards(reward):
    env = multiplayer.env(ruleset="classic", num_players=3, reward=reward)
    returns, info, _ = play_env(env, np.random.default_rng(1), seed=5)
    s = info["scores"]
    if reward == "win":
        assert [returns[a] for a in env.possible_agents] == pytest.approx(M.ranks_reward(s))
    else:
        for p, a in enumerate(env.possible_agents):
            assert returns[a] == pytest.approx(s[p] - max(x for q, x in enumerate(s) if q != p))


def test_illegal_action_raises_and_changes_nothing():
    env = multiplayer.env(ruleset="classic", num_players=2)
    env.reset(seed=0)
    agent = env.agent_selection
    obs = env.observe(agent)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.unwrapped.step(bad)
    assert env.agent_selection == agent and np.array_equal(env.observe(agent)["observation"], obs["observation"])
    with pytest.raises(ValueError, match="an action is one integer"):
        env.unwrapped.step("write")


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render(mode):
    env = multiplayer.env(ruleset="classic", num_players=2, render_mode=mode)
    env.reset(seed=0)
    out = env.render()
    if mode == "ansi":
        assert "player_1" in out
    else:
        assert out.dtype == np.uint8 and out.ndim == 3


@pytest.mark.slow
def test_pettingzoo_performance_benchmark(capsys):
    performance_benchmark(multiplayer.env(ruleset="classic", num_players=2))
    assert "turns per second" in capsys.readouterr().out


@pytest.mark.parametrize(
    "preset,names", slow_after([("standard", ("greedy", "random")), ("classic", ("expectimax", "greedy"))])
)
def test_baselines_play_any_seat_and_honour_the_answer(preset, names):
    from agents import load

    env = multiplayer.env(ruleset=preset, num_players=2)
    policies = dict(zip(env.possible_agents, [load(n, ruleset=preset) for n in names]))
    for seed in (0, 1):  # the seating differs between seeds, so each agent plays both seats
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            view = env.unwrapped.seat_view(agent)
            a = int(policies[agent].act(view, obs["observation"], obs["action_mask"].astype(bool)))
            env.step(a)  # raises on an illegal action (a broken obligation included)
        assert env.unwrapped.match.sheets[0].turn == load_ruleset(preset).num_cells


@pytest.mark.parametrize(
    "scoring,reward", slow_after([("separate", "score"), ("shared", "margin"), ("separate", "win")])
)
def test_seat_env_is_a_masked_gymnasium_env_against_fixed_opponents(scoring, reward):
    from gymnasium.utils.env_checker import check_env

    from agents import load

    greedy = load("greedy", ruleset="classic")
    env = multiplayer.SeatEnv(greedy, ruleset="classic", num_players=3, scoring=scoring, reward=reward)
    check_env(env, skip_render_check=True)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=4)
    total, done = 0.0, False
    while not done:
        assert env.observation_space.contains(obs)
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, r, done, _, info = env.step(a)
        total += r
    s, p = info["scores"], info["seat"]
    expected = {"score": s[p], "margin": s[p] - max(x for q, x in enumerate(s) if q != p), "win": M.ranks_reward(s)[p]}[
        reward
    ]
    assert total == pytest.approx(expected)
    with pytest.raises(ValueError, match="opponents must be 2"):
        multiplayer.SeatEnv([greedy], num_players=3)
    with pytest.raises(ValueError, match="seat must be"):
        multiplayer.SeatEnv(greedy, seat=2)


@pytest.mark.slow
def test_maskable_ppo_trains_on_a_seat():
    import torch
    from sb3_contrib import MaskablePPO

    from agents import load

    torch.set_num_threads(1)
    env = multiplayer.SeatEnv(
        load("random", ruleset="classic_down"), ruleset="classic_down", reward="win", reward_scale=1.0
    )
    MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0).learn(256)


def test_seat_env_illegal_actions():
    from agents import load

    greedy = load("greedy", ruleset="classic")
    env = multiplayer.SeatEnv(greedy, seat=0)
    env.reset(seed=1)
    bad = int(np.flatnonzero(~env.action_masks())[-1])
    obs, r, done, _, info = env.step(bad)
    assert done and r == -100.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env = multiplayer.SeatEnv(greedy, seat=0, illegal_action="raise")
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(bad)
    with pytest.raises(ValueError, match="illegal_action must be"):
        multiplayer.SeatEnv(greedy, illegal_action="ignore")


def test_a_failing_opponent_leaves_the_seat_env_needing_a_reset():
    from agents import load

    class Flaky:
        fail = False

        def __init__(self):
            self.greedy = load("greedy", ruleset="classic")

        def act(self, view, observation, mask):
            if self.fail:
                raise RuntimeError("boom")
            return self.greedy.act(view, observation, mask)

    opp = Flaky()
    env = multiplayer.SeatEnv(opp, seat=0, illegal_action="raise")
    env.reset(seed=0)
    opp.fail = True
    with pytest.raises(RuntimeError, match="boom"):
        while True:  # until the learner writes and the opponent has to move
            env.step(int(np.flatnonzero(env.action_masks())[-1]))
    opp.fail = False
    with pytest.raises(RuntimeError, match="opponent failed"):
        env.step(0)
    env.reset(seed=0)  # a reset recovers


def test_random_opponents_replay_with_the_seed_and_junk_is_refused():
    from agents import load

    def play(env, seed):
        obs, _ = env.reset(seed=seed)
        trace, done = [obs.copy()], False
        while not done:
            obs, r, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            trace.append(obs.copy())
        return trace

    env = multiplayer.SeatEnv(load("random", ruleset="classic_down"), ruleset="classic_down", seat=1)
    a, b = play(env, 3), play(env, 3)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    for junk in (None, "random", 5, lambda v, o, m: 0):
        with pytest.raises(ValueError, match="an opponent is an agent"):
            multiplayer.SeatEnv(junk)
    with pytest.raises(ValueError, match="mask_in_observation"):
        multiplayer.SeatEnv(load("greedy", ruleset="classic"), mask_in_observation="no")
    with pytest.raises(RuntimeError, match="reset"):
        multiplayer.SeatEnv(load("greedy", ruleset="classic")).step(0)


def test_a_step_once_every_agent_has_left_is_pettingzoos_warning_or_raw_envs_error():
    """After the game, the wrapped env (``env()``) warns as PettingZoo's order wrapper does,
    whatever the action (before: ``step(None)`` was a ValueError about the action), and
    ``raw_env`` says in one line that every agent has left."""
    from pettingzoo.utils.env_logger import EnvLogger

    for make in (multiplayer.env, multiplayer.raw_env):
        env = make(ruleset="classic_down")
        env.reset(seed=0)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        for action in (None, 0):
            if make is multiplayer.raw_env:
                with pytest.raises(RuntimeError, match="every agent has left; call reset"):
                    env.step(action)
                continue
            EnvLogger.mqueue.clear()
            EnvLogger.suppress_output()
            try:
                env.step(action)
            finally:
                EnvLogger.unsuppress_output()
            assert any("after all agents are terminated" in m for m in EnvLogger.mqueue), EnvLogger.mqueue


def test_the_aec_env_refuses_junk_clearly_and_hands_out_copies():
    env = multiplayer.raw_env(scoring="shared")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    for seed in (-1, 1.5, "abc"):
        with pytest.raises(ValueError, match="seed must be"):
            env.reset(seed=seed)
    env.reset(seed=np.int64(1))
    with pytest.raises(ValueError, match="unknown agent 'player_9'; the agents are player_0, player_1"):
        env.observe("player_9")
    m = env.match
    m.sheets[0].dice[:] = 6
    m.owner[:] = 0
    assert not (env.match.owner == 0).any() and env.match.sheets[0].dice.tolist() != [6] * 5
    env.step(
        np.array(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    )  # a 0-d array is one integer
    with pytest.raises(ValueError, match="ranks_reward needs"):
        M.ranks_reward([5])
    with pytest.raises(ValueError, match="not sheets of ruleset"):
        M.scores(load_ruleset("yu48"), M.new_match("classic", 2))
