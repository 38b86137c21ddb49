"""Multiplayer Jamb as a PettingZoo AEC environment (RULES.md §6; the game itself is
:mod:`jamb_env.rules.match`, on the solitaire rules core).

    from jamb_env import multiplayer
    env = multiplayer.env(ruleset="standard", num_players=2, scoring="separate", reward="score")
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0])
        env.step(action)

Agents ``player_0 .. player_{N-1}``; the starting player is seated by dice (the lowest
of one die each, ties re-rolled among the tied) and play passes to the next seat. A
player's turn is a whole solitaire turn (rolls, holds, announcement, write), so the
same agent acts several times in a row; ``agent_selection`` is always the player to move.

Observations (from the observing player's view), ``Dict``:

* ``"action_mask"``: int8 ``(A,)``, the legal actions of the player to move if that is
  the observer, zeros otherwise, all ones once the game is over (the solitaire env's
  terminal convention). ``A`` and the action ids are the solitaire env's of the ruleset.
* ``"observation"``: float32, the concatenation of

  - the solitaire ``Jamb-v1`` observation of the observer's sheet (``"separate"``: the
    dice and roll are there while it is the observer's turn; ``"shared"``: of the shared
    sheet with the current dice);
  - ``"separate"``: for each opponent in seat order after the observer, the compact
    sheet features of their sheet (filled, written values, upper sums, difference, ...
    as in the solitaire observation); ``"shared"``: for each player in seat order from
    the observer, a 0/1 plane of the cells they wrote (``C * R``);
  - one-hot (N) of the player to move, relative to the observer (0 = the observer);
  - each player's score, relative seat order from the observer, divided by a bound of
    the ruleset's score (in [-1, 1]).

The global state (``state()``, ``state_space``; PettingZoo's ``state_test``, centralized
critics such as MAPPO's): float32, the same from every seat, the concatenation of

* ``"separate"``: for every player in player order (``player_0`` first), the solitaire
  ``Jamb-v1`` observation of their sheet (dice, roll, announcement, jokers, the
  obligations ``answer_due`` / ``copy_row`` they carry, every cell, column sums,
  progress; a player not to move is between turns: no dice); ``"shared"``: the solitaire
  observation of the shared sheet, then for every player in player order a 0/1 plane of
  the cells they wrote (``C * R``, cell ``c * R + r``);
* one-hot (N) of the player to move, by player index;
* every player's score by player index, divided by the same bound as the observation's
  (in [-1, 1]).

Its length is :func:`state_size` (``N * D + 2N`` with separate sheets, ``D + N*C*R + 2N``
shared, ``D`` the solitaire observation's size: 1,184 for two players on ``classic``),
its segments :func:`state_segments`, its bounds those of the solitaire observation, 0/1
and [-1, 1]; :func:`match_state` builds it from a
:class:`~jamb_env.rules.match.MatchState`. It holds the whole game but the dice not
rolled yet.

Rewards (``reward=``): ``"score"``: the change of the player's own score (their sheet's,
or the shared columns awarded to them, which can fall when a column changes hands), so
a player's return is their final score; ``"win"``: at the end only, (players beaten -
players beating you) / (N - 1): +1 / 0 / -1 for two players, summing to zero, ties
shared; ``"margin"``: the change of (own score - the best opponent's), so the return is
the final margin. ``reward_scale`` multiplies every reward. ``info`` carries ``scores``
(every player's score, by player index) and ``score``.

An illegal action raises :class:`~jamb_env.IllegalActionError` (the reason given; the
game is unchanged). ``render_mode``: "ansi" (text of every sheet), "human" (prints it)
or "rgb_array" (the sheets side by side).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from jamb_env.engine import doors
from jamb_env.engine.match_views import (  # noqa: F401 (re-exported: they were defined here)
    SeatView,
    _score_bound,
    match_observation,
    match_state,
    observation_bounds,
    observation_size,
    seat_observations,
    state_bounds,
    state_segments,
    state_size,
)
from jamb_env.rules import Ruleset, action_to_string, layout, load_ruleset, roll_dice
from jamb_env.rules import game as core
from jamb_env.rules import match as M
from jamb_env.rules.transition import stream_length

try:  # the PettingZoo door: its library only here
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as exc:
    raise ImportError(doors.missing("jamb_env.multiplayer", "pettingzoo", "multiplayer", exc)) from exc

#: The reward modes (``reward=``): :data:`jamb_env.engine.doors.REWARD_MODES`.
REWARDS = doors.REWARD_MODES


def env(**kwargs):
    """:class:`raw_env` inside PettingZoo's standard wrappers (``AssertOutOfBounds``,
    ``OrderEnforcing``); same arguments."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return _OrderEnforcing(e)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` whose ``last()`` gives :class:`raw_env`'s
    clear errors (before reset; once every agent has left) instead of a KeyError."""

    def last(self, observe: bool = True):
        self.unwrapped._check_last()
        return super().last(observe)

    def step(self, action) -> None:
        raw = self.unwrapped
        n = raw._layout.num_actions
        dead = (
            raw._match is not None
            and raw.agents
            and (raw.terminations.get(raw.agent_selection) or raw.truncations.get(raw.agent_selection))
        )
        left = raw._match is not None and not raw.agents  # PettingZoo's warning: step() after the game
        # the action checked before AssertOutOfBounds (an AssertionError, an OverflowError past int64)
        if not (left or (action is None and dead)):
            action = doors.check_action(action, n)  # the int: AssertOutOfBounds refuses np.array([3]), raw_env not
            if not 0 <= action < n:
                raw._illegal.refuse(f"{raw.agent_selection}: action {action} is outside the action space 0..{n - 1}")
        super().step(action)


class raw_env(AECEnv):
    """Multiplayer Jamb, PettingZoo AEC API (see the module docstring).

    Args:
        ruleset: preset name, YAML path or :class:`~jamb_env.Ruleset` (default "classic").
        num_players: 2..5.
        scoring: "separate" (a sheet each) or "shared" (003's one sheet).
        reward: "score", "win" or "margin".
        reward_scale: multiplies every reward (> 0).
        render_mode: None, "ansi", "human" or "rgb_array".

    Raises:
        ValueError: a bad argument (the message says what is allowed).
        RulesetError: an unknown ruleset or a bad rules file, or "shared" with a derived
            column. FileNotFoundError: a rules YAML path that does not exist.
    """

    metadata = {
        "name": "jamb_multiplayer_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        ruleset: str | Ruleset = "classic",
        num_players: int = 2,
        scoring: str = "separate",
        reward: str = "score",
        reward_scale: float = 1.0,
        render_mode: str | None = None,
    ):
        super().__init__()
        rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        M.check_match(rules, num_players, scoring)
        reward = doors.check_choice("reward", reward, REWARDS)
        reward_scale = doors.check_reward_scale(reward_scale)
        render_mode = doors.check_render_mode(render_mode, self.metadata["render_modes"])
        self.ruleset, self.num_players, self.scoring = rules, int(num_players), scoring
        self.reward_mode, self.reward_scale, self.render_mode = reward, float(reward_scale), render_mode
        self._layout = layout(rules)
        N, A = self.num_players, self._layout.num_actions
        box = spaces.Box(*observation_bounds(rules, N, scoring), dtype=np.float32)
        assert box.shape[0] == observation_size(rules, N, scoring)
        self.possible_agents = [f"player_{p}" for p in range(N)]
        self.agents = []
        self._index = {a: p for p, a in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({"observation": box, "action_mask": spaces.MultiBinary(A)}) for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self.state_space = spaces.Box(*state_bounds(rules, N, scoring), dtype=np.float32)  # state(), module docstring
        # a dice stream per sheet (each player's own, or the shared sheet's), drawn in that
        # order after the seating dice: a seat's dice do not depend on the others' play
        self._stream_len = stream_length(rules)
        self._pos = np.zeros(N if scoring == "separate" else 1, dtype=np.int64)
        self.np_random, self._match = None, None
        self._illegal = doors.IllegalActions("raise")

    def _agent(self, agent) -> int:
        """The player index of ``agent``; ValueError naming the agents for anything else."""
        if not isinstance(agent, str) or agent not in self._index:
            raise ValueError(f"unknown agent {agent!r}; the agents are {', '.join(self.possible_agents)}")
        return self._index[agent]

    def observation_space(self, agent):
        return self.observation_spaces[self.possible_agents[self._agent(agent)]]

    def action_space(self, agent):
        return self.action_spaces[self.possible_agents[self._agent(agent)]]

    # ------------------------------------------------------------------ game
    @property
    def match(self) -> M.MatchState:
        """A copy of the current :class:`~jamb_env.rules.match.MatchState` (writing into
        its arrays changes nothing here)."""
        if self._match is None:
            raise RuntimeError("call reset() first")
        return self._match.copy()

    def _roll(self, k: int) -> np.ndarray:
        """The next ``k`` dice of the stream of the sheet in play."""
        s = 0 if self.scoring == "shared" else self._match.to_move
        faces = self._streams[s, self._pos[s] : self._pos[s] + k]
        self._pos[s] += k
        return faces

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new game: seating, then roll 1 of the first player. ``seed`` as Gymnasium's
        (``numpy.random.SeedSequence``); the seating dice, then one dice stream per sheet
        (player 0's, player 1's, ...; one for a shared sheet) are drawn from it, so the
        same seed and actions give the same game, and a seat's dice do not depend on the
        other players' moves (swapping agents between seats keeps each seat's dice)."""
        doors.check_options(options, allowed=None)  # PettingZoo's api_test gives one it does not use
        seed = doors.check_seed(seed)
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        rng = self.np_random
        first = M.seat(self.num_players, lambda k: roll_dice(rng, k))
        self._streams = np.stack([roll_dice(rng, self._stream_len) for _ in range(len(self._pos))])
        self._pos[:] = 0
        self._match = M.new_match(self.ruleset, self.num_players, self.scoring, first)
        self._match = M.start_turn(self.ruleset, self._match, self._roll(self.ruleset.dice), check=False)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._scores = [0] * self.num_players
        self.infos = {a: self._info(a) for a in self.agents}
        self.agent_selection = self.possible_agents[self._match.to_move]
        if self.render_mode == "human":
            self.render()

    def _info(self, agent) -> dict:
        return {"scores": list(self._scores), "score": self._scores[self._index[agent]]}

    def _check_last(self) -> None:
        if self._match is None:
            raise RuntimeError("call reset() first")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has left; call reset() for a new game")

    def last(self, observe: bool = True):
        """PettingZoo's ``last()`` (the agent in turn's observation, cumulative reward,
        termination, truncation, info). Raises RuntimeError before reset and once every
        agent has left the finished game."""
        self._check_last()
        return super().last(observe)

    def step(self, action) -> None:
        if self._match is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has left; call reset() for a new game")
        if self.terminations.get(self.agent_selection) or self.truncations.get(self.agent_selection):
            self._was_dead_step(action)
            return
        rules, ms = self.ruleset, self._match
        a = doors.check_action(action, self._layout.num_actions)
        what = doors.describe_illegal(rules, M.sheet_in_play(ms), a)
        if what is not None:  # the AEC env raises (PettingZoo's convention): nothing changes
            self._illegal.refuse(f"{self.agent_selection}: {what}")
        self._cumulative_rewards[self.agent_selection] = 0.0  # the acting agent has seen its reward
        rolled = core.reroll_count(rules, a)  # a re-roll or a basket rolls dice
        dice = self._roll(rolled) if rolled else None
        ms, _ = M.apply_action(rules, ms, a, dice, check=False)
        self._match = ms
        over = M.is_over(rules, ms)
        if self._layout.is_write(a) and not over:  # the next player's roll 1, from their stream
            ms = self._match = M.start_turn(rules, ms, self._roll(rules.dice), check=False)
        before = self._scores
        after = M.scores(rules, ms) if self._layout.is_write(a) else before  # only a write changes a score
        self._scores = after
        self._clear_rewards()
        for agent, r in zip(self.agents, self._rewards(before, after, over)):
            self.rewards[agent] = r * self.reward_scale
        self._accumulate_rewards()
        if over:
            self.terminations = {agent: True for agent in self.agents}
        self.infos = {agent: self._info(agent) for agent in self.agents}
        self.agent_selection = self.possible_agents[ms.to_move]
        if self.render_mode == "human":
            self.render()

    def _rewards(self, before: list[int], after: list[int], over: bool) -> list[float]:
        """Every player's reward for a step that took the scores from ``before`` to
        ``after``: the change of :func:`jamb_env.engine.doors.reward_values`."""
        mode = self.reward_mode
        return (doors.reward_values(mode, after, over) - doors.reward_values(mode, before, False)).tolist()

    def observe(self, agent):
        """The ``Dict`` observation of ``agent`` (a new array each call)."""
        if self._match is None:
            raise RuntimeError("call reset() first")
        rules, ms = self.ruleset, self._match
        p = self._agent(agent)
        obs = match_observation(rules, ms, p, self._scores)
        over = M.is_over(rules, ms)
        if over or ms.to_move == p:  # only the player to move has actions; all ones once over
            mask = core.legal_mask(rules, M.sheet_in_play(ms), check=False)
            return {"observation": obs, "action_mask": doors.handed_out_masks(mask, over, np.int8)}
        return {"observation": obs, "action_mask": np.zeros(self._layout.num_actions, np.int8)}

    def state(self) -> np.ndarray:
        """The global state (module docstring): float32 ``(state_size,)``, inside
        ``state_space``, the same whoever observes (a new array each call). Raises
        RuntimeError before reset."""
        if self._match is None:
            raise RuntimeError("call reset() first")
        return match_state(self.ruleset, self._match, self._scores)

    def action_mask(self, agent) -> np.ndarray:
        """int8 ``(A,)``: ``observe(agent)["action_mask"]``."""
        return self.observe(agent)["action_mask"]

    def action_to_string(self, action: int) -> str:
        return action_to_string(self.ruleset, action)

    def seat_view(self, agent) -> SeatView:
        """What the solitaire agents (``agents.load(...)``) read, for ``agent``: the
        ruleset, the sheet it plays on (``game``) and its legal actions. Every baseline
        plays any seat through it: ``policy.act(env.seat_view(a), obs["observation"],
        obs["action_mask"])``; the answer obligation is in the sheet's ``answer_due``
        and the mask, so they honour it. The view also says the seat (``player``,
        ``num_players``, ``scoring`` and, on a shared sheet, a copy of ``owner``)."""
        p = self._agent(agent)
        ms = self.match
        return SeatView(
            self.ruleset,
            ms.sheets[0] if ms.owner is not None else ms.sheets[p],
            self._scores[p],
            self.observe(agent)["action_mask"].astype(bool),
            player=p,
            num_players=self.num_players,
            scoring=self.scoring,
            owner=ms.owner,
        )

    # ------------------------------------------------------------------ pictures
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'"
            )
            return None
        from jamb_env.render.sheet import render_sheet, sheet_image

        rules, ms = self.ruleset, self.match
        if self.render_mode == "rgb_array":
            return np.concatenate([sheet_image(rules, st, core.legal_mask(rules, st)) for st in ms.sheets], axis=1)
        head = f"{self.metadata['name']} {rules.name} {self.scoring}, to move: {self.agent_selection}, "
        head += f"scores {self._scores}"
        if ms.owner is None:
            text = "\n".join(
                [head]
                + [
                    f"-- {a}\n" + render_sheet(rules, st, core.legal_mask(rules, st))
                    for a, st in zip(self.possible_agents, ms.sheets)
                ]
            )
        else:
            owners = "\n".join(" ".join("." if o < 0 else str(o) for o in row) for row in ms.owner.T)
            text = (
                f"{head}\n"
                + render_sheet(rules, ms.sheets[0], core.legal_mask(rules, ms.sheets[0]))
                + "\nwho wrote each cell (rows x columns):\n"
                + owners
            )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


