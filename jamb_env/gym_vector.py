"""``JambVectorEnv``: N games stepped at once by compiled kernels, as a Gymnasium ``VectorEnv``.

The Gymnasium-native sibling of :class:`~jamb_env.vector.JambVecEnv` (the SB3 ``VecEnv``):
the same engine (:class:`jamb_env.engine.Engine`), Gymnasium's 5-tuple, dict-of-arrays
infos and autoreset modes. ``gymnasium.make_vec("Jamb-v1", num_envs=N,
vectorization_mode="vector_entry_point")`` builds one. Game ``i`` of
``reset(seed=[s_0, ..., s_N-1])`` is the game of ``JambEnv().reset(seed=s_i)``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .engine import PARALLEL_FROM, Engine
from .env import JambEnv, check_env_options
from .errors import IllegalActionError
from .rules import Ruleset, layout, load_ruleset
from .rules.game import SCORE_PARTS
from .seeding import game_seeds

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def _autoreset_mode(mode) -> AutoresetMode:
    """An :class:`AutoresetMode` from the enum, its value ("NextStep") or name ("next_step")."""
    if isinstance(mode, str):
        known = {m.value: m for m in AutoresetMode} | {m.name.lower(): m for m in AutoresetMode}
        mode = known.get(mode, known.get(mode.lower(), mode))
    if mode not in AUTORESET_MODES:
        raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP ('next_step', the default) or "
                         f"AutoresetMode.SAME_STEP ('same_step'), got {mode!r}")
    return mode


def _seed_ok(x) -> bool:
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer)) and x >= 0


class JambVectorEnv(VectorEnv):
    """N solitaire Jamb games in one process, stepped by numba kernels (a Gymnasium ``VectorEnv``).

    Args:
        num_envs: games stepped together (N).
        ruleset: preset name, YAML path or Ruleset.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default, Gymnasium's; also "next_step"
            or "NextStep") or ``AutoresetMode.SAME_STEP``; in ``metadata["autoreset_mode"]``.
        illegal_action: "terminate" (the game ends with ``JambEnv.ILLEGAL_ACTION_PENALTY *
            reward_scale`` and ``info["illegal_action"]``) or "raise" (``IllegalActionError``
            before any game changes).
        reward_scale: multiplies every reward.
        turn_features: observation layout of ``Jamb-v1`` (True) or ``Jamb-v0`` (False).
        mask_in_observation: observations are ``{"observation": float32 (N, D),
            "action_mask": int8 (N, A)}`` (``single_observation_space`` a ``Dict`` of the Box
            and ``MultiBinary(A)``) instead of the float32 (N, D) array.
        render_mode: None only.

    Raises:
        ValueError: a bad argument (the message says what is allowed); ``RulesetError`` (a
            ValueError) for an unknown or invalid ruleset.

    Spaces: ``single_observation_space`` is ``JambEnv``'s Box (D values),
    ``single_action_space`` ``Discrete(A)``; ``observation_space`` / ``action_space`` are
    their batches (``batch_space``).

    ``reset(seed=None, options=None) -> (obs, info)``; ``step(actions) -> (obs, rewards,
    terminated, truncated, info)``: obs float32 (N, D) (or the dict above), rewards float64
    (N,) (JambEnv's float reward, and what Gymnasium's sync/async vector envs return),
    terminated bool (N,), truncated bool (N,) always False. Every array handed out is new
    and never written again.

    ``info`` is a dict of arrays (Gymnasium's vector convention: a key whose value only
    some games have comes with a bool ``_key`` mask):

    * ``action_mask`` int8 (N, A) (``_action_mask`` all True): the legal actions. A mask
      is never all False: the row of a game that is over (NEXT_STEP, from its terminal step
      to its reset) is all ones, and the action given for it is ignored (Pgx's convention).
    * for the games that end this step: ``score`` int64 (N,) (points), ``score_parts``
      {part: int64 (N,)} and ``column_scores`` {column: int64 (N,)} (as JambEnv's last info;
      not for an illegal action), ``illegal_action`` bool (N,) (only for an illegal action).

    Autoreset modes (https://farama.org/Vector-Autoreset-Mode):

    * NEXT_STEP: the step that ends game ``i`` returns its terminal observation, reward
      and the end-of-game keys above; the next step ignores action ``i``, starts a new game
      in slot ``i`` and returns its first observation, reward 0 and terminated False.
    * SAME_STEP: the step that ends game ``i`` starts the next game at once: ``obs[i]`` and
      ``info["action_mask"][i]`` are the new game's, the terminal observation is in
      ``info["final_obs"][i]`` (object array, ``_final_obs`` mask) and the end-of-game keys
      in ``info["final_info"]`` (dict of arrays, ``_final_info`` mask).

    Seeding: ``reset(seed=s)`` seeds game ``i`` with ``jamb_env.seeding.game_seed(s, i)``
    (as ``JambVecEnv(N, seed=s)``); ``reset(seed=[s_0, ...])`` game ``i`` with ``s_i`` (as
    ``JambEnv.reset(seed=s_i)``); ``reset()`` fresh entropy at the first reset, afterwards
    (and for every autoreset) each slot continues its own generator.
    """

    def __init__(self, num_envs: int, ruleset: str | Ruleset = "classic", *,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, illegal_action: str = "terminate",
                 reward_scale: float = 1.0, turn_features: bool = True, mask_in_observation: bool = False,
                 render_mode: str | None = None):
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        mode = _autoreset_mode(autoreset_mode)
        check_env_options(illegal_action, reward_scale)
        for name, flag in (("turn_features", turn_features), ("mask_in_observation", mask_in_observation)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        if render_mode is not None:
            raise ValueError(f"JambVectorEnv does not render (render_mode must be None, got {render_mode!r}); "
                             "use JambEnv(render_mode='ansi') to look at a game")
        self.ruleset = load_ruleset(ruleset)
        self.autoreset_mode = mode
        self.metadata = {"render_modes": [], "autoreset_mode": mode}
        self.render_mode = None
        self.illegal_action = illegal_action
        self.reward_scale = float(reward_scale)
        self.turn_features = bool(turn_features)
        self.mask_in_observation = bool(mask_in_observation)
        N = self.num_envs = int(num_envs)
        self._engine = Engine(self.ruleset, N, self.turn_features)
        self._num_actions = A = layout(self.ruleset).num_actions
        enc = self._engine.encoder
        box = spaces.Box(enc.low, enc.high, dtype=np.float32)
        self.single_observation_space = (
            spaces.Dict({"observation": box, "action_mask": spaces.MultiBinary(A)}) if self.mask_in_observation else box
        )
        self.single_action_space = spaces.Discrete(A)
        self.observation_space = batch_space(self.single_observation_space, N)
        self.action_space = batch_space(self.single_action_space, N)
        self._rngs: list[np.random.Generator | None] = [None] * N
        self._over = np.zeros(N, dtype=bool)  # NEXT_STEP: ended last step, reset at the next
        self._arange = np.arange(N)
        self.parallel = N >= PARALLEL_FROM
        self._started = False
        self._warned_illegal = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Start a new game in every slot; returns ``(obs, info)`` (``info["action_mask"]``).

        Raises:
            ValueError: ``seed`` is not None, a non-negative integer or N of them;
                ``options`` is not a dict, or asks for ``reset_mask`` (not supported: every
                game is reset).
        """
        N = self.num_envs
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
        if options and "reset_mask" in options:
            raise ValueError("JambVectorEnv.reset resets every game; options['reset_mask'] is not supported")
        if seed is None:
            seeds = [None] * N
        elif _seed_ok(seed):
            super().reset(seed=int(seed))
            seeds = game_seeds(int(seed), N)
        elif isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == N and all(_seed_ok(x) for x in seed):
            seeds = [int(x) for x in seed]
        else:
            raise ValueError(f"seed must be None, a non-negative integer or a list of {N} non-negative integers "
                             f"(one per game), got {seed!r:.200}")
        for i, s in enumerate(seeds):
            if s is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(s)
        self._engine.fresh_outputs()  # arrays handed out before are never written again
        self._new_games(self._arange)
        self._over[:] = False
        self._started = True
        return self._outputs({})

    def step(self, actions):
        """One action per game: int array (N,) (ignored for a game that is over, NEXT_STEP).

        Returns ``(obs, rewards, terminated, truncated, info)`` (class docstring).

        Raises:
            TypeError: actions are not integers. ValueError: not shape (N,).
            IllegalActionError: an illegal action with ``illegal_action="raise"`` (no game
                changes). RuntimeError: before ``reset()``.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._check_actions(actions)
        A, batch = self._num_actions, self._engine
        masks = batch.games.masks
        legal = (a >= 0) & (a < A)
        legal[legal] = masks[np.flatnonzero(legal), a[legal]]
        legal |= self._over  # the action of a game that is over is ignored
        illegal = np.flatnonzero(~legal)
        if len(illegal) and self.illegal_action == "raise":
            i = int(illegal[0])
            raise IllegalActionError(f"game {i}: {self._why(i, int(a[i]))}; the games are unchanged")
        over = np.flatnonzero(self._over)
        # games kept out of the kernel: pointed at a legal action, stepped, then restored
        saved = self._engine.snapshot(illegal) if len(illegal) else None
        safe = a.copy()
        safe[illegal] = masks[illegal].argmax(axis=1)
        # fresh output buffers (the kernel writes every entry): the arrays handed out by the
        # previous step are never written again, so no copies are needed
        batch.fresh_outputs()
        if len(over):  # NEXT_STEP: the new games of the slots that ended last step
            self._new_games(over)
            safe[over] = batch.games.masks[over].argmax(axis=1)
            saved_over = self._engine.snapshot(over)
        res = batch.step(safe, self.parallel)
        rewards = res.points.astype(np.float64)
        terminated = res.dones.copy()
        if len(over):
            self._engine.restore(over, saved_over)
            rewards[over], terminated[over] = 0.0, False
        if len(illegal):
            self._engine.restore(illegal, saved)
            rewards[illegal], terminated[illegal] = JambEnv.ILLEGAL_ACTION_PENALTY, True
            if not self._warned_illegal:
                i = int(illegal[0])
                warnings.warn(f"game {i}: {self._why(i, int(a[i]))}; the game ends with reward "
                              f"{JambEnv.ILLEGAL_ACTION_PENALTY} points (illegal_action='terminate'; "
                              "mask actions with info['action_mask'])", stacklevel=2)
                self._warned_illegal = True
        rewards *= self.reward_scale
        done = np.flatnonzero(terminated)
        info: dict[str, Any] = {}
        if len(done):
            ended = self._end_info(done, terminated, ~legal)
            if self.autoreset_mode == AutoresetMode.SAME_STEP:
                final_obs = np.full(self.num_envs, None, dtype=object)
                obs_rows = batch.games.obs[done].copy()
                for k, i in enumerate(done.tolist()):
                    final_obs[i] = ({"observation": obs_rows[k], "action_mask": np.ones(self._num_actions, np.int8)}
                                    if self.mask_in_observation else obs_rows[k])
                info.update(final_obs=final_obs, _final_obs=terminated.copy(),
                            final_info=ended, _final_info=terminated.copy())
                self._new_games(done)
            else:
                info.update(ended)
        self._over[:] = terminated if self.autoreset_mode == AutoresetMode.NEXT_STEP else False
        obs, info = self._outputs(info)
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), info

    def close_extras(self, **kwargs) -> None:
        """Nothing to release (one process, no windows)."""

    # ------------------------------------------------------------------ helpers
    def _new_games(self, idx: np.ndarray) -> None:
        self._engine.new_games(idx, self._rngs)

    def _outputs(self, info: dict[str, Any]):
        """``(obs, info)`` handed out: ``info["action_mask"]`` (int8, all ones for a game
        that is over) added; the Box obs is the batch's fresh array."""
        g = self._engine.games
        mask = g.masks.astype(np.int8)
        mask[self._over] = 1
        info["action_mask"], info["_action_mask"] = mask, np.ones(self.num_envs, dtype=bool)
        obs = {"observation": g.obs, "action_mask": mask.copy()} if self.mask_in_observation else g.obs
        return obs, info

    def _end_info(self, done: np.ndarray, ended: np.ndarray, illegal: np.ndarray) -> dict[str, Any]:
        """The end-of-game keys for the games ``done`` (bool mask ``ended``): score, and
        score_parts / column_scores (legal ends) or illegal_action."""
        N, res = self.num_envs, self._engine.results

        def column(idx, values, dtype=np.int64):
            out = np.zeros(N, dtype=dtype)
            out[idx] = values
            return out

        out: dict[str, Any] = {"score": column(done, self._engine.games.score[done]), "_score": ended.copy()}
        ok, bad = done[~illegal[done]], done[illegal[done]]
        if len(ok):
            has = np.zeros(N, dtype=bool)
            has[ok] = True
            cols = self.ruleset.columns + self.ruleset.derived_columns
            for key, names, table in (("score_parts", SCORE_PARTS, res.parts), ("column_scores", cols, res.cols)):
                sub: dict[str, Any] = {}
                for j, name in enumerate(names):
                    sub[name], sub[f"_{name}"] = column(ok, table[ok, j]), has.copy()
                out[key], out[f"_{key}"] = sub, has.copy()
        if len(bad):
            out["illegal_action"] = column(bad, True, bool)
            out["_illegal_action"] = out["illegal_action"].copy()
        return out

    def _check_actions(self, actions) -> np.ndarray:
        arr = np.asarray(actions)
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"actions must be integers (one per game), got dtype {arr.dtype}")
        if arr.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions (shape ({self.num_envs},)), got shape {arr.shape}")
        if np.issubdtype(arr.dtype, np.unsignedinteger) and arr.max(initial=0) > np.iinfo(np.int64).max:
            raise ValueError("action values overflow int64")
        return arr.astype(np.int64)

    def _why(self, i: int, a: int) -> str:
        return self._engine.why_illegal(i, a)
