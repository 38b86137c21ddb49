"""Multiplayer evaluation (agents/evaluation/matches.py) and ``jamb-evaluate --players``."""

import csv
import math

import pytest

from agents import load
from agents.evaluation.matches import play_match, round_robin, write_match_csvs


class Recorder:
    """Wraps a policy; remembers the dice and sheet turn of every decision it makes."""

    def __init__(self, policy):
        self.policy, self.seen = policy, []

    def act(self, view, observation, mask):
        self.seen.append((view.game.turn, view.game.roll, tuple(view.game.dice.tolist())))
        return self.policy.act(view, observation, mask)


def run_cli(argv, capsys):
    from agents.apps.cli.evaluate import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_seat_orders_of_a_seed_are_played_on_the_same_dice():
    a, b = Recorder(load("greedy")), Recorder(load("random", seed=1))
    one = play_match("classic", [a, b], seed=20_000_003)
    first_a = a.seen[0] if one["first"] == 0 else b.seen[0]
    a2, b2 = Recorder(load("greedy")), Recorder(load("random", seed=1))
    two = play_match("classic", [b2, a2], seed=20_000_003)
    first_b = b2.seen[0] if two["first"] == 0 else a2.seen[0]
    assert one["first"] == two["first"]  # the seating dice come from the seed, not the agents
    assert first_a == first_b and first_a[:2] == (0, 1)  # the first roll of the game is the same
    # one deterministic policy in both seats: the very same game, whoever is called A
    g1, g2 = Recorder(load("greedy")), Recorder(load("greedy"))
    s = play_match("classic", [g1, g2], seed=7)
    h1, h2 = Recorder(load("greedy")), Recorder(load("greedy"))
    t = play_match("classic", [h2, h1], seed=7)
    assert s == t and g1.seen == h2.seen and g2.seen == h1.seen


def test_play_match_checks_its_arguments():
    with pytest.raises(ValueError, match="num_players must be an integer in 2..5"):
        play_match("classic", [load("greedy")], seed=0)
    with pytest.raises(ValueError, match="one policy per seat"):
        play_match("classic", [load("greedy")] * 2, seed=0, num_players=3)


def test_rows_pair_both_seat_orders_of_each_seed():
    rr = round_robin("classic", ["random", "greedy"], games=3)
    assert [(g["seed"], g["order"]) for g in rr.games] == [(20_000_000 + k, o) for k in range(3) for o in (0, 1)]
    for o0, o1 in zip(rr.games[::2], rr.games[1::2]):
        assert (o0["seat_0"], o0["seat_1"]) == ("random", "greedy") and (o1["seat_0"], o1["seat_1"]) == (
            "greedy",
            "random",
        )
        assert o0["first_seat"] == o1["first_seat"] and o0["first_agent"] != o1["first_agent"]
        for g in (o0, o1):
            top = max(g["score_0"], g["score_1"])
            assert g["winner"] == (
                "" if g["score_0"] == g["score_1"] else g[f"seat_{[g['score_0'], g['score_1']].index(top)}"]
            )
    p = rr.pairings[0]
    assert (p.a, p.b, p.units, p.games, p.wins_a + p.wins_b + p.ties) == ("random", "greedy", 3, 6, 6)


def test_jobs_and_chunks_do_not_change_the_numbers():
    one = round_robin("classic", ["random", "greedy"], games=4, jobs=1)
    two = round_robin("classic", ["random", "greedy"], games=4, jobs=2, chunk=1)
    assert one.games == two.games and one.pairings == two.pairings and one.ratings == two.ratings


def test_greedy_against_itself_is_exactly_even():
    """Same dice and the same deterministic policy in both seat orders: the two games of a
    seed are the same game with the names swapped, so every paired unit is exactly 0.5."""
    rr = round_robin("classic", ["greedy", "greedy"], games=5)
    p = rr.pairings[0]
    assert (p.a, p.b) == ("greedy#1", "greedy#2")
    assert p.win_rate == 0.5 and p.margin == 0.0 and p.margin_ci95 == 0.0
    assert (p.win_low, p.win_high) == pytest.approx(wilson_by_search(0.5, 5))  # a proportion's interval keeps its width
    for o0, o1 in zip(rr.games[::2], rr.games[1::2]):
        assert (o0["score_0"], o0["score_1"], o0["steps"]) == (o1["score_0"], o1["score_1"], o1["steps"])


