"""The rules every door follows, written once: each env class (``JambEnv``, ``JambVecEnv``,
``JambVectorEnv``, the PettingZoo ``raw_env`` and ``SeatEnv``, ``SeatVecEnv``, OpenSpiel's
``python_jamb``) adapts its library's API to the engine and calls these for the rest.

* **Bad input**: one exception per mistake, at every door. A bad argument (a value of the
  wrong type: a bool, a float or a string where an integer is due; out of range; an
  unknown option) raises ``ValueError`` naming what is allowed (``RulesetError`` and
  ``IllegalActionError`` are ValueErrors too, so ``except ValueError`` catches every bad
  input); a call out of order (a step before ``reset``, or after the end) raises
  ``RuntimeError``. A bool is never an integer here (``True`` is not die 1, action 1 or
  seed 1). The checks: :func:`integer`, :func:`check_count`, :func:`check_seed`,
  :func:`check_seeds`, :func:`check_flag`, :func:`check_choice`,
  :func:`check_reward_scale`, :func:`check_mask_dtype`, :func:`check_render_mode`,
  :func:`check_action`, :func:`check_actions`, :func:`check_dice`.
* **Illegal actions** (:class:`IllegalActions`): ``illegal_action="raise"`` raises
  :class:`~jamb_env.IllegalActionError` naming the action and why, nothing changed;
  ``"terminate"`` (the default) ends the game with :data:`ILLEGAL_ACTION_PENALTY` points
  (times ``reward_scale``) and ``info["illegal_action"]``, and the first illegal action
  of an env warns (:class:`~jamb_env.IllegalActionWarning`, with how to pass masks). An
  action that is not one integer is bad input (ValueError), not an illegal action.
* **Masks handed out** (:func:`handed_out_masks`): the rules' legal mask, all ones once
  the game is over (Pgx's convention: a masked sampler never sees an all-False row).
* **Reward modes** of the multiplayer doors (:func:`reward_values`): "score", "win",
  "margin", each a value of the scores whose change is the reward.
* **Seeds**: a seed is None or a non-negative integer; many games seeded by one integer get
  :func:`jamb_env.engine.seeding.game_seeds`.
* **Missing extras** (:func:`require`): a door whose library is not installed says which
  extra brings it, in one line.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np

from jamb_env.rules import GameState, Ruleset, action_to_string, layout, why_illegal
from jamb_env.rules import match as M
from jamb_env.utils.checks import finite_number
from jamb_env.utils.errors import UNMASKED_HINT, IllegalActionError, IllegalActionWarning

#: Reward (points, before ``reward_scale``) of an illegal action in "terminate" mode.
ILLEGAL_ACTION_PENALTY = -100.0
#: The ``illegal_action`` modes.
ILLEGAL_MODES = ("terminate", "raise")
#: The multiplayer reward modes (``reward=``).
REWARD_MODES = ("score", "win", "margin")
#: The dtypes a handed-out action mask can have (``mask_dtype``): int8 (0/1, the default)
#: or bool (what ``torch.masked_fill`` and TorchRL's masked distributions take).
MASK_DTYPES = {"int8": np.dtype(np.int8), "bool": np.dtype(np.bool_)}


# ---------------------------------------------------------------------------- integers
#: The seeds the project's tools take (a run's seed, an evaluation's game seeds, a web game's):
#: 0..SEED_LIMIT - 1, numpy's 32-bit seed range; the envs' own ``reset(seed=...)`` takes any
#: non-negative integer, as Gymnasium's do.
SEED_LIMIT = 2**32
#: The widest hidden layer a network of this project's trainers takes (PPO's ``net_arch``,
#: RLlib's ``hidden_sizes``, the value learner's ``hidden``, ``jamb-bench --training-nets``).
MAX_WIDTH = 65_536


def layer_widths(value) -> bool:
    """Whether ``value`` is a non-empty list or tuple of hidden-layer widths, integers in
    1..:data:`MAX_WIDTH` (a bool is no width)."""
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(integer(w) is not None and 1 <= integer(w) <= MAX_WIDTH for w in value)
    )


def integer(x) -> int | None:
    """``x`` as an int if it is one integer (Python's, NumPy's, or a 0-d integer array),
    else None; a bool is not an integer here."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    return None


