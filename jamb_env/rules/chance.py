"""The chance API for planners: every outcome of a re-roll with its exact probability.

A re-roll (hold) action ``a`` in ``0 .. 2**n - 2`` keeps the sorted dice whose bit is set
(bit ``i`` = sorted position ``i``) and rolls the other ``k = n - popcount(a)`` dice
(RULES.md §3, rolls and holds; the encoding is :mod:`jamb_env.rules.game`'s); Joly's
basket (RULES.md §6) is a chance action too: it rolls all ``n`` dice as the turn's new
roll 1, with keep-nothing's outcomes. The env
draws those ``k`` dice from its stream, independent uniform faces 1..6; here the same
step is split OpenSpiel-style into a chance node and its outcomes:

* :func:`chance_outcomes`: every resulting sorted dice with its exact probability;
* :func:`apply_outcome`: the state after the re-roll came out as given dice (no stream);
* :func:`sample_outcome`: one outcome drawn from a generator with that distribution;
* :func:`first_roll_outcomes`: the same for a turn's first roll (the state after a
  write), whose outcome :func:`jamb_env.rules.start_turn` applies;
* :func:`roll_dice`: ``k`` fresh faces from a generator, drawn the way the env draws its
  dice stream (for a clone whose future dice are redrawn);
* :func:`outcome_distribution`: the same distributions as one array over the **outcome
  ids**, the dice multiset indices ``0 .. M - 1`` (252 multisets of 5 dice, 462 of 6):
  id ``m`` is the sorted faces ``rules.tables.sorted_dice[m]``, and
  ``rules.dice_index(dice)`` (any order) gives the id of some dice. Ids run in
  lexicographic order of the sorted faces (``[1 1 1 1 1]`` is 0, ``[6 6 6 6 6]`` is
  ``M - 1``), as :attr:`GameState.dice_index` and every table of the engine; OpenSpiel's
  chance outcomes (:mod:`jamb_env.openspiel`) are these ids.

Probabilities come from the engine's hold-transition table
(:attr:`jamb_env.rules.tables.DiceTables.transition`: multinomial counts of the rolled
dice over ``6**k``), so they agree with the planners of :mod:`jamb_env.rules.planner`. The
outcomes of a re-roll depend only on the dice and the hold, never on the sheet.

Numpy only: no Gymnasium or torch import.
"""

from __future__ import annotations

import numpy as np

from jamb_env.rules.game import (
    Action,
    GameState,
    apply_action,
    decode,
    encode,
    is_basket,
    is_over,
    layout,
    validate_state,
    why_illegal,
)
from jamb_env.rules.ruleset import Ruleset
from jamb_env.rules.tables import FACES
from jamb_env.utils.checks import integer_items
from jamb_env.utils.errors import IllegalActionError


def _reroll(rules: Ruleset, state: GameState, action, check: bool) -> int:
    """``action`` as an int, after checking it is a re-roll legal in ``state``."""
    if check:
        validate_state(rules, state)  # ValueError naming the inconsistency
    elif not isinstance(state, GameState):
        raise ValueError(f"expected a GameState, got {type(state).__name__}")
    num_holds = layout(rules).num_holds
    holds = f"0..{num_holds - 2} (keep-masks over the sorted dice; keep-all {num_holds - 1} is not a re-roll)"
    if rules.jokers:
        holds += f" and the basket {encode(rules, Action('basket'))}"
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"a re-roll action is an integer in {holds}, got {action!r}")
    a = int(action)
    if not 0 <= a < num_holds - 1 and not is_basket(rules, a):
        raise ValueError(f"action {a} is not a re-roll: re-rolls are {holds} on {rules.name}")
    if check:
        reason = why_illegal(rules, state, a)
        if reason is not None:
            legal = _legal_rerolls(rules, state)
            now = f"legal re-rolls now: {legal}" if legal else "no re-roll is legal now"
            raise IllegalActionError(f"re-roll {a} is not legal in this state: {reason}; {now}")
    return a


def _hold(rules: Ruleset, a: int) -> int:
    """The hold whose outcomes chance action ``a`` has: a basket rolls every die, as
    keep-nothing (hold 0) does."""
    return 0 if is_basket(rules, a) else a


