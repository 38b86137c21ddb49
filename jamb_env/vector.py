"""``JambVecEnv``: N games stepped at once by compiled kernels, as an SB3 ``VecEnv``.

Step for step identical to N :class:`~jamb_env.JambEnv` under SB3's ``DummyVecEnv`` with
the same seeds: the same observations, masks, rewards and scores (tested on every
preset). Game ``i`` draws its dice streams from its own generator seeded like env ``i``
of a ``DummyVecEnv`` (``seed + i``), so paired comparisons carry over.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from . import _kernels as K
from .env import JambEnv, check_env_options
from .errors import IllegalActionError
from .observation import ObservationEncoder
from .rules import Ruleset, layout, load_ruleset
from .rules.ruleset import MAXIMAL_ZEROING_KINDS
from .rules.tables import UPPER_ROWS


PARALLEL_FROM = 256


class JambVecEnv(VecEnv):
    """N solitaire Jamb games in one process, stepped by numba kernels.

    Args:
        num_envs: games stepped together (N).
        ruleset: preset name, YAML path or Ruleset.
        seed: seeds game ``i`` with ``seed + i`` at the first reset (None: random).
        illegal_action: "terminate" (the game ends with ``JambEnv.ILLEGAL_ACTION_PENALTY``
            points and ``info["illegal_action"]``) or "raise" (``IllegalActionError``
            before any game changes).
        reward_scale: multiplies every reward.

    Arrays (read-only views of the batched state): ``values`` int16 (N, C, R), ``filled``
    int64 (N, C) bitmasks, ``dice`` int8 (N, n) sorted, ``roll``, ``announced``,
    ``answer_due``, ``turn`` int64 (N,), ``score`` int64 (N,) points, ``stream`` int8 (N, L)
    and ``pos`` (N,) the dice streams. ``action_masks()`` bool (N, A).

    ``step`` returns float32 observations (N, D), float32 rewards (N,), bool dones and a
    list of infos that are empty dicts except for finished games, whose info holds
    ``terminal_observation``, ``episode`` (``r`` return, ``l`` length, ``t`` seconds),
    ``score``, ``score_parts`` and ``column_scores`` (as JambEnv's last info).
    """

    def __init__(self, num_envs: int, ruleset: str | Ruleset = "classic", seed: int | None = None,
                 illegal_action: str = "terminate", reward_scale: float = 1.0, render_mode: str | None = None,
                 turn_features: bool = True):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        check_env_options(illegal_action, reward_scale)
        if render_mode is not None:
            raise ValueError("JambVecEnv does not render; use JambEnv(render_mode='ansi') to look at a game")
        rules = load_ruleset(ruleset)
        self.ruleset = rules
        self.illegal_action = illegal_action
        self.reward_scale = float(reward_scale)
        self.render_mode = None
        if not isinstance(turn_features, (bool, np.bool_)):
            raise ValueError(f"turn_features must be True (Jamb-v1) or False (Jamb-v0 layout), got {turn_features!r}")
        self.turn_features = bool(turn_features)
        self._template = JambEnv(rules, turn_features=self.turn_features)  # spaces and the stream length, as the single env
        N = int(num_envs)
        super().__init__(N, self._template.observation_space, self._template.action_space)
        self._build_tables(rules)
        lay = self._lay
        C, R, n = len(rules.columns), rules.num_rows, rules.dice
        self.values = np.zeros((N, C, R), dtype=np.int16)
        self.filled = np.zeros((N, C), dtype=np.int64)
        self.dice = np.zeros((N, n), dtype=np.int8)
        self.dice_index = np.full(N, -1, dtype=np.int64)
        self.roll = np.zeros(N, dtype=np.int64)
        self.announced = np.full(N, -1, dtype=np.int64)
        self.answer_due = np.full(N, -1, dtype=np.int64)
        self.turn = np.zeros(N, dtype=np.int64)
        self.score = np.zeros(N, dtype=np.int64)
        self.stream = np.zeros((N, self._template._stream_len), dtype=np.int8)
        self.pos = np.zeros(N, dtype=np.int64)
        self._masks = np.zeros((N, lay.num_actions), dtype=np.bool_)
        self._sheet = np.zeros((N, self._encoder.size), dtype=np.float32)
        self._obs = np.zeros((N, self._encoder.size), dtype=np.float32)
        self._points = np.zeros(N, dtype=np.int64)
        self._dones = np.zeros(N, dtype=np.bool_)
        self._parts = np.zeros((N, 5), dtype=np.int64)
        self._cols = np.zeros((N, C + 1), dtype=np.int64)
        self._ep_return = np.zeros(N, dtype=np.float64)
        self._ep_len = np.zeros(N, dtype=np.int64)
        self._ep_start = np.zeros(N, dtype=np.float64)
        self._rngs: list[np.random.Generator | None] = [None] * N
        self._actions = np.zeros(N, dtype=np.int64)
        self._scratch = (np.zeros((N, C), np.int64), np.zeros((N, n), np.int64), np.zeros((N, 4), np.int64), np.zeros((N, R), np.int64))
        #: step the games on numba's threads (from 256 games on; no gain below)
        self.parallel = N >= PARALLEL_FROM
        self._started = False
        self._warned_illegal = False
        if seed is not None:
            if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
            self.seed(int(seed))

    # ------------------------------------------------------------------ tables
    def _build_tables(self, rules: Ruleset) -> None:
        lay = layout(rules)
        self._lay = lay
        enc = ObservationEncoder(rules, turn_features=self.turn_features)
        self._encoder = enc
        C, R = len(rules.columns), rules.num_rows
        P = np.zeros(K.N_PARAMS, dtype=np.int64)
        rows = rules.rows
        has_diff = all(x in rows for x in ("ones", "max", "min"))
        P[K.P_N], P[K.P_C], P[K.P_R] = rules.dice, C, R
        P[K.P_ROLLS], P[K.P_LAST_ROLLS], P[K.P_NUM_CELLS] = rules.rolls, rules.last_turn_rolls, rules.num_cells
        P[K.P_ANSWER_COL], P[K.P_MANDATORY_COL], P[K.P_AFTER_ROW_COL] = lay.answer_column, lay.mandatory_column, lay.after_row_column
        P[K.P_ANSWER_FORCED] = int(rules.answer_forced)
        P[K.P_NUM_HOLDS], P[K.P_ANN_OFFSET], P[K.P_WRITE_OFFSET] = lay.num_holds, lay.announce_offset, lay.write_offset
        P[K.P_BONUS_THR], P[K.P_BONUS_PTS], P[K.P_BONUS_PER] = rules.bonus_threshold, rules.bonus_points, rules.bonus_per_point
        P[K.P_BONUS_STRICT] = int(rules.bonus_strict)
        P[K.P_ONES], P[K.P_MAX], P[K.P_MIN] = (rows.index(x) for x in ("ones", "max", "min")) if has_diff else (-1, -1, -1)
        P[K.P_HAS_MAXIMAL] = int(lay.has_maximal)
        P[K.P_UPPER_BITS] = sum(1 << r for r, row in enumerate(rows) if row in UPPER_ROWS)
        P[K.P_NUM_ACTIONS], P[K.P_KMAX], P[K.P_M] = lay.num_actions, rules.max_rolls, rules.tables.num_multisets
        P[K.P_NUM_ANN] = len(lay.announce_cells)
        self._P = P
        seg = enc.segments
        S = np.zeros(K.N_SEGMENTS, dtype=np.int64)
        S[K.S_DICE], S[K.S_DICE_LEN] = seg["dice_onehot"].start, enc._dice_feat.shape[1]
        S[K.S_ROLL], S[K.S_ROLLS_LEFT], S[K.S_ANNOUNCED] = seg["roll"].start, seg["rolls_left"].start, seg["announced"].start
        S[K.S_ANSWER_DUE], S[K.S_ANSWER_LEN] = seg["answer_due"].start, seg["answer_due"].size
        S[K.S_FILLED], S[K.S_WRITTEN], S[K.S_VALUE_NOW] = seg["filled"].start, seg["written"].start, seg["value_now"].start
        S[K.S_UPPER_SUM], S[K.S_UPPER_TO_BONUS], S[K.S_UPPER_LEFT] = seg["upper_sum"].start, seg["upper_to_bonus"].start, seg["upper_left"].start
        S[K.S_DIFFERENCE], S[K.S_PROGRESS] = seg["difference"].start, seg["progress"].start
        S[K.S_TURN], S[K.S_TURN_LEN] = seg["target"].start, seg["target"].size + enc._turn_feat.shape[3]
        self._S = S
        codes = np.array(lay.codes, dtype=np.int64)
        front = np.zeros((C, 1 << R), dtype=np.int64)
        for c, table in rules.front_open.items():
            front[c] = table
        ann_slot = np.full(rules.num_cells, -1, dtype=np.int64)
        ann_slot[lay.announce_cells] = np.arange(len(lay.announce_cells))
        self._rules_args = (
            codes,
            front,
            np.array(lay.announce_columns, dtype=np.int64),
            lay.announce_cells.astype(np.int64),
            rules.tables.hold_canonical,
            rules.tables.key_to_index.astype(np.int64),
        )
        self._cell_values = rules.cell_values.astype(np.int64)
        self._is_upper = np.array([row in UPPER_ROWS for row in rows], dtype=np.bool_)
        self._zeroing = np.array([k in MAXIMAL_ZEROING_KINDS for k in rules.columns], dtype=np.bool_)
        self._min_row = lay.min_row
        self._obs_args = (
            enc._row_max.astype(np.float32),
            enc._upper.astype(np.int64),
            np.array([enc._upper_max, enc._threshold, enc._diff_max], dtype=np.float64),
            enc._dice_feat,
            enc._value_now,
            enc._turn_feat,
            ann_slot,
        )

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        idx = np.arange(self.num_envs)
        for i in idx:
            seed = self._seeds[i]
            if seed is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(seed)
        self._obs = np.empty_like(self._obs)  # arrays handed out before are never written again
        self._masks = np.empty_like(self._masks)
        self._new_games(idx)
        self._reset_seeds()
        self._reset_options()
        self._started = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs

    def _new_games(self, idx: np.ndarray) -> None:
        L = self.stream.shape[1]
        for i in idx:
            self.stream[i] = self._rngs[i].integers(1, 7, size=L, dtype=np.int8)
        K.reset_nb(
            idx.astype(np.int64), self.values, self.filled, self.dice, self.dice_index, self.roll, self.announced,
            self.answer_due, self.turn, self.score, self.stream, self.pos, self._P, self._S, *self._rules_args,
            *self._obs_args, self._masks, self._sheet, self._obs,
        )
        now = time.perf_counter()
        self._ep_return[idx] = 0.0
        self._ep_len[idx] = 0
        self._ep_start[idx] = now

    def step_async(self, actions: np.ndarray) -> None:
        arr = np.asarray(actions)
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"actions must be integers (one per game), got dtype {arr.dtype}")
        if arr.size != self.num_envs or arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 1):
            raise ValueError(f"expected {self.num_envs} actions (shape ({self.num_envs},)), got shape {arr.shape}")
        if np.issubdtype(arr.dtype, np.unsignedinteger) and arr.max(initial=0) > np.iinfo(np.int64).max:
            raise ValueError("action values overflow int64")
        self._actions = arr.reshape(self.num_envs).astype(np.int64)

    def step_wait(self):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._actions
        N = self.num_envs
        A = self._lay.num_actions
        in_space = (a >= 0) & (a < A)
        legal = in_space.copy()
        legal[in_space] = self._masks[np.flatnonzero(in_space), a[in_space]]
        illegal = np.flatnonzero(~legal)
        if len(illegal) and self.illegal_action == "raise":
            i = int(illegal[0])
            raise IllegalActionError(f"game {i}: {self._why(i, int(a[i]))}; the games are unchanged")
        safe = np.where(legal, a, 0)
        if len(illegal):  # keep illegal games out of the kernel: point them at a legal action, then undo
            saved = self._snapshot(illegal)
            safe[illegal] = self._masks[illegal].argmax(axis=1)
        # fresh output buffers each step (the kernel writes every entry): the arrays handed
        # out by the previous step are never written again, so no copies are needed
        self._obs = np.empty_like(self._obs)
        self._masks = np.empty_like(self._masks)
        step = K.step_parallel if self.parallel else K.step_serial
        step(
            safe, self.values, self.filled, self.dice, self.dice_index, self.roll, self.announced, self.answer_due,
            self.turn, self.score, self.stream, self.pos, self._P, self._S, *self._rules_args, self._cell_values,
            self._is_upper, self._zeroing, self._min_row, *self._obs_args, self._points, self._dones, self._masks,
            self._sheet, self._obs, self._parts, self._cols, *self._scratch,
        )
        rewards = self._points.astype(np.float64)
        dones = self._dones.copy()
        if len(illegal):
            self._restore(illegal, saved)
            rewards[illegal] = JambEnv.ILLEGAL_ACTION_PENALTY
            dones[illegal] = True
            if not self._warned_illegal:
                warnings.warn(f"game {int(illegal[0])}: {self._why(int(illegal[0]), int(a[illegal[0]]))}; the game ends with reward "
                              f"{JambEnv.ILLEGAL_ACTION_PENALTY} points (illegal_action='terminate')", stacklevel=2)
                self._warned_illegal = True
        rewards *= self.reward_scale
        self._ep_return += rewards
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(N)]
        done_idx = np.flatnonzero(dones)
        if len(done_idx):
            now = time.perf_counter()
            cols = list(self.ruleset.columns) + list(self.ruleset.derived_columns)
            for i in done_idx:
                info = infos[i]
                info["terminal_observation"] = self._obs[i].copy()
                info["episode"] = {"r": float(self._ep_return[i]), "l": int(self._ep_len[i]), "t": round(now - self._ep_start[i], 6)}
                info["score"] = int(self.score[i])
                if legal[i]:
                    p = self._parts[i]
                    info["score_parts"] = {"upper": int(p[0]), "bonus": int(p[1]), "difference": int(p[2]), "lower": int(p[3]), "bonus_columns": int(p[4])}
                    info["column_scores"] = {col: int(self._cols[i, c]) for c, col in enumerate(cols)}
                else:
                    info["illegal_action"] = True
            self._new_games(done_idx)
        return self._obs, rewards.astype(np.float32), dones, infos

    def game_state(self, i: int):
        """Game ``i`` as a core :class:`~jamb_env.rules.GameState` (a copy)."""
        from .rules import GameState

        return GameState(
            values=self.values[i].copy(), filled=self.filled[i].copy(), dice=self.dice[i].copy(),
            dice_index=int(self.dice_index[i]), roll=int(self.roll[i]), announced=int(self.announced[i]),
            answer_due=int(self.answer_due[i]), turn=int(self.turn[i]),
        )

    def _why(self, i: int, a: int) -> str:
        from . import rules as core

        if not 0 <= a < self._lay.num_actions:
            return f"action {a} is outside the action space 0..{self._lay.num_actions - 1}"
        reason = core.why_illegal(self.ruleset, self.game_state(i), a) or "not in the legal mask"
        return f"illegal action {a} ({core.action_to_string(self.ruleset, a)}): {reason}"

    _STATE = ("values", "filled", "dice", "dice_index", "roll", "announced", "answer_due", "turn", "score", "pos", "_masks", "_sheet", "_obs")

    def _snapshot(self, idx):
        return {k: getattr(self, k)[idx].copy() for k in self._STATE}

    def _restore(self, idx, saved) -> None:
        for k, v in saved.items():
            getattr(self, k)[idx] = v

    def action_masks(self) -> np.ndarray:
        """bool (N, A): the legal actions of every game (a new array after every step;
        treat it as read-only)."""
        return self._masks

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        idx = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None for _ in idx]
        if not hasattr(self, attr_name):
            raise AttributeError(f"JambVecEnv has no attribute {attr_name!r}")
        return [getattr(self, attr_name) for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"JambVecEnv attributes are fixed at construction; cannot set {attr_name!r}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[list(self._get_indices(indices))])
        raise AttributeError(f"JambVecEnv supports env_method('action_masks') only, not {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        return [None for _ in range(self.num_envs)]
