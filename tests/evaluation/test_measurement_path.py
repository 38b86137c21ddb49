"""The measurement path, checked independently: every number ``jamb-evaluate`` (solitaire
and ``--players``) and ``jamb-plot`` print, write or draw is recomputed here from the raw
per-game data the tool itself wrote (the games CSV, the run folder's TensorBoard events and
``evaluations.npz``) with plain numpy / scipy / openskill, never with the library function
that produced it, and compared with the Markdown (parsed) and the CSV files.

What is recomputed, and how:

* solitaire (agents/apps/cli/evaluate.py, agents/evaluation/solitaire.py): the games CSV is first checked
  against the rules (RULES.md §2: upper, bonus, difference, lower, total of a classic column)
  and against greedy games replayed here on the canonical seeds; then per agent games, mean,
  sample std, the 95% Student-t half-width (``scipy.stats.t.ppf``), min, max, bonus rate (the
  share of columns with the bonus, docs/results.md), the exact optimum (docs/results.md),
  the column / part / row means, the paired differences (joined on the seed), the spread of
  a glob's checkpoints, the summary CSV and the score-distribution plot;
* ``--players`` (agents/evaluation/matches.py): seeds, games, wins, ties, the win rate (a seed
  the mean over its seat orders, a tie one half) with its Wilson interval (the roots of the
  score test's quadratic), the margin with its t interval, the mean scores, the starting
  seat's share of the wins, and the ratings (openskill's ``PlackettLuce`` run here on the
  games CSV in (seed, table, order) order, ranks by ``scipy.stats.rankdata``), in the
  Markdown and the three CSVs, plus tie cases on hand-made rows;
* ``jamb-plot`` (agents/apps/cli/plot.py, agents/training/curves.py): the drawn curve against the
  raw events (read with TensorBoard's ``EventFileLoader``, not the tool's reader) and against
  ``evaluations.npz``, the baseline lines against games replayed here, and the grouping,
  averaging, range, fine-tuning offset and warning on hand-written runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from agents.training.config import CONFIGS_DIR
from tests.helpers import slow_after

ROOT = Path(__file__).resolve().parents[2]
SEED0 = 20_000_000
Z95 = float(stats.norm.ppf(0.975))


# ---------------------------------------------------------------------------- helpers
def run_main(module: str, argv: list[str]) -> tuple[int, str, str]:
    """``agents.apps.cli.<module>.main(argv)`` in this process: (exit status, stdout, stderr)."""
    import importlib

    main = importlib.import_module(f"agents.apps.cli.{module}").main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def md_tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of ``text``: a list of rows (header first, the ``|---|`` line
    dropped), each a list of stripped cells."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        else:
            current = None
    return tables


def table_starting(tables, *header: str) -> list[list[str]]:
    found = [t for t in tables if t[0][: len(header)] == list(header)]
    assert len(found) == 1, (header, [t[0] for t in tables])
    return found[0]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def shown(printed: str, value: float, decimals: int) -> bool:
    """Whether ``printed`` is ``value`` rounded to ``decimals`` places (half a unit of the
    last place, and a hair for the binary representation)."""
    text = printed.replace("±", "").replace("−", "-").strip()
    return abs(float(text) - value) <= 0.5 * 10.0**-decimals + 1e-9


def t_half(x) -> float:
    """Half-width of the two-sided 95% Student-t interval of the mean of ``x``."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    return float(stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / math.sqrt(n))


