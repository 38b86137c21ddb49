"""Game state, pure transitions and the legal-action mask (RULES.md §1-4).

A :class:`GameState` is a small frozen record of integer arrays; every transition
returns a new state and never mutates its input. Chance is explicit: the functions
that roll take the dice as an argument, so tests and solvers inject dice and the env
samples them from its dice stream.

The action space (its encoding, :func:`decode`, :func:`encode`) is
:mod:`jamb_env.rules.actions`'s, re-exported here.

A turn: :func:`start_turn` (roll 1), then re-rolls, an optional announcement right
after roll 1, and one write, which ends the turn (``roll`` back to 0).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from jamb_env.rules import kernels as K
from jamb_env.rules.actions import Action, action_to_string, decode, layout
from jamb_env.rules.actions import Layout as Layout  # re-exported: core.X names the action space too
from jamb_env.rules.actions import encode as encode
from jamb_env.rules.actions import target_cells as target_cells
from jamb_env.rules.ruleset import Ruleset
from jamb_env.rules.transition import GameState, apply, new_state, roll_first, rolled_count
from jamb_env.utils.checks import integer_items
from jamb_env.utils.errors import IllegalActionError


# ---------------------------------------------------------------------- queries
def check_indices(rules: Ruleset, st) -> None:
    """Raise ValueError unless every field of ``st`` that the compiled kernels index with
    is in range for ``rules`` (array shapes, filled bits, dice faces, dice_index, roll,
    announced, answer_due, copy_row, turn): the cheap guard of every core function that
    hands a state to a kernel, so that a hand-built state gets an error, never a read out
    of bounds. Whether the state can be reached is :func:`validate_state`'s question."""
    _check_sheet(rules, st)  # the values and filled arrays
    _, _, dshape, cells, rows, multisets, rolls, turns = _index_bounds(rules)
    d = st.dice
    if getattr(d, "shape", None) != dshape or d.dtype.kind not in "iu":
        raise ValueError(
            f"not a state of {rules.name!r}: dice must be an integer array of shape {dshape} "
            "(validate_state names the field)"
        )
    idx, roll, ann, due, copy, turn = st.dice_index, st.roll, st.announced, st.answer_due, st.copy_row, st.turn
    if not all(
        type(x) is int or isinstance(x, np.integer) for x in (idx, roll, ann, due, copy, turn, st.jokers, st.pure)
    ):
        raise ValueError(
            f"not a state of {rules.name!r}: its scalar fields must be integers (validate_state names the field)"
        )
    if not (
        -1 <= idx < multisets
        and 0 <= roll <= rolls
        and (roll == 0) == (idx == -1)
        and -1 <= ann < cells
        and -1 <= due < rows
        and -1 <= copy < rows
        and 0 <= turn <= turns
        and min(dl := d.tolist()) >= 0
        and max(dl) <= 6
    ):
        raise ValueError(f"not a state of {rules.name!r}: a field is out of range (validate_state names it)")


def _check_sheet(rules: Ruleset, st) -> None:
    """The sheet part of :func:`check_indices` (values, filled), alone for the functions
    that read only the sheet (the score, the maximal column)."""
    if not isinstance(st, GameState):
        raise ValueError(f"expected a GameState, got {type(st).__name__}")
    vshape, fshape, _, _, rows, _, _, _ = _index_bounds(rules)
    v, f = st.values, st.filled
    if (
        getattr(v, "shape", None) != vshape
        or getattr(f, "shape", None) != fshape
        or v.dtype.kind not in "iu"
        or f.dtype.kind not in "iu"
        or min(fl := f.tolist()) < 0
        or max(fl) >> rows
    ):
        raise ValueError(
            f"not a sheet of {rules.name!r}: values and filled must be integer arrays of shapes {vshape}, "
            f"{fshape} with filled bits of its {rows} rows (validate_state names the field)"
        )


@cache
def _index_bounds(rules: Ruleset) -> tuple:
    C, R = len(rules.columns), rules.num_rows
    return (C, R), (C,), (rules.dice,), C * R, R, rules.tables.num_multisets, rules.max_rolls, rules.num_cells


