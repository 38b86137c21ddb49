"""``JambVectorEnv``: N games stepped at once by compiled kernels, as a Gymnasium ``VectorEnv``.

The Gymnasium-native sibling of :class:`~jamb_env.vector.JambVecEnv` (the SB3 ``VecEnv``):
the same engine (:class:`jamb_env.engine.batch.Engine`), Gymnasium's 5-tuple, dict-of-arrays
infos (the keys and dtypes that Gymnasium's ``SyncVectorEnv`` of ``JambEnv`` gives), every
autoreset mode, ``call`` / ``get_attr`` and ``render``. ``gymnasium.make_vec("Jamb-v1",
num_envs=N)`` (the default ``vectorization_mode``, the registered vector entry point)
builds one. Game ``i`` of ``reset(seed=[s_0, ..., s_N-1])`` is the game of
``JambEnv().reset(seed=s_i)``. :func:`make_vec` is ``gymnasium.make_vec`` taking
``autoreset_mode`` the same way in every vectorization mode.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import VectorizeMode
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jamb_env.engine import doors
from jamb_env.engine.batch import PARALLEL_FROM, Engine
from jamb_env.engine.seeding import game_seeds
from jamb_env.env import JambEnv, mask_space
from jamb_env.rules import Ruleset, layout, load_ruleset
from jamb_env.rules.game import SCORE_PARTS

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
RENDER_MODES = ("rgb_array", "ansi")
#: JambEnv attributes ``call`` refuses: they change a game, or hand out the env itself, and
#: ``call`` evaluates each game on one stand-in JambEnv (they would act on the stand-in).
CALL_REFUSED = (
    "reset",
    "step",
    "step_outcome",
    "set_state",
    "close",
    "unwrapped",
    "get_wrapper_attr",
    "set_wrapper_attr",
    "has_wrapper_attr",
)
#: The info keys of every game on every reset and step (JambEnv's ``info``).
STATE_KEYS = ("score", "dice", "roll", "announced", "turn", "action_mask")


def _autoreset_mode(mode) -> AutoresetMode:
    """An :class:`AutoresetMode` from the enum, its value ("NextStep") or name ("next_step")."""
    if isinstance(mode, str):
        known = {m.value: m for m in AutoresetMode} | {m.name.lower(): m for m in AutoresetMode}
        mode = known.get(mode, known.get(mode.lower(), mode))
    if mode not in AUTORESET_MODES:
        raise ValueError(
            f"autoreset_mode must be AutoresetMode.NEXT_STEP ('next_step', the default), "
            f"AutoresetMode.SAME_STEP ('same_step') or AutoresetMode.DISABLED ('disabled'), got {mode!r}"
        )
    return mode


def make_vec(
    id: str = "Jamb-v1",
    num_envs: int = 1,
    vectorization_mode: str | VectorizeMode | None = None,
    *,
    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    vector_kwargs: dict | None = None,
    **kwargs,
):
    """``gymnasium.make_vec(id, num_envs, vectorization_mode, **kwargs)`` with
    ``autoreset_mode`` given the same way in every mode: to :class:`JambVectorEnv` as a
    keyword (the vector entry point, the default mode), to Gymnasium's ``SyncVectorEnv`` /
    ``AsyncVectorEnv`` in ``vector_kwargs`` ("sync", "async"), where ``gymnasium.make_vec``
    wants it in each mode.

    Raises:
        ValueError: an unknown ``autoreset_mode`` or ``vectorization_mode``, or
            ``vector_kwargs`` holding another ``autoreset_mode``; otherwise what
            ``gymnasium.make_vec`` raises.
    """
    mode = _autoreset_mode(autoreset_mode)
    if vectorization_mode is None:
        spec = gym.spec(id) if isinstance(id, str) else id
        resolved = VectorizeMode.VECTOR_ENTRY_POINT if spec.vector_entry_point is not None else VectorizeMode.SYNC
    else:
        try:
            resolved = VectorizeMode(vectorization_mode)
        except ValueError:
            raise ValueError(
                f"vectorization_mode must be None, 'vector_entry_point', 'sync' or 'async', got {vectorization_mode!r}"
            ) from None
    vector_kwargs = dict(vector_kwargs or {})
    if resolved is VectorizeMode.VECTOR_ENTRY_POINT:
        return gym.make_vec(id, num_envs, resolved, vector_kwargs=vector_kwargs, autoreset_mode=mode, **kwargs)
    given = vector_kwargs.get("autoreset_mode", mode)
    if _autoreset_mode(given) is not mode:
        raise ValueError(f"autoreset_mode={mode!r} but vector_kwargs['autoreset_mode']={given!r}: give it once")
    vector_kwargs["autoreset_mode"] = mode
    return gym.make_vec(id, num_envs, resolved, vector_kwargs=vector_kwargs, **kwargs)


class JambVectorEnv(VectorEnv):
    """N solitaire Jamb games in one process, stepped by numba kernels (a Gymnasium ``VectorEnv``).

    Args:
        num_envs: games stepped together (N).
        ruleset: preset name, YAML path or Ruleset.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default, Gymnasium's; also "next_step"
            or "NextStep"), ``AutoresetMode.SAME_STEP`` or ``AutoresetMode.DISABLED``; in
            ``metadata["autoreset_mode"]`` and ``autoreset_mode``.
        illegal_action: "terminate" (the game ends with ``JambEnv.ILLEGAL_ACTION_PENALTY *
            reward_scale`` and ``info["illegal_action"]``; the first one warns,
            :class:`~jamb_env.IllegalActionWarning`, as JambEnv) or "raise"
            (``IllegalActionError`` before any game changes).
        reward_scale: multiplies every reward.
        turn_features: observation layout of ``Jamb-v1`` (True) or ``Jamb-v0`` (False).
        mask_in_observation: observations are ``{"observation": float32 (N, D),
            "action_mask": (N, A)}`` (``single_observation_space`` JambEnv's ``Dict``)
            instead of the float32 (N, D) array.
        mask_dtype: "int8" (default) or "bool": the dtype of every mask handed out
            (``info["action_mask"]``, the observation's, its space), as ``JambEnv``.
        render_mode: None, "rgb_array" (``render()`` returns a tuple of N uint8 ``(H, W,
            3)`` pictures, JambEnv's) or "ansi" (a tuple of N texts).

    Raises:
        ValueError: a bad argument (the message says what is allowed); ``RulesetError`` (a
            ValueError) for an unknown or invalid ruleset.

    Spaces: ``single_observation_space`` / ``single_action_space`` are ``JambEnv``'s
    (the same arguments); ``observation_space`` / ``action_space`` their batches
    (``batch_space``).

    ``reset(seed=None, options=None) -> (obs, info)``; ``step(actions) -> (obs, rewards,
    terminated, truncated, info)``: obs float32 (N, D) (or the dict above), rewards float64
    (N,) (JambEnv's float reward, and what Gymnasium's sync/async vector envs return),
    terminated bool (N,), truncated bool (N,) always False. Every array handed out is new
    and never written again.

    ``info`` is a dict of arrays with a bool ``_key`` mask per key (Gymnasium's vector
    convention), the keys and dtypes ``gymnasium.make_vec("Jamb-v1", N,
    vectorization_mode="sync")`` gives:

    * every reset and step, for every game (``_key`` all True): ``score`` int64 (N,)
      (points so far), ``dice`` int8 (N, n) (sorted; zeros when none are rolled),
      ``roll``, ``announced`` (cell index, -1 for none) and ``turn`` int64 (N,), and
      ``action_mask`` (N, A) (``mask_dtype``). A mask is never all False: the row of a
      game that is over (from its terminal step to its reset) is all ones, and
      (NEXT_STEP) the action given for it is ignored (Pgx's convention).
    * for the games that end this step: ``score_parts`` {part: int64 (N,)} and
      ``column_scores`` {column: int64 (N,)} (``_score_parts`` / ``_column_scores`` True for
      those games; JambEnv's last info; not for an illegal action), ``illegal_action``
      bool (N,) (only for an illegal action).

    Autoreset modes (https://farama.org/Vector-Autoreset-Mode):

    * NEXT_STEP: the step that ends game ``i`` returns its terminal observation, reward
      and the end-of-game keys above; the next step ignores action ``i``, starts a new game
      in slot ``i`` and returns its first observation, reward 0 and terminated False.
    * SAME_STEP: the step that ends game ``i`` starts the next game at once: ``obs[i]`` and
      the info's keys are the new game's, the terminal observation is in
      ``info["final_obs"][i]`` (object array, ``_final_obs`` mask) and the ended game's
      info (the keys above, masks True for the games that ended) in ``info["final_info"]``
      (``_final_info`` mask).
    * DISABLED: a game that ends stays over until ``reset(options={"reset_mask": mask})``
      (bool (N,), True for the games to start anew) restarts it; stepping while a game is
      over raises RuntimeError. ``reset_mask`` works in every mode.

    Seeding: ``reset(seed=s)`` seeds game ``i`` with ``jamb_env.engine.seeding.game_seed(s, i)``
    (as ``JambVecEnv(N, seed=s)``); ``reset(seed=[s_0, ...])`` game ``i`` with ``s_i`` (as
    ``JambEnv.reset(seed=s_i)``); ``reset()`` fresh entropy at the first reset, afterwards
    (and for every autoreset) each slot continues its own generator. With a
    ``reset_mask`` only the games reset are seeded.

    ``call(name, *args, **kwargs)`` returns, per game, JambEnv's attribute ``name`` (called
    with the arguments if it is a method) on that game: ``call("action_masks")``,
    ``call("game")``, ``call("get_state")``, ``call("render")``, ...; ``get_attr(name)`` is
    ``call(name)``.
    """

    def __init__(
        self,
        num_envs: int,
        ruleset: str | Ruleset = "classic",
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        illegal_action: str = "terminate",
        reward_scale: float = 1.0,
        turn_features: bool = True,
        mask_in_observation: bool = False,
        mask_dtype: str = "int8",
        render_mode: str | None = None,
    ):
        N = doors.check_count("num_envs", num_envs)
        mode = _autoreset_mode(autoreset_mode)
        self._illegal = doors.IllegalActions(illegal_action)
        self.reward_scale = doors.check_reward_scale(reward_scale)
        self.turn_features = doors.check_flag("turn_features", turn_features, " (Jamb-v1 layout or Jamb-v0)")
        self.mask_in_observation = doors.check_flag(
            "mask_in_observation", mask_in_observation, " (Dict observation with 'action_mask', or the Box alone)"
        )
        self.mask_dtype = doors.check_mask_dtype(mask_dtype)
        self.render_mode = doors.check_render_mode(render_mode, RENDER_MODES)
        self.ruleset = load_ruleset(ruleset)
        self.autoreset_mode = mode
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "render_fps": JambEnv.metadata["render_fps"],
            "autoreset_mode": mode,
        }
        self.illegal_action = illegal_action
        self.num_envs = N
        self._engine = Engine(self.ruleset, N, self.turn_features)
        self._num_actions = A = layout(self.ruleset).num_actions
        enc = self._engine.encoder
        box = spaces.Box(enc.low, enc.high, dtype=np.float32)
        self.single_observation_space = (
            spaces.Dict({"action_mask": mask_space(A, self.mask_dtype), "observation": box})
            if self.mask_in_observation
            else box
        )
        self.single_action_space = spaces.Discrete(A)
        self.observation_space = batch_space(self.single_observation_space, N)
        self.action_space = batch_space(self.single_action_space, N)
        self._rngs: list[np.random.Generator | None] = [None] * N
        self._over = np.zeros(N, dtype=bool)  # ended: until the next step (NEXT_STEP) or its reset (DISABLED)
        self._arange = np.arange(N)
        self.parallel = N >= PARALLEL_FROM
        self._started = False
        self._twin: JambEnv | None = None  # call(): one JambEnv loaded with each game in turn

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Start a new game in every slot, or with ``options={"reset_mask": mask}`` in the
        slots where ``mask`` (bool (N,)) is True; returns ``(obs, info)`` (the class
        docstring's keys, for every game).

        Raises:
            ValueError: ``seed`` is not None, a non-negative integer or N of them;
                ``options`` is not a dict; ``reset_mask`` is not a bool array of shape
                (N,) with a True. RuntimeError: a ``reset_mask`` before the first reset.
        """
        N = self.num_envs
        options = doors.check_options(options, ("reset_mask",))
        idx = self._arange
        if options and "reset_mask" in options:
            idx = np.flatnonzero(self._reset_mask(options["reset_mask"]))
            if not self._started:
                raise RuntimeError("call reset() (every game) before a reset with options['reset_mask']")
        one = doors.integer(seed)
        if seed is None:
            seeds = [None] * N
        elif one is not None and one >= 0:
            super().reset(seed=one)
            seeds = game_seeds(one, N)
        else:
            try:
                seeds = doors.check_seeds(seed, N, "seed")
            except ValueError:
                raise ValueError(
                    f"seed must be None, a non-negative integer or a list of {N} non-negative integers "
                    f"(one per game), got {seed!r:.200}"
                ) from None
        for i in idx.tolist():
            if seeds[i] is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(seeds[i])
        if len(idx) == N:
            self._engine.fresh_outputs()  # arrays handed out before are never written again
        else:  # the other games keep their rows, in new arrays
            g = self._engine.games
            self._engine.games = g._replace(masks=g.masks.copy(), obs=g.obs.copy())
        self._new_games(idx)
        self._over[idx] = False
        self._started = True
        return self._outputs({})

    def step(self, actions):
        """One action per game: int array (N,) (ignored for a game that is over, NEXT_STEP).

        Returns ``(obs, rewards, terminated, truncated, info)`` (class docstring).

        Raises:
            ValueError: actions are not integers (bools and floats included) or not shape (N,).
            IllegalActionError: an illegal action with ``illegal_action="raise"`` (no game
                changes). RuntimeError: before ``reset()``; with ``autoreset_mode=DISABLED``,
                while a game is over (no game changes).
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._check_actions(actions)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._over.any():
            over = np.flatnonzero(self._over).tolist()
            raise RuntimeError(
                f"games {over} are over (autoreset_mode=DISABLED): start them anew with "
                "reset(options={'reset_mask': mask}) before the next step; the games are unchanged"
            )
        legal = doors.legal_actions(self._engine.games.masks, a)
        legal |= self._over  # the action of a game that is over is ignored
        illegal = np.flatnonzero(~legal)
        if len(illegal):  # the policy before anything changes: raise, or warn once
            i = int(illegal[0])
            self._illegal.refuse(f"game {i}: {self._why(i, int(a[i]))}", "the games are unchanged")
        over = np.flatnonzero(self._over)
        # new output arrays (the arrays handed out by the previous step are never written
        # again); the games held out: the illegal ones, and (NEXT_STEP) the slots that ended
        # last step, whose new games start after the step
        res = self._engine.step_except(a, np.flatnonzero(~legal | self._over), self.parallel)
        rewards = res.points.astype(np.float64)
        terminated = res.dones.copy()
        if len(over):
            self._new_games(over)
        rewards[illegal], terminated[illegal] = doors.ILLEGAL_ACTION_PENALTY, True
        rewards *= self.reward_scale
        done = np.flatnonzero(terminated)
        info: dict[str, Any] = {}
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            if len(done):
                final_obs = np.full(self.num_envs, None, dtype=object)
                g = self._engine.games
                obs_rows, masks = g.obs[done].copy(), doors.handed_out_masks(g.masks[done], True, self.mask_dtype)
                for k, i in enumerate(done.tolist()):
                    final_obs[i] = (
                        {"observation": obs_rows[k], "action_mask": masks[k]}
                        if self.mask_in_observation
                        else obs_rows[k]
                    )
                ended = self._state_info(terminated, over=terminated)
                ended.update(self._end_info(done, ~legal))
                info.update(
                    final_obs=final_obs, _final_obs=terminated.copy(), final_info=ended, _final_info=terminated.copy()
                )
                self._new_games(done)
            self._over[:] = False
        else:  # NEXT_STEP and DISABLED: the ended games are over (until the next step, or their reset)
            self._over[:] = terminated
            if len(done):
                info.update(self._end_info(done, ~legal))
        obs, info = self._outputs(info)
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), info

    def render(self) -> tuple | None:
        """Every game's picture: a tuple of N uint8 ``(H, W, 3)`` arrays ("rgb_array") or
        texts ("ansi"), JambEnv's ``render()`` of each game; None (with Gymnasium's
        warning) without a ``render_mode``."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        return self.call("render")

    def call(self, name: str, *args, **kwargs) -> tuple:
        """``(value_0, ..., value_N-1)``: JambEnv's attribute ``name`` for each game (called
        with ``args`` / ``kwargs`` if it is a method), as Gymnasium's ``SyncVectorEnv.call``
        over JambEnvs: ``call("action_masks")``, ``call("legal_mask")``, ``call("game")``,
        ``call("get_state")``, ``call("score")``, ``call("action_to_string", 40)``,
        ``call("render")``, ``call("np_random")`` (each game's generator), ...

        Raises:
            ValueError: ``name`` is one of :data:`CALL_REFUSED` (it would act on a copy of
                the game: use ``reset`` / ``step``). AttributeError: JambEnv has no public
                attribute ``name``. RuntimeError: what the attribute raises before ``reset()``
                (e.g. ``game``).
        """
        if not isinstance(name, str):
            raise ValueError(f"call takes an attribute name (a string), got {name!r}")
        if name in CALL_REFUSED:
            raise ValueError(
                f"call({name!r}) would act on a copy of each game, not on the game: use "
                "JambVectorEnv.reset / step (with options={'reset_mask': mask} to restart some games) "
                "and the vector env's own attributes"
            )
        if name == "np_random":
            return tuple(self._rngs)
        if name.startswith("_") or name not in dir(self._twin_env()):
            raise AttributeError(
                f"JambEnv has no public attribute {name!r} for call()/get_attr() "
                "(e.g. 'action_masks', 'game', 'get_state', 'render')"
            )
        out = []
        for i in range(self.num_envs):
            value = getattr(self._load_twin(i), name)
            out.append(value(*args, **kwargs) if callable(value) else value)
        return tuple(out)

    def get_attr(self, name: str) -> tuple:
        """``call(name)`` (as Gymnasium's ``SyncVectorEnv.get_attr``)."""
        return self.call(name)

    def close_extras(self, **kwargs) -> None:
        """Nothing to release (one process, no windows)."""

    # ------------------------------------------------------------------ helpers
    def _new_games(self, idx: np.ndarray) -> None:
        self._engine.new_games(idx, self._rngs)

    def _twin_env(self) -> JambEnv:
        if self._twin is None:
            self._twin = JambEnv(
                self.ruleset,
                render_mode=self.render_mode,
                illegal_action=self.illegal_action,
                reward_scale=self.reward_scale,
                turn_features=self.turn_features,
                mask_in_observation=self.mask_in_observation,
                mask_dtype=self.mask_dtype,
            )
        return self._twin

    def _load_twin(self, i: int) -> JambEnv:
        """The twin JambEnv holding game ``i`` (its state, stream and whether it is over)."""
        twin = self._twin_env()
        if self._started:
            g = self._engine.games
            twin._engine.load_state(0, self._engine.game_state(i), g.stream[i].copy(), int(g.pos[i]), int(g.score[i]))
            twin._started, twin._done = True, bool(self._over[i])
        return twin

    def _outputs(self, info: dict[str, Any]):
        """``(obs, info)`` handed out: the keys of every game (:data:`STATE_KEYS`) added to
        ``info``; the Box obs is the batch's fresh array."""
        info.update(self._state_info(np.ones(self.num_envs, dtype=bool), over=self._over))
        g = self._engine.games
        obs = {"observation": g.obs, "action_mask": info["action_mask"].copy()} if self.mask_in_observation else g.obs
        return obs, info

    def _state_info(self, has: np.ndarray, over: np.ndarray) -> dict[str, Any]:
        """JambEnv's info keys (:data:`STATE_KEYS`) of the games ``has`` (bool (N,); zeros
        and ``_key`` False for the others), the mask all ones for the games ``over``."""
        g = self._engine.games
        mask = doors.handed_out_masks(g.masks, over, self.mask_dtype)
        rolled = (has & (g.roll > 0))[:, None]
        values = {
            "score": g.score,
            "dice": np.where(rolled, g.dice, 0).astype(np.int8),
            "roll": g.roll,
            "announced": g.announced,
            "turn": g.turn,
            "action_mask": mask,
        }
        out: dict[str, Any] = {}
        for key in STATE_KEYS:
            v = values[key]
            out[key] = np.where(has.reshape((-1,) + (1,) * (v.ndim - 1)), v, 0).astype(v.dtype)
            out[f"_{key}"] = has.copy()
        return out

    def _end_info(self, done: np.ndarray, illegal: np.ndarray) -> dict[str, Any]:
        """The end-of-game keys for the games ``done``: score_parts / column_scores (legal
        ends) or illegal_action."""
        N, res = self.num_envs, self._engine.results

        def column(idx, values, dtype=np.int64):
            out = np.zeros(N, dtype=dtype)
            out[idx] = values
            return out

        out: dict[str, Any] = {}
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

    def _reset_mask(self, mask) -> np.ndarray:
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ or arr.shape != (self.num_envs,):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) (True for each "
                f"game to start anew), got {arr.dtype} {arr.shape}"
            )
        if not arr.any():
            raise ValueError("options['reset_mask'] is all False: it resets no game")
        return arr

    def _check_actions(self, actions) -> np.ndarray:
        arr = np.asarray(actions)
        if arr.ndim != 1:  # Gymnasium's vector API: shape (N,) only
            raise ValueError(f"expected {self.num_envs} actions (shape ({self.num_envs},)), got shape {arr.shape}")
        return doors.check_actions(arr, self.num_envs)

    def _why(self, i: int, a: int) -> str:
        return self._engine.why_illegal(i, a)