def wilson(p: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``p`` on ``n`` units: the two roots
    q of (p - q)^2 = z^2 q (1 - q) / n, i.e. (1 + z²/n) q² - (2p + z²/n) q + p² = 0."""
    k = Z95 * Z95 / n
    roots = np.sort(np.roots([1 + k, -(2 * p + k), p * p]).real)
    return float(max(0.0, roots[0])), float(min(1.0, roots[-1]))


def float_cell(text: str) -> float:
    return math.nan if text == "" else float(text)


# ---------------------------------------------------------------------------- solitaire
SOLO_AGENTS = ["random", "greedy", "optimal"]
SOLO_GAMES = 30
#: docs/results.md: the exact expected score of optimal play on classic_down.
CLASSIC_DOWN_OPTIMUM = 135.1502


@pytest.fixture(scope="module")
def solitaire(tmp_path_factory):
    """``jamb-evaluate --ruleset classic_down --agents random greedy optimal --games 30``:
    (stdout, folder, plot data captured when the PNG was drawn)."""
    import matplotlib.pyplot as plt

    folder = tmp_path_factory.mktemp("solitaire")
    drawn = {}
    real_close = plt.close

    def capture(fig=None):  # plot_scores closes its figure when written: read what it drew
        if fig is not None and hasattr(fig, "axes") and fig.axes:
            ax = fig.axes[0]
            drawn.update(
                title=ax.get_title(),
                legend=[t.get_text() for t in ax.get_legend().get_texts()],
                steps=[p.get_path().vertices.copy() for p in ax.patches],
            )
        return real_close(fig)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plt, "close", capture)
        code, out, err = run_main(
            "evaluate",
            [
                "--ruleset",
                "classic_down",
                "--agents",
                *SOLO_AGENTS,
                "--games",
                str(SOLO_GAMES),
                "--jobs",
                "1",
                "--no-progress",
                "--out",
                str(folder) + "/",
            ],
        )
    assert code == 0, err
    return out, folder, drawn


def games_by_agent(games_csv: Path, labels: list[str]) -> tuple[list[str], dict[str, list[dict[str, str]]]]:
    keys, rows = read_csv(games_csv)
    assert list(dict.fromkeys(r["agent"] for r in rows)) == labels  # the agents in the order given
    return keys, {lab: [r for r in rows if r["agent"] == lab] for lab in labels}


def column(rows, key) -> np.ndarray:
    return np.array([float(r[key]) for r in rows], dtype=np.float64)


def check_solitaire_outputs(
    out: str, csv_path: Path, games_csv: Path, labels: list[str], exact: dict[str, float], games: int
) -> None:
    """Every number of the solitaire Markdown and of the summary CSV, recomputed from the
    games CSV."""
    keys, by = games_by_agent(games_csv, labels)
    cols = [k for k in keys if k.startswith("col_")]
    rows_ = [k for k in keys if k.startswith("row_")]
    tables = md_tables(out)

    # the summary table
    summary = table_starting(
        tables, "agent", "games", "mean", "std", "95% CI", "min", "max", "bonus rate", "exact expectation"
    )
    assert [r[0] for r in summary[1:]] == labels
    expected = {}
    for lab, cells in zip(labels, summary[1:]):
        g = by[lab]
        s = column(g, "score")
        seeds = [int(r["seed"]) for r in g]
        assert seeds == list(range(SEED0, SEED0 + games))  # the canonical seeds, in order
        e = dict(
            n=len(s),
            mean=s.mean(),
            std=s.std(ddof=1),
            ci95=t_half(s),
            min=int(s.min()),
            max=int(s.max()),
            bonus_rate=column(g, "bonus_columns").mean() / len(cols),
        )  # share of the columns with the bonus
        expected[lab] = e
        assert int(cells[1]) == e["n"] == games
        assert shown(cells[2], e["mean"], 1) and shown(cells[3], e["std"], 1), cells
        assert cells[4].startswith("± ") and shown(cells[4], e["ci95"], 1), cells
        assert int(cells[5]) == e["min"] and int(cells[6]) == e["max"]
        assert shown(cells[7], e["bonus_rate"], 3)
        if lab in exact:
            assert shown(cells[8], exact[lab], 4)
        else:
            assert cells[8] == ""

    # the column / part table and the row table
    parts = ["upper", "bonus", "difference", "lower"]
    coltab = table_starting(tables, "agent", *[c[4:] for c in cols], *parts)
    assert [r[0] for r in coltab[1:]] == labels
    for lab, cells in zip(labels, coltab[1:]):
        for key, cell in zip(cols + parts, cells[1:], strict=True):
            assert shown(cell, column(by[lab], key).mean(), 1), (lab, key, cell)
    rowtab = table_starting(tables, "row (sum over columns)", *labels)
    assert [r[0] for r in rowtab[1:]] == [k[4:] for k in rows_]
    for key, cells in zip(rows_, rowtab[1:]):
        for lab, cell in zip(labels, cells[1:], strict=True):
            assert shown(cell, column(by[lab], key).mean(), 1), (lab, key, cell)

    # paired differences: every pair (a before b in the order given), a − b on the same seeds
    pairs = table_starting(tables, "paired difference", "mean", "95% CI")
    assert [r[0] for r in pairs[1:]] == [f"{a} − {b}" for a, b in itertools.combinations(labels, 2)]
    for (a, b), cells in zip(itertools.combinations(labels, 2), pairs[1:]):
        sa = {int(r["seed"]): int(r["score"]) for r in by[a]}
        sb = {int(r["seed"]): int(r["score"]) for r in by[b]}
        d = np.array([sa[k] - sb[k] for k in sorted(sa.keys() & sb.keys())], dtype=np.float64)
        assert len(d) == games
        assert re.fullmatch(r"[+-]\d+\.\d", cells[1]) and shown(cells[1], d.mean(), 1), cells
        assert shown(cells[2], t_half(d), 1), cells

    # the summary CSV: the same numbers at full precision, then the mean of every part
    header, summary_rows = read_csv(csv_path)
    assert header[:9] == ["agent", "games", "mean", "std", "ci95", "min", "max", "bonus_rate", "exact"]
    mean_keys = header[9:]
    assert set(mean_keys) == {"steps", *parts, *cols, *rows_}
    assert [r["agent"] for r in summary_rows] == labels
    for r in summary_rows:
        e, g = expected[r["agent"]], by[r["agent"]]
        assert int(r["games"]) == e["n"] and int(r["min"]) == e["min"] and int(r["max"]) == e["max"]
        for key in ("mean", "std", "ci95", "bonus_rate"):
            assert float(r[key]) == pytest.approx(e[key], rel=1e-12, abs=1e-12), key
        assert (
            r["exact"] == ""
            if r["agent"] not in exact
            else float(r["exact"]) == pytest.approx(exact[r["agent"]], abs=5e-5)
        )
        for key in mean_keys:
            assert float(r[key]) == pytest.approx(column(g, key).mean(), rel=1e-12, abs=1e-12), (r["agent"], key)


def test_solitaire_games_csv_follows_the_rules_and_replays(solitaire):
    """The raw rows themselves: the canonical seeds for every agent, each classic_down game's
    parts as RULES.md §2 defines them from the rows, the bonus rate as bonus columns over
    columns, and greedy's games replayed here score and last the same."""
    from agents import load
    from jamb_env import JambEnv

    out, folder, _ = solitaire
    keys, by = games_by_agent(folder / "classic_down_games.csv", SOLO_AGENTS)
    assert [k for k in keys if k.startswith("col_")] == ["col_down"]
    upper_rows = ["row_ones", "row_twos", "row_threes", "row_fours", "row_fives", "row_sixes"]
    lower_rows = ["row_trilling", "row_straight", "row_full", "row_poker", "row_jamb"]
    for _lab, rows in by.items():
        assert [int(r["seed"]) for r in rows] == list(range(SEED0, SEED0 + SOLO_GAMES))
        for r in rows:
            v = {k: int(r[k]) for k in keys if k not in ("agent", "bonus_rate")}
            upper = sum(v[k] for k in upper_rows)
            assert v["upper"] == upper
            assert v["bonus"] == (30 if upper >= 60 else 0) and v["bonus_columns"] == (v["bonus"] > 0)
            assert v["difference"] == v["row_ones"] * (v["row_max"] - v["row_min"])
            assert v["lower"] == sum(v[k] for k in lower_rows)
            assert v["score"] == v["col_down"] == v["upper"] + v["bonus"] + v["difference"] + v["lower"]
            assert float(r["bonus_rate"]) == v["bonus_columns"]  # bonus columns / 1 column
    env, agent = JambEnv("classic_down", illegal_action="raise"), load("greedy", ruleset="classic_down")
    for r in by["greedy"]:
        obs, info = env.reset(seed=int(r["seed"]))
        done, steps = False, 0
        while not done:
            obs, _, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
            steps += 1
        assert (int(r["score"]), int(r["steps"])) == (info["score"], steps)
        assert all(int(r[k]) == info["score_parts"][k] for k in ("upper", "bonus", "difference", "lower"))


def test_solitaire_tables_and_summary_csv(solitaire):
    out, folder, _ = solitaire
    check_solitaire_outputs(
        out,
        folder / "classic_down.csv",
        folder / "classic_down_games.csv",
        SOLO_AGENTS,
        {"optimal": CLASSIC_DOWN_OPTIMUM},
        SOLO_GAMES,
    )


def test_solitaire_exact_optimum_is_the_documented_one_and_fits_the_games(solitaire):
    """The exact column: optimal's expected score, 135.1502 on classic_down (docs/results.md),
    printed to 4 places and written at full precision; the 30 optimal games played lie within
    their 95% interval of it (they are that policy's games)."""
    out, folder, _ = solitaire
    _, rows = read_csv(folder / "classic_down.csv")
    exact = {r["agent"]: r["exact"] for r in rows}
    assert exact["random"] == exact["greedy"] == "" and round(float(exact["optimal"]), 4) == CLASSIC_DOWN_OPTIMUM
    assert "| 135.1502 |" in out
    _, by = games_by_agent(folder / "classic_down_games.csv", SOLO_AGENTS)
    s = column(by["optimal"], "score")
    assert abs(s.mean() - CLASSIC_DOWN_OPTIMUM) <= t_half(s)


def test_solitaire_plot_draws_the_games(solitaire):
    """The PNG: one step histogram per agent over 59 equal bins from the lowest to the
    highest score of all agents, holding every game; the legend's means; the title's count."""
    out, folder, drawn = solitaire
    assert (folder / "classic_down.png").stat().st_size > 1000
    _, by = games_by_agent(folder / "classic_down_games.csv", SOLO_AGENTS)
    scores = {lab: column(rows, "score") for lab, rows in by.items()}
    assert drawn["title"] == f"Jamb classic_down: score distributions over {SOLO_GAMES} seeded games"
    assert drawn["legend"] == [f"{lab} (mean {s.mean():.0f})" for lab, s in scores.items()]
    lo, hi = min(s.min() for s in scores.values()), max(s.max() for s in scores.values())
    edges = lo + (hi - lo) * np.arange(60) / 59
    for lab, verts in zip(scores, drawn["steps"], strict=True):
        s = scores[lab]
        # a step outline: (edge_k, count_k) and (edge_k+1, count_k) for each bin k
        tops = {}
        for x, y in verts:
            tops.setdefault(round(float(x), 6), set()).add(round(float(y), 6))
        counts = [
            sum(1 for v in s if (edges[k] <= v < edges[k + 1]) or (k == 58 and v == edges[59])) for k in range(59)
        ]
        assert sum(counts) == len(s) == SOLO_GAMES
        for k, c in enumerate(counts):
            assert c in tops[round(float(edges[k]), 6)] and c in tops[round(float(edges[k + 1]), 6)], (lab, k, c)


def test_solitaire_on_a_sheet_of_four_columns(tmp_path):
    """classic (down, up, free, announce): the per-column table, the row sums over the
    columns and the bonus rate as the share of the 4 columns with the bonus; the raw rows add
    up (score = the column totals; upper and lower = their rows summed over the columns; the
    bonus 30 a column that earns it) and greedy's games replay."""
    from agents import load
    from jamb_env import JambEnv

    labels, games = ["random", "greedy"], 4
    code, out, err = run_main(
        "evaluate",
        [
            "--ruleset",
            "classic",
            "--agents",
            *labels,
            "--games",
            str(games),
            "--jobs",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "c"),
        ],
    )
    assert code == 0, err
    check_solitaire_outputs(out, tmp_path / "c.csv", tmp_path / "c_games.csv", labels, {}, games)
    keys, by = games_by_agent(tmp_path / "c_games.csv", labels)
    cols = [k for k in keys if k.startswith("col_")]
    assert sorted(cols) == ["col_announce", "col_down", "col_free", "col_up"]
    for rows in by.values():
        for r in rows:
            v = {k: int(r[k]) for k in keys if k not in ("agent", "bonus_rate")}
            assert v["score"] == sum(v[c] for c in cols) == v["upper"] + v["bonus"] + v["difference"] + v["lower"]
            assert v["upper"] == sum(v[f"row_{k}"] for k in ("ones", "twos", "threes", "fours", "fives", "sixes"))
            assert v["lower"] == sum(v[f"row_{k}"] for k in ("trilling", "straight", "full", "poker", "jamb"))
            assert v["bonus"] == 30 * v["bonus_columns"] and float(r["bonus_rate"]) == v["bonus_columns"] / 4
    env, agent = JambEnv("classic", illegal_action="raise"), load("greedy", ruleset="classic")
    for r in by["greedy"]:
        obs, info = env.reset(seed=int(r["seed"]))
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
        assert int(r["score"]) == info["score"] and all(
            int(r[f"col_{c}"]) == p for c, p in info["column_scores"].items()
        )