def new_game(rules: Ruleset) -> GameState:
    """An empty sheet before the first roll (:func:`jamb_env.rules.transition.new_state`)."""
    return new_state(rules)


def jokers_left(rules: Ruleset, st: GameState) -> dict[str, object]:
    """Joly's jokers left in ``st`` (RULES.md §6): ``{"fixed": [values 1..6 left],
    "free": 0..2, "baskets": 0..2}`` (all empty without jokers)."""
    j = int(st.jokers)
    return {
        "fixed": [v for v in range(1, 7) if K.fixed_joker_left(j, v)],
        "free": int(K.free_jokers_left(j)),
        "baskets": int(K.baskets_left(j)),
    }


def is_over(rules: Ruleset, st: GameState) -> bool:
    """True once every playable cell is written."""
    return st.turn >= rules.num_cells


def max_rolls(rules: Ruleset, st: GameState) -> int:
    """Rolls allowed in the current turn: ``last_turn_rolls`` when the turn started with
    exactly one playable cell empty, else ``rolls`` (RULES.md §1)."""
    return int(K.max_rolls(st.turn, rules.arrays.P))


def is_last_turn(rules: Ruleset, st: GameState) -> bool:
    """True in the game's last turn (one playable cell left; RULES.md §1)."""
    return bool(K.is_last_turn(st.turn, rules.arrays.P))


def _answer_forced_due(rules: Ruleset, st: GameState) -> bool:
    return bool(K.answer_forced(st.answer_due, rules.arrays.P))


def writable_bits(rules: Ruleset, st: GameState, roll: int) -> list[int]:
    """Per played column, the bitmask of rows that may be written after roll ``roll``
    with the current sheet, announcement and answer obligation (RULES.md §1, §4;
    :func:`jamb_env.rules.kernels.writable`)."""
    check_indices(rules, st)
    out = np.zeros(len(rules.columns), dtype=np.int64)
    K.writable(
        st.filled, int(roll), int(st.announced), int(st.answer_due), int(st.copy_row), int(st.pure), rules.arrays, out
    )
    return out.tolist()


def can_announce(rules: Ruleset, st: GameState) -> bool:
    """Announcing is possible right after roll 1, once, outside an answer obligation."""
    return bool(K.can_announce(st.roll, st.announced, st.answer_due, rules.arrays.P))


def can_reroll(rules: Ruleset, st: GameState) -> bool:
    """A re-roll is legal while rolls remain and some cell is still writable after it
    (the no-dead-end rule, RULES.md §4)."""
    check_indices(rules, st)
    bits = np.zeros(len(rules.columns), dtype=np.int64)
    return bool(K.can_reroll(st.filled, st.roll, st.announced, st.answer_due, st.copy_row, st.turn, rules.arrays, bits))


def legal_mask(rules: Ruleset, st: GameState, *, check: bool = True) -> np.ndarray:
    """bool ``(num_actions,)``: the legal actions; all False before roll 1 or at the end
    (:func:`jamb_env.rules.kernels.legal_mask`). ``check=False`` skips
    :func:`check_indices`, for callers whose state came from the engine.

    Raises ValueError: a field of ``st`` out of range (:func:`check_indices`)."""
    if check:
        check_indices(rules, st)
    ra = rules.arrays
    mask = np.empty(int(ra.P[K.P_NUM_ACTIONS]), dtype=bool)
    bits = np.zeros(len(rules.columns), dtype=np.int64)
    K.legal_mask(
        st.filled,
        int(st.dice_index),
        int(st.roll),
        int(st.announced),
        int(st.answer_due),
        int(st.copy_row),
        int(st.pure),
        int(st.turn),
        int(st.jokers),
        ra,
        bits,
        mask,
    )
    return mask


def why_illegal(rules: Ruleset, st: GameState, action: int) -> str | None:
    """None if ``action`` is legal in ``st``, else the reason in words.

    Legality is the kernels' legal mask (:func:`legal_mask`), never decided here; the
    words only explain an action the mask refuses. ValueError outside the action space,
    or for a state out of range (:func:`check_indices`)."""
    check_indices(rules, st)
    if is_over(rules, st):
        return "the game is over"
    if st.roll == 0:
        return "the turn has not started (no dice rolled yet)"
    act = decode(rules, action)
    if legal_mask(rules, st, check=False)[int(action)]:
        return None
    return _reason(rules, st, act, int(action)) or "not in the legal mask"


