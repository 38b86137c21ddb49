"""``JambVecEnv``: N games stepped at once by compiled kernels, as an SB3 ``VecEnv``.

It runs the same engine as :class:`~jamb_env.JambEnv` (``jamb_env.engine.batch``): game ``i``
equals a ``JambEnv`` reset with the same seed. ``JambVecEnv(N, seed=s)`` seeds game ``i``
with ``jamb_env.engine.seeding.game_seed(s, i)`` (SeedSequence-derived: different seeds share no
game); ``game_seeds=[...]`` gives each game its own integer seed (e.g. the canonical
evaluation games, ``JambEnv.reset(seed=...)`` alike).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from jamb_env.engine import doors
from jamb_env.engine.batch import PARALLEL_FROM, Engine
from jamb_env.engine.seeding import game_seeds
from jamb_env.rules import Ruleset, layout, load_ruleset

try:  # the SB3 door: its library only here (and in SeatVecEnv)
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:
    raise ImportError(doors.missing("JambVecEnv", "stable-baselines3", "train", exc)) from exc


class ArrayVecEnvMethods:
    """The SB3 ``VecEnv`` methods of a VecEnv whose games are arrays rather than env
    objects (``JambVecEnv``, ``SeatVecEnv``): attributes are the VecEnv's own and fixed,
    ``env_method`` serves ``action_masks`` (what MaskablePPO asks for), nothing is wrapped."""

    def close(self) -> None:
        pass

    def _get_indices(self, indices) -> list[int] | range:
        """SB3's game indices (None: every game; one index or a sequence), each an integer in
        -N..N-1 (ValueError otherwise: a game that is not there, a bool, a float)."""
        if indices is None:
            return range(self.num_envs)
        items = list(indices) if isinstance(indices, (list, tuple, range, np.ndarray)) else [indices]
        return [doors.check_integer("indices", i, -self.num_envs, self.num_envs - 1) for i in items]

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        idx = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None for _ in idx]
        if not hasattr(self, attr_name):
            raise AttributeError(f"{type(self).__name__} has no attribute {attr_name!r}")
        return [getattr(self, attr_name) for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"{type(self).__name__} attributes are fixed at construction; cannot set {attr_name!r}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self.action_masks()[list(self._get_indices(indices))])
        raise AttributeError(f"{type(self).__name__} supports env_method('action_masks') only, not {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


class JambVecEnv(ArrayVecEnvMethods, VecEnv):
    """N solitaire Jamb games in one process, stepped by numba kernels.

    Args:
        num_envs: games stepped together (N).
        ruleset: preset name, YAML path or Ruleset.
        seed: seeds game ``i`` with ``jamb_env.engine.seeding.game_seed(seed, i)`` at the first
            reset (None: fresh entropy); later games of slot ``i`` continue its generator.
        game_seeds: instead of ``seed``, one integer seed per game (as ``JambEnv.reset``).
        illegal_action: "terminate" (the game ends with ``JambEnv.ILLEGAL_ACTION_PENALTY``
            points and ``info["illegal_action"]``) or "raise" (``IllegalActionError``
            before any game changes).
        reward_scale: multiplies every reward.

    Arrays (read-only views of the batched state): ``values`` int16 (N, C, R), ``filled``
    int64 (N, C) bitmasks, ``dice`` int8 (N, n) sorted, ``roll``, ``announced``,
    ``answer_due``, ``copy_row``, ``turn`` int64 (N,), ``score`` int64 (N,) points, ``stream`` int8 (N, L)
    and ``pos`` (N,) the dice streams. ``action_masks()`` bool (N, A), a copy. Observations
    are new arrays every step, never written again.

    ``step`` returns float32 observations (N, D), float32 rewards (N,), bool dones and a
    list of infos that are empty dicts except for finished games, whose info holds
    ``terminal_observation``, ``episode`` (``r`` return, ``l`` length, ``t`` seconds),
    ``score``, ``score_parts`` and ``column_scores`` (as JambEnv's last info).
    """

    def __init__(
        self,
        num_envs: int,
        ruleset: str | Ruleset = "classic",
        seed: int | None = None,
        illegal_action: str = "terminate",
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        turn_features: bool = True,
        game_seeds=None,
    ):
        N = doors.check_count("num_envs", num_envs)
        self._illegal = doors.IllegalActions(illegal_action)
        self.reward_scale = doors.check_reward_scale(reward_scale)
        if render_mode is not None:
            raise ValueError("JambVecEnv does not render; use JambEnv(render_mode='ansi') to look at a game")
        self.turn_features = doors.check_flag("turn_features", turn_features, " (Jamb-v1 layout or Jamb-v0)")
        rules = load_ruleset(ruleset)
        self.ruleset = rules
        self.illegal_action = illegal_action
        self.render_mode = None
        self._engine = Engine(rules, N, self.turn_features)
        self._encoder = self._engine.encoder
        self._lay = layout(rules)
        observation_space = spaces.Box(self._encoder.low, self._encoder.high, dtype=np.float32)
        super().__init__(N, observation_space, spaces.Discrete(self._lay.num_actions))
        self._ep_return = np.zeros(N, dtype=np.float64)
        self._ep_len = np.zeros(N, dtype=np.int64)
        self._ep_start = np.zeros(N, dtype=np.float64)
        self._rngs: list[np.random.Generator | None] = [None] * N
        self._actions = np.zeros(N, dtype=np.int64)
        self._arange = np.arange(N)
        #: step the games on numba's threads (from 256 games on; no gain below)
        self.parallel = N >= PARALLEL_FROM
        self._started = False
        if seed is not None and game_seeds is not None:
            raise ValueError("give seed (games derived from it) or game_seeds (one per game), not both")
        if seed is not None:
            self.seed(seed)
        if game_seeds is not None:
            self.seed_games(game_seeds)

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the games at the next ``reset()``: game ``i`` with
        ``jamb_env.engine.seeding.game_seed(seed, i)`` (SeedSequence-derived: different seeds share
        no game); None draws fresh entropy. Returns the per-game seeds.

        Raises:
            ValueError: ``seed`` is not a non-negative integer or None."""
        seed = doors.check_seed(seed)
        self._seeds = [None] * self.num_envs if seed is None else game_seeds(seed, self.num_envs)
        return list(self._seeds)

    def seed_games(self, seeds) -> list[int]:
        """Seed game ``i`` with ``seeds[i]`` at the next ``reset()`` (as
        ``JambEnv.reset(seed=seeds[i])``; e.g. the canonical evaluation games).

        Raises:
            ValueError: not one non-negative integer per game."""
        self._seeds = doors.check_seeds(seeds, self.num_envs)
        return list(self._seeds)

    def _view(self, name: str) -> np.ndarray:
        view = getattr(self._engine.games, name).view()
        view.flags.writeable = False
        return view

    values = property(lambda self: self._view("values"), doc="int16 (N, C, R) written values (read-only view)")
    filled = property(lambda self: self._view("filled"), doc="int64 (N, C) filled-row bitmasks (read-only view)")
    dice = property(lambda self: self._view("dice"), doc="int8 (N, n) sorted dice (read-only view)")
    dice_index = property(lambda self: self._view("dice_index"), doc="int64 (N,) multiset index (read-only view)")
    roll = property(lambda self: self._view("roll"), doc="int64 (N,) roll of the turn (read-only view)")
    announced = property(lambda self: self._view("announced"), doc="int64 (N,) announced cell or -1 (read-only view)")
    answer_due = property(lambda self: self._view("answer_due"), doc="int64 (N,) answer row or -1 (read-only view)")
    copy_row = property(
        lambda self: self._view("copy_row"), doc="int64 (N,) row the copy column offers or -1 (read-only view)"
    )
    turn = property(lambda self: self._view("turn"), doc="int64 (N,) cells written (read-only view)")
    score = property(lambda self: self._view("score"), doc="int64 (N,) running score, points (read-only view)")
    stream = property(lambda self: self._view("stream"), doc="int8 (N, L) dice streams (read-only view)")
    pos = property(lambda self: self._view("pos"), doc="int64 (N,) dice rolled so far (read-only view)")

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        idx = np.arange(self.num_envs)
        for i in idx:
            seed = self._seeds[i]
            if seed is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(seed)
        self._engine.fresh_outputs()  # arrays handed out before are never written again
        self._new_games(idx)
        self._reset_seeds()
        self._reset_options()
        self._started = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._engine.games.obs

    def _new_games(self, idx: np.ndarray) -> None:
        self._engine.new_games(idx, self._rngs)
        now = time.perf_counter()
        self._ep_return[idx] = 0.0
        self._ep_len[idx] = 0
        self._ep_start[idx] = now

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = doors.check_actions(actions, self.num_envs)

    def step_wait(self):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._actions
        N = self.num_envs
        legal = doors.legal_actions(self._engine.games.masks, a)
        illegal = np.flatnonzero(~legal)
        if len(illegal):  # the policy before anything changes: raise, or warn once
            i = int(illegal[0])
            self._illegal.refuse(f"game {i}: {self._why(i, int(a[i]))}", "the games are unchanged", stacklevel=5)
        # fresh output buffers each step (the kernel writes every entry): the arrays handed
        # out by the previous step are never written again, so no copies are needed
        res = self._engine.step_except(a, illegal, self.parallel)
        obs = self._engine.games.obs
        rewards = res.points.astype(np.float64)
        dones = res.dones.copy()
        if len(illegal):
            rewards[illegal] = doors.ILLEGAL_ACTION_PENALTY
            dones[illegal] = True
        rewards *= self.reward_scale
        self._ep_return += rewards
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(N)]
        done_idx = np.flatnonzero(dones)
        if len(done_idx):
            now = time.perf_counter()
            # one numpy call per quantity for all finished games, then plain Python values
            terminal = obs[done_idx].copy()
            returns = self._ep_return[done_idx].tolist()
            lengths = self._ep_len[done_idx].tolist()
            seconds = (now - self._ep_start[done_idx]).round(6).tolist()
            scores = self._engine.games.score[done_idx].tolist()
            finals = self._engine.final_scores(done_idx)
            for k, i in enumerate(done_idx.tolist()):
                info = infos[i]
                info["terminal_observation"] = terminal[k]
                info["episode"] = {"r": returns[k], "l": lengths[k], "t": seconds[k]}
                info["score"] = scores[k]
                if legal[i]:
                    info["score_parts"], info["column_scores"] = finals[k]
                else:
                    info["illegal_action"] = True
            self._new_games(done_idx)
        return obs, rewards.astype(np.float32), dones, infos

    def game_state(self, i: int):
        """Game ``i`` as a core :class:`~jamb_env.rules.GameState` (a copy)."""
        return self._engine.game_state(i)

    def _why(self, i: int, a: int) -> str:
        return self._engine.why_illegal(i, a)

    def action_masks(self) -> np.ndarray:
        """bool (N, A): the legal actions of every game (a copy: writing into it changes
        nothing)."""
        return self._engine.games.masks.copy()

    def get_images(self):
        return [None for _ in range(self.num_envs)]
