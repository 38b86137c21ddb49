"""greedy and expectimax on the shared sheet (003, RULES.md §6): they value a write by its
effect on the match standing (who is awarded each column), and play separate sheets and
solitaire exactly as before."""

from __future__ import annotations

import numpy as np
import pytest

from agents.evaluation.matches import play_match, round_robin
from agents.heuristic import ExpectimaxAgent, GreedyAgent, _SharedStanding, replace_state, shared_model
from jamb_env import load_ruleset
from jamb_env import multiplayer as mp
from jamb_env.rules import action_to_string, column_totals, layout, legal_mask
from jamb_env.rules import match as M
from tests.helpers import fill, sheet, slow_after

RULES = load_ruleset("classic")
C, R = len(RULES.columns), RULES.num_rows


def _owner(cells: dict) -> np.ndarray:
    owner = np.full((C, R), -1, dtype=np.int8)
    for (col, row), p in cells.items():
        owner[RULES.columns.index(col), RULES.rows.index(row)] = p
    return owner


def _view(st, owner=None, player=0, num_players=2, scoring="shared"):
    return mp.SeatView(
        RULES, st, 0, legal_mask(RULES, st), player=player, num_players=num_players, scoring=scoring, owner=owner
    )


def _act(agent, view) -> str:
    return action_to_string(RULES, agent.act(view, None, view.action_masks()))


# Player 1 holds the free column on the tie-break (6 : 6 non-zero entries, player 1 owns the
# bottom one); only its ``min`` is empty. ``up`` has its jamb (a zero) so ``poker`` is next.
FREE = {
    ("free", "ones"): (3, 0),
    ("free", "twos"): (6, 1),
    ("free", "threes"): (9, 0),
    ("free", "fours"): (12, 1),
    ("free", "fives"): (15, 0),
    ("free", "sixes"): (18, 1),
    ("free", "max"): (28, 0),
    ("free", "trilling"): (28, 1),
    ("free", "straight"): (45, 0),
    ("free", "full"): (38, 0),
    ("free", "poker"): (44, 1),
    ("free", "jamb"): (55, 1),
    ("up", "jamb"): (0, 1),
}


def _contest(free: dict):
    written = {cell: value for cell, (value, _) in free.items()}
    st = sheet(RULES, written, dice=[6, 6, 6, 6, 5], roll=3)  # the last roll: a write is forced
    return st, _owner({cell: p for cell, (_, p) in free.items()})


def test_a_write_that_wins_a_column_beats_more_points():
    st, owner = _contest(FREE)
    before = M.MatchState((st,), 0, 0, 2, owner)
    assert M.column_awards(RULES, before)[RULES.columns.index("free")][0] == 1
    # solitaire reading: poker in up (64 points) beats min in free (29)
    assert _act(GreedyAgent(), _view(st, scoring=None, num_players=1, owner=None)) == "write up/poker"
    assert _act(GreedyAgent(shared_aware=False), _view(st, owner)) == "write up/poker"
    assert _act(ExpectimaxAgent(shared_aware=False), _view(st, owner)) == "write up/poker"
    # shared: the min makes it 7 : 6, and the free column (about 330 points) changes hands
    assert _act(GreedyAgent(), _view(st, owner)) == "write free/min"
    assert _act(ExpectimaxAgent(), _view(st, owner)) == "write free/min"
    after, _ = M.apply_action(RULES, before, layout(RULES).write_offset + RULES.cell("free", "min"))
    assert M.column_awards(RULES, after)[RULES.columns.index("free")][0] == 0


def test_more_points_win_over_a_column_worth_nothing():
    # the same contest, but the free column is all zeros: the min would win it alone, but the
    # column is worth nothing (the min counts only in ones x (max - min), and ones is 0), while
    # poker in the open up column scores 64 and raises the count there
    st, owner = _contest({cell: (0, p) for cell, (_, p) in FREE.items()})
    standing = _SharedStanding(RULES, st, owner, 0, 2)
    c, r, v = RULES.columns.index("free"), RULES.rows.index("min"), np.array([29])
    assert np.array_equal(standing.ownership_after(c, r)[0], [1.0, 0.0])  # it would win the column ...
    assert standing.value(c, r, v, standing.par_gains(c, r, v))[0] == 0.0  # ... worth 0 points
    assert _act(GreedyAgent(), _view(st, owner)) == "write up/poker"
    assert _act(ExpectimaxAgent(), _view(st, owner)) == "write up/poker"


