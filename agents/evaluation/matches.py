"""Multiplayer evaluation: agents play each other at one table (RULES.md §6), on paired dice.

    rr = round_robin("standard", ["greedy", "expectimax"], games=200)      # 2-player pairs
    rr = round_robin("classic", ["random", "greedy", "expectimax"], 50, players=3)  # one table
    rr.pairings, rr.ratings, rr.games

Tables: with ``players=2`` every pair of the listed agents is a table; with ``players > 2``
all the listed agents (exactly ``players`` of them) sit at one table. Each table plays
game ``g`` with the env seed ``seed_base + g`` (the canonical evaluation seeds of
:mod:`agents.evaluation.solitaire`, 20,000,000 + g) once in each of the ``players`` cyclic seat
rotations ("orders"; order ``r`` seats agent ``table[(s + r) % players]`` at seat ``s``;
for two players: A B, then B A). The seed fixes the seating dice (who starts) and the dice
stream, so the rotations of one seed are played on the same dice: every agent sits in
every seat, the starting seat included, equally often, and the results are paired.

Statistics (per pair of agents A, B at a table):

* win rate of A against B: 1 when A's final score is higher than B's, 0 when lower, 0.5
  on a tie (with more players, only A's and B's scores are compared);
* mean score margin A − B.

The paired unit is one seed: its value is the mean over its rotations. The 95% interval
of the margin is the two-sided Student-t interval over the units
(:func:`agents.evaluation.solitaire.t_interval`); the win rate, a proportion, gets the Wilson score
interval over the units (:func:`agents.evaluation.solitaire.wilson_interval`: never of width 0, also
at 0 or n wins of n).
Ratings: an openskill Plackett–Luce model (default parameters), one update per game, the
players ranked by final score (ties share a rank), in a fixed order (seed, then table,
then order), so the ratings do not depend on ``jobs``; sorted by ordinal
(``mu - 3 sigma``).

Each policy plays its seat through :meth:`jamb_env.multiplayer.raw_env.seat_view` (the
ruleset, the sheet it plays on, its score and legal actions: what the solitaire agents
read) and the solitaire part of its observation (the first segment of the multiplayer
observation: the ``Jamb-v1`` observation of its sheet), so the solitaire baselines and
solitaire-trained PPO models play any seat; a model trained on a seat (self-play, whose
``observation_size`` is the multiplayer observation's) gets the whole observation. An agent
with its own random generator
(``random``) is reseeded for every game from (seed, the agent's position in the list), so
results do not depend on how games are split between worker processes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from agents.evaluation.solitaire import EVAL_SEED_BASE, csv_text, eval_seeds, process_pool, t_interval, wilson_interval
from jamb_env import Ruleset, load_ruleset
from jamb_env.rules import match as M
from jamb_env.utils.files import write_text_file


def _env(ruleset, num_players: int, scoring: str):
    from jamb_env.multiplayer import raw_env

    return raw_env(ruleset=ruleset, num_players=num_players, scoring=scoring, reward="score")


def play_match(
    ruleset: str | Ruleset,
    policies: Sequence,
    seed: int,
    scoring: str = "separate",
    num_players: int | None = None,
    env=None,
) -> dict:
    """Play one multiplayer game, ``policies[p]`` in seat ``p`` (``player_p``).

    Args:
        ruleset: preset name, YAML path or :class:`~jamb_env.Ruleset`.
        policies: one agent per seat (``act(view, observation, mask) -> int``).
        seed: the env seed (seating dice and dice stream).
        scoring: "separate" or "shared".
        num_players: defaults to ``len(policies)`` (must equal it).
        env: a :class:`jamb_env.multiplayer.raw_env` of this ruleset, players and scoring
            to reuse (optional).

    Returns:
        ``{"seed", "first" (the seat that started), "scores" (final score per seat),
        "steps" (actions played)}``.

    Raises:
        ValueError: a bad argument; IllegalActionError: a policy played an illegal action.
    """
    if num_players is None:
        num_players = len(policies)
    if len(policies) != num_players:
        raise ValueError(f"one policy per seat: {num_players} players, got {len(policies)} policies")
    if env is None:
        env = _env(ruleset, num_players, scoring)
    elif env.num_players != num_players or env.scoring != scoring:
        raise ValueError(
            f"env has {env.num_players} players, scoring {env.scoring!r}; asked {num_players}, {scoring!r}"
        )
    from jamb_env.engine.observation import encoder
    from jamb_env.multiplayer import SeatView

    rules = env.ruleset
    solo = encoder(rules).size  # the solitaire observation leads the multiplayer one
    env.reset(seed=int(seed))
    first = env.match.first
    steps = 0
    while not M.is_over(rules, env.match):
        ms = env.match
        p = ms.to_move
        agent = env.agent_selection
        obs = env.observe(agent)
        mask = obs["action_mask"].astype(bool)
        view = SeatView(
            rules,
            M.sheet_in_play(ms),
            env.infos[agent]["score"],
            mask,
            player=p,
            num_players=ms.num_players,
            scoring=ms.scoring,
            owner=ms.owner,
        )
        full = obs["observation"]
        seen = full if getattr(policies[p], "observation_size", None) == len(full) else full[:solo]
        env.step(int(policies[p].act(view, seen, mask)))
        steps += 1
    return {
        "seed": int(seed),
        "first": int(first),
        "scores": [int(s) for s in M.scores(rules, env.match)],
        "steps": steps,
    }


# ---------------------------------------------------------------------------- tournaments
def tables(labels: Sequence[str], players: int) -> list[tuple[int, ...]]:
    """The tables (tuples of agent indices): every pair for 2 players, else all agents at one."""
    if players == 2:
        return list(itertools.combinations(range(len(labels)), 2))
    return [tuple(range(len(labels)))]


def agent_labels(names: Sequence[str]) -> list[str]:
    """Labels for the agents: the names, a repeated name numbered (``greedy#1``, ``greedy#2``)."""
    return [f"{n}#{names[:i].count(n) + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _check(ruleset, names: Sequence[str], players: int, scoring: str) -> Ruleset:
    rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
    M.check_match(rules, players, scoring)
    if len(names) < 2:
        raise ValueError(f"a match needs at least 2 agents, got {len(names)}")
    if players > 2 and len(names) != players:
        raise ValueError(
            f"with {players} players all the agents sit at one table: give exactly {players} agents, got {len(names)}"
        )
    return rules


_AGENTS: dict = {}


def _agent(spec: str, ruleset, trusted: bool = False):
    """One loaded agent per (spec, ruleset, trusted) and worker process (PPO models load once)."""
    from agents import load

    key = (spec, ruleset if isinstance(ruleset, str) else ruleset.name, trusted)
    if key not in _AGENTS:
        _AGENTS[key] = load(spec, ruleset=key[1], trusted=trusted)
    return _AGENTS[key]


def _reseed(policy, seed: int, index: int) -> None:
    if isinstance(getattr(policy, "rng", None), np.random.Generator):
        policy.rng = np.random.default_rng([int(seed), int(index)])


def _play_chunk(task) -> list[dict]:
    (ruleset, trusted), scoring, specs, labels, table_index, table, seeds = task
    K = len(table)
    env = _env(ruleset, K, scoring)
    policies = {i: _agent(specs[i], ruleset, trusted) for i in table}
    if len({id(p) for p in policies.values()}) < len(policies):  # the same spec twice: one instance each
        from agents import load

        policies = {i: load(specs[i], ruleset=env.ruleset.name, trusted=trusted) for i in table}
    rows = []
    for seed in seeds:
        for order in range(K):
            seated = [table[(s + order) % K] for s in range(K)]
            for i in seated:
                _reseed(policies[i], seed, i)
            res = play_match(env.ruleset, [policies[i] for i in seated], seed, scoring, K, env=env)
            won = M.result(res["scores"]).win  # the one definition: every seat tied on top
            leaders = [labels[i] for i, w in zip(seated, won) if w > 0]
            row = {"table": table_index, "seed": res["seed"], "order": order}
            row.update({f"seat_{s}": labels[i] for s, i in enumerate(seated)})
            row.update({"first_seat": res["first"], "first_agent": labels[seated[res["first"]]]})
            row.update({f"score_{s}": v for s, v in enumerate(res["scores"])})
            row.update({"winner": leaders[0] if len(leaders) == 1 else "", "steps": res["steps"]})
            rows.append(row)
    return rows


@dataclass
class Pairing:
    """A against B over the paired units (seeds) of their table."""

    a: str
    b: str
    units: int  # seeds
    games: int  # seeds x orders
    wins_a: int
    wins_b: int
    ties: int
    win_rate: float  # of A: win 1, tie 0.5
    win_low: float  # the 95% Wilson interval of the win rate over the units
    win_high: float
    margin: float  # mean score A - B
    margin_ci95: float
    mean_a: float
    mean_b: float


@dataclass
class Rating:
    agent: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    mean_score: float


@dataclass
class RoundRobin:
    ruleset: str
    scoring: str
    players: int
    labels: list[str]
    games: list[dict] = field(default_factory=list)  # per game rows, in (seed, table, order) order
    pairings: list[Pairing] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)

    @property
    def first_player_win_rate(self) -> float:
        """Share of the games won by the starting seat (ties 0.5 / number tied at the top)."""
        K = self.players
        vals = []
        for g in self.games:
            vals.append(float(M.result([g[f"score_{s}"] for s in range(K)]).win[g["first_seat"]]))
        return float(np.mean(vals)) if vals else math.nan


def _scores_by_agent(row: dict, players: int) -> dict[str, int]:
    return {row[f"seat_{s}"]: row[f"score_{s}"] for s in range(players)}


def pairings(rows: Sequence[dict], labels: Sequence[str], players: int) -> list[Pairing]:
    """:class:`Pairing` for every pair of agents that sat at a table together."""
    out = []
    for i, j in itertools.combinations(range(len(labels)), 2):
        a, b = labels[i], labels[j]
        units: dict[tuple, list[tuple[float, float, int, int]]] = {}
        for r in rows:
            sc = _scores_by_agent(r, players)
            if a in sc and b in sc:
                win = float(M.result([sc[a], sc[b]]).win[0])  # a beside b: a tie shares
                units.setdefault((r["table"], r["seed"]), []).append((win, float(sc[a] - sc[b]), sc[a], sc[b]))
        if not units:
            continue
        flat = [x for u in units.values() for x in u]
        w = np.array([np.mean([x[0] for x in u]) for u in units.values()])
        m = np.array([np.mean([x[1] for x in u]) for u in units.values()])
        low, high = wilson_interval(float(w.mean()), len(w))
        out.append(
            Pairing(
                a=a,
                b=b,
                units=len(units),
                games=len(flat),
                wins_a=sum(x[0] == 1.0 for x in flat),
                wins_b=sum(x[0] == 0.0 for x in flat),
                ties=sum(x[0] == 0.5 for x in flat),
                win_rate=float(w.mean()),
                win_low=low,
                win_high=high,
                margin=float(m.mean()),
                margin_ci95=t_interval(m),
                mean_a=float(np.mean([x[2] for x in flat])),
                mean_b=float(np.mean([x[3] for x in flat])),
            )
        )
    return out


def ratings(rows: Sequence[dict], labels: Sequence[str], players: int) -> list[Rating]:
    """openskill Plackett–Luce ratings, one update per game in the order of ``rows``."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rating = {lab: model.rating(name=lab) for lab in labels}
    scores: dict[str, list[int]] = {lab: [] for lab in labels}
    for r in rows:
        seated = [r[f"seat_{s}"] for s in range(players)]
        sc = [r[f"score_{s}"] for s in range(players)]
        ranks = [1 + sum(y > x for y in sc) for x in sc]  # ties share a rank
        new = model.rate([[rating[lab]] for lab in seated], ranks=ranks)
        for lab, team, s in zip(seated, new, sc):
            rating[lab] = team[0]
            scores[lab].append(s)
    out = [
        Rating(
            lab,
            float(rating[lab].mu),
            float(rating[lab].sigma),
            float(rating[lab].ordinal()),
            len(scores[lab]),
            float(np.mean(scores[lab])) if scores[lab] else math.nan,
        )
        for lab in labels
    ]
    return sorted(out, key=lambda x: -x.ordinal)


def round_robin(
    ruleset: str,
    agent_names: Sequence[str],
    games: int,
    scoring: str = "separate",
    seed_base: int = EVAL_SEED_BASE,
    jobs: int = 1,
    players: int = 2,
    chunk: int | None = None,
    progress: bool = False,
    trusted: bool = False,
) -> RoundRobin:
    """Play every table (module docstring) on seeds ``seed_base .. seed_base + games - 1``,
    each seed in every seat rotation; return the per-game rows, the pairings and the
    ratings. The numbers do not depend on ``jobs`` or ``chunk``. Model files are loaded
    as :func:`agents.load` does with ``trusted``.

    Raises:
        ValueError: fewer than 2 agents, ``players`` not in 2..5, ``players > 2`` with a
            different number of agents, an unknown scoring or agent, ``games < 1``.
        RulesetError: an unknown ruleset, or "shared" with a derived column.
    """
    names = list(agent_names)
    rules = _check(ruleset, names, players, scoring)
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games must be an integer >= 1, got {games!r}")
    labels = agent_labels(names)
    for spec in dict.fromkeys(names):  # an unknown agent fails before any game
        _agent(spec, ruleset, trusted)
    seeds = eval_seeds(int(games), seed_base)
    tabs = tables(labels, players)
    jobs = max(1, int(jobs))
    if chunk is None:
        chunk = max(1, min(25, math.ceil(len(seeds) * len(tabs) / (4 * jobs))))
    tasks = [
        ((ruleset, trusted), scoring, names, labels, t, tab, seeds[k : k + chunk])
        for t, tab in enumerate(tabs)
        for k in range(0, len(seeds), chunk)
    ]
    from tqdm.auto import tqdm

    rows: list[dict] = []
    with tqdm(total=len(seeds) * len(tabs) * players, disable=not progress, unit="game", desc="matches") as bar:
        if jobs == 1:
            for task in tasks:
                rows.extend(_play_chunk(task))
                bar.update(len(task[-1]) * players)
        else:
            with process_pool(
                jobs
            ) as pool:  # an exception or Ctrl-C terminates the workers instead of playing the queue
                for task, fut in [(task, pool.submit(_play_chunk, task)) for task in tasks]:
                    rows.extend(fut.result())
                    bar.update(len(task[-1]) * players)
    rows.sort(key=lambda r: (r["seed"], r["table"], r["order"]))
    return RoundRobin(
        ruleset=rules.name,
        scoring=scoring,
        players=players,
        labels=labels,
        games=rows,
        pairings=pairings(rows, labels, players),
        ratings=ratings(rows, labels, players),
    )


def write_match_csvs(rr: RoundRobin, pairs_path, ratings_path, games_path) -> None:
    """The files of a round robin, each written atomically: per pair (``pairs_path``: A, B,
    seeds, games, wins, ties, A's win rate with its 95% Wilson interval (low, high), the mean
    margin with its 95% half-width, mean scores), the ratings (``ratings_path``: rank, agent, mu, sigma, ordinal, games,
    mean
    score) and per game (``games_path``: :attr:`RoundRobin.games`); every row of the first
    two starts with the ruleset, scoring and players.

    Raises:
        OSError: a file cannot be written (the ones before it are written).
    """
    common = {"ruleset": rr.ruleset, "scoring": rr.scoring, "players": rr.players}
    write_text_file(
        pairs_path,
        csv_text(
            [
                {
                    **common,
                    "agent_a": p.a,
                    "agent_b": p.b,
                    "seeds": p.units,
                    "games": p.games,
                    "wins_a": p.wins_a,
                    "wins_b": p.wins_b,
                    "ties": p.ties,
                    "win_rate_a": p.win_rate,
                    "win_rate_low": p.win_low,
                    "win_rate_high": p.win_high,
                    "margin": p.margin,
                    "margin_ci95": p.margin_ci95,
                    "mean_a": p.mean_a,
                    "mean_b": p.mean_b,
                }
                for p in rr.pairings
            ],
            list(common)
            + [
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
            ],
        ),
    )
    write_text_file(
        ratings_path,
        csv_text(
            [
                {
                    **common,
                    "rank": k,
                    "agent": r.agent,
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "ordinal": r.ordinal,
                    "games": r.games,
                    "mean_score": r.mean_score,
                }
                for k, r in enumerate(rr.ratings, 1)
            ],
            list(common) + ["rank", "agent", "mu", "sigma", "ordinal", "games", "mean_score"],
        ),
    )
    write_text_file(games_path, csv_text(rr.games, list(rr.games[0])))
