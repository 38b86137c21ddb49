"""The multiplayer game (RULES.md §6): seating, turns passing between players, the
answer column between players, and 003's shared sheet. Pure functions over the
solitaire core (:mod:`jamb_env.rules.game`): a player's turn is exactly a solitaire
turn on the sheet in play, and no rule of a turn is restated here. What a write adds in
the match (the turn passing to the next seat, the obligations passing to the next
player, the shared cell's owner, the scores and awards) is one kernel,
:func:`end_turn`, which :func:`apply_action` (the AEC env) and ``SeatVecEnv`` both call;
who won by how much is :func:`result`.

Two scoring modes:

* ``"separate"`` (default): each player has their own sheet of the ruleset; a player's
  turn is a solitaire turn on their sheet. ``answer`` (001 Odgovor): a write into an
  announce column by one player obliges the **next** player to write the same row of
  their own ``answer`` column in their next turn, if it is empty there
  (:func:`kernels.answer_obligation` on the next player's sheet); the writer's own
  sheet carries no obligation (the multiplayer reading replaces the solitaire one).
  Every player has the same number of turns, so the next player is still playing
  unless the game is over; the obligation can always be met (its cell is empty, the
  answer column writes at any roll) and while it stands the player may not announce
  (the solitaire rules of a forced answer). 003's opponent column (kind ``copy``): the
  write's row goes to the next player's sheet as the one row their ``copy`` column
  offers in their turn (:func:`kernels.copy_obligation`); it offers nothing in the
  game's first turn and any empty row once every other column of that sheet (but
  ``mandatory`` / ``after_row``) is full, so it never makes a dead end. The game ends
  when every sheet is full; a player's score is their sheet's score.
* ``"shared"`` (003): one sheet; players write on it in turn, each cell remembering who
  wrote it (``owner``). Each played column's total (its credited score, RULES.md §2)
  goes to the player with the most non-zero entries in it; on a tie, to the tied player
  who owns the first non-zero entry counting up from the bottom of the column (for two
  players exactly 003's rule); a column without a non-zero entry goes to nobody. An
  announcement binds the announcing player's own turn, as in solitaire; ``answer`` works
  as in solitaire, the obligation falling on the next turn, which is the next player's:
  001's multiplayer reading on one sheet; ``copy`` offers the row of the sheet's last
  write, which is the previous player's. The game's last turn (``last_turn_rolls``) is
  the sheet's last. Rulesets with a derived column (``maximal``, whose cells nobody
  writes) or with jokers (each player's own) are refused in shared mode.

Seating (000): each player rolls one die, the lowest starts (ties re-roll among the tied
players), then play passes to the next seat: player ``first``, ``first + 1``, ... modulo
the number of players.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from jamb_env.rules import game as core
from jamb_env.rules import kernels as K
from jamb_env.rules._jit import kernel
from jamb_env.rules.ruleset import Ruleset
from jamb_env.utils.errors import IllegalActionError, RulesetError

SCORING_MODES = ("separate", "shared")
MIN_PLAYERS, MAX_PLAYERS = 2, 5


@dataclass(frozen=True, slots=True)
class MatchState:
    """The full state of a multiplayer game (no dice stream: that is the env's).

    Attributes:
        sheets: the players' :class:`~jamb_env.rules.GameState` s, player ``p``'s at index
            ``p`` (``"separate"``), or the one shared sheet (``"shared"``).
        to_move: the player whose turn it is (the last one to write once the game is over).
        first: the player who started (seating).
        num_players: 2..5.
        owner: ``"shared"`` only: int8 ``(C, R)``, the player who wrote each cell, -1 where
            empty; None for separate sheets.
    """

    sheets: tuple[core.GameState, ...]
    to_move: int
    first: int
    num_players: int
    owner: np.ndarray | None = None

    @property
    def scoring(self) -> str:
        """ "separate" or "shared"."""
        return "separate" if self.owner is None else "shared"

    def copy(self) -> MatchState:
        """A deep copy (new arrays)."""
        return replace(
            self, sheets=tuple(st.copy() for st in self.sheets), owner=None if self.owner is None else self.owner.copy()
        )


def _rules(rules) -> Ruleset:
    if isinstance(rules, Ruleset):
        return rules
    if isinstance(rules, str):
        from jamb_env.rules.ruleset import load_ruleset

        return load_ruleset(rules)
    raise ValueError(f"rules must be a Ruleset or a preset name, got {type(rules).__name__}")


def _check_state(rules: Ruleset, ms) -> None:
    """ValueError unless ``ms`` is a MatchState whose sheets fit ``rules`` and whose fields
    the kernels may index with: ``num_players`` 2..5 with one sheet each (separate) or one
    sheet and an int8 ``owner`` of the sheet's shape with owners in -1..num_players - 1
    (shared), ``to_move`` and ``first`` players, every sheet in range (:func:`core.check_indices`)."""
    if not isinstance(ms, MatchState):
        raise ValueError(f"expected a MatchState (new_match), got {type(ms).__name__}")
    shape = (len(rules.columns), rules.num_rows)
    if not isinstance(ms.sheets, tuple) or any(
        not isinstance(st, core.GameState) or getattr(st.values, "shape", None) != shape for st in ms.sheets
    ):
        raise ValueError(
            f"this match's sheets are not sheets of ruleset {rules.name!r} ({shape[0]} columns x {shape[1]} rows)"
        )
    n = ms.num_players
    if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"match.num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {n!r}")
    if ms.owner is None:
        if len(ms.sheets) != n:
            raise ValueError(f"a match of {n} players on separate sheets has {n} sheets, got {len(ms.sheets)}")
    else:
        o = ms.owner
        if len(ms.sheets) != 1 or not isinstance(o, np.ndarray) or o.shape != shape or o.dtype != np.int8:
            raise ValueError(f"a shared-sheet match has one sheet and an int8 owner array of shape {shape}")
        if o.size and (int(o.min()) < -1 or int(o.max()) >= n):
            raise ValueError(f"match.owner names players outside -1..{n - 1}")
    for name in ("to_move", "first"):
        v = getattr(ms, name)
        if type(v) is not int and not isinstance(v, np.integer) or not 0 <= v < n:
            raise ValueError(f"match.{name} must be a player 0..{n - 1}, got {v!r}")
    for st in ms.sheets:
        core.check_indices(rules, st)


def check_match(rules: Ruleset, num_players, scoring) -> None:
    """Refuse an unplayable combination with a clear error.

    Raises:
        ValueError: ``num_players`` not an integer in 2..5, or an unknown ``scoring``.
        RulesetError: ``"shared"`` with a ruleset that has a derived column or jokers."""
    if (
        isinstance(num_players, bool)
        or not isinstance(num_players, (int, np.integer))
        or not MIN_PLAYERS <= num_players <= MAX_PLAYERS
    ):
        raise ValueError(f"num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
    if scoring not in SCORING_MODES:
        raise ValueError(f"scoring must be one of {SCORING_MODES}, got {scoring!r}")
    if scoring == "shared" and rules.derived_columns:
        raise RulesetError(
            f"ruleset {rules.name!r} has the derived column(s) {', '.join(rules.derived_columns)}, which nobody "
            f"writes, so a shared sheet cannot award them (RULES.md §6): play it with scoring='separate'"
        )
    if scoring == "shared" and rules.jokers:
        raise RulesetError(
            f"ruleset {rules.name!r} has jokers, which belong to a player's own sheet (RULES.md §6): "
            "play it with scoring='separate'"
        )


def seat(num_players: int, roll_die: Callable[[int], np.ndarray]) -> int:
    """The starting player (000): every player rolls one die, the lowest starts; tied
    lowest players roll again among themselves. ``roll_die(k)`` returns ``k`` faces.

    Raises ValueError: ``num_players`` not in 1..5, ``roll_die`` not returning ``k``
    integer faces in 1..6, or still tied after 1,000 rounds (a stuck die)."""
    if (
        isinstance(num_players, bool)
        or not isinstance(num_players, (int, np.integer))
        or not 1 <= num_players <= MAX_PLAYERS
    ):
        raise ValueError(f"num_players must be an integer in 1..{MAX_PLAYERS}, got {num_players!r}")
    tied = list(range(int(num_players)))
    for _ in range(1000):
        if len(tied) == 1:
            return tied[0]
        try:
            faces = np.asarray(roll_die(len(tied)))
        except TypeError as exc:
            raise ValueError(f"roll_die(k) must return k faces, got an error: {exc}") from exc
        if (
            faces.shape != (len(tied),)
            or not np.issubdtype(faces.dtype, np.integer)
            or faces.min() < 1
            or faces.max() > 6
        ):
            raise ValueError(
                f"roll_die({len(tied)}) must return {len(tied)} integer faces in 1..6, got {faces.tolist()!r}"
            )
        low = faces.min()
        tied = [p for p, f in zip(tied, faces.tolist()) if f == low]
    raise ValueError("the seating dice are still tied after 1,000 rounds: roll_die does not look random")


def new_match(rules: Ruleset, num_players: int, scoring: str = "separate", first: int = 0) -> MatchState:
    """Empty sheets, before the first roll, ``first`` to move (see :func:`seat`).
    ``rules``: a Ruleset or a preset name."""
    rules = _rules(rules)
    check_match(rules, num_players, scoring)
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first < num_players:
        raise ValueError(f"first must be a player 0..{num_players - 1}, got {first!r}")
    if scoring == "separate":
        return MatchState(
            tuple(core.new_game(rules) for _ in range(num_players)), int(first), int(first), int(num_players)
        )
    owner = np.full((len(rules.columns), rules.num_rows), -1, dtype=np.int8)
    return MatchState((core.new_game(rules),), int(first), int(first), int(num_players), owner)


def sheet_in_play(ms: MatchState) -> core.GameState:
    """The sheet the player to move plays on (theirs, or the shared one)."""
    return ms.sheets[0] if ms.owner is not None else ms.sheets[ms.to_move]


def is_over(rules: Ruleset, ms: MatchState) -> bool:
    """True once every sheet is full."""
    return all(core.is_over(rules, st) for st in ms.sheets)


def _with_sheet(ms: MatchState, st: core.GameState) -> MatchState:
    if ms.owner is not None:
        return replace(ms, sheets=(st,))
    sheets = list(ms.sheets)
    sheets[ms.to_move] = st
    return replace(ms, sheets=tuple(sheets))


def start_turn(rules: Ruleset, ms: MatchState, dice, *, check: bool = True) -> MatchState:
    """Roll 1 of the player to move (:func:`jamb_env.rules.start_turn` on their sheet)."""
    if check:
        _check_state(rules, ms)
    return _with_sheet(ms, core.start_turn(rules, sheet_in_play(ms), dice, check=check))


def legal_mask(rules: Ruleset, ms: MatchState) -> np.ndarray:
    """bool ``(num_actions,)``: the legal actions of the player to move (the solitaire
    mask of the sheet in play; all False before roll 1 or at the end)."""
    _check_state(rules, ms)
    return core.legal_mask(rules, sheet_in_play(ms), check=False)


def apply_action(
    rules: Ruleset, ms: MatchState, action: int, dice=None, *, check: bool = True
) -> tuple[MatchState, int]:
    """The player to move plays ``action`` (:func:`jamb_env.rules.apply_action` on the
    sheet in play). After a write, :func:`end_turn` passes the turn to the next player
    (who must then :func:`start_turn`, unless the game is over), with separate sheets the
    obligations to them, and on a shared sheet marks the cell's owner. Returns the new
    state and the points credited to the sheet in play (the writer's sheet score change;
    shared scores: :func:`scores`).

    Raises IllegalActionError / ValueError as :func:`jamb_env.rules.apply_action`, and
    IllegalActionError once the game is over. ``check=False`` (the env, on its own match
    state) also skips the check of the match's fields."""
    if check:
        _check_state(rules, ms)
    if is_over(rules, ms):
        raise IllegalActionError("the game is over")
    st, points = core.apply_action(rules, sheet_in_play(ms), action, dice, check=check)
    lay = core.layout(rules)
    a = int(action)
    ms = _with_sheet(ms, st)
    if not lay.is_write(a):
        return ms, points
    arr = _arrays(rules, ms)
    owner = None if ms.owner is None else ms.owner.copy()
    to_move, _ = end_turn(
        owner is not None,
        a - lay.write_offset,
        ms.to_move,
        ms.num_players,
        arr.values,
        arr.filled,
        arr.turn,
        arr.answer_due,
        arr.copy_row,
        arr.owner if owner is None else owner,
        rules.arrays,
        arr.scores,
        *arr.scratch,
    )
    sheets = tuple(
        s if (s.answer_due, s.copy_row) == (int(d), int(c)) else replace(s, answer_due=int(d), copy_row=int(c))
        for s, d, c in zip(ms.sheets, arr.answer_due, arr.copy_row)
    )
    return replace(ms, sheets=sheets, owner=owner, to_move=int(to_move)), points


# ---------------------------------------------------------------------------- kernels
@kernel
def match_scores(shared, values, filled, owner, num_players, ra, scores, counts, parts_out, cols, parts, tmp):
    """Every player's score into ``scores`` ``(num_players,)``: with separate sheets
    (``values``/``filled``: ``(P, C, R)``/``(P, C)``, player ``p``'s sheet at ``p``) each
    sheet's total (``kernels.sheet_parts``); on the shared sheet (``(1, C, R)``, ``owner``
    ``(C, R)``) each column's credited total to the player ``kernels.column_award`` gives
    it. Scratch: ``counts`` ``(P,)``, ``parts_out`` ``(5,)``, ``cols`` ``(C + 1,)``,
    ``parts`` ``(4,)``, ``tmp`` ``(R,)``."""
    if shared:
        K.sheet_parts(values[0], filled[0], ra, parts_out, cols, parts, tmp)
        for q in range(num_players):
            scores[q] = 0
        for c in range(ra.P[K.P_C]):
            winner = K.column_award(values[0, c], filled[0, c], owner[c], num_players, counts)
            if winner >= 0:
                scores[winner] += cols[c]
    else:
        for p in range(num_players):
            scores[p] = K.sheet_parts(values[p], filled[p], ra, parts_out, cols, parts, tmp)


@kernel
def end_turn(
    shared,
    cell,
    writer,
    num_players,
    values,
    filled,
    turn,
    answer_due,
    copy_row,
    owner,
    ra,
    scores,
    counts,
    parts_out,
    cols,
    parts,
    tmp,
):
    """The match's part of a write (RULES.md §6), after the solitaire write of ``cell`` by
    player ``writer`` on the sheet in play: the one step both the AEC env
    (:func:`apply_action`) and ``SeatVecEnv`` take.

    * shared sheet (``shared``; one sheet, index 0): ``owner[cell] = writer``; the
      obligations stay as the solitaire write set them (the next turn is the next
      player's, on the same sheet);
    * separate sheets (player ``p``'s at index ``p``): the writer owes nothing; the next
      player, unless the game is over, gets ``kernels.obligations`` of the write on
      their own sheet (the answer row, the copy row);
    * ``scores`` ``(num_players,)``: brought up to date (:func:`match_scores`; with
      separate sheets only the writer's changes);
    * the turn passes to the next seat unless every sheet is full.

    Returns (the player to move, whether the game is over); the player to move stays
    the writer once it is over."""
    R = ra.P[K.P_R]
    NC = ra.P[K.P_NUM_CELLS]
    nxt = (writer + 1) % num_players
    over = True
    for s in range(turn.shape[0]):
        if turn[s] < NC:
            over = False
    if shared:
        owner[cell // R, cell % R] = writer
        match_scores(True, values, filled, owner, num_players, ra, scores, counts, parts_out, cols, parts, tmp)
    else:
        answer_due[writer] = -1
        copy_row[writer] = -1
        if not over:
            answer_due[nxt], copy_row[nxt] = K.obligations(filled[nxt], cell, ra)
        scores[writer] = K.sheet_parts(values[writer], filled[writer], ra, parts_out, cols, parts, tmp)
    if over:
        return writer, True
    return nxt, False


class _MatchArrays(NamedTuple):
    values: np.ndarray
    filled: np.ndarray
    turn: np.ndarray
    answer_due: np.ndarray
    copy_row: np.ndarray
    owner: np.ndarray
    scores: np.ndarray
    scratch: tuple


def _arrays(rules: Ruleset, ms: MatchState) -> _MatchArrays:
    """The match's sheets as the arrays of :func:`end_turn` / :func:`match_scores` (new
    arrays; ``owner``: the match's own, or a -1 array with separate sheets)."""
    C, R, P = len(rules.columns), rules.num_rows, ms.num_players
    sh = ms.sheets
    owner = ms.owner if ms.owner is not None else np.full((C, R), -1, np.int8)
    scratch = (
        np.zeros(P, np.int64),
        np.zeros(5, np.int64),
        np.zeros(C + 1, np.int64),
        np.zeros(4, np.int64),
        np.zeros(R, np.int64),
    )
    return _MatchArrays(
        np.stack([s.values for s in sh]),
        np.stack([s.filled for s in sh]),
        np.array([s.turn for s in sh], np.int64),
        np.array([s.answer_due for s in sh], np.int64),
        np.array([s.copy_row for s in sh], np.int64),
        owner,
        np.zeros(P, np.int64),
        scratch,
    )


def column_awards(rules: Ruleset, ms: MatchState) -> list[tuple[int, int]]:
    """Shared sheet: per played column, (the player it goes to or -1, its credited total),
    by 003's rule (module docstring). Raises ValueError for separate sheets."""
    _check_state(rules, ms)
    if ms.owner is None:
        raise ValueError("column_awards is for the shared sheet (scoring='shared')")
    st = ms.sheets[0]
    totals = core.column_totals(rules, st)
    counts = np.zeros(ms.num_players, dtype=np.int64)
    return [
        (int(K.column_award(st.values[c], int(st.filled[c]), ms.owner[c], ms.num_players, counts)), totals[col])
        for c, col in enumerate(rules.columns)
    ]


def scores(rules: Ruleset, ms: MatchState) -> list[int]:
    """Each player's score (points): their sheet's, or the shared columns awarded to them
    (:func:`match_scores`)."""
    _check_state(rules, ms)
    a = _arrays(rules, ms)
    match_scores(ms.owner is not None, a.values, a.filled, a.owner, ms.num_players, rules.arrays, a.scores, *a.scratch)
    return [int(x) for x in a.scores]


class MatchResult(NamedTuple):
    """A multiplayer result, for each player (last axis), from the final scores:

    * ``win``: float64, 1 / k for each of the k players tied on top (a sole winner: 1),
      0 for the others; sums to 1 over the players;
    * ``rank``: float64, (players beaten - players beating them) / (N - 1): +1 / 0 / -1
      for two players, sums to 0, ties share (the ``win`` reward);
    * ``margin``: int64, own score - the best score of the others (the ``margin``
      reward; > 0 only for a sole winner)."""

    win: np.ndarray
    rank: np.ndarray
    margin: np.ndarray


def result(scores) -> MatchResult:
    """The :class:`MatchResult` of ``scores`` (points): ``(N,)`` for one game or ``(k, N)``
    for k games (then every field is ``(k, N)``). The one definition of who won by how
    much: the env's ``win`` and ``margin`` rewards read it, and so should evaluations.

    Raises ValueError for fewer than 2 players."""
    s = np.asarray(scores, dtype=np.int64)
    n = s.shape[-1] if s.ndim else 0
    if s.ndim not in (1, 2) or n < 2:
        raise ValueError(f"a match result needs the scores of 2 or more players, got {np.asarray(scores).tolist()!r}")
    gt = (s[..., :, None] > s[..., None, :]).sum(axis=-1)
    lt = (s[..., :, None] < s[..., None, :]).sum(axis=-1)
    top = s == s.max(axis=-1, keepdims=True)
    others = np.where(np.eye(n, dtype=bool), np.iinfo(np.int64).min, s[..., None, :]).max(axis=-1)
    return MatchResult(win=top / top.sum(axis=-1, keepdims=True), rank=(gt - lt) / (n - 1), margin=s - others)


def margins(scores, players) -> np.ndarray:
    """int64 ``(k,)``: for each row of ``scores`` (``(k, N)`` points) the score of player
    ``players[i]`` minus the best score of the others (:func:`result`'s ``margin``)."""
    s = np.asarray(scores, dtype=np.int64)
    return result(s).margin[np.arange(len(s)), np.asarray(players, dtype=np.int64)]


def ranks_reward(final_scores) -> list[float]:
    """The ``win`` reward at the end (:func:`result`'s ``rank``): for each player,
    (players they beat - players who beat them) / (N - 1). +1 / 0 / -1 for two players;
    sums to zero; ties share."""
    s = list(final_scores)
    if len(s) < 2:
        raise ValueError(f"ranks_reward needs the scores of 2 or more players, got {s!r}")
    return [float(x) for x in result(s).rank]