def _reason(rules: Ruleset, st: GameState, act: Action, action: int) -> str | None:
    """The words for an action the legal mask refuses in a started turn (None: no
    better words than the mask's)."""
    lay = layout(rules)
    if act.kind == "basket":
        return None if jokers_left(rules, st)["baskets"] else "no basket left (two per game)"
    if act.kind == "joker":
        left = jokers_left(rules, st)
        if act.joker == "J" and not left["free"]:
            return "no free joker J left (two per game)"
        if act.joker != "J" and act.value not in left["fixed"]:
            return f"the joker {act.joker} is used already (each joker once per game)"
        face = int(st.dice[act.die])
        if face == act.value:
            return f"die {act.die + 1} shows {face} already"
        if act.die > 0 and int(st.dice[act.die - 1]) == face:
            return "among equal dice a joker names the leftmost one; this die has another index"
        return None
    if act.kind == "reroll":
        if st.roll >= max_rolls(rules, st):
            return f"no re-roll left (roll {st.roll} of {max_rolls(rules, st)})"
        if not can_reroll(rules, st):
            return "no cell would be writable after a re-roll (announce or write now, RULES.md §4)"
        if int(action) == lay.num_holds - 1:
            return "keeping every die is not a re-roll"
        if not rules.tables.hold_canonical[st.dice_index, int(action)]:
            return "among equal dice only the leftmost keep-mask is used; this hold has another index"
        return None
    c, r = divmod(rules.cell(act.column, act.row), rules.num_rows)
    if int(st.filled[c]) >> r & 1:
        return f"cell {act.column}/{act.row} is already written"
    if act.kind == "announce":
        if st.roll != 1:
            return "announcing is only allowed right after the first roll"
        if st.announced >= 0:
            return "a cell is already announced this turn"
        if _answer_forced_due(rules, st):
            return f"the answer column must take {rules.rows[st.answer_due]} this turn; no announcement"
        return None
    if not writable_bits(rules, st, st.roll)[c] >> r & 1:
        if st.announced >= 0:
            return f"the turn must write the announced cell {'/'.join(rules.cell_name(st.announced))}"
        if _answer_forced_due(rules, st):
            return f"the turn must write answer/{rules.rows[st.answer_due]}"
        if act.column == "copy":
            offered = "no row" if st.copy_row < 0 else f"only {rules.rows[st.copy_row]}"
            return (
                f"the copy column offers {offered} this turn (the row the previous player just wrote; "
                "any row once every other column is full)"
            )
        return f"cell {act.column}/{act.row} is not open now (column rule of {act.column!r}, roll {st.roll})"
    return None


def validate_state(rules: Ruleset, st, *, solitaire: bool = False) -> None:
    """Raise ValueError naming the first inconsistency if ``st`` is not a state a sheet of
    ``rules`` can reach: shapes, dtypes, value ranges, dice and index, roll, turn, the
    announcement, the obligations (an answer is due only in an empty answer cell), the
    pure-roll flag and the jokers.

    ``solitaire``: also what only a one-player game rules out (a sheet of a multiplayer
    game waits at roll 0 and receives obligations from the other players' writes): the
    first roll is rolled unless the game is over, no obligation before the first write,
    an answer due only in a row some announce column has written, the copy column's row
    one that has been written (the last write's). As far as the record shows, the states
    left are reachable: a roll flagged pure after roll 1 is the same state as after a
    re-roll of every die, whatever was held before."""
    if not isinstance(st, GameState):
        raise ValueError(f"expected a GameState, got {type(st).__name__}")
    bits = _validate_sheet(rules, st)
    _validate_turn(rules, st, bits)
    if solitaire:
        _validate_solitaire(rules, st, bits)
    _validate_jokers(rules, st)