# ---------------------------------------------------------------------------- training run and globs
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A classic_down training run of seconds (tests/training/test_resume.py's tiny config): 1024
    steps, evaluations every 256 on 2 canonical games, checkpoints every 256."""
    folder = tmp_path_factory.mktemp("train")
    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0  # a tiny run from scratch (the default starts from 2,000 planner games)
    cfg.update(total_timesteps=1024, ruleset="classic_down")
    cfg["env"]["n_envs"] = 4
    cfg["algo"].update(n_steps=64, batch_size=128, n_epochs=1, policy_kwargs={"net_arch": [32, 32]})
    cfg["eval"].update(freq=256, episodes=2, n_envs=2)
    cfg["checkpoint"]["freq"] = 256
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run = folder / "classic_down__tiny__0__x"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "train.py"),
            "--no-progress",
            "--config",
            str(config),
            "--run-dir",
            str(run),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run


@pytest.mark.slow  # needs tiny_run, a jamb-train subprocess
def test_glob_spread_and_per_checkpoint_numbers(tiny_run, tmp_path):
    """A glob of checkpoints: each model is an agent of its own (every number of its rows
    recomputed as above), and the spread table gives the pattern, the number of files it
    matches, the mean of their mean scores and the sample std of those means."""
    pattern = f"{tiny_run}/checkpoints/model_*_steps.zip"
    models = sorted(str(p) for p in (tiny_run / "checkpoints").glob("model_*_steps.zip"))
    assert len(models) >= 3
    games = 8
    code, out, err = run_main(
        "evaluate",
        [
            "--ruleset",
            "classic_down",
            "--agents",
            pattern,
            "greedy",
            "--games",
            str(games),
            "--jobs",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "g"),
        ],
    )
    assert code == 0, err
    labels = models + ["greedy"]
    check_solitaire_outputs(out, tmp_path / "g.csv", tmp_path / "g_games.csv", labels, {}, games)
    _, by = games_by_agent(tmp_path / "g_games.csv", labels)
    means = np.array([column(by[m], "score").mean() for m in models])
    spread = table_starting(md_tables(out), "checkpoints", "models", "mean of means", "std across models")
    assert len(spread) == 2
    cells = spread[1]
    assert cells[0] == pattern and int(cells[1]) == len(models)
    assert shown(cells[2], means.mean(), 1) and shown(cells[3], means.std(ddof=1), 1), (cells, means)


# ---------------------------------------------------------------------------- multiplayer
def int_rows(rows: list[dict[str, str]], players: int) -> list[dict]:
    """The games CSV rows with their numbers as ints."""
    out = []
    for r in rows:
        g = dict(r)
        for k in ("table", "seed", "order", "first_seat", "steps", *(f"score_{s}" for s in range(players))):
            g[k] = int(r[k])
        out.append(g)
    return out


def expected_pairings(games: list[dict], labels: list[str], players: int) -> list[dict]:
    """Per pair (in the order of the labels): the numbers of the pairings table, from the rows."""
    out = []
    for a, b in itertools.combinations(labels, 2):
        units: dict[tuple[int, int], list[tuple[float, int, int]]] = {}
        for g in games:
            seat = {g[f"seat_{s}"]: g[f"score_{s}"] for s in range(players)}
            if a in seat and b in seat:
                win = 1.0 if seat[a] > seat[b] else 0.5 if seat[a] == seat[b] else 0.0
                units.setdefault((g["table"], g["seed"]), []).append((win, seat[a], seat[b]))
        if not units:
            continue
        flat = [x for u in units.values() for x in u]
        w = np.array([np.mean([x[0] for x in u]) for u in units.values()])
        m = np.array([np.mean([x[1] - x[2] for x in u]) for u in units.values()])
        low, high = wilson(float(w.mean()), len(w))
        out.append(
            dict(
                a=a,
                b=b,
                seeds=len({k[1] for k in units}),
                games=len(flat),
                wins_a=sum(x[1] > x[2] for x in flat),
                wins_b=sum(x[1] < x[2] for x in flat),
                ties=sum(x[1] == x[2] for x in flat),
                win_rate=float(w.mean()),
                low=low,
                high=high,
                margin=float(m.mean()),
                margin_ci95=t_half(m) if len(m) > 1 else math.nan,
                mean_a=float(np.mean([x[1] for x in flat])),
                mean_b=float(np.mean([x[2] for x in flat])),
            )
        )
    return out


def expected_first_share(games: list[dict], players: int) -> float:
    """The starting seat's share of the wins: 1 for a game it won alone, 1/k when it is one of
    k seats tied on top, else 0."""
    vals = []
    for g in games:
        sc = [g[f"score_{s}"] for s in range(players)]
        top = max(sc)
        vals.append(1.0 / sc.count(top) if sc[g["first_seat"]] == top else 0.0)
    return float(np.mean(vals))


def expected_ratings(games: list[dict], labels: list[str], players: int) -> list[dict]:
    """openskill Plackett–Luce (default parameters), one update per game in (seed, table,
    order) order, ranks by score (ties share the best rank of the tie); sorted by ordinal
    mu - 3 sigma, highest first."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rating = {lab: model.rating(name=lab) for lab in labels}
    played: dict[str, list[int]] = {lab: [] for lab in labels}
    for g in sorted(games, key=lambda g: (g["seed"], g["table"], g["order"])):
        seated = [g[f"seat_{s}"] for s in range(players)]
        sc = [g[f"score_{s}"] for s in range(players)]
        ranks = [int(r) for r in stats.rankdata([-x for x in sc], method="min")]
        teams = model.rate([[rating[lab]] for lab in seated], ranks=ranks)
        for lab, team, x in zip(seated, teams, sc):
            rating[lab] = team[0]
            played[lab].append(x)
    out = [
        dict(
            agent=lab,
            mu=rating[lab].mu,
            sigma=rating[lab].sigma,
            ordinal=rating[lab].mu - 3 * rating[lab].sigma,
            games=len(played[lab]),
            mean_score=float(np.mean(played[lab])),
        )
        for lab in labels
    ]
    return sorted(out, key=lambda r: -r["ordinal"])


def check_match_outputs(
    out: str, prefix: Path, ruleset: str, labels: list[str], players: int, scoring: str, seeds: int
) -> None:
    """Every number of the ``--players`` Markdown and of its three CSVs, from the games CSV."""
    games_keys, raw = read_csv(prefix.with_name(prefix.name + "_match_games.csv"))
    games = int_rows(raw, players)
    # the rows: (seed, table, order) order, every seat order of every seed at every table
    order = [(g["seed"], g["table"], g["order"]) for g in games]
    assert order == sorted(order)
    tables_ = sorted({g["table"] for g in games})
    assert sorted(order) == [(SEED0 + k, t, o) for k in range(seeds) for t in tables_ for o in range(players)]
    for g in games:
        sc = [g[f"score_{s}"] for s in range(players)]
        assert g["first_agent"] == g[f"seat_{g['first_seat']}"]
        tops = [g[f"seat_{s}"] for s in range(players) if sc[s] == max(sc)]
        assert g["winner"] == (tops[0] if len(tops) == 1 else "")

    lines = out.splitlines()
    head = re.fullmatch(
        r"(\d)-player (\S+), (\S+) (sheets|sheet): (\d+) seeds \((\d+)\.\.(\d+)\) x (\d) seat orders, "
        r"(\d+) games; the starting seat won (\d\.\d{3}) of them",
        lines[0],
    )
    assert head, lines[0]
    assert (int(head[1]), head[2], head[3], head[4]) == (
        players,
        ruleset,
        scoring,
        "sheets" if scoring == "separate" else "sheet",
    )
    assert (int(head[5]), int(head[6]), int(head[7]), int(head[8]), int(head[9])) == (
        seeds,
        SEED0,
        SEED0 + seeds - 1,
        players,
        len(games),
    )
    assert shown(head[10], expected_first_share(games, players), 3)

    tables = md_tables(out)
    exp = expected_pairings(games, labels, players)
    pt = table_starting(
        tables,
        "A",
        "B",
        "seeds",
        "games",
        "A wins",
        "B wins",
        "ties",
        "win rate of A",
        "95% CI (Wilson)",
        "margin A − B",
        "95% CI",
        "mean A",
        "mean B",
    )
    assert [(r[0], r[1]) for r in pt[1:]] == [(e["a"], e["b"]) for e in exp]
    for e, c in zip(exp, pt[1:]):
        assert [int(x) for x in c[2:7]] == [e["seeds"], e["games"], e["wins_a"], e["wins_b"], e["ties"]] and e[
            "seeds"
        ] == seeds
        assert shown(c[7], e["win_rate"], 3)
        low, high = c[8].split("–")
        assert shown(low, e["low"], 3) and shown(high, e["high"], 3), (c[8], e)
        assert e["low"] <= e["win_rate"] <= e["high"] and e["high"] - e["low"] > 0
        assert re.fullmatch(r"[+-]\d+\.\d", c[9]) and shown(c[9], e["margin"], 1)
        assert c[10].startswith("± ") and shown(c[10], e["margin_ci95"], 1)
        assert shown(c[11], e["mean_a"], 1) and shown(c[12], e["mean_b"], 1)
    header, pairs_csv = read_csv(prefix.with_name(prefix.name + "_matches.csv"))
    assert header == [
        "ruleset",
        "scoring",
        "players",
        "agent_a",
        "agent_b",
        "seeds",
        "games",
        "wins_a",
        "wins_b",
        "ties",
        "win_rate_a",
        "win_rate_low",
        "win_rate_high",
        "margin",
        "margin_ci95",
        "mean_a",
        "mean_b",
    ]
    assert len(pairs_csv) == len(exp)
    for e, r in zip(exp, pairs_csv):
        assert (r["ruleset"], r["scoring"], int(r["players"]), r["agent_a"], r["agent_b"]) == (
            ruleset,
            scoring,
            players,
            e["a"],
            e["b"],
        )
        assert [int(r[k]) for k in ("seeds", "games", "wins_a", "wins_b", "ties")] == [
            e[k] for k in ("seeds", "games", "wins_a", "wins_b", "ties")
        ]
        for csv_key, key in (
            ("win_rate_a", "win_rate"),
            ("win_rate_low", "low"),
            ("win_rate_high", "high"),
            ("margin", "margin"),
            ("margin_ci95", "margin_ci95"),
            ("mean_a", "mean_a"),
            ("mean_b", "mean_b"),
        ):
            assert float(r[csv_key]) == pytest.approx(e[key], rel=1e-9, abs=1e-12), (csv_key, r[csv_key], e[key])

    ratings = expected_ratings(games, labels, players)
    rt = table_starting(tables, "rank", "agent", "mu", "sigma", "ordinal", "games", "mean score")
    assert [(int(r[0]), r[1]) for r in rt[1:]] == [(k, e["agent"]) for k, e in enumerate(ratings, 1)]
    for e, c in zip(ratings, rt[1:]):
        assert shown(c[2], e["mu"], 2) and shown(c[3], e["sigma"], 2) and shown(c[4], e["ordinal"], 2), (c, e)
        assert (
            int(c[5])
            == e["games"]
            == seeds * players * sum(e["agent"] in t for t in itertools.combinations(labels, players))
        )
        assert shown(c[6], e["mean_score"], 1)
    header, ratings_csv = read_csv(prefix.with_name(prefix.name + "_match_ratings.csv"))
    assert header == ["ruleset", "scoring", "players", "rank", "agent", "mu", "sigma", "ordinal", "games", "mean_score"]
    for k, (e, r) in enumerate(zip(ratings, ratings_csv, strict=True), 1):
        assert (r["ruleset"], r["scoring"], int(r["players"]), int(r["rank"]), r["agent"], int(r["games"])) == (
            ruleset,
            scoring,
            players,
            k,
            e["agent"],
            e["games"],
        )
        for key in ("mu", "sigma", "ordinal", "mean_score"):
            assert float(r[key]) == pytest.approx(e[key], rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize(
    "ruleset, agents, players, scoring, seeds",
    slow_after(
        [
            ("classic", ["random", "greedy"], 2, "separate", 10),
            ("classic_down", ["random", "greedy", "expectimax"], 2, "separate", 12),
            ("classic_down", ["random", "greedy", "expectimax"], 3, "shared", 4),
        ],
        fast=[("classic_down", ["random", "greedy", "expectimax"], 3, "shared", 4)],
    ),
)
def test_match_tables_and_csvs(ruleset, agents, players, scoring, seeds, tmp_path):
    prefix = tmp_path / "m"
    code, out, err = run_main(
        "evaluate",
        [
            "--ruleset",
            ruleset,
            "--agents",
            *agents,
            "--players",
            str(players),
            "--scoring",
            scoring,
            "--games",
            str(seeds),
            "--jobs",
            "1",
            "--no-progress",
            "--out",
            str(prefix),
        ],
    )
    assert code == 0, err
    check_match_outputs(out, prefix, ruleset, agents, players, scoring, seeds)


def hand_rows(players: int, games: list[tuple[int, int, list[str], list[int]]]) -> list[dict]:
    """Game rows as the tool writes them, from (seed, first seat, agent per seat, scores);
    the seat orders of a seed numbered in turn."""
    rows, seen = [], {}
    for seed, first, seated, scores in games:
        order = seen[seed] = seen.get(seed, -1) + 1
        row = {
            "table": 0,
            "seed": seed,
            "order": order,
            **{f"seat_{s}": a for s, a in enumerate(seated)},
            "first_seat": first,
            "first_agent": seated[first],
            **{f"score_{s}": v for s, v in enumerate(scores)},
        }
        top = [a for a, v in zip(seated, scores) if v == max(scores)]
        row.update(winner=top[0] if len(top) == 1 else "", steps=1)
        rows.append(row)
    return rows


@pytest.mark.parametrize(
    "players, games",
    [
        (
            2,
            [
                (1, 0, ["a", "b"], [100, 100]),
                (1, 0, ["b", "a"], [90, 120]),  # a tie, then a win of a
                (2, 1, ["a", "b"], [80, 95]),
                (2, 1, ["b", "a"], [70, 70]),
                (3, 0, ["a", "b"], [50, 40]),
                (3, 0, ["b", "a"], [60, 60]),
            ],
        ),
        (
            3,
            [
                (1, 2, ["a", "b", "c"], [100, 100, 90]),
                (1, 2, ["b", "c", "a"], [100, 100, 100]),
                (1, 2, ["c", "a", "b"], [120, 80, 80]),
                (2, 0, ["a", "b", "c"], [60, 70, 70]),
                (2, 0, ["b", "c", "a"], [50, 50, 40]),
                (2, 0, ["c", "a", "b"], [10, 20, 30]),
            ],
        ),
    ],
)
def test_match_statistics_with_ties(players, games):
    """Ties on hand-made rows: a tie counts one half of a win (and is counted as a tie), a
    starting seat tied on top with k seats gets 1/k, tied players share a rank."""
    from agents.apps.cli.evaluate import matches_markdown
    from agents.evaluation.matches import RoundRobin, pairings, ratings

    labels = ["a", "b", "c"][: max(players, 2)]
    rows = hand_rows(players, games)
    rows.sort(key=lambda r: (r["seed"], r["table"], r["order"]))
    rr = RoundRobin(
        ruleset="classic",
        scoring="separate",
        players=players,
        labels=labels,
        games=rows,
        pairings=pairings(rows, labels, players),
        ratings=ratings(rows, labels, players),
    )
    assert rr.first_player_win_rate == pytest.approx(expected_first_share(rows, players), abs=1e-12)
    exp = expected_pairings(rows, labels, players)
    assert any(e["ties"] for e in exp)
    for e, p in zip(exp, rr.pairings, strict=True):
        assert (p.a, p.b, p.units, p.games, p.wins_a, p.wins_b, p.ties) == (
            e["a"],
            e["b"],
            e["seeds"],
            e["games"],
            e["wins_a"],
            e["wins_b"],
            e["ties"],
        )
        assert (p.win_rate, p.win_low, p.win_high, p.margin, p.margin_ci95, p.mean_a, p.mean_b) == pytest.approx(
            (e["win_rate"], e["low"], e["high"], e["margin"], e["margin_ci95"], e["mean_a"], e["mean_b"]), abs=1e-9
        )
    for e, r in zip(expected_ratings(rows, labels, players), rr.ratings, strict=True):
        assert (r.agent, r.games) == (e["agent"], e["games"])
        assert (r.mu, r.sigma, r.ordinal, r.mean_score) == pytest.approx(
            (e["mu"], e["sigma"], e["ordinal"], e["mean_score"]), abs=1e-12
        )
    assert f"the starting seat won {expected_first_share(rows, players):.3f} of them" in matches_markdown(rr)


def test_wilson_and_t_helpers_are_the_textbook_ones():
    """The test's own yardsticks against published values: Wilson 0 of 10 -> (0, 0.2775);
    7 of 10 -> (0.3968, 0.8922) (Brown, Cai & DasGupta 2001 / any table); t(0.975, 9) = 2.2622."""
    assert wilson(0.0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson(0.7, 10) == pytest.approx((0.39677, 0.89220), abs=1e-5)
    assert t_half(np.arange(10.0)) == pytest.approx(
        2.262157 * np.std(np.arange(10.0), ddof=1) / math.sqrt(10), rel=1e-6
    )


# ---------------------------------------------------------------------------- jamb-plot
def raw_scalars(run: Path) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] of every scalar summary in the run's events files, in file
    order, read with TensorBoard's raw loader (no purging, no de-duplication)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(run.glob("*tfevents*")):
        for event in EventFileLoader(str(path)).Load():
            for v in event.summary.value:
                if v.HasField("simple_value"):
                    value = v.simple_value
                elif v.HasField("tensor") and v.tensor.float_val:
                    value = v.tensor.float_val[0]
                else:
                    continue
                out.setdefault(v.tag, []).append((int(event.step), float(value)))
    return out


def plot_figure(argv: list[str]) -> tuple[int, str, str, list[dict]]:
    """``jamb-plot argv`` in this process, with what each panel drew: title, axis labels,
    lines (label, x, y), shaded ranges (their outline's vertices) and the legend."""
    from agents.apps.cli import plot

    panels: list[dict] = []
    real = plot.save_figure

    def capture(fig, path):
        for ax in fig.axes:
            panels.append(
                dict(
                    title=ax.get_title(),
                    xlabel=ax.get_xlabel(),
                    ylabel=ax.get_ylabel(),
                    lines=[
                        (
                            ln.get_label(),
                            np.asarray(ln.get_xdata(), dtype=float),
                            np.asarray(ln.get_ydata(), dtype=float),
                        )
                        for ln in ax.lines
                    ],
                    fills=[np.concatenate([p.vertices for p in c.get_paths()]) for c in ax.collections],
                    legend=[t.get_text() for t in ax.get_legend().get_texts()],
                )
            )
        return real(fig, path)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plot, "save_figure", capture)
        code, out, err = run_main("plot", argv)
    return code, out, err, panels


def baseline_label(name: str, value: float) -> str:
    return f"{name.replace('_expected', ' (exact)')}: {value:.1f}"


@pytest.mark.slow  # needs tiny_run, a jamb-train subprocess
def test_plot_of_a_training_run_draws_its_evaluations(tiny_run, tmp_path):
    """The curve of a real run: at each evaluation step, the mean true score of its games,
    which is the mean episode return of ``evaluations.npz`` over the reward scale (the
    reward is the score's increment), and the raw event; each baseline line at the
    ``eval/baseline_<agent>`` value, which is the mean score of that agent on the same
    canonical games, replayed here (the solvers: the exact optimum of docs/results.md)."""
    from agents import load
    from jamb_env import JambEnv

    out_png = tmp_path / "curves.png"
    code, out, err, panels = plot_figure([str(tiny_run), "--out", str(out_png)])
    assert code == 0, err
    assert out.strip() == f"wrote {out_png}" and out_png.stat().st_size > 1000
    (panel,) = panels
    assert (panel["title"], panel["xlabel"], panel["ylabel"]) == (
        "Jamb classic_down: eval/score",
        "environment steps",
        "eval/score (points)",
    )
    cfg = yaml.safe_load((tiny_run / "config.yaml").read_text())
    with np.load(tiny_run / "evaluations.npz") as data:
        steps, results, lengths = data["timesteps"], data["results"], data["ep_lengths"]
    raw = raw_scalars(tiny_run)
    curve = [ln for ln in panel["lines"] if ln[0] == "tiny (1 run)"]
    assert len(curve) == 1 and not panel["fills"]  # one run: no range
    _, x, y = curve[0]
    assert x.tolist() == [int(s) for s in steps] == [s for s, _ in raw["eval/score"]] == [256, 512, 768, 1024]
    assert y == pytest.approx(results.mean(axis=1) / cfg["env"]["reward_scale"], abs=1e-3)
    assert y.tolist() == [v for _, v in raw["eval/score"]]
    assert [v for _, v in raw["eval/mean_ep_length"]] == pytest.approx(lengths.mean(axis=1).tolist())

    # the baseline lines: the last logged value of each eval/baseline_<agent>
    baselines = {
        tag.removeprefix("eval/baseline_"): vals[-1][1] for tag, vals in raw.items() if tag.startswith("eval/baseline_")
    }
    assert set(baselines) == {"random", "greedy", "expectimax", "optimal_expected", "columnwise_expected"}
    hlines = {label: yy for label, xx, yy in panel["lines"] if label != "tiny (1 run)"}
    assert set(hlines) == {baseline_label(n, v) for n, v in baselines.items()}
    for name, value in baselines.items():
        assert hlines[baseline_label(name, value)].tolist() == [value, value]
    seeds = [cfg["eval"]["seed"] + i for i in range(cfg["eval"]["n_envs"])]
    assert cfg["eval"]["episodes"] == len(seeds)  # one game per eval env: the canonical games
    for name in ("random", "greedy", "expectimax"):
        agent, env, scores = load(name, ruleset="classic_down"), JambEnv("classic_down", illegal_action="raise"), []
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                obs, _, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
            scores.append(info["score"])
        assert baselines[name] == pytest.approx(np.mean(scores), abs=1e-4), name
    assert baselines["optimal_expected"] == pytest.approx(CLASSIC_DOWN_OPTIMUM, abs=1e-4)
    assert baselines["columnwise_expected"] == pytest.approx(
        CLASSIC_DOWN_OPTIMUM, abs=1e-4
    )  # one column: the same solver


def write_events(
    run: Path, scalars: dict[str, list[tuple[int, float]]], config: dict | None = None, init: dict | None = None
) -> None:
    from torch.utils.tensorboard import SummaryWriter

    run.mkdir(parents=True)
    writer = SummaryWriter(str(run))
    for tag, points in scalars.items():
        for step, value in points:
            writer.add_scalar(tag, value, step)
    writer.close()
    if config is not None:
        (run / "config.yaml").write_text(yaml.safe_dump(config))
    if init is not None:
        (run / "init_from.json").write_text(json.dumps(init))


@pytest.fixture(scope="module")
def hand_runs(tmp_path_factory):
    """Hand-written runs: two seeds of one classic config on different evaluation steps (one
    logging a step twice, one with other baselines), a fine-tuned classic_down run and one
    grouped by its folder name only."""
    root = tmp_path_factory.mktemp("runs")
    a0 = {
        "eval/score": [(0, 10.0), (100, 30.0), (200, 20.0), (300, 60.0)],
        "eval/baseline_greedy": [(0, 700.0)],
        "eval/baseline_optimal_expected": [(0, 540.6199)],
    }
    a1 = {
        "eval/score": [(50, 0.0), (150, 5.0), (150, 15.0), (250, 45.0)],
        "eval/baseline_greedy": [(0, 699.0), (250, 701.0)],
    }
    b = {"eval/score": [(0, 100.0), (1000, 130.0)]}
    c = {"eval/score": [(10, 1.0), (20, 3.0)]}
    runs = [root / "classic__cfgA__0__t", root / "classic__cfgA__1__t", root / "ft", root / "classic_down__cfgC__4__t"]
    write_events(runs[0], a0, {"config_name": "cfgA", "ruleset": "classic"})
    write_events(runs[1], a1, {"config_name": "cfgA", "ruleset": "jamb_env/rules/presets/classic.yaml"})
    write_events(
        runs[2],
        b,
        {"config_name": "cfgB", "ruleset": "classic_down", "init_from": "elsewhere/model.zip"},
        {"init_from": "elsewhere/model.zip", "steps_before": 5000},
    )
    write_events(runs[3], c)
    return runs, (a0, a1, b, c)


def lerp(points: list[tuple[int, float]], x: float) -> float:
    """Linear interpolation of a curve (steps increasing) at x inside its range."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise ValueError(x)


def last_per_step(points):
    last = {}
    for s, v in points:
        last[s] = v  # a step logged twice: the later value
    return sorted(last.items())


def test_plot_groups_averages_and_shifts_runs(hand_runs, tmp_path):
    """Runs of one ruleset and config are one curve: at every step any of them logged (a
    step logged twice: its later value), the mean of the runs' linear interpolations, the
    range between their lowest and highest shaded; a fine-tuned run is drawn after the
    steps of its model; a run without config.yaml groups by its folder name; each ruleset
    its panel, with the baselines of the last run given (and a warning naming both values)."""
    runs, (a0, a1, b, c) = hand_runs
    code, out, err, panels = plot_figure([*map(str, runs), "--out", str(tmp_path / "c.svg")])
    assert code == 0, err
    assert [p["title"] for p in panels] == ["classic", "classic_down"]
    classic, down = panels
    assert (
        f"warning: classic: runs were evaluated on different games (greedy 700.0 vs 701.0 in {runs[1].name}); "
        "the panel shows those of the last run given"
    ) in err

    ((label, x, y),) = [ln for ln in classic["lines"] if ln[0].startswith("cfgA")]
    assert label == "cfgA (2 runs)"
    curves = [last_per_step(a0["eval/score"]), last_per_step(a1["eval/score"])]
    assert x.tolist() == sorted({s for cv in curves for s, _ in cv}) == [0, 50, 100, 150, 200, 250, 300]
    (fill,) = classic["fills"]
    outline = {(round(float(px), 6), round(float(py), 6)) for px, py in fill}
    for k, step in enumerate(x):
        inside = [lerp(cv, step) for cv in curves if cv[0][0] <= step <= cv[-1][0]]
        if len(inside) == len(curves):  # every run logged around this step
            assert y[k] == pytest.approx(np.mean(inside)), step
            assert (step, round(min(inside), 6)) in outline and (step, round(max(inside), 6)) in outline, step
    assert {ln[0] for ln in classic["lines"]} - {label} == {"greedy: 701.0", "optimal (exact): 540.6"}
    assert [ln[2].tolist() for ln in classic["lines"] if ln[0] == "greedy: 701.0"] == [[701.0, 701.0]]

    by_label = {ln[0]: ln for ln in down["lines"]}
    assert set(by_label) == {"cfgB (from a model) (1 run)", "cfgC (1 run)"} and not down["fills"]
    _, x, y = by_label["cfgB (from a model) (1 run)"]
    assert x.tolist() == [5000 + s for s, _ in b["eval/score"]] and y.tolist() == [v for _, v in b["eval/score"]]
    _, x, y = by_label["cfgC (1 run)"]
    assert x.tolist() == [s for s, _ in c["eval/score"]] and y.tolist() == [v for _, v in c["eval/score"]]


def test_plot_mean_uses_only_runs_that_reached_the_step(hand_runs, tmp_path):
    runs, (a0, a1, _, _) = hand_runs
    code, out, err, panels = plot_figure([str(runs[0]), str(runs[1]), "--out", str(tmp_path / "c.png")])
    assert code == 0, err
    ((_, x, y),) = [ln for ln in panels[0]["lines"] if ln[0].startswith("cfgA")]
    curves = [last_per_step(a0["eval/score"]), last_per_step(a1["eval/score"])]
    for k, step in enumerate(x):
        inside = [lerp(cv, step) for cv in curves if cv[0][0] <= step <= cv[-1][0]]
        assert y[k] == pytest.approx(np.mean(inside)), (step, y[k], inside)