@pytest.mark.slow  # 40 classic games; test_greedy_against_itself_is_exactly_even keeps a round robin fast
def test_random_against_itself_is_even_within_the_interval():
    p = round_robin("classic", ["random", "random"], games=20).pairings[0]
    assert p.win_low < 0.5 < p.win_high
    assert abs(p.margin) <= p.margin_ci95


@pytest.mark.slow  # 40 classic games; the sweep below shows greedy beating random fast
def test_greedy_beats_random_with_an_interval_above_one_half():
    rr = round_robin("classic", ["random", "greedy"], games=20)
    p = rr.pairings[0]
    assert (p.a, p.b, p.units, p.games) == ("random", "greedy", 20, 40)
    assert p.win_high < 0.5 and p.margin + p.margin_ci95 < 0  # random's view: greedy wins
    assert [r.agent for r in rr.ratings] == ["greedy", "random"]
    assert rr.ratings[0].ordinal > rr.ratings[1].ordinal and all(r.games == 40 for r in rr.ratings)


def test_three_players_rotate_the_seats_on_each_seed():
    rr = round_robin("classic", ["random", "greedy", "random"], games=2, players=3, scoring="shared")
    assert rr.labels == ["random#1", "greedy", "random#2"]
    for k in range(2):
        same = [g for g in rr.games if g["seed"] == 20_000_000 + k]
        assert len(same) == 3 and len({g["first_seat"] for g in same}) == 1
        for s in range(3):  # every agent in every seat once per seed
            assert sorted(g[f"seat_{s}"] for g in same) == sorted(rr.labels)
    assert {(p.a, p.b) for p in rr.pairings} == {
        ("random#1", "greedy"),
        ("random#1", "random#2"),
        ("greedy", "random#2"),
    }
    assert all(p.units == 2 and p.games == 6 for p in rr.pairings)


def test_round_robin_refuses_bad_arguments():
    from jamb_env.utils.errors import RulesetError

    with pytest.raises(ValueError, match="at least 2 agents"):
        round_robin("classic", ["greedy"], games=2)
    with pytest.raises(ValueError, match="exactly 3 agents"):
        round_robin("classic", ["greedy", "random"], games=2, players=3)
    with pytest.raises(ValueError, match="num_players"):
        round_robin("classic", ["greedy", "random"], games=2, players=6)
    with pytest.raises(RulesetError, match="derived column"):
        round_robin("nokaut", ["greedy", "random"], games=2, scoring="shared")
    with pytest.raises(ValueError, match="unknown agent"):
        round_robin("classic", ["greedy", "wizard"], games=2)


def test_a_solitaire_ppo_model_plays_a_seat():
    """The policies get the solitaire part of the observation, so the shipped models play."""
    res = play_match("classic", [load("ppo", ruleset="classic"), load("greedy")], seed=3)
    assert len(res["scores"]) == 2 and res["scores"][0] > 0