def _validate_sheet(rules: Ruleset, st: GameState) -> np.ndarray:
    """The arrays, the scalar fields' types, the filled bits, the values and the turn
    count of :func:`validate_state`; returns the written cells, bool ``(C, R)``."""
    C, R, n = len(rules.columns), rules.num_rows, rules.dice
    for name, shape in (("values", (C, R)), ("filled", (C,)), ("dice", (n,))):
        a = getattr(st, name)
        if not isinstance(a, np.ndarray) or a.shape != shape or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"state.{name} must be an integer array of shape {shape} for {rules.name}, got {a!r}")
    for name in ("dice_index", "roll", "announced", "answer_due", "turn", "copy_row", "jokers", "pure"):
        v = getattr(st, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"state.{name} must be an integer, got {v!r}")
    values, filled = st.values, st.filled
    if ((filled < 0) | (filled > (1 << R) - 1)).any():
        raise ValueError(f"state.filled has bits beyond the {R} rows")
    bits = rules.row_bits[filled]
    if (values[~bits] != 0).any():
        raise ValueError("state.values holds a value in an empty cell")
    for c in range(C):
        for r in np.flatnonzero(bits[c]):
            if int(values[c, r]) not in rules._possible_values[r]:
                raise ValueError(f"state.values[{c}, {r}] = {int(values[c, r])} cannot be written in {rules.rows[r]!r}")
    if st.turn != int(bits.sum()):
        raise ValueError(f"state.turn = {st.turn} but {int(bits.sum())} cells are written")
    return bits


def _validate_turn(rules: Ruleset, st: GameState, bits: np.ndarray) -> None:
    """The roll, the dice and their index, the announcement, the obligations and the
    pure-roll flag of :func:`validate_state`."""
    R, dice = rules.num_rows, st.dice
    if not 0 <= st.roll <= (0 if is_over(rules, st) else max_rolls(rules, st)):
        raise ValueError(f"state.roll = {st.roll} is outside 0..{max_rolls(rules, st)} (0 once the game is over)")
    if st.roll == 0:
        if (dice != 0).any() or st.dice_index != -1:
            raise ValueError("before the first roll the dice are zeros and dice_index is -1")
    else:
        if dice.min() < 1 or dice.max() > 6 or (np.diff(dice) < 0).any():
            raise ValueError(f"state.dice must be sorted faces 1..6, got {dice.tolist()}")
        if st.dice_index != rules.tables.index(dice):
            raise ValueError(f"state.dice_index = {st.dice_index} does not match the dice {dice.tolist()}")
    lay = layout(rules)
    if st.announced != -1:
        if st.announced not in set(lay.announce_cells.tolist()) or st.roll == 0:
            raise ValueError(f"state.announced = {st.announced} is not an announce cell of a started turn")
        c, r = divmod(st.announced, R)
        if bits[c, r]:
            raise ValueError("state.announced names a written cell")
    if st.answer_due != -1 and (lay.answer_column < 0 or not 0 <= st.answer_due < R):
        raise ValueError(f"state.answer_due = {st.answer_due} is not a row of an answer column")
    if st.copy_row != -1 and (int(rules.arrays.P[K.P_COPY_COL]) < 0 or not 0 <= st.copy_row < R):
        raise ValueError(f"state.copy_row = {st.copy_row} is not a row of a copy column (-1: none)")
    if st.answer_due != -1 and bits[lay.answer_column, st.answer_due]:
        raise ValueError(
            f"state.answer_due = {st.answer_due} names the written cell answer/{rules.rows[st.answer_due]} "
            "(an answer is due only in an empty cell)"
        )
    if st.pure not in (0, 1) or (st.roll == 0 and st.pure):
        raise ValueError(f"state.pure = {st.pure} must be 0 or 1 (0 before the turn's first roll)")
    if st.roll == 1 and not st.pure and not rules.jokers:
        raise ValueError("state.pure = 0 at roll 1: the first roll rolls every die (only a joker makes it impure)")