def test_points_in_a_column_the_opponent_owns_help_the_opponent():
    # free is player 1's for sure (7 non-zero entries of 13); its max is the last cell
    free = {("free", r): (v, 1) for r, v in zip(RULES.rows, [3, 6, 9, 12, 15, 18, 0, 10, 28, 0, 0, 0, 0]) if r != "max"}
    written = {cell: value for cell, (value, _) in free.items()}
    st = sheet(RULES, written, dice=[6, 6, 6, 6, 5], roll=3)
    standing = _SharedStanding(RULES, st, _owner({cell: p for cell, (_, p) in free.items()}), 0, 2)
    c, r = RULES.columns.index("free"), RULES.rows.index("max")
    v = np.array([15, 22, 29])
    values = standing.value(c, r, v, standing.par_gains(c, r, v))
    assert values[0] > values[1] > values[2]  # a larger max there only adds to the opponent's column
    assert np.allclose(values, -standing.par_gains(c, r, v))  # point for point


# ---------------------------------------------------------------------------- the ownership model
def test_the_tie_priority_is_read_off_column_awards():
    # RULES.md §6 / match.py: a tie goes to the lowest non-zero entry, counting from the bottom
    assert shared_model(RULES).priority == list(reversed(range(R)))


@pytest.mark.parametrize("players", [2, 3])
def test_the_model_on_full_columns_is_the_core_award(players):
    rng = np.random.default_rng(0)
    model = shared_model(RULES)
    for _ in range(300):
        values = rng.integers(0, 3, R) * rng.integers(1, 20, R)
        owner = rng.integers(0, players, R).astype(np.int8)
        filled = (1 << R) - 1
        st = sheet(RULES)
        vals, fl = st.values.copy(), st.filled.copy()
        vals[0], fl[0] = values, filled
        own = np.full((C, R), -1, dtype=np.int8)
        own[0] = owner
        winner = M.column_awards(RULES, M.MatchState((replace_state(st, vals, fl),), 0, 0, players, own))[0][0]
        # the dynamic programme itself (not the full-column shortcut): every pair decided
        who = [int(owner[r]) if values[r] != 0 else -1 for r in model.priority]
        beat = np.ones((players, players))
        for p in range(players):
            for q in range(p + 1, players):
                beat[p, q], beat[q, p] = model.beats(tuple(1 if w == p else 2 if w == q else 3 for w in who), players)
        expected = np.zeros(players)
        if winner >= 0:
            expected[winner] = 1.0
        assert np.array_equal(beat.prod(axis=1), expected)
        assert np.array_equal(model.win_chances(values, filled, owner, players), expected)


def test_win_chances_are_probabilities_and_counts_help():
    model = shared_model(RULES)
    empty = np.zeros(R, dtype=np.int64)
    owner = np.full(R, -1, dtype=np.int8)
    w0 = model.win_chances(empty, 0, owner, 2)
    assert np.isclose(w0[0], w0[1]) and 0.99 < w0.sum() <= 1.0 + 1e-12  # an empty column: even, almost surely awarded
    values, o = empty.copy(), owner.copy()
    values[12], o[12] = 50, 0  # player 0's jamb: one entry ahead, and the tie-break
    w1 = model.win_chances(values, 1 << 12, o, 2)
    assert w1[0] > w0[0] > w1[1] and abs(w1.sum() - 1.0) < 1e-12
    for players in (3, 5):
        w = model.win_chances(values, 1 << 12, o, players)
        assert np.all(w >= 0) and w.sum() <= 1.0 + 1e-12 and w[0] == w.max()