def _legal_rerolls(rules: Ruleset, state: GameState) -> list[int]:
    return [a for a in range(layout(rules).num_holds - 1) if why_illegal(rules, state, a) is None]


def _outcome_row(rules: Ruleset, state: GameState, a: int) -> np.ndarray:
    """float64 ``(M,)``: probability of each multiset after re-roll ``a`` from ``state``."""
    tables = rules.tables
    return tables.transition[tables.hold_sub[state.dice_index, a]]


def chance_outcomes(
    rules: Ruleset, state: GameState, action: int, *, check: bool = True
) -> list[tuple[np.ndarray, float]]:
    """Every possible result of re-roll ``action`` in ``state``, with its probability.

    The kept dice stay; the ``k`` others are rolled, so a result whose rolled dice show
    face counts ``c_1..c_6`` has probability ``k! / (c_1! ... c_6!) / 6**k`` (RULES.md §3).

    Args:
        rules: the ruleset of ``state``.
        state: a state with a re-roll legal (roll 1 .. max rolls - 1 of a turn).
        action: a re-roll action: keep-mask ``0 .. 2**n - 2`` over the sorted dice, legal
            in ``state`` (the canonical mask of its hold).
        check: validate ``state`` and the legality of ``action`` (False: the caller
            already holds the legal mask; the action must still be a re-roll index).

    Returns:
        ``[(dice, p), ...]``: each possible sorted dice (int8 ``(n,)``, a new array) once,
        in ascending multiset order (lexicographic), with its probability (float, > 0;
        the probabilities sum to 1 within 1e-12).

    Raises:
        ValueError: ``action`` is not a re-roll index, or ``state`` is inconsistent.
        IllegalActionError (a ValueError): the re-roll is not legal in ``state`` (the
            message gives the reason and the legal re-rolls).
    """
    row = _reroll_distribution(rules, state, action, check)
    sorted_dice = rules.tables.sorted_dice
    return [(sorted_dice[m].copy(), float(row[m])) for m in np.flatnonzero(row)]


def first_roll_outcomes(rules: Ruleset, state: GameState, *, check: bool = True) -> list[tuple[np.ndarray, float]]:
    """Every possible first roll of the next turn of ``state`` (roll 0, game not over),
    with its probability: all ``n`` dice rolled. Apply one with
    :func:`jamb_env.rules.start_turn`. Same return format as :func:`chance_outcomes`.

    Raises:
        ValueError: ``state`` is inconsistent, or its turn has started (``roll`` > 0) or
            the game is over.
    """
    row = _first_roll_distribution(rules, state, check)
    return [(rules.tables.sorted_dice[m].copy(), float(row[m])) for m in np.flatnonzero(row)]


def outcome_distribution(
    rules: Ruleset, state: GameState, action: int | None = None, *, check: bool = True
) -> np.ndarray:
    """float64 ``(M,)``: the probability of each outcome id (dice multiset index, module
    docstring) after re-roll ``action`` in ``state`` (as :func:`chance_outcomes`), or with
    ``action=None`` of the next turn's first roll (as :func:`first_roll_outcomes`); 0 for
    the dice that cannot come out. Sums to 1 within 1e-12; a new array.

    Raises:
        as :func:`chance_outcomes` (a re-roll) or :func:`first_roll_outcomes` (None).
    """
    if action is None:
        return _first_roll_distribution(rules, state, check)
    return _reroll_distribution(rules, state, action, check)


def _reroll_distribution(rules: Ruleset, state: GameState, action, check: bool) -> np.ndarray:
    a = _hold(rules, _reroll(rules, state, action, check))
    return _outcome_row(rules, state, a).copy()


def _first_roll_distribution(rules: Ruleset, state: GameState, check: bool) -> np.ndarray:
    tables = rules.tables
    if check:
        validate_state(rules, state)
    elif not isinstance(state, GameState):
        raise ValueError(f"expected a GameState, got {type(state).__name__}")
    if is_over(rules, state) or state.roll != 0:
        raise ValueError(
            f"a first roll needs a state between turns (roll 0, game not over), got roll {state.roll}, "
            f"turn {state.turn} of {rules.num_cells}"
        )
    return tables.transition[int(np.flatnonzero(tables.sub_size == 0)[0])].copy()