def _validate_solitaire(rules: Ruleset, st: GameState, bits: np.ndarray) -> None:
    """What only a one-player game rules out (:func:`validate_state` with ``solitaire``)."""
    if st.roll == 0 and not is_over(rules, st):
        raise ValueError("state.roll = 0 mid-game: a one-player game rolls each turn's first roll as the turn starts")
    if st.turn == 0 and (st.answer_due != -1 or st.copy_row != -1):
        raise ValueError("state.answer_due / copy_row set before any cell is written (they come from the last write)")
    if st.answer_due != -1 and not any(bits[c, st.answer_due] for c in layout(rules).announce_columns):
        raise ValueError(
            f"state.answer_due = {st.answer_due}: no announce column has written {rules.rows[st.answer_due]!r}, "
            "so no write can have obliged that answer"
        )
    if st.copy_row != -1 and not bits[:, st.copy_row].any():
        raise ValueError(
            f"state.copy_row = {st.copy_row}: no column has written {rules.rows[st.copy_row]!r} "
            "(the copy column offers the row of the last write)"
        )
    if st.copy_row == -1 and st.turn > 0 and int(rules.arrays.P[K.P_COPY_COL]) >= 0:
        raise ValueError("state.copy_row = -1 after a write: the copy column offers the row of the last write")


def _validate_jokers(rules: Ruleset, st: GameState) -> None:
    """The packed jokers of :func:`validate_state` (0 without jokers; at most the full set)."""
    j, full = int(st.jokers), K.JOKERS_FULL
    if not rules.jokers and j != 0:
        raise ValueError(f"state.jokers = {j} but {rules.name} has no jokers (0)")
    if (
        j < 0
        or j & ~K.JOKER_BITS
        or K.free_jokers_left(j) > K.free_jokers_left(full)
        or K.baskets_left(j) > K.baskets_left(full)
    ):
        raise ValueError(f"state.jokers = {j} is not a packed set of jokers left (see jokers_left)")


# ---------------------------------------------------------------------- transitions
def _check_dice(rules: Ruleset, dice, count: int) -> np.ndarray:
    arr = np.asarray(dice)
    if arr.ndim != 1 or not ((np.issubdtype(arr.dtype, np.integer) and integer_items(dice)) or arr.size == 0):
        raise ValueError(f"dice must be a flat sequence of integer faces 1..6, got {dice!r}")
    arr = arr.astype(np.int64)
    if len(arr) != count:
        raise ValueError(f"expected {count} dice, got {len(arr)}: {arr.tolist()}")
    if len(arr) and (arr.min() < 1 or arr.max() > 6):
        raise ValueError(f"die faces must be 1..6, got {arr.tolist()}")
    return arr


def start_turn(rules: Ruleset, st: GameState, dice, *, check: bool = True) -> GameState:
    """Roll 1 of a new turn with the given ``dice`` (n faces 1..6, any order): the one
    transition's roll (:func:`jamb_env.rules.transition.start_turn`).

    ``check=False`` trusts the caller (the env's own dice stream) and skips validation.

    Raises:
        IllegalActionError: the game is over, or the turn has started already.
        ValueError: not ``n`` faces 1..6.
    """
    check_indices(rules, st)  # the kernel writes the dice into st's arrays: checked even when check=False
    if check:
        if is_over(rules, st):
            raise IllegalActionError("the game is over")
        if st.roll != 0:
            raise IllegalActionError("the turn has already started")
        dice = _check_dice(rules, dice, rules.dice)
    return roll_first(rules, st, dice)


def reroll_count(rules: Ruleset, action: int) -> int:
    """How many dice action ``action`` rolls: a re-roll ``n`` minus the kept ones, a
    basket all ``n``, any other action (announce, write, joker) none
    (:func:`jamb_env.rules.transition.rolled_count`)."""
    return rolled_count(rules, action)


def is_basket(rules: Ruleset, action: int) -> bool:
    """``action`` is a basket (Joly, RULES.md §6): a chance action that rolls all dice."""
    return int(action) == layout(rules).basket >= 0


