"""The multiplayer game as each seat sees it (RULES.md §6; the module docstring of
:mod:`jamb_env.multiplayer` says every segment): the ``"observation"`` vector and its
bounds, the global state vector (``state()``), and :class:`SeatView`, the view of one
player that the solitaire agents read. Arrays only, no PettingZoo: the AEC env
(:mod:`jamb_env.multiplayer`), ``SeatVecEnv`` and the OpenSpiel game share them, and
:mod:`jamb_env.multiplayer` re-exports every name.
"""

from __future__ import annotations

import numpy as np

from jamb_env.engine import doors
from jamb_env.engine.observation import encoder
from jamb_env.rules import Ruleset
from jamb_env.rules import game as core
from jamb_env.rules import match as M


def observation_size(rules: Ruleset, num_players: int, scoring: str) -> int:
    """Length of the multiplayer ``"observation"`` vector (module docstring): the
    solitaire observation, the others' sheet features (``"separate"``) or every player's
    cell plane (``"shared"``), the player to move and the scores."""
    enc = encoder(rules)
    others = (
        (num_players - 1) * enc.sheet_size
        if scoring == "separate"
        else num_players * len(rules.columns) * rules.num_rows
    )
    return enc.size + others + 2 * num_players


def observation_bounds(rules: Ruleset, num_players: int, scoring: str) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``(low, high)`` of the multiplayer ``"observation"`` vector: the solitaire
    observation's bounds, then those of the compact sheet features for each opponent's
    sheet (``"separate"``) or 0 / 1 for the cell planes (``"shared"``), 0 / 1 for the
    player to move, -1 / 1 for the scores."""
    enc, N = encoder(rules), num_players
    if scoring == "separate":  # the opponents' sheet features have the solitaire bounds of those segments
        lo, hi = _sheet_bounds(enc)
        other_low, other_high = np.tile(lo, N - 1), np.tile(hi, N - 1)
    else:
        cells = N * len(rules.columns) * rules.num_rows
        other_low, other_high = np.zeros(cells, np.float32), np.ones(cells, np.float32)
    low = np.concatenate([enc.low, other_low, np.zeros(N, np.float32), np.full(N, -1.0, np.float32)])
    high = np.concatenate([enc.high, other_high, np.ones(N, np.float32), np.ones(N, np.float32)])
    return low.astype(np.float32), high.astype(np.float32)


def _sheet_bounds(enc) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the compact sheet features (the solitaire observation's segments)."""
    lo = np.empty(enc.sheet_size, np.float32)
    hi = np.empty(enc.sheet_size, np.float32)
    at = 0
    for start, size in enc.arrays.blocks:
        lo[at : at + size], hi[at : at + size] = enc.low[start : start + size], enc.high[start : start + size]
        at += size
    return lo, hi


def state_segments(rules: Ruleset, num_players: int, scoring: str) -> dict[str, slice]:
    """The segments of the global state vector (module docstring), in order: ``sheet_0``
    .. ``sheet_{N-1}`` (separate sheets) or ``sheet`` and ``owner_0`` .. ``owner_{N-1}``
    (shared), then ``to_move`` and ``scores``; each a slice of :func:`match_state`.

    Raises ValueError / RulesetError for an unplayable combination
    (:func:`jamb_env.rules.match.check_match`)."""
    M.check_match(rules, num_players, scoring)
    D, CR = encoder(rules).size, len(rules.columns) * rules.num_rows
    sizes = (
        [(f"sheet_{p}", D) for p in range(num_players)]
        if scoring == "separate"
        else [("sheet", D)] + [(f"owner_{p}", CR) for p in range(num_players)]
    )
    sizes += [("to_move", num_players), ("scores", num_players)]
    out, at = {}, 0
    for name, size in sizes:
        out[name] = slice(at, at + size)
        at += size
    return out


def state_size(rules: Ruleset, num_players: int, scoring: str) -> int:
    """Length of the global state vector (:func:`match_state`)."""
    return list(state_segments(rules, num_players, scoring).values())[-1].stop


