"""The ``critic`` agent (agents/critic_search.py): its leaves read the observation the env
gives after the write and the next roll, its points are the engine's, it plays a whole
game legally, and bad models and arguments get clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.critic_search import CriticSearchAgent, quantile_rolls
from agents.evaluation.solitaire import play_game
from agents.registry import shipped_model_path
from jamb_env import JambEnv, load_ruleset
from jamb_env.rules import layout
from jamb_env.rules.planner import first_roll_distribution


class Recorder:
    """Stands in for the critic: keeps the observations it is given, values them 0."""

    def __init__(self):
        self.seen = []

    def __call__(self, obs):
        self.seen.append(np.array(obs))
        return np.zeros(len(obs))


@pytest.mark.slow  # a whole game, a 252-roll critic search at every write
def test_leaves_read_the_env_observation_after_the_write_and_roll():
    """For writes of a real game: the leaf of the cell's value is its points (critic 0),
    and the observation the critic got for the first roll the env then rolled is the
    env's observation, element for element."""
    agent = CriticSearchAgent(shipped_model_path("classic"), ruleset="classic", rolls=252)
    recorder = Recorder()
    agent.critic = recorder
    env = JambEnv("classic")
    ppo = agents.load("ppo", ruleset="classic")
    rules, lay = env.ruleset, layout(env.ruleset)
    faces = [tuple(f) for f in rules.tables.sorted_dice[quantile_rolls(rules, 252)]]
    obs, _ = env.reset(seed=7)
    matched, done = 0, False
    while not done:
        a = ppo.act(env, obs, env.action_masks())
        st = env.game
        cell = a - lay.write_offset
        writes = lay.write_offset <= a < lay.write_offset + rules.num_cells
        if writes:
            recorder.seen.clear()
            leaves = agent.leaf_tables(st, {cell})
        obs, reward, done, _, _ = env.step(a)
        if not writes:
            continue
        values, leaf = leaves[cell]
        v = rules.cell_values[st.roll - 1, st.dice_index, cell]
        assert leaf[np.searchsorted(values, v)] == reward  # critic 0: the points alone
        if done:
            assert not recorder.seen  # the last write: no critic call
            continue
        rows = np.concatenate(recorder.seen).reshape(len(values), 252, -1)[np.searchsorted(values, v)]
        nxt = tuple(env.game.dice)
        if nxt in faces:
            np.testing.assert_array_equal(rows[faces.index(nxt)], obs)
            matched += 1
    assert matched >= 20


def test_quantile_rolls_follow_the_first_roll_distribution():
    rules = load_ruleset("classic")
    k = quantile_rolls(rules, 1000)
    p = first_roll_distribution(rules.tables)
    freq = np.bincount(k, minlength=len(p)) / 1000
    assert np.abs(freq - p).max() < 2e-3  # each multiset's share within a quantile step
    assert quantile_rolls(rules, 1).tolist() == [int(np.searchsorted(np.cumsum(p), 0.5))]


@pytest.mark.slow  # a whole game of critic search; the leaves test below plays one through the same agent
def test_critic_plays_a_legal_game_through_load():
    agent = agents.load("critic", ruleset="classic")
    assert isinstance(agent, CriticSearchAgent)
    result = play_game(agent, JambEnv("classic"), 3)
    assert result["steps"] >= load_ruleset("classic").num_cells
    assert result["score"] > 0


def test_bad_models_and_arguments_are_refused():
    path = shipped_model_path("classic")
    with pytest.raises(ValueError, match="rolls"):
        CriticSearchAgent(path, ruleset="classic", rolls=0)
    with pytest.raises(ValueError, match="reward_scale"):
        CriticSearchAgent(path, ruleset="classic", reward_scale=float("nan"))
    with pytest.raises(ValueError, match="observations"):
        CriticSearchAgent(path, ruleset="jnn")  # a classic model on jnn
    with pytest.raises(FileNotFoundError):
        agents.load("critic:/no/such/model.zip", ruleset="classic")
    with pytest.raises(ValueError, match="critic:"):
        agents.load("critic:", ruleset="classic")
    with pytest.raises(ValueError, match="plays 'classic'"):
        agent = CriticSearchAgent(path, ruleset="classic")
        env = JambEnv("jnn")
        obs, _ = env.reset(seed=0)
        agent.act(env, obs, env.action_masks())