def check_integer(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low..high`` (no upper bound when None); ValueError naming
    ``name`` and the range otherwise."""
    x = integer(value)
    if x is None or x < low or (high is not None and x > high):
        what = f"an integer in {low}..{high}" if high is not None else f"an integer >= {low}"
        if high is None and low in (0, 1):
            what = "a non-negative integer" if low == 0 else "a positive integer"
        raise ValueError(f"{name} must be {what}, got {value!r:.80}")
    return x


def check_count(name: str, value) -> int:
    """A count of games or players given by a user: a positive integer (ValueError)."""
    return check_integer(name, value, 1)


def check_options(options, allowed: tuple[str, ...] | None = ()) -> dict:
    """``options`` of a ``reset`` as a dict (None: empty); ValueError for anything but a dict
    or None, and for a key not in ``allowed`` (a typo such as ``reset_maks`` was ignored:
    every game reset). ``allowed`` None: any key (PettingZoo's AEC envs take options they do
    not use: its ``api_test`` passes one)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = [k for k in options if allowed is not None and k not in allowed]
    if unknown:
        takes = f"takes {', '.join(repr(k) for k in allowed)}" if allowed else "takes none"
        raise ValueError(f"unknown reset option(s) {', '.join(repr(k)[:40] for k in unknown[:5])}: this env {takes}")
    return options


def check_seed(seed, name: str = "seed") -> int | None:
    """``seed`` as None or a non-negative int; ValueError otherwise (a bool, a float, a
    negative number)."""
    if seed is None:
        return None
    x = integer(seed)
    if x is None or x < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {seed!r:.80}")
    return x


def check_seeds(seeds, n: int, name: str = "game_seeds") -> list[int]:
    """``n`` non-negative integer seeds, one per game (a list, tuple or integer array);
    ValueError otherwise."""
    try:
        values = list(seeds) if isinstance(seeds, (list, tuple, np.ndarray)) else None
    except TypeError:
        values = None
    out = [integer(x) for x in values] if values is not None else []
    if values is None or len(out) != n or any(x is None or x < 0 for x in out):
        raise ValueError(f"{name} must be {n} non-negative integers (one per game), got {seeds!r:.200}")
    return out


def check_flag(name: str, value, meaning: str = "") -> bool:
    """``value`` as a bool (Python's or NumPy's); ValueError for anything else (1, "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False{meaning}, got {value!r:.80}")
    return bool(value)


def either(choices) -> str:
    """``'a', 'b' or 'c'``: the choices as an error message lists them."""
    names = [repr(c) for c in choices]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def check_choice(name: str, value, choices) -> str:
    """``value`` if it is one of ``choices`` (strings); ValueError listing them otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be {either(choices)}, got {value!r:.80}")
    return value


#: The largest ``reward_scale``: every reward and return stays finite, in float32 buffers too.
MAX_REWARD_SCALE = 1e6


def check_reward_scale(value) -> float:
    """``reward_scale`` as a float: a number in (0, :data:`MAX_REWARD_SCALE`] (ValueError
    otherwise: 1e308 gave infinite rewards and NaN returns)."""
    if not finite_number(value) or not 0 < value <= MAX_REWARD_SCALE:
        raise ValueError(f"reward_scale must be a number in (0, {MAX_REWARD_SCALE:g}], got {value!r:.80}")
    return float(value)


def check_mask_dtype(mask_dtype) -> np.dtype:
    """The numpy dtype of ``mask_dtype`` ("int8", "bool", or those numpy dtypes/types);
    ValueError for anything else."""
    try:
        dtype = np.dtype(mask_dtype) if mask_dtype is not None else None
    except TypeError:
        dtype = None
    if dtype not in MASK_DTYPES.values():
        raise ValueError(
            f"mask_dtype must be 'int8' (the default: 0/1 masks, a MultiBinary space) or 'bool' "
            f"(True/False masks, a bool Box space), got {mask_dtype!r:.80}"
        )
    return dtype


def check_render_mode(render_mode, modes) -> str | None:
    """``render_mode`` if it is None or one of ``modes`` (ValueError naming them);
    "rgb_array" needs Pillow (ImportError naming the extra, :func:`require`)."""
    if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in modes):
        raise ValueError(f"render_mode must be None, {either(modes)}, got {render_mode!r:.80}")
    if render_mode == "rgb_array":
        require("PIL", 'render_mode="rgb_array"', "Pillow", "apps")
    return render_mode


def check_action(action, num_actions: int) -> int:
    """One action as an int: Python's or NumPy's integer, or a one-element integer array.
    ValueError for anything else (a bool, a float, a string, several values); the range
    is not checked here: an integer outside ``0..num_actions - 1`` is an illegal action
    (:class:`IllegalActions`)."""
    x = integer(action)
    if x is not None:
        return x
    if isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        return int(action.reshape(()))
    raise ValueError(f"an action is one integer in 0..{num_actions - 1}, got {action!r:.80}")