def state_bounds(rules: Ruleset, num_players: int, scoring: str) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``(low, high)`` of the global state vector: the solitaire observation's
    bounds for each sheet, 0 / 1 for the owner planes and the player to move, -1 / 1 for
    the scores."""
    enc = encoder(rules)
    segments = state_segments(rules, num_players, scoring)
    low = np.zeros(state_size(rules, num_players, scoring), np.float32)
    high = np.ones_like(low)
    for name, at in segments.items():
        if name.startswith("sheet"):
            low[at], high[at] = enc.low, enc.high
    low[segments["scores"]] = -1.0
    return low, high


def match_state(rules: Ruleset, ms: M.MatchState, scores=None) -> np.ndarray:
    """float32 ``(state_size,)``: the global state vector of ``ms`` (module docstring),
    each sheet encoded by the solitaire observation encoder with its own legal mask.
    ``scores``: every player's score (points) if the caller has them, else
    :func:`jamb_env.rules.match.scores`.

    Raises ValueError: ``ms`` is not a MatchState of ``rules``, or ``scores`` is not one
    integer per player."""
    M._check_state(rules, ms)
    enc, P = encoder(rules), ms.num_players
    scores = M.scores(rules, ms) if scores is None else scores
    if np.shape(scores) != (P,) or not all(doors.integer(x) is not None for x in np.asarray(scores).tolist()):
        raise ValueError(f"scores must be {P} integers (points), one per player, got {scores!r}")
    parts = [enc.encode(st, mask=core.legal_mask(rules, st)) for st in ms.sheets]
    if ms.owner is not None:
        parts.append((ms.owner.reshape(1, -1) == np.arange(P)[:, None]).astype(np.float32).ravel())
    turn = np.zeros(P, np.float32)
    turn[ms.to_move] = 1.0
    parts += [turn, np.asarray(scores, np.float32) / np.float32(_score_bound(rules))]
    return np.concatenate(parts, dtype=np.float32)


def seat_observations(
    solo: np.ndarray,
    seats: np.ndarray,
    to_move: np.ndarray,
    scores: np.ndarray,
    bound,
    *,
    sheets: np.ndarray | None = None,
    owner: np.ndarray | None = None,
) -> np.ndarray:
    """float32 ``(k, D)``: the multiplayer ``"observation"`` (module docstring) of player
    ``seats[k]`` in k games, the one assembly of the AEC env (:meth:`raw_env.observe`)
    and ``SeatVecEnv``, from

    * ``solo``: float32 ``(k, D_solo)``, the solitaire observation of the sheet the
      observer plays on (theirs, or the shared one);
    * ``sheets`` (separate sheets): float32 ``(k, P, F)``, every player's compact sheet
      features by player index, or ``owner`` (shared): int8 ``(k, C, R)``, who wrote
      each cell;
    * ``to_move``: ``(k,)`` the player to move; ``scores``: ``(k, P)`` every player's
      score (points), divided by ``bound`` (float32)."""
    k, P = scores.shape
    seats = np.asarray(seats, np.int64)
    rel = (seats[:, None] + np.arange(P)[None, :]) % P  # players in seat order from the observer
    rows = np.arange(k)
    parts = [solo]
    if owner is None:
        parts.append(sheets[rows[:, None], rel[:, 1:]].reshape(k, -1))
    else:
        parts.append((owner.reshape(k, 1, -1) == rel[:, :, None]).astype(np.float32).reshape(k, -1))
    turn = np.zeros((k, P), np.float32)
    turn[rows, (np.asarray(to_move, np.int64) - seats) % P] = 1.0
    parts.append(turn)
    parts.append(np.asarray(scores)[rows[:, None], rel].astype(np.float32) / np.float32(bound))
    return np.concatenate(parts, axis=1, dtype=np.float32)


def match_observation(rules: Ruleset, ms: M.MatchState, player: int, scores) -> np.ndarray:
    """float32 ``(observation_size,)``: the ``"observation"`` of ``player`` in ``ms``
    (module docstring; :meth:`raw_env.observe`), ``scores`` every player's score (points).
    The caller vouches for ``ms`` (a state of ``rules``) and ``player``."""
    enc = encoder(rules)
    own = ms.sheets[0] if ms.owner is not None else ms.sheets[player]
    solo = enc.encode(own, mask=core.legal_mask(rules, own, check=False))[None]  # the turn features read the mask
    scores = np.array([scores])
    if ms.owner is not None:
        return seat_observations(solo, [player], [ms.to_move], scores, _score_bound(rules), owner=ms.owner[None])[0]
    sheets = np.zeros((1, ms.num_players, enc.sheet_size), np.float32)
    for q, st in enumerate(ms.sheets):
        if q != player:  # the observer's own sheet is in its solitaire observation
            sheets[0, q] = enc.sheet_features(st)
    return seat_observations(solo, [player], [ms.to_move], scores, _score_bound(rules), sheets=sheets)[0]


def _score_bound(rules: Ruleset) -> float:
    """A bound on the absolute value of a player's score (for scaling): every column at
    its row maxima, bonus and largest difference."""
    enc = encoder(rules)
    upper_max, _, diff_max = enc.arrays.fconst
    per_column = float(rules.row_max.sum()) + rules.bonus_points + rules.bonus_per_point * upper_max + diff_max
    return max(per_column * (len(rules.columns) + len(rules.derived_columns)), 1.0)


class SeatView:
    """One player's view for the solitaire agents: ``ruleset``, ``game`` (a copy of the
    :class:`~jamb_env.rules.GameState` the player plays on), ``score`` and
    ``action_masks()`` (bool ``(A,)``); and the seat in the match, for agents that play
    it (e.g. the heuristic baselines on a shared sheet): ``player`` (the player index),
    ``num_players``, ``scoring`` ("separate" or "shared") and ``owner`` (a copy of the
    shared sheet's int8 ``(C, R)`` writer of each cell, -1 where empty; None for separate
    sheets). Without them (the defaults: player 0 of 1, ``scoring`` None, no ``owner``)
    the view carries no match information and agents play it as a solitaire sheet.

    Raises:
        ValueError: ``scoring="shared"`` without ``owner``, an unknown ``scoring``, or a
            ``player`` outside ``0..num_players - 1``.
    """

    def __init__(
        self,
        ruleset: Ruleset,
        game,
        score: int,
        mask: np.ndarray,
        *,
        player: int = 0,
        num_players: int = 1,
        scoring: str | None = None,
        owner: np.ndarray | None = None,
    ):
        if scoring not in (None, *M.SCORING_MODES):
            raise ValueError(f"scoring must be None or one of {M.SCORING_MODES}, got {scoring!r}")
        if scoring == "shared" and owner is None:
            raise ValueError("a shared-sheet view needs the owner of each cell (owner=)")
        n = doors.integer(num_players)
        if n is None or not 1 <= n <= M.MAX_PLAYERS:
            raise ValueError(f"num_players must be an integer in 1..{M.MAX_PLAYERS}, got {num_players!r}")
        if doors.integer(player) is None or not 0 <= doors.integer(player) < n:
            raise ValueError(f"player must be an integer in 0..{n - 1}, got {player!r}")
        if doors.integer(score) is None:
            raise ValueError(f"score must be an integer (points), got {score!r}")
        shape = (len(ruleset.columns), ruleset.num_rows)
        if owner is not None and np.shape(owner) != shape:
            raise ValueError(f"owner must have shape {shape} (columns x rows), got {np.shape(owner)}")
        if not isinstance(game, core.GameState):
            raise ValueError(f"game must be a GameState, got {type(game).__name__}")
        mask = np.asarray(mask)
        if mask.shape != (core.layout(ruleset).num_actions,):
            raise ValueError(f"mask must have shape ({core.layout(ruleset).num_actions},), got {mask.shape}")
        self.ruleset, self.game, self.score, self._mask = (
            ruleset,
            game.copy(),
            doors.integer(score),
            mask.astype(bool, copy=True),
        )
        self.player, self.num_players, self.scoring = doors.integer(player), n, scoring
        self.owner = None if owner is None else np.array(owner, dtype=np.int8, copy=True)

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()

    def legal_mask(self) -> np.ndarray:
        return core.legal_mask(self.ruleset, self.game)