def _dice_arg(rules: Ruleset, dice) -> np.ndarray:
    """``dice`` as sorted int8 ``(n,)`` faces, or ValueError."""
    arr = np.asarray(dice)
    n = rules.dice
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer) or not integer_items(dice):
        raise ValueError(f"dice must be {n} integer faces 1..6 (any order) for {rules.name}, got {dice!r}")
    if arr.min() < 1 or arr.max() > FACES:
        raise ValueError(f"die faces must be 1..6, got {arr.tolist()}")
    return np.sort(arr).astype(np.int8)


def apply_outcome(rules: Ruleset, state: GameState, action: int, dice, *, check: bool = True) -> GameState:
    """The state after re-roll ``action`` in ``state`` came out as ``dice``.

    No stream is consumed: the rolled dice are ``dice`` minus the kept ones, and the
    transition is the core's :func:`jamb_env.rules.apply_action` (dice sorted, multiset
    index set, ``roll`` + 1; nothing else changes).

    Args:
        rules, state, action, check: as for :func:`chance_outcomes`.
        dice: the ``n`` faces after the re-roll (kept and rolled together, any order):
            one of the outcomes of :func:`chance_outcomes`.

    Returns:
        A new :class:`GameState` sharing no array with ``state`` (``state`` is unchanged).

    Raises:
        ValueError: not a re-roll, an inconsistent state, ``dice`` not ``n`` integer
            faces 1..6, or ``dice`` impossible for this hold (a kept die is missing).
        IllegalActionError (a ValueError): the re-roll is not legal in ``state``.
    """
    a = _reroll(rules, state, action, check)
    new, _ = apply_action(rules, state, a, rolled_faces(rules, state, a, dice), check=False)
    return new.copy()


def rolled_faces(rules: Ruleset, state: GameState, action: int, dice) -> np.ndarray:
    """The faces the re-rolled dice must show for re-roll ``action`` to give ``dice``
    (``dice`` minus the kept ones): int64 ``(k,)`` ascending, ``k`` the dice re-rolled.

    Raises:
        ValueError: ``dice`` not ``n`` integer faces 1..6, or impossible for this hold."""
    a = _hold(rules, int(action))
    after = _dice_arg(rules, dice)
    tables = rules.tables
    m = tables.index(after)
    sub = tables.hold_sub[state.dice_index, a]
    if tables.transition[sub, m] <= 0:
        kept = state.dice[list(decode(rules, a).keep)].tolist()
        raise ValueError(
            f"dice {after.tolist()} cannot come from re-roll {a}: it keeps {kept} of {state.dice.tolist()}, "
            f"so the result must contain those faces"
        )
    return np.repeat(np.arange(1, FACES + 1), tables.counts[m].astype(np.int64) - tables.sub_counts[sub])


def roll_dice(rng: np.random.Generator, count: int) -> np.ndarray:
    """int8 ``(count,)``: ``count`` independent uniform faces 1..6 from ``rng``, drawn as
    ``JambEnv.reset`` draws a game's dice stream (``rng.integers(1, 7, dtype=int8)``).

    Raises:
        ValueError: ``rng`` is not a ``numpy.random.Generator`` or ``count`` is not a
            non-negative integer.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}"
        )
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) or count < 0:
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    return rng.integers(1, FACES + 1, size=int(count), dtype=np.int8)


def sample_outcome(
    rules: Ruleset, state: GameState, action: int, rng: np.random.Generator, *, check: bool = True
) -> np.ndarray:
    """One result of re-roll ``action`` in ``state``: the kept dice plus ``k`` fresh
    faces from ``rng`` (:func:`roll_dice`), sorted; distributed as :func:`chance_outcomes`.
    Apply it with :func:`apply_outcome`.

    Returns:
        int8 ``(n,)`` sorted faces (a new array).

    Raises:
        as :func:`chance_outcomes`, and ValueError if ``rng`` is not a Generator.
    """
    a = _hold(rules, _reroll(rules, state, action, check))
    kept = state.dice[list(decode(rules, a).keep)]
    rolled = roll_dice(rng, rules.dice - len(kept))
    return np.sort(np.concatenate([kept, rolled])).astype(np.int8)