def test_cli_writes_the_match_tables(tmp_path, capsys):
    prefix = tmp_path / "out" / "cls"
    code, out, err = run_cli(
        [
            "--ruleset",
            "classic",
            "--agents",
            "random",
            "greedy",
            "--players",
            "2",
            "--games",
            "3",
            "--jobs",
            "2",
            "--no-progress",
            "--out",
            str(prefix),
        ],
        capsys,
    )
    assert code == 0, err
    assert "| random | greedy | 3 | 6 |" in out and "| rank | agent | mu | sigma | ordinal |" in out
    with open(tmp_path / "out" / "cls_matches.csv") as f:
        pairs = list(csv.DictReader(f))
    assert [(p["agent_a"], p["agent_b"], p["seeds"], p["games"], p["scoring"]) for p in pairs] == [
        ("random", "greedy", "3", "6", "separate")
    ]
    with open(tmp_path / "out" / "cls_match_games.csv") as f:
        games = list(csv.DictReader(f))
    assert len(games) == 6 and {
        "seed",
        "order",
        "seat_0",
        "seat_1",
        "first_seat",
        "first_agent",
        "score_0",
        "score_1",
        "winner",
    } <= set(games[0])
    with open(tmp_path / "out" / "cls_match_ratings.csv") as f:
        assert [r["agent"] for r in csv.DictReader(f)] == ["greedy", "random"]
    folder = tmp_path / "folder"
    folder.mkdir()
    code, out, err = run_cli(
        [
            "--ruleset",
            "classic",
            "--agents",
            "random",
            "greedy",
            "--players",
            "2",
            "--scoring",
            "shared",
            "--games",
            "2",
            "--no-progress",
            "--out",
            str(folder),
        ],
        capsys,
    )
    assert code == 0, err
    assert (folder / "classic_2p_shared_matches.csv").is_file() and (
        folder / "classic_2p_shared_match_games.csv"
    ).is_file()
    assert "shared sheet" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agents", "random", "greedy", "--players", "1"], "--players must be 2..5, got 1"),
        (["--agents", "random", "greedy", "--players", "6"], "--players must be 2..5, got 6"),
        (
            ["--agents", "random", "greedy", "--scoring", "shared"],
            "--scoring shared is for multiplayer matches: add --players",
        ),
        (["--agents", "random", "greedy", "--scoring", "separate"], "--scoring separate is for multiplayer matches"),
        (
            ["--agents", "random", "greedy", "--players", "2", "--scoring", "shared", "--ruleset", "nokaut"],
            "derived column",
        ),
        (["--agents", "greedy", "--players", "2"], "a match needs at least 2 agents"),
        (["--agents", "random", "greedy", "--players", "3"], "give exactly 3 agents"),
        (["--agents", "random", "greedy", "--players", "2", "--ruleset", "nosuch"], "nosuch"),
        (["--agents", "random", "greedy", "--players", "2", "--records", "recs"], "--records is for solitaire games"),
        (["--agents", "random", "greedy", "--players", "2", "--scoring", "both"], "invalid choice"),
    ],
)
def test_cli_refuses_bad_match_arguments(argv, message, capsys, tmp_path):
    code, out, err = run_cli(argv + ["--games", "2", "--no-progress", "--out", str(tmp_path / "x")], capsys)
    assert code == 2 and message in err
    assert not list(tmp_path.iterdir())  # nothing played, nothing written


def wilson_by_search(p: float, n: int) -> tuple[float, float]:
    """The Wilson score interval found the long way: the proportions q whose score test
    |p - q| <= z sqrt(q (1 - q) / n) accepts p, by bisection on each side of p."""
    z = 1.959963984540054

    def accepts(q):
        return abs(p - q) <= z * math.sqrt(q * (1 - q) / n)

    def edge(inside, outside):
        for _ in range(200):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if accepts(mid) else (inside, mid)
        return inside

    low = 0.0 if accepts(0.0) or p == 0.0 else edge(p, 0.0)
    high = 1.0 if accepts(1.0) or p == 1.0 else edge(p, 1.0)
    return low, high


@pytest.mark.parametrize("p,n", [(0.0, 10), (1.0, 10), (0.5, 10), (0.3, 50), (0.0, 1), (0.98, 200), (0.425, 200)])
def test_the_win_rate_interval_is_wilsons_and_never_of_width_zero(p, n):
    from agents.evaluation.solitaire import wilson_interval

    low, high = wilson_interval(p, n)
    assert (low, high) == pytest.approx(wilson_by_search(p, n), abs=1e-9)
    assert low <= p <= high and high - low > 0


def test_wilson_interval_refuses_a_number_that_is_not_a_proportion():
    from agents.evaluation.solitaire import wilson_interval

    with pytest.raises(ValueError, match="proportion"):
        wilson_interval(1.5, 10)
    assert all(math.isnan(x) for x in wilson_interval(0.5, 0))


@pytest.mark.slow  # 20 standard games
def test_a_sweep_prints_and_writes_an_interval_of_positive_width(tmp_path):
    """The report's case: greedy beats random in all 10 seeds of standard; the win rate
    0.000 still gets an interval (0 to about 0.28), in the Markdown and in the CSV."""
    from agents.apps.cli.evaluate import matches_markdown

    rr = round_robin("standard", ["random", "greedy"], games=10)
    p = rr.pairings[0]
    assert (
        p.win_rate == 0.0
        and p.win_low == 0.0
        and p.win_high == pytest.approx(wilson_by_search(0.0, 10)[1])
        and p.win_high > 0.27
    )
    text = matches_markdown(rr)
    assert "± 0.000 " not in text and f"| 0.000 | 0.000–{p.win_high:.3f} |" in text
    write_match_csvs(rr, tmp_path / "m.csv", tmp_path / "r.csv", tmp_path / "g.csv")
    with open(tmp_path / "m.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert float(row["win_rate_low"]) == 0.0 and float(row["win_rate_high"]) == pytest.approx(p.win_high)