def apply_action(rules: Ruleset, st: GameState, action: int, dice=None, *, check: bool = True) -> tuple[GameState, int]:
    """Apply a legal ``action``; return the new state and the points it credited.

    ``dice`` (re-roll and basket actions only): the faces of the re-rolled dice, as many
    as :func:`reroll_count` (a basket: all ``n``, the turn's new roll 1; jokers change a
    die without rolling). A write ends the turn (``roll`` 0); call :func:`start_turn`
    with the next roll unless the game is over. ``check=False`` skips the legality
    test, for callers that already hold the legal mask of ``st`` (the env).

    Raises:
        IllegalActionError: the action is not legal in ``st`` (the reason is given).
        ValueError: the action is outside the action space, or wrong re-rolled dice.
    """
    reason = why_illegal(rules, st, action) if check else None
    if reason is not None:
        raise IllegalActionError(f"illegal action {action} ({action_to_string(rules, action)}): {reason}")
    a = int(action)
    rolled = reroll_count(rules, a)
    if rolled:
        if dice is None:
            raise ValueError(
                "a re-roll needs the re-rolled dice"
                if a < layout(rules).num_holds
                else "a basket needs the n dice of the turn's new first roll"
            )
        dice = _check_dice(rules, dice, rolled) if check else dice
    return apply(rules, st, a, dice if rolled else None)


# ---------------------------------------------------------------------- scoring
def maximal_column(rules: Ruleset, st: GameState) -> tuple[np.ndarray, int]:
    """The derived ``maximal`` column (RULES.md §5): (values (R,), filled bitmask)
    (:func:`jamb_env.rules.kernels.maximal`)."""
    _check_sheet(rules, st)
    values = np.zeros(rules.num_rows, dtype=np.int64)
    filled = K.maximal(st.values, st.filled, rules.arrays, values)
    return values, int(filled)


def _sheet(rules: Ruleset, st: GameState) -> tuple[np.ndarray, np.ndarray, int]:
    _check_sheet(rules, st)
    C, R = len(rules.columns), rules.num_rows
    parts, cols = np.zeros(5, dtype=np.int64), np.zeros(C + 1, dtype=np.int64)
    total = K.sheet_parts(
        st.values, st.filled, rules.arrays, parts, cols, np.zeros(4, dtype=np.int64), np.zeros(R, dtype=np.int64)
    )
    return parts, cols, int(total)


def column_totals(rules: Ruleset, st: GameState) -> dict[str, int]:
    """Points credited so far per column id (played and derived), RULES.md §2."""
    _, cols, _ = _sheet(rules, st)
    out = {col: int(cols[c]) for c, col in enumerate(rules.columns)}
    if layout(rules).has_maximal:
        out["maximal"] = int(cols[-1])
    return out


def score(rules: Ruleset, st: GameState) -> int:
    """The running sheet total (points): the sum of the columns' credited scores."""
    return _sheet(rules, st)[2]


def write_gains(rules: Ruleset, st: GameState, cell: int, candidates) -> np.ndarray:
    """int64 ``(len(candidates),)``: the points writing each candidate value in the empty
    cell ``cell`` of ``st`` would credit, as a write does (its column's change and the
    maximal column's; :func:`jamb_env.rules.kernels.write_gains`).

    Raises ValueError: a sheet out of range, ``cell`` not an empty cell of ``rules``."""
    _check_sheet(rules, st)
    name = "/".join(rules.cell_name(cell))  # ValueError outside the sheet
    c, r = divmod(int(cell), rules.num_rows)
    if int(st.filled[c]) >> r & 1:
        raise ValueError(f"cell {name} is already written")
    candidates = np.asarray(candidates, dtype=np.int64).reshape(-1)
    out = np.zeros(len(candidates), dtype=np.int64)
    values, filled = st.values.astype(np.int64), st.filled.astype(np.int64)
    scratch = np.zeros(4, dtype=np.int64), np.zeros(rules.num_rows, dtype=np.int64)
    K.write_gains(values, filled, int(cell), candidates, rules.arrays, out, *scratch)
    return out


#: The names of :func:`score_parts` (and of ``kernels.sheet_parts``'s five outputs), in order.
SCORE_PARTS = ("upper", "bonus", "difference", "lower", "bonus_columns")


def score_parts(rules: Ruleset, st: GameState) -> dict[str, int]:
    """Sheet totals by part: ``upper``, ``bonus``, ``difference``, ``lower`` (points),
    and ``bonus_columns`` (columns whose bonus is credited)."""
    parts = _sheet(rules, st)[0]
    return dict(zip(SCORE_PARTS, map(int, parts)))
