"""``SeatVecEnv``: N multiplayer games stepped by the rule kernels, seen from one seat per
game, as an SB3 ``VecEnv`` (fast self-play).

The engine is the solitaire :class:`~jamb_env.engine.batch.Engine`: every sheet of every game is
one of its slots (``num_players`` slots per game with separate sheets, one with a shared
sheet), stepped by the same kernels as ``JambEnv``; what the multiplayer game adds to a
write (the turn passing, the obligations passing to the next player, who wrote each
shared cell, the scores and column awards) is the one match step of the AEC env,
:func:`jamb_env.rules.match.end_turn`, and a seat's observation is assembled by the
AEC env's :func:`jamb_env.multiplayer.seat_observations`. Each step applies the learner's
action in every game, then lets the opponents move (one batched policy call per round
over all the games where an opponent is to move) until it is the learner's turn again or
the game is over. Game ``g`` with seed ``s`` is the game of
``jamb_env.multiplayer.raw_env().reset(seed=game_seed(s, g))``: the same seating, the same
dice for every seat, the same observations and rewards for the learner's seat
(tests/conformance/test_match_lockstep.py plays them in lockstep).

A seat's sheet is rolled for its next turn as soon as it writes (its own dice stream
decides those dice either way, so the game is the same); the opponents never see dice
that are not theirs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numba import prange

from jamb_env.engine import doors
from jamb_env.engine.batch import PARALLEL_FROM, Engine, observe_game, refresh_game, step_state
from jamb_env.engine.seeding import game_seeds
from jamb_env.rules import Ruleset, layout, load_ruleset, roll_dice
from jamb_env.rules import match as M
from jamb_env.rules._jit import kernel

try:  # the SB3 door: its library only here (and in JambVecEnv)
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:
    raise ImportError(doors.missing("SeatVecEnv", "stable-baselines3", "train", exc)) from exc

from jamb_env.multiplayer import REWARDS, _score_bound, observation_size, raw_env, seat_observations
from jamb_env.vector import ArrayVecEnvMethods


# ---------------------------------------------------------------------------- kernels
def _make_step_slots(parallel: bool):
    loop = prange if parallel else range

    def step_slots(slots, actions, g, ra, oa, res, s):
        for k in loop(slots.shape[0]):
            i = slots[k]
            step_state(i, actions[k], g, ra, oa, res, s.bits[i], s.faces[i], s.parts[i], s.tmp[i])
        for k in loop(slots.shape[0]):
            observe_game(slots[k], g, ra, oa)

    step_slots.__name__ = step_slots.__qualname__ = "step_slots_parallel" if parallel else "step_slots"
    return kernel(step_slots, parallel=parallel)


step_slots = _make_step_slots(False)
step_slots_parallel = _make_step_slots(True)


@kernel
def end_turns(
    games,
    writers,
    cells,
    S,
    num_players,
    g,
    owner,
    ra,
    oa,
    s,
    scores,
    to_move,
    over,
    counts,
    parts_out,
    cols,
    parts,
    tmp,
):
    """After the player ``writers[k]`` of game ``games[k]`` wrote ``cells[k]`` (its slots
    ``games[k] * S ..``): the match's step, :func:`jamb_env.rules.match.end_turn` (turn,
    obligations, owners, ``scores[game]``), into ``to_move`` / ``over``; with separate
    sheets the writer's and the next player's features, masks and observations are
    recomputed (their obligations changed)."""
    for k in range(games.shape[0]):
        i = games[k]
        i0 = i * S
        w = writers[k]
        nxt, done = M.end_turn(
            S == 1,
            cells[k],
            w,
            num_players,
            g.values[i0 : i0 + S],
            g.filled[i0 : i0 + S],
            g.turn[i0 : i0 + S],
            g.answer_due[i0 : i0 + S],
            g.copy_row[i0 : i0 + S],
            owner[i],
            ra,
            scores[i],
            counts,
            parts_out,
            cols,
            parts,
            tmp,
        )
        to_move[i] = nxt
        over[i] = done
        if S > 1:
            j = i0 + w
            refresh_game(j, g, ra, oa, s.bits[j], s.faces[j], s.parts[j], s.tmp[j])
            if not done:
                j = i0 + nxt
                refresh_game(j, g, ra, oa, s.bits[j], s.faces[j], s.parts[j], s.tmp[j])


# ---------------------------------------------------------------------------- policies
def batched_policy(opponent):
    """A batched opponent ``f(observations (k, D), masks (k, A) bool, views) -> actions (k,)``
    from: an SB3 model (``predict(..., action_masks=...)``, deterministic), an agent with
    ``act(view, observation, mask)`` (``agents.load``; called per game with the seat's
    :class:`~jamb_env.multiplayer.SeatView`), or such a function itself (marked with the
    attribute ``batched = True``)."""
    if getattr(opponent, "batched", False):
        return opponent
    if callable(getattr(opponent, "predict", None)):
        return _ModelPolicy(opponent)
    if callable(getattr(opponent, "act", None)):
        return _AgentPolicy(opponent)
    raise ValueError(
        f"an opponent is an SB3 model (predict), an agent (act) or a batched function, got {type(opponent).__name__}"
    )


class _ModelPolicy:
    """An SB3 model as a batched opponent (deterministic, masked); picklable with it."""

    def __init__(self, model):
        self.model = model

    def __call__(self, obs, masks, views):
        out = self.model.predict(obs, action_masks=masks, deterministic=True)
        return out[0] if isinstance(out, tuple) else out  # SB3 returns (actions, states)


class _AgentPolicy:
    """An agent (``act(view, observation, mask)``) as a batched opponent, one call per
    game; a solitaire agent gets the solitaire part of the observation."""

    def __init__(self, agent):
        self.agent, self.solo = agent, getattr(agent, "observation_size", None)

    def __call__(self, obs, masks, views):
        return np.array(
            [
                self.agent.act(views(k), obs[k] if self.solo == obs.shape[1] else obs[k, : views.solo], masks[k])
                for k in range(len(masks))
            ]
        )  # not cast: a float or None is refused, not truncated


class _Views:
    """Lazy :class:`SeatView` s of the games an opponent acts in (for agents that read the sheet)."""

    def __init__(self, env: SeatVecEnv, games: np.ndarray, seats: np.ndarray):
        self.env, self.games, self.seats, self.solo = env, games, seats, env._engine.encoder.size

    def __call__(self, k: int):
        from jamb_env.multiplayer import SeatView

        env, g, p = self.env, int(self.games[k]), int(self.seats[k])
        slot = env._slot(g, p)
        return SeatView(
            env.ruleset,
            env._engine.game_state(slot),
            int(env._scores[g, p]),
            env._engine.games.masks[slot].copy(),
            player=p,
            num_players=env.num_players,
            scoring=env.scoring,
            owner=env._owner[g] if env.scoring == "shared" else None,
        )


# ---------------------------------------------------------------------------- the env
class SeatVecEnv(ArrayVecEnvMethods, VecEnv):
    """N multiplayer games, one learner seat each, as an SB3 ``VecEnv`` with
    ``action_masks()`` (MaskablePPO trains on it directly).

    Args:
        num_envs: games (N).
        opponent: the other players' policy (see :func:`batched_policy`): an SB3 model, an
            agent of ``agents.load`` or a batched function; ``set_opponent`` changes it for
            each slot's next game (a game keeps the opponent it started with).
        ruleset, num_players, scoring, reward, reward_scale: as
            :class:`jamb_env.multiplayer.raw_env`.
        seed: game ``g`` is seeded ``game_seed(seed, g)`` at the first reset (None:
            fresh entropy); later games of a slot continue its generator.
        seat: the learner's player index, or None: game ``k`` of slot ``g`` seats the
            learner at ``(g + k) % num_players`` (every seat equally often).
        illegal_action: "terminate" (the game ends with ``JambEnv.ILLEGAL_ACTION_PENALTY *
            reward_scale``, ``info["illegal_action"]``; the first one warns) or "raise"
            (:class:`~jamb_env.IllegalActionError`, the games unchanged), as every door
            (:mod:`jamb_env.engine.doors`).

    Observations: float32 ``(N, D)``, the learner's multiplayer observation
    (``raw_env.observe(learner)["observation"]``), new arrays each step. Infos of finished
    games: ``terminal_observation``, ``scores`` (every player's), ``seat``, ``score``,
    ``episode`` (``r``, ``l``, ``t``). An opponent's illegal action raises ValueError (a
    broken policy).
    """

    def __init__(
        self,
        num_envs: int,
        opponent,
        ruleset: str | Ruleset = "classic",
        num_players: int = 2,
        scoring: str = "separate",
        reward: str = "score",
        reward_scale: float = 1.0,
        seed: int | None = None,
        seat: int | None = None,
        illegal_action: str = "terminate",
    ):
        N = doors.check_count("num_envs", num_envs)
        rules = load_ruleset(ruleset) if not isinstance(ruleset, Ruleset) else ruleset
        raw_env(rules, num_players, scoring, reward, reward_scale)  # the same argument checks as the AEC env
        if seat is not None:
            seat = doors.check_integer("seat", seat, 0, num_players - 1)
        self._illegal = doors.IllegalActions(illegal_action)
        seed = doors.check_seed(seed)
        self.ruleset, self.num_players, self.scoring, self.reward_mode = rules, int(num_players), scoring, reward
        self.reward_scale, self.fixed_seat, self.illegal_action = float(reward_scale), seat, illegal_action
        P = self.num_players
        self._S = P if scoring == "separate" else 1
        self._engine = Engine(rules, N * self._S)
        self._lay = layout(rules)
        self._bound = np.float32(_score_bound(rules))
        aec = raw_env(rules, num_players, scoring, reward)
        box = aec.observation_spaces["player_0"]["observation"]
        assert box.shape[0] == observation_size(rules, P, scoring)
        super().__init__(N, box, spaces.Discrete(self._lay.num_actions))
        C, R = len(rules.columns), rules.num_rows
        self._to_move = np.zeros(N, np.int64)
        self._learner = np.zeros(N, np.int64)
        self._over = np.zeros(N, bool)
        self._owner = np.full((N, C, R), -1, np.int8)
        self._scores = np.zeros((N, P), np.int64)
        self._pending = np.zeros(N, np.float64)
        self._episodes = np.zeros(N, np.int64)
        self._ep_return = np.zeros(N, np.float64)
        self._ep_len = np.zeros(N, np.int64)
        self._ep_start = np.zeros(N, np.float64)
        self._scratch = (
            np.zeros(P, np.int64),
            np.zeros(5, np.int64),
            np.zeros(C + 1, np.int64),
            np.zeros(4, np.int64),
            np.zeros(R, np.int64),
        )  # end_turn's
        self._rngs: list = [None] * N
        self._seeds = game_seeds(seed, N) if seed is not None else [None] * N
        self._actions = np.zeros(N, np.int64)
        # the opponents of the games being played, by id; each game keeps the one it started with
        self._opponents: dict[int, tuple] = {}
        self._opponent_of = np.zeros(N, np.int64)
        self._next_id = 0
        self.set_opponent(opponent)
        self._started = False

    def set_opponent(self, opponent) -> None:
        """Use ``opponent`` for every other seat of each slot's next game on; the games
        being played keep theirs (an opponent never changes inside a game)."""
        fn = batched_policy(opponent)  # ValueError before anything changes
        self._next_id += 1
        self._opponents[self._next_id] = (fn, opponent)
        self._forget_opponents()

    @property
    def _opponent_object(self):
        """The opponent the next games get."""
        return self._opponents[self._next_id][1]

    def game_opponents(self) -> list:
        """The opponent of each slot's current game (what ``set_opponent`` was given)."""
        return [self._opponents[int(i)][1] for i in self._opponent_of]

    def _forget_opponents(self) -> None:
        used = set(self._opponent_of.tolist()) | {self._next_id}
        for k in [k for k in self._opponents if k not in used]:
            del self._opponents[k]

    def _slot(self, g, p):
        return g * self._S + (p if self._S > 1 else 0)

    # ------------------------------------------------------------------ the game
    def _new_games(self, games: np.ndarray) -> None:
        b, P, S = self._engine, self.num_players, self._S
        stream = b.games.stream
        for g in games.tolist():
            rng = self._rngs[g]
            first = M.seat(P, lambda k, rng=rng: roll_dice(rng, k))
            for s in range(S):
                stream[g * S + s] = roll_dice(rng, stream.shape[1])
            self._to_move[g] = first
            self._learner[g] = self.fixed_seat if self.fixed_seat is not None else (g + self._episodes[g]) % P
            self._episodes[g] += 1
        b.reset(np.array([g * S + s for g in games.tolist() for s in range(S)], dtype=np.int64))
        self._opponent_of[games] = self._next_id
        self._forget_opponents()
        self._over[games] = False
        self._owner[games] = -1
        self._scores[games] = 0
        self._ep_return[games] = 0.0
        self._ep_len[games] = 0
        self._ep_start[games] = time.perf_counter()

    def _apply(self, games: np.ndarray, actions: np.ndarray) -> None:
        """The players to move in ``games`` play ``actions`` (legal); on writes, the
        match's step (:func:`end_turns`)."""
        b = self._engine
        seats = self._to_move[games]
        slots = (games * self._S + (seats if self._S > 1 else 0)).astype(np.int64)
        fn = step_slots_parallel if len(slots) >= PARALLEL_FROM else step_slots
        fn(slots, actions.astype(np.int64), b.games, self.ruleset.arrays, b.encoder.arrays, b.results, b.scratch)
        wrote = (actions >= self._lay.writes.start) & (actions < self._lay.writes.stop)  # Layout's write actions
        if not wrote.any():
            return
        cells = (actions[wrote] - self._lay.write_offset).astype(np.int64)
        end_turns(
            games[wrote].astype(np.int64),
            seats[wrote].astype(np.int64),
            cells,
            self._S,
            self.num_players,
            b.games,
            self._owner,
            self.ruleset.arrays,
            b.encoder.arrays,
            b.scratch,
            self._scores,
            self._to_move,
            self._over,
            *self._scratch,
        )

    def _learner_values(self, games: np.ndarray, over: np.ndarray) -> np.ndarray:
        """The learner's value of the reward function (:func:`jamb_env.engine.doors.reward_values`)."""
        values = doors.reward_values(self.reward_mode, self._scores[games], over)
        return values[np.arange(len(games)), self._learner[games]]

    def _play_opponents(self, games: np.ndarray) -> None:
        while True:
            idx = games[(~self._over[games]) & (self._to_move[games] != self._learner[games])]
            if not len(idx):
                return
            for opp in np.unique(self._opponent_of[idx]).tolist():  # each game's own opponent
                group = idx[self._opponent_of[idx] == opp]
                self._apply(group, self._opponent_actions(self._opponents[opp][0], group))

    def _opponent_actions(self, policy, idx: np.ndarray) -> np.ndarray:
        """The legal actions ``policy`` plays for the players to move in ``idx``."""
        seats = self._to_move[idx]
        obs = self._observe(idx, seats)
        slots = idx * self._S + (seats if self._S > 1 else 0)
        masks = self._engine.games.masks[slots]
        out = policy(obs, masks, _Views(self, idx, seats))
        actions = np.asarray(out[0] if isinstance(out, tuple) else out)
        if not np.issubdtype(actions.dtype, np.integer) or actions.shape not in ((len(idx),), (len(idx), 1)):
            raise ValueError(
                f"the opponent policy must return {len(idx)} integer actions, got {type(out).__name__} "
                f"of shape {actions.shape} and dtype {actions.dtype}; call reset() for new games"
            )
        actions = actions.reshape(-1).astype(np.int64)
        if actions.min() < 0 or actions.max() >= masks.shape[1] or not masks[np.arange(len(idx)), actions].all():
            raise ValueError(
                "the opponent policy returned an illegal action (it must follow the masks it is given); "
                "call reset() for new games"
            )
        return actions

    def _observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """float32 (k, D): the multiplayer observation of player ``seats[k]`` in game
        ``games[k]`` (as ``raw_env.observe``)."""
        b, S = self._engine, self._S
        solo = b.games.obs[games * S + (seats if S > 1 else 0)]
        if S > 1:
            return seat_observations(
                solo,
                seats,
                self._to_move[games],
                self._scores[games],
                self._bound,
                sheets=b.games.sheet.reshape(self.num_envs, S, -1)[games],
            )
        return seat_observations(
            solo, seats, self._to_move[games], self._scores[games], self._bound, owner=self._owner[games]
        )

    # ------------------------------------------------------------------ VecEnv API
    def seed(self, seed: int | None = None):
        seed = doors.check_seed(seed)
        self._seeds = game_seeds(seed, self.num_envs) if seed is not None else [None] * self.num_envs
        return list(self._seeds)

    def reset(self):
        games = np.arange(self.num_envs)
        for g in games:
            if self._seeds[g] is not None or self._rngs[g] is None:
                self._rngs[g], _ = seeding.np_random(self._seeds[g])
        if isinstance(getattr(self._opponent_object, "rng", None), np.random.Generator):
            # an opponent with its own generator replays with the seed
            self._opponent_object.rng = np.random.default_rng(int(self._rngs[0].integers(2**63)))
        self._seeds = [None] * self.num_envs
        self._episodes[:] = 0
        self._new_games(games)
        self._pending[:] = 0.0
        before = self._learner_values(games, self._over[games])
        self._started = False
        self._play_opponents(games)
        self._pending += self._learner_values(games, self._over[games]) - before
        self._started = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observe(games, self._learner[games])

    def step_async(self, actions) -> None:
        self._actions = doors.check_actions(actions, self.num_envs)

    def step_wait(self):
        if not self._started:
            raise RuntimeError(
                "call reset() before step() (after an opponent's error too: the games were left mid-turn)"
            )
        N = self.num_envs
        games = np.arange(N)
        a = self._actions
        legal = doors.legal_actions(self._learner_masks(), a)
        if not legal.all():  # the policy before anything changes: raise, or warn once
            i = int(np.flatnonzero(~legal)[0])
            why = self._engine.why_illegal(self._slot(i, int(self._learner[i])), int(a[i]))
            self._illegal.refuse(f"game {i}: the learner's {why}", "the games are unchanged", stacklevel=5)
        self._started = False  # until this step is through: an error on the way leaves games mid-turn
        ok = games[legal]
        before = self._learner_values(games, self._over)
        self._apply(ok, a[ok])
        self._play_opponents(ok)
        rewards = self._learner_values(games, self._over) - before + self._pending
        self._pending[:] = 0.0
        bad = games[~legal]
        rewards[bad] = doors.ILLEGAL_ACTION_PENALTY
        rewards *= self.reward_scale
        dones = self._over.copy()
        dones[bad] = True
        self._ep_return += rewards
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(N)]
        obs = self._observe(games, self._learner)
        done_idx = np.flatnonzero(dones)
        if len(done_idx):
            now = time.perf_counter()
            for g in done_idx.tolist():
                p = int(self._learner[g])
                info = infos[g]
                info["terminal_observation"] = obs[g].copy()
                info["scores"] = self._scores[g].tolist()
                info["seat"], info["score"] = p, int(self._scores[g, p])
                info["episode"] = {
                    "r": float(self._ep_return[g]),
                    "l": int(self._ep_len[g]),
                    "t": round(now - self._ep_start[g], 6),
                }
                if not legal[g]:
                    info["illegal_action"] = True
            self._new_games(done_idx)
            before = self._learner_values(done_idx, self._over[done_idx])
            self._play_opponents(done_idx)
            self._pending[done_idx] = self._learner_values(done_idx, self._over[done_idx]) - before
            obs[done_idx] = self._observe(done_idx, self._learner[done_idx])
        self._started = True
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (N, A): the learner's legal actions in every game (a copy)."""
        if not self._started:
            raise RuntimeError("call reset() first")
        return self._learner_masks()

    def _learner_masks(self) -> np.ndarray:
        games = np.arange(self.num_envs)
        return self._engine.games.masks[games * self._S + (self._learner if self._S > 1 else 0)].copy()

    def get_images(self):
        raise NotImplementedError("SeatVecEnv does not render; use jamb_env.multiplayer.env(render_mode=...)")


__all__ = ["SeatVecEnv", "batched_policy", "REWARDS"]