class SeatEnv(gymnasium.Env):
    """One seat of the multiplayer game as a single-agent Gymnasium env (for training a
    learner against fixed opponents, e.g. self-play against past checkpoints).

    The learner plays ``player_{seat}`` (``seat=None``: a random seat each game, from the
    env's generator); the other players' moves are taken inside :meth:`step` by
    ``opponents`` (one per other player, in player order, or one for all), each an object
    with ``act(view, observation, mask) -> action`` (every agent of ``agents.load``; the
    view is :meth:`raw_env.seat_view`), or a pool with ``draw(rng) -> such an object``,
    drawn again for every seat at every reset (self-play against past snapshots).
    Observations, rewards and masks are the learner's in the AEC env (``reward``: "score",
    "win" or "margin"); rewards earned while the opponents play are added to the learner's
    next step. ``action_masks()`` gives the
    learner's legal actions (all ones once the game is over), so sb3-contrib's
    MaskablePPO trains on it; ``mask_in_observation=True`` gives the AEC env's ``Dict``
    observation, otherwise the flat ``"observation"`` Box. ``illegal_action``: as
    :class:`~jamb_env.JambEnv` ("terminate": the learner's game ends with
    ``JambEnv.ILLEGAL_ACTION_PENALTY * reward_scale`` and ``info["illegal_action"]``, the
    first one warns; "raise": :class:`~jamb_env.IllegalActionError`, nothing changed).
    An action that is not one integer raises ValueError. Opponents with
    their own generator (an ``rng`` attribute, e.g. ``agents.load("random")``) are
    reseeded from the env's generator at every reset, so a seed reproduces the game. If
    an opponent fails (raises, or returns something that is not a legal action), the
    error names it and the game must be reset.

    Raises ValueError for a bad seat, opponent or option (and as :class:`raw_env`).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        opponents,
        ruleset: str | Ruleset = "classic",
        num_players: int = 2,
        scoring: str = "separate",
        reward: str = "score",
        seat: int | None = None,
        reward_scale: float = 1.0,
        mask_in_observation: bool = False,
        illegal_action: str = "terminate",
        render_mode: str | None = None,
    ):
        self._illegal = doors.IllegalActions(illegal_action)
        mask_in_observation = doors.check_flag("mask_in_observation", mask_in_observation, " (the AEC env's Dict)")
        render_mode = doors.check_render_mode(render_mode, self.metadata["render_modes"])
        self.illegal_action = illegal_action
        self.aec = raw_env(
            ruleset=ruleset,
            num_players=num_players,
            scoring=scoring,
            reward=reward,
            reward_scale=reward_scale,
            render_mode=render_mode,
        )
        others = num_players - 1
        self.pool = opponents if callable(getattr(opponents, "draw", None)) else None
        if self.pool is None:
            opponents = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * others
            if len(opponents) != others:
                raise ValueError(
                    f"opponents must be {others} agent(s) (one per other player) or one for all, got {len(opponents)}"
                )
            for o in opponents:
                self._check_opponent(o)
        if seat is not None:
            seat = doors.check_integer("seat", seat, 0, num_players - 1)
        self.opponents, self.fixed_seat = opponents, seat
        self.mask_in_observation, self.render_mode = mask_in_observation, render_mode
        space = self.aec.observation_spaces["player_0"]
        self.observation_space = space if self.mask_in_observation else space["observation"]
        self.action_space = self.aec.action_spaces["player_0"]
        self.ruleset = self.aec.ruleset

    @staticmethod
    def _check_opponent(o) -> None:
        if not callable(getattr(o, "act", None)):
            raise ValueError(
                "an opponent is an agent with act(view, observation, mask) -> action (e.g. agents.load('greedy')) "
                f"or a pool with draw(rng) -> such an agent; got {type(o).__name__}"
            )

    def _obs(self):
        obs = self.aec.observe(self.learner)
        return obs if self.mask_in_observation else obs["observation"]

    def _play_opponents(self) -> float:
        """Opponents move until it is the learner's turn or the game ends; returns the
        learner's reward meanwhile."""
        gained = 0.0
        aec = self.aec
        while aec.agent_selection != self.learner and not aec.terminations[self.learner]:
            agent = aec.agent_selection
            p = aec.possible_agents.index(agent)
            policy = self.opponents[p if p < self._seat else p - 1]
            obs = aec.observe(agent)
            action = policy.act(aec.seat_view(agent), obs["observation"], obs["action_mask"].astype(bool))
            a = doors.integer(action)
            if a is None or not 0 <= a < self.action_space.n or not obs["action_mask"][a]:
                self._broken = True
                raise ValueError(
                    f"opponent {type(policy).__name__} ({agent}) returned {action!r}, not a legal action; "
                    "call reset() for a new game"
                )
            aec.step(a)
            gained += aec.rewards[self.learner]
        return gained

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        doors.check_options(options)
        super().reset(seed=doors.check_seed(seed))
        self._broken = True  # until the opponents have made their first moves
        self.aec.reset(seed=int(self.np_random.integers(2**63)))
        self._seat = (
            self.fixed_seat if self.fixed_seat is not None else int(self.np_random.integers(self.aec.num_players))
        )
        if self.pool is not None:  # a fresh draw of opponents for every game
            self.opponents = [self.pool.draw(self.np_random) for _ in range(self.aec.num_players - 1)]
            for o in self.opponents:
                self._check_opponent(o)
        for o in self.opponents:  # opponents with their own generator replay with the seed
            if isinstance(getattr(o, "rng", None), np.random.Generator):
                o.rng = np.random.default_rng(int(self.np_random.integers(2**63)))
        self.learner = self.aec.possible_agents[self._seat]
        self._ended_illegally = False
        self._pending = self._play_opponents()
        self._broken = False
        return self._obs(), self._info()

    def _info(self) -> dict:
        info = dict(self.aec.infos[self.learner])
        info["seat"] = self._seat
        info["action_mask"] = self.action_masks().astype(np.int8)
        return info

    def step(self, action):
        aec = self.aec
        if not hasattr(self, "learner"):
            raise RuntimeError("call reset() before step()")
        if self._broken or aec.agent_selection != self.learner and not aec.terminations[self.learner]:
            raise RuntimeError("an opponent failed during this game; call reset() for a new game")
        if aec.terminations[self.learner] or self._ended_illegally:
            raise RuntimeError("the game has ended; call reset() before step()")
        action = doors.check_action(action, self.action_space.n)
        what = doors.describe_illegal(self.ruleset, M.sheet_in_play(aec._match), action)
        if what is not None:  # the policy before anything changes: raise, or warn once and end the game
            self._illegal.refuse(what)
            self._ended_illegally = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs(), self._illegal.penalty(self.aec.reward_scale), True, False, info
        aec.step(action)
        reward = self._pending + aec.rewards[self.learner]
        self._broken = True  # until the opponents are done (an error in one leaves the game mid-turn)
        reward += self._play_opponents()
        self._broken = False
        self._pending = 0.0
        terminated = bool(aec.terminations[self.learner])
        return self._obs(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """bool ``(A,)``: the learner's legal actions (all True once the game is over)."""
        if not hasattr(self, "learner"):
            raise RuntimeError("call reset() first")
        return self.aec.observe(self.learner)["action_mask"].astype(bool)

    def render(self):
        return self.aec.render()