# ---------------------------------------------------------------------------- unchanged elsewhere
# greedy / expectimax actions recorded with agents/heuristic.py before shared-sheet valuation
FIXED = [
    (
        dict(written={("down", "ones"): 3, ("down", "twos"): 6, ("free", "jamb"): 0}, dice=[6, 6, 6, 2, 3], roll=1),
        28,
        28,
    ),
    (
        dict(written={("down", "ones"): 3, ("up", "jamb"): 55, ("up", "poker"): 44}, dice=[4, 4, 4, 4, 1], roll=2),
        30,
        30,
    ),
    (dict(written={**fill(RULES, ["down"], None, 0), ("free", "sixes"): 24}, dice=[1, 2, 3, 4, 5], roll=3), 80, 80),
    (dict(written={("free", "max"): 27, ("free", "min"): 7}, dice=[2, 2, 3, 5, 5], roll=1), 24, 24),
    (dict(written={("down", "ones"): 3, ("down", "twos"): 6}, dice=[3, 3, 3, 5, 6], roll=3), 79, 47),
    (
        dict(written={("up", "jamb"): 0, ("up", "poker"): 0, ("free", "threes"): 9}, dice=[5, 5, 5, 5, 2], roll=3),
        82,
        82,
    ),
    (dict(written={**fill(RULES, ["down", "up"], None, 5), ("free", "ones"): 2}, dice=[6, 6, 6, 6, 6], roll=1), 83, 83),
    (dict(written={**fill(RULES, ["down", "up", "free"], None, 5)}, dice=[1, 1, 2, 2, 3], roll=1), 33, 32),
]


@pytest.mark.parametrize("state, greedy, expectimax", FIXED)
def test_solitaire_and_separate_sheets_play_as_before(state, greedy, expectimax):
    st = sheet(RULES, **state)
    views = [_view(st, scoring=None, num_players=1), _view(st, scoring="separate", player=1, num_players=3)]
    for view in views:
        assert GreedyAgent().act(view, None, view.action_masks()) == greedy
        assert ExpectimaxAgent().act(view, None, view.action_masks()) == expectimax
    # and unaware agents on a shared sheet play the solitaire reading of it
    written = (st.filled[:, None] >> np.arange(R)[None, :]) & 1
    shared = _view(st, owner=np.where(written == 1, 0, -1).astype(np.int8))
    assert GreedyAgent(shared_aware=False).act(shared, None, shared.action_masks()) == greedy
    assert ExpectimaxAgent(shared_aware=False).act(shared, None, shared.action_masks()) == expectimax


# ---------------------------------------------------------------------------- the view and a match
def test_seat_view_says_the_seat():
    env = mp.raw_env(ruleset="classic", num_players=3, scoring="shared")
    env.reset(seed=1)
    for _ in range(40):  # a few turns
        agent = env.agent_selection
        view = env.seat_view(agent)
        assert (view.player, view.num_players, view.scoring) == (int(agent[-1]), 3, "shared")
        assert np.array_equal(view.owner, env.match.owner) and view.owner is not env.match.owner
        env.step(GreedyAgent().act(view, None, view.action_masks()))
    view.owner[:] = 7  # a copy
    assert not (env.match.owner == 7).any()
    sep = mp.raw_env(ruleset="classic", num_players=2)
    sep.reset(seed=1)
    view = sep.seat_view(sep.agent_selection)
    assert view.scoring == "separate" and view.owner is None and view.num_players == 2
    with pytest.raises(ValueError, match="owner"):
        mp.SeatView(RULES, sheet(RULES), 0, legal_mask(RULES, sheet(RULES)), scoring="shared")
    with pytest.raises(ValueError, match="player"):
        mp.SeatView(RULES, sheet(RULES), 0, legal_mask(RULES, sheet(RULES)), player=2, num_players=2)


@pytest.mark.parametrize("players", slow_after([2, 3]))
def test_a_short_shared_match(players):
    agents = [GreedyAgent(), ExpectimaxAgent(), GreedyAgent(shared_aware=False)][:players]
    res = play_match("classic", agents, seed=4, scoring="shared")
    assert res["steps"] > C * R and len(res["scores"]) == players and sum(res["scores"]) > 0
    rr = round_robin("classic", ["greedy", "expectimax"], games=2, scoring="shared")
    assert len(rr.games) == 4 and rr.pairings[0].games == 4


def test_the_expected_totals_are_the_core_totals_of_a_full_sheet():
    st = sheet(RULES, fill(RULES, RULES.columns, None, 4))
    owner = np.zeros((C, R), dtype=np.int8)
    standing = _SharedStanding(RULES, st, owner, 0, 2)
    totals = column_totals(RULES, st)
    assert standing.F.tolist() == [float(totals[col]) for col in RULES.columns]
    assert standing.standing == sum(totals.values())  # player 0 owns every column