def check_actions(actions, n: int) -> np.ndarray:
    """One integer action per game as int64 ``(n,)`` (``(n, 1)`` accepted); ValueError for
    non-integers (bools and floats included), another shape or values past int64."""
    arr = np.asarray(actions)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers (one per game), got dtype {arr.dtype}")
    if arr.size != n or arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 1):
        raise ValueError(f"expected {n} actions (shape ({n},)), got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.max(initial=0) > np.iinfo(np.int64).max:
        raise ValueError("action values overflow int64")
    return arr.reshape(n).astype(np.int64)


def check_dice(dice, n: int) -> np.ndarray:
    """``n`` die faces 1..6 (any order) as int64 ``(n,)``; ValueError for anything else: a
    bool, a float, a string or a face outside 1..6 (``[True, 2, 3, 4, 5]`` is not the
    faces 1..5)."""
    if isinstance(dice, np.ndarray):
        ok = dice.ndim == 1 and dice.dtype.kind in "iu"
        faces = dice.tolist() if ok else None
    else:
        try:
            faces = [integer(x) for x in dice]
        except TypeError:
            faces = None
    if faces is None or len(faces) != n or any(x is None or not 1 <= x <= 6 for x in faces):
        raise ValueError(f"dice must be {n} integer faces 1..6 (any order), got {dice!r:.80}")
    return np.array(faces, dtype=np.int64)


# ---------------------------------------------------------------------------- illegal actions
def describe_illegal(rules: Ruleset, st: GameState, action: int) -> str | None:
    """Why ``action`` (an int) is not legal in ``st``, as the doors say it ("illegal action
    45 (write down/ones): ..." or "action 200 is outside the action space 0..96"); None
    when it is legal."""
    n = layout(rules).num_actions
    if not 0 <= action < n:
        return f"action {action} is outside the action space 0..{n - 1}"
    reason = why_illegal(rules, st, action)
    return None if reason is None else f"illegal action {action} ({action_to_string(rules, action)}): {reason}"


class IllegalActions:
    """One env's illegal-action policy (``illegal_action``, module docstring).

    Args:
        mode: "terminate" or "raise" (ValueError otherwise).

    The door calls :meth:`refuse` with what was illegal before it changes anything; in
    "raise" mode that raises, in "terminate" mode it warns once per env and the door ends
    the game with :meth:`penalty`.
    """

    def __init__(self, mode: str):
        self.mode = check_choice("illegal_action", mode, ILLEGAL_MODES)
        self.warned = False

    def refuse(self, what: str, unchanged: str = "the game is unchanged", stacklevel: int = 4) -> None:
        """``what`` was illegal: raise :class:`~jamb_env.IllegalActionError` ("raise"), or
        (the first time in "terminate") warn :class:`~jamb_env.IllegalActionWarning`."""
        if self.mode == "raise":
            raise IllegalActionError(f"{what}; {unchanged}")
        if not self.warned:
            self.warned = True
            warnings.warn(
                f"{what}. The game ends here with reward {ILLEGAL_ACTION_PENALTY} points "
                f"(illegal_action='terminate'), {UNMASKED_HINT}",
                IllegalActionWarning,
                stacklevel=stacklevel,
            )

    @staticmethod
    def penalty(reward_scale: float) -> float:
        """The reward of a game an illegal action ended: :data:`ILLEGAL_ACTION_PENALTY` points
        times ``reward_scale``."""
        return ILLEGAL_ACTION_PENALTY * reward_scale


def legal_actions(masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """bool ``(N,)``: whether each game's action (int64 ``(N,)``, any integers) is in the
    action space and in its row of ``masks`` (bool ``(N, A)``)."""
    A = masks.shape[1]
    if len(actions) and actions.min() >= 0 and actions.max() < A:
        return masks[np.arange(len(actions)), actions]
    legal = (actions >= 0) & (actions < A)
    legal[legal] = masks[np.flatnonzero(legal), actions[legal]]
    return legal


# ---------------------------------------------------------------------------- masks
def handed_out_masks(masks: np.ndarray, over, dtype=np.bool_) -> np.ndarray:
    """A new ``dtype`` array of the masks a door hands out: ``masks`` (bool ``(A,)`` of one
    game, or ``(N, A)``) with the row of every game that is over all ones (``over``: a
    bool, or bool ``(N,)``), never an all-False row (Pgx's convention)."""
    out = masks.astype(dtype)
    if out.ndim == 1:
        if over:
            out[:] = 1
    else:
        out[over] = 1
    return out


# ---------------------------------------------------------------------------- rewards
def reward_values(mode: str, scores, over) -> np.ndarray:
    """float64 ``(..., P)``: each player's value of the reward function ``mode`` for the
    scores ``scores`` (int ``(P,)`` or ``(k, P)``, points) of a game that is ``over`` (a
    bool or bool ``(k,)``): "score" the player's score, "margin" own score minus the best
    opponent's, "win" (players beaten - players beating them) / (P - 1) once over, 0
    before. A step's reward is the change of this value (so a return is the final score,
    margin or win reward)."""
    s = np.asarray(scores)
    if mode == "score":
        return s.astype(np.float64)
    res = M.result(s)
    if mode == "margin":
        return res.margin.astype(np.float64)
    over = np.asarray(over)
    return np.where(over[..., None] if over.ndim else over, res.rank, 0.0)


# ---------------------------------------------------------------------------- extras
def require(module: str, what: str, package: str, extra: str):
    """``module`` imported, or ImportError in one line: ``<what> needs <package>: pip
    install "jamb-env[<extra>]"``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(missing(what, package, extra, exc)) from exc


def missing(what: str, package: str, extra: str, exc: ImportError | None = None) -> str:
    """The one-line message of a door whose library is not installed."""
    cause = f" ({exc})" if exc is not None else ""
    return f'{what} needs {package}: pip install "jamb-env[{extra}]"{cause}'
