"""The Gymnasium environment ``Jamb-v1`` (and ``Jamb-v0``): solitaire Jamb with legal-action masks."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from jamb_env import rules as core
from jamb_env.engine import doors
from jamb_env.engine.batch import Engine
from jamb_env.render.sheet import render_sheet, sheet_image
from jamb_env.rules import Action, GameState, Ruleset, load_ruleset
from jamb_env.rules.transition import stream_bounds, stream_length

#: Kept for importers of jamb_env.env: the rules' one definitions (jamb_env.engine.doors).
ILLEGAL_MODES, MASK_DTYPES, check_mask_dtype = doors.ILLEGAL_MODES, doors.MASK_DTYPES, doors.check_mask_dtype


def mask_space(num_actions: int, dtype: np.dtype) -> spaces.Space:
    """The space of an ``action_mask`` observation entry: ``MultiBinary(A)`` for int8,
    ``Box(False, True, (A,), bool)`` for bool."""
    if dtype == np.bool_:
        return spaces.Box(0, 1, (num_actions,), dtype=np.bool_)
    return spaces.MultiBinary(num_actions)


@dataclass(frozen=True)
class EnvState:
    """A full copy of an env's game: the core state, the dice stream and its position.

    Attributes:
        game: the :class:`~jamb_env.rules.GameState`.
        stream: int8 ``(L,)`` the game's dice stream (faces 1..6).
        position: how many dice of the stream have been rolled.
        score: running sheet total (points).
        done: whether the episode has ended (last cell written, or an illegal action).
        ruleset: the name of the ruleset the state belongs to.
        digest: that ruleset's :attr:`~jamb_env.Ruleset.digest` ("": not known, as in states
            made before it was kept).
    """

    game: GameState
    stream: np.ndarray
    position: int
    score: int
    done: bool
    ruleset: str = ""
    digest: str = ""

    def copy(self) -> EnvState:
        return replace(self, game=self.game.copy(), stream=self.stream.copy())


class JambEnv(gym.Env):
    """## Description

    Solitaire Jamb (RULES.md): a turn rolls ``n`` dice (5 or 6), re-rolls them up to
    ``rolls - 1`` times keeping any subset, may announce a cell right after the first
    roll, and ends by writing exactly one cell of the scoresheet. The game ends when
    every playable cell is written (52 turns on ``classic``). The rules come from a
    ruleset (``jamb_env/rules/presets/<name>.yaml``); env options never change them.

    Each turn's first roll is made by the env. The dice come from a per-game stream
    drawn from ``self.np_random`` at ``reset``: the k-th die rolled in a game is the k-th
    number of the stream, so agents that play the same seed see the same dice.

    ## Action Space

    ``Discrete(2**n + A + C*R)`` (97 on ``classic``):

    * ``0 .. 2**n - 1``: re-roll, keeping the sorted dice whose bit is set (bit ``i`` =
      sorted position ``i``); among equal dice only the leftmost mask is legal and
      keep-all never is.
    * ``2**n .. 2**n + A - 1``: announce a cell of an announce column (A = R per such
      column), right after roll 1.
    * then write cell ``c * R + r`` (column ``c`` of ``ruleset.columns``, row ``r``).

    ``action_masks()`` (bool) and ``info["action_mask"]`` (int8, or bool with
    ``mask_dtype="bool"``) give the legal ones (and the observation's ``"action_mask"``
    with ``mask_in_observation=True``);
    ``decode_action`` / ``encode_action`` / ``action_to_string`` translate.
    A mask handed out is never all False: once the game is over (last cell written, or an
    illegal action in "terminate" mode) all three are all ones (Pgx's convention, so
    masked samplers do not fail on the terminal step); stepping a finished game still
    raises RuntimeError. The observation is unaffected (its features read the rules'
    mask, empty at the end).

    ## Observation Space

    ``Box(low, high, (size,), float32)`` with exact bounds; the layout is built from the
    ruleset and documented in :mod:`jamb_env.engine.observation` (``env.observation_layout``):
    dice one-hot and counts, roll, re-rolls left, announcement, answer obligation,
    filled flags, written values, the value every cell would get now, per-column upper
    sum, distance to the bonus, upper cells left, difference, progress, and (v1) the
    cells open now (write or announce) with, for each, the points reachable this turn
    by aiming at it alone and the keep-mask of that plan.
    590 values on ``classic`` (226 with ``turn_features=False``, the v0 layout).

    With ``mask_in_observation=True``: ``Dict({"action_mask": MultiBinary(action_space.n),
    "observation": <that Box>})`` (keys sorted, as gymnasium's ``Dict`` orders them);
    observations are dicts of a float32 ``(D,)`` and an int8 ``(action_space.n,)`` array
    (``action_masks()``), new arrays each time (for ``MaskablePPO("MultiInputPolicy")`` or
    action-masking wrappers that read the observation). With ``mask_dtype="bool"`` the mask entry is bool and its space
    ``Box(False, True, (action_space.n,), bool)`` (for ``torch.masked_fill`` and TorchRL).

    ## Rewards

    The change of the running sheet score (RULES.md §2 crediting), in points, times
    ``reward_scale``. For legal play the episode return equals ``final score *
    reward_scale`` exactly; no shaping. An illegal action in "terminate" mode gives
    ``ILLEGAL_ACTION_PENALTY * reward_scale`` (-100 points) and ends the episode.

    ## Starting State

    An empty sheet and the first roll of turn 1.

    ## Episode End

    ``terminated`` when the last playable cell is written, or on an illegal action in
    "terminate" mode (``info["illegal_action"] = True``). Never truncated.

    ## Arguments

    * ``ruleset``: preset name (``jamb_env.list_rulesets()``), YAML path or a Ruleset.
    * ``render_mode``: None, "ansi" (``render()`` returns the sheet as text), "human"
      (prints it) or "rgb_array" (``render()`` returns a uint8 ``(H, W, 3)`` picture of the
      sheet and dice, :func:`~jamb_env.render.sheet.sheet_image`; the same shape for every
      state of a ruleset, for ``gymnasium.wrappers.RecordVideo``).
    * ``illegal_action``: "terminate" (default; the Pgx / PettingZoo convention, so
      unmasked env checkers run; the first illegal action of an env warns,
      :class:`~jamb_env.IllegalActionWarning`, saying how to pass masks) or "raise"
      (``IllegalActionError``, state unchanged). A tool that cannot mask plays full games
      through :class:`jamb_env.wrappers.LegalActions`.
    * ``reward_scale``: multiplies every reward (default 1.0: rewards in points).
    * ``turn_features``: include ``target``, ``cell_reach`` and ``cell_hold``
      (default True, ``Jamb-v1``; ``Jamb-v0`` registers False).
    * ``mask_in_observation``: observations are ``{"observation", "action_mask"}`` dicts
      (default False: the Box alone).
    * ``mask_dtype``: "int8" (default) or "bool": the dtype of ``info["action_mask"]`` and
      of the observation's mask (its space ``MultiBinary`` or a bool ``Box``).
    * ``autoreset_mode`` is not an option of the single game: passing one raises
      ValueError naming where it goes (``make_vec``'s ``vector_kwargs`` in "sync" and
      "async" mode, or :func:`jamb_env.gym_vector.make_vec` for every mode).

    ``info`` on every reset and step, every value numeric with a fixed type and shape (so
    Gymnasium's vector envs batch each key into one array): ``score`` int (points),
    ``dice`` int8 ``(n,)`` (sorted; all zeros when no dice are rolled, after the last
    write), ``roll`` int, ``announced`` int (the announced cell's index, -1 for none;
    ``env.ruleset.cell_name(i)`` gives its ``(column, row)``), ``turn`` int (cells
    written), ``action_mask``; at the end of a game also ``score_parts`` (upper, bonus,
    difference, lower, bonus_columns) and ``column_scores`` (dicts of ints), or
    ``illegal_action`` True.

    ## Version History

    * v1, changed in 0.3.0: ``info["dice"]`` is an int8 array (zeros when no dice are rolled; was a
      tuple, empty then) and ``info["announced"]`` a cell index (-1 for none; was the
      ``(column, row)`` pair or None), so that every info key batches into a numeric
      array under every vectorization mode; ``mask_dtype`` added. Observations,
      actions and rewards unchanged (no version bump: info is not part of the MDP).

    * v1, corrected in 0.2.0: the ``difference`` and ``upper_to_bonus`` features read
      the rules' own definitions (``difference_clamp``, ``bonus_strict``) instead of a
      restatement without them; their documented meaning is unchanged. Only ``jnn``
      (a negative difference showed where 0 is credited) and the ``six_dice`` presets
      (points to the bonus were one short) observe differently; every other preset's
      observation is bit-identical (the shipped models score exactly as before).
    * v1: observation gains ``target`` (C*R), ``cell_reach`` (C*R) and ``cell_hold``
      (C*R*n) after ``value_now``: the cells open now and, for each, the expected points
      of a turn played for that cell alone and that plan's keep-mask (tables per
      ruleset). Actions, rewards and the
      rest of the layout unchanged. PPO on ``classic_down`` with the same config: see
      docs/results.md (ablation table).
    * v0: initial version (``gymnasium.make("Jamb-v0")`` or ``turn_features=False``).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    #: Reward (points, before ``reward_scale``) of an illegal action in "terminate" mode.
    ILLEGAL_ACTION_PENALTY = doors.ILLEGAL_ACTION_PENALTY

    def __init__(
        self,
        ruleset: str | Ruleset = "classic",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        reward_scale: float = 1.0,
        turn_features: bool = True,
        mask_in_observation: bool = False,
        mask_dtype: str = "int8",
        *,
        autoreset_mode=None,
    ):
        if autoreset_mode is not None:
            raise ValueError(
                f"autoreset_mode={autoreset_mode!r} is an option of the vector env, not of JambEnv: with "
                "gym.make_vec(..., vectorization_mode='sync' or 'async') pass vector_kwargs={'autoreset_mode': ...}; "
                "the default vectorization (the vector entry point) takes autoreset_mode=... itself, and "
                "jamb_env.gym_vector.make_vec takes it in every mode"
            )
        self.mask_dtype = doors.check_mask_dtype(mask_dtype)
        self.ruleset = load_ruleset(ruleset)
        self.turn_features = doors.check_flag("turn_features", turn_features, " (Jamb-v1 layout or Jamb-v0)")
        self.mask_in_observation = doors.check_flag(
            "mask_in_observation", mask_in_observation, " (Dict observation with 'action_mask', or the Box alone)"
        )
        self.render_mode = doors.check_render_mode(render_mode, self.metadata["render_modes"])
        self._illegal = doors.IllegalActions(illegal_action)
        self.illegal_action = illegal_action
        self.reward_scale = doors.check_reward_scale(reward_scale)
        rules = self.ruleset
        self._layout = core.layout(rules)
        self._engine = Engine(rules, 1, self.turn_features)
        self._encoder = self._engine.encoder
        self.action_space = spaces.Discrete(self._layout.num_actions)
        self.observation_space = spaces.Box(self._encoder.low, self._encoder.high, dtype=np.float32)
        if self.mask_in_observation:
            # keys in sorted order: the same space (and flattening order) on every gymnasium version
            self.observation_space = spaces.Dict(
                {
                    "action_mask": mask_space(self._layout.num_actions, self.mask_dtype),
                    "observation": self.observation_space,
                }
            )
        self._stream_len = stream_length(rules)
        self._started = False
        self._done = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        doors.check_options(options)
        super().reset(seed=doors.check_seed(seed))
        g = self._engine.games
        g.stream[0] = core.roll_dice(self.np_random, self._stream_len)
        self._engine.reset(np.zeros(1, dtype=np.int64))
        self._started, self._done = True, False
        if self.render_mode == "human":
            self.render()
        return self.observe(), self._info()

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended; call reset() before step()")
        a = doors.check_action(action, self._layout.num_actions)
        g = self._engine.games
        if not (0 <= a < self._layout.num_actions and g.masks[0, a]):
            return self._end_illegally(a)
        self._engine.step_one(0, a)
        res = self._engine.results
        terminated = bool(res.dones[0])
        self._done = terminated
        info = self._info()
        if terminated:
            ((info["score_parts"], info["column_scores"]),) = self._engine.final_scores([0])
        if self.render_mode == "human":
            self.render()
        return self.observe(), int(res.points[0]) * self.reward_scale, terminated, False, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        st = self.game if self._started else core.new_game(self.ruleset)
        if self.render_mode == "rgb_array":
            return sheet_image(self.ruleset, st, self.legal_mask())
        text = render_sheet(self.ruleset, st, self.legal_mask())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ masks and actions
    def action_masks(self) -> np.ndarray:
        """bool ``(action_space.n,)``: the legal actions now; all True once the game is over
        (never all False: see the class docstring); a new array each call.

        Raises:
            RuntimeError: before the first :meth:`reset` (there is no game yet).
        """
        if not self._started:
            raise RuntimeError("call reset() first")
        return doors.handed_out_masks(self._engine.games.masks[0], self._done)

    def legal_mask(self) -> np.ndarray:
        """bool ``(action_space.n,)``: the rules' legal actions now, all False once the game
        is over (what the renderers show; :meth:`action_masks` is the mask for samplers);
        a new array."""
        if self._done or not self._started:
            return np.zeros(self._layout.num_actions, dtype=bool)
        return self._engine.games.masks[0].copy()

    def decode_action(self, action: int) -> Action:
        """The :class:`~jamb_env.rules.Action` of index ``action`` (ValueError outside)."""
        return core.decode(self.ruleset, action)

    def encode_action(self, action: Action) -> int:
        """The index of an :class:`~jamb_env.rules.Action` (ValueError if unknown)."""
        return core.encode(self.ruleset, action)

    def action_to_string(self, action: int) -> str:
        """Readable action, e.g. ``write down/ones`` or ``reroll keep [1 1 0 0 0]``."""
        return core.action_to_string(self.ruleset, action)

    @property
    def observation_layout(self) -> dict:
        """name -> (start, size, low, high) of each observation segment."""
        return {s.name: (s.start, s.size, s.low, s.high) for s in self._encoder.segments.values()}

    # ------------------------------------------------------------------ state access
    @property
    def game(self) -> GameState:
        """The current core game state (a new copy on every call: writing into it changes
        nothing in the env)."""
        if not self._started:
            raise RuntimeError("call reset() first")
        return self._engine.game_state(0)

    @property
    def score(self) -> int:
        """Running sheet total (points)."""
        return int(self._engine.games.score[0]) if self._started else 0

    def get_state(self, resample: np.random.Generator | None = None) -> EnvState:
        """A copy of the full game state, dice stream and its position included.

        ``resample``: a ``numpy.random.Generator``; the dice not rolled yet
        (``stream[position:]``) are drawn afresh from it (:func:`jamb_env.rules.roll_dice`,
        the env's own draw), so a planner's rollouts from the copy cannot peek at this
        game's future dice. Raises ValueError if it is not a Generator, RuntimeError
        before reset."""
        if not self._started:
            raise RuntimeError("call reset() first")
        if resample is not None and not isinstance(resample, np.random.Generator):
            raise ValueError(f"resample must be a numpy.random.Generator or None, got {type(resample).__name__}")
        g = self._engine.games
        stream, position = g.stream[0].copy(), int(g.pos[0])
        if resample is not None:
            stream[position:] = core.roll_dice(resample, len(stream) - position)
        return EnvState(
            game=self.game,
            stream=stream,
            position=position,
            score=self.score,
            done=self._done,
            ruleset=self.ruleset.name,
            digest=self.ruleset.digest,
        )

    def chance_outcomes(self, action: int) -> list[tuple[np.ndarray, float]]:
        """Every result of the re-roll ``action`` now, as (sorted dice int8 ``(n,)``, exact
        probability) pairs (:func:`jamb_env.rules.chance_outcomes` on :attr:`game`).

        Raises ValueError (IllegalActionError) for a write, an announcement or an illegal
        re-roll; RuntimeError before reset or once the game is over."""
        self._check_playing()
        return core.chance_outcomes(self.ruleset, self.game, doors.check_action(action, self._layout.num_actions))

    def step_outcome(self, action: int, dice):
        """:meth:`step` with re-roll ``action`` coming out as ``dice`` (one outcome of
        :meth:`chance_outcomes`, any order): the stream's next dice are set to the faces
        rolled, then the usual step. Returns step's 5-tuple.

        Raises ValueError when ``dice`` cannot come from this re-roll (or as
        :meth:`chance_outcomes`)."""
        self._check_playing()
        rules, game = self.ruleset, self.game
        action = doors.check_action(action, self._layout.num_actions)
        core.chance_outcomes(rules, game, action)  # validates the re-roll
        faces = core.rolled_faces(rules, game, action, doors.check_dice(dice, rules.dice))
        g = self._engine.games
        pos = int(g.pos[0])
        g.stream[0, pos : pos + len(faces)] = faces
        return self.step(int(action))

    def _check_playing(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")
        if self._done:
            raise RuntimeError("the game is over; call reset()")

    def set_state(self, state: EnvState) -> None:
        """Restore a state from :meth:`get_state` (of an env with the same ruleset).

        The state must be one this env can reach (:func:`jamb_env.rules.validate_state`
        with ``solitaire=True``; the stream position within
        :func:`jamb_env.rules.transition.stream_bounds`; the score the sheet's; ``done``
        True once the sheet is full, and mid-game only for a game an illegal action ended,
        with ``illegal_action="terminate"``).

        Raises:
            ValueError: not an EnvState, another ruleset's state, or one no game reaches
                (the message names the field)."""
        if not isinstance(state, EnvState):
            raise ValueError(f"set_state expects an EnvState from get_state(), got {type(state).__name__}")
        rules = self.ruleset
        if state.ruleset != rules.name:
            raise ValueError(f"this state belongs to ruleset {state.ruleset!r}, the env plays {rules.name!r}")
        if state.digest and state.digest != rules.digest:
            raise ValueError(
                f"this state belongs to other rules named {rules.name!r} (a rules file edited since, or another file "
                "of that name)"
            )
        core.validate_state(rules, state.game, solitaire=True)  # ValueError naming the inconsistency
        stream = state.stream
        if (
            not isinstance(stream, np.ndarray)
            or stream.shape != (self._stream_len,)
            or stream.dtype.kind not in "iu"
            or stream.min() < 1
            or stream.max() > 6
        ):
            raise ValueError(f"state.stream must be an integer array of {self._stream_len} faces 1..6")
        if doors.integer(state.position) is None:
            raise ValueError(f"state.position must be an integer, got {state.position!r}")
        low, high = stream_bounds(rules, state.game)
        if not low <= state.position <= high:
            raise ValueError(
                f"state.position = {state.position} cannot be reached: a game at turn {state.game.turn}, roll "
                f"{state.game.roll} has drawn {low}..{high} dice from its stream"
            )
        sheet_score = core.score(rules, state.game)
        if doors.integer(state.score) != sheet_score:
            raise ValueError(f"state.score = {state.score!r} but the sheet scores {sheet_score}")
        over = core.is_over(rules, state.game)
        if not isinstance(state.done, (bool, np.bool_)) or (over and not state.done):
            raise ValueError("state.done must be a bool, and True once the sheet is full")
        if state.done and not over and self.illegal_action != "terminate":
            raise ValueError(
                "state.done = True mid-game: only an illegal action ends a game early, and this env raises "
                "on one (illegal_action='raise')"
            )
        self._engine.load_state(0, state.game, stream, int(state.position), int(state.score))
        self._started, self._done = True, bool(state.done)

    def __copy__(self) -> JambEnv:
        """A copy that plays on alone: ``copy.copy`` is ``copy.deepcopy`` (a shallow copy shared the
        game's arrays but not its ``done`` flag, so the two envs' masks went wrong)."""
        return copy.deepcopy(self)

    def observe(self) -> np.ndarray | dict[str, np.ndarray]:
        """The observation of the current state, as reset and step return it (new arrays):
        float32 ``(D,)``, or with ``mask_in_observation`` a dict of it (``"observation"``)
        and ``"action_mask"`` ``(action_space.n,)`` (int8, or bool with ``mask_dtype="bool"``).
        RuntimeError before reset."""
        if not self._started:
            raise RuntimeError("call reset() first")
        obs = self._engine.games.obs[0].copy()
        if self.mask_in_observation:
            return {"observation": obs, "action_mask": self._handed_out_mask()}
        return obs

    # ------------------------------------------------------------------ helpers
    def _info(self) -> dict[str, Any]:
        g = self._engine.games
        roll = int(g.roll[0])
        return {  # numeric, fixed shapes: the class docstring
            "score": int(g.score[0]),
            "dice": g.dice[0].copy() if roll else np.zeros(self.ruleset.dice, dtype=np.int8),
            "roll": roll,
            "announced": int(g.announced[0]),
            "turn": int(g.turn[0]),
            "action_mask": self._handed_out_mask(),
        }

    def _handed_out_mask(self) -> np.ndarray:
        return doors.handed_out_masks(self._engine.games.masks[0], self._done, self.mask_dtype)

    def _end_illegally(self, a: int):
        """The illegal-action policy (:class:`jamb_env.engine.doors.IllegalActions`) for
        action ``a``: raise with the state unchanged, or end the game with the penalty."""
        legal = int(self.legal_mask().sum())
        self._illegal.refuse(
            self._engine.why_illegal(0, a), f"{legal} actions are legal now (see action_masks()); the game is unchanged"
        )
        self._done = True
        info = self._info()
        info["illegal_action"] = True
        return self.observe(), self._illegal.penalty(self.reward_scale), True, False, info
