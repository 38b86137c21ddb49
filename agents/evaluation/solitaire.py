"""Paired evaluation of agents on the same seeded games (common random numbers).

Canonical evaluation seeds: game ``i`` of an evaluation is played with
``env.reset(seed=EVAL_SEED_BASE + i)``, ``i = 0 .. games - 1``, for every agent. The env
draws each game's dice stream from that seed alone (the k-th die rolled is the k-th
number of the stream), so two agents see the same dice as long as they re-roll the same
number of dice, and their score differences are paired.

Confidence intervals are two-sided 95% Student-t intervals of the mean (per agent) and
of the mean paired difference (per pair of agents); a proportion (a win rate) gets the
95% Wilson score interval (:func:`wilson_interval`), which keeps its width at 0 and 1.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import math
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agents.registry import PATH_KINDS, run_model
from jamb_env import JambEnv, load_ruleset
from jamb_env.engine.doors import check_count
from jamb_env.rules import column_totals
from jamb_env.utils.files import atomic_path, write_text_file

EVAL_SEED_BASE = 20_000_000
#: Agent specs that end in a path (``<prefix><path>``; a glob in the path names several agents).
PATH_PREFIXES = tuple(f"{kind}:" for kind in PATH_KINDS)  # agents named kind:<path>


def eval_seeds(games: int, base: int = EVAL_SEED_BASE) -> list[int]:
    """The canonical evaluation seeds: ``base .. base + games - 1``."""
    return list(range(base, base + games))


def play_game(agent, env: JambEnv, seed: int, record: bool = False) -> dict:
    """Play one game; return its result: seed, score, steps, score parts, per-column
    totals (``col_<id>``) and per-row sums over the played columns (``row_<id>``); with
    ``record``, also ``"record"``: the :class:`~jamb_env.replay.records.GameRecord`."""
    from jamb_env.replay.records import GameRecord

    obs, info = env.reset(seed=int(seed))
    done, steps = False, 0
    rec = (
        GameRecord(ruleset=env.ruleset.name, seed=int(seed), player=getattr(agent, "name", "agent")) if record else None
    )
    while not done:
        action = agent.act(env, obs, env.action_masks())
        obs, _, done, _, info = rec.play(env, action) if rec is not None else env.step(action)
        steps += 1
    rules, game = env.ruleset, env.game
    record = {"seed": int(seed), "score": int(info["score"]), "steps": steps, **info["score_parts"]}
    record["bonus_rate"] = record["bonus_columns"] / len(info["column_scores"])
    record.update({f"col_{k}": v for k, v in column_totals(rules, game).items()})
    record.update({f"row_{row}": int(game.values[:, r].sum()) for r, row in enumerate(rules.rows)})
    if rec is not None:
        record["record"] = rec
    return record


def _play_chunk(args) -> list[dict]:
    from agents import load

    spec, ruleset, seeds, record, trusted = args
    env = JambEnv(ruleset=ruleset, illegal_action="raise")
    agent = load(spec, ruleset=ruleset, trusted=trusted)
    return [play_game(agent, env, s, record) for s in seeds]


def is_pattern(spec: str) -> bool:
    """Whether an agent spec is a glob pattern of checkpoints (holds ``*``, ``?`` or ``[``)."""
    return any(ch in spec for ch in "*?[")


def expand_specs(specs: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """Agent specs -> (label, spec, group). A glob pattern of checkpoints (``*``) becomes
    one agent per file, all in one group (e.g. several training seeds); a training run
    folder it matches is its model (:func:`agents.registry.run_model`).

    Raises:
        FileNotFoundError: a pattern matches no file, or a run folder without a model.
    """

    out = []
    for spec in specs:
        if is_pattern(spec):
            prefix = next((p for p in PATH_PREFIXES if spec.startswith(p)), "")
            paths = sorted(glob.glob(spec.removeprefix(prefix)))
            if not paths:
                raise FileNotFoundError(f"no checkpoint matches {spec.removeprefix(prefix)}")
            for p in paths:
                try:
                    p = p if prefix else run_model(p)
                except ValueError as exc:  # a folder the pattern matched holds no model
                    raise FileNotFoundError(str(exc)) from None
                out.append((prefix + p, prefix + p, spec))
        else:
            out.append((spec, spec, None))
    return out


def _worker_signals() -> None:
    """A pool worker leaves Ctrl-C and SIGTERM (sent to the whole process group by a
    terminal or a service manager) to the main process, which stops the pool: so the
    main process sees the signal, not a pool broken by its workers' deaths."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s queued tasks and kill its workers now (SIGKILL: they ignore SIGINT
    and SIGTERM, :func:`process_pool`), without waiting for the tasks that are running
    (``shutdown(wait=True)`` would play every queued game)."""
    kill = getattr(pool, "kill_workers", None)  # Python 3.14+
    if kill is not None:
        kill()
        return
    workers = list((getattr(pool, "_processes", None) or {}).values())  # before 3.14: no public way to reach them
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        with contextlib.suppress(OSError, ValueError):
            worker.kill()
    for worker in workers:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            worker.join(timeout=2)


@contextlib.contextmanager
def process_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``jobs`` workers for the block.
    The workers ignore SIGINT and SIGTERM (they are the main process's to handle); when
    the block raises (KeyboardInterrupt, the SIGTERM of ``jamb-evaluate``, an error) the
    queued tasks are cancelled and the workers killed at once (:func:`stop_pool`), so an
    interrupted evaluation ends within a second instead of after every queued game; when
    it succeeds the pool shuts down normally."""
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_signals)
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _cancel(futures) -> None:
    """Cancel the futures of another executor (:class:`agents.evaluation.ray_backend.RayExecutor`) where they can be."""
    for fut in futures:
        cancel = getattr(fut, "cancel", None)
        if cancel is not None:
            with contextlib.suppress(Exception):
                cancel()


def run_games(
    specs: Sequence[str],
    ruleset: str,
    seeds: Sequence[int],
    jobs: int = 1,
    chunk: int = 25,
    progress: bool = True,
    record: bool = False,
    executor=None,
    trusted: bool = False,
) -> dict[str, list[dict]]:
    """Play ``seeds`` with each agent spec; return label -> game results in seed order
    (with ``record``, each result holds its replayable ``"record"``). Model files are
    loaded as :func:`agents.load` does with ``trusted``.

    The chunks of ``chunk`` seeds run in this process (``jobs`` 1), in a pool of ``jobs``
    processes, or on ``executor`` when given: anything with ``submit(fn, arg)`` returning
    a future with ``result()`` (:class:`agents.evaluation.ray_backend.RayExecutor`: Ray tasks). The
    results are the same whichever runs them. An exception while they run (KeyboardInterrupt
    included) stops the rest at once: the pool's workers are killed
    (:func:`process_pool`), an executor's futures cancelled where they can be."""
    from tqdm.auto import tqdm

    load_ruleset(ruleset)  # fail early on an unknown ruleset
    chunk = check_count("chunk", chunk)  # a chunk below 1 played no game at all
    entries = expand_specs(specs)
    tasks = [
        (label, (spec, ruleset, list(seeds[i : i + chunk]), record, trusted))
        for label, spec, _ in entries
        for i in range(0, len(seeds), chunk)
    ]
    results: dict[str, list[dict]] = {label: [] for label, _, _ in entries}
    bar = tqdm(total=len(tasks) * chunk if tasks else 0, disable=not progress, unit="game", desc="evaluating")
    with bar:
        if executor is None and jobs <= 1:
            for label, task in tasks:
                results[label].extend(_play_chunk(task))
                bar.update(len(task[2]))
        else:
            with process_pool(jobs) if executor is None else contextlib.nullcontext(executor) as pool:
                futures = []
                try:
                    for label, task in tasks:
                        futures.append((label, task, pool.submit(_play_chunk, task)))
                    for label, task, fut in futures:
                        results[label].extend(fut.result())
                        bar.update(len(task[2]))
                except BaseException:
                    if executor is not None:
                        _cancel(fut for _, _, fut in futures)
                    raise
    for label in results:
        results[label].sort(key=lambda g: g["seed"])
    return results


def t_interval(x: np.ndarray) -> float:
    """Half-width of the two-sided 95% Student-t interval of the mean of ``x``."""
    from scipy import stats

    n = len(x)
    if n < 2:
        return math.nan
    return float(stats.t.ppf(0.975, n - 1) * np.std(x, ddof=1) / math.sqrt(n))


def wilson_interval(p: float, n: int) -> tuple[float, float]:
    """``(low, high)``: the two-sided 95% Wilson score interval of a proportion ``p``
    measured on ``n`` independent units (Wilson 1927; Brown, Cai & DasGupta 2001).

    Unlike a t or normal interval it never collapses to width 0 at ``p`` = 0 or 1 (0 wins
    of 10: 0 to 0.278). A unit may be a share in [0, 1] rather than 0/1 (a tie counted
    1/2, the mean over a seed's seat orders): its variance is then at most p (1 - p), so
    the interval stays valid, if anything wide. NaN, NaN for ``n < 1``.

    Raises:
        ValueError: ``p`` outside [0, 1].
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a proportion is in [0, 1], got {p!r}")
    if n < 1:
        return math.nan, math.nan
    from scipy import stats

    z = float(stats.norm.ppf(0.975))
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))  # it holds p (rounding aside)


@dataclass
class Summary:
    label: str
    n: int
    mean: float
    std: float
    ci95: float
    min: int
    max: int
    bonus_rate: float
    parts: dict = field(default_factory=dict)


def summarise(results: dict[str, list[dict]]) -> list[Summary]:
    out = []
    for label, games in results.items():
        s = np.array([g["score"] for g in games], dtype=np.float64)
        parts = {
            k: float(np.mean([g[k] for g in games]))
            for k in games[0]
            if k.startswith(("col_", "row_")) or k in ("upper", "bonus", "difference", "lower", "steps")
        }
        out.append(
            Summary(
                label=label,
                n=len(s),
                mean=float(s.mean()),
                std=float(s.std(ddof=1)) if len(s) > 1 else math.nan,
                ci95=t_interval(s),
                min=int(s.min()),
                max=int(s.max()),
                bonus_rate=float(np.mean([g["bonus_rate"] for g in games])),
                parts=parts,
            )
        )
    return out


def paired_differences(results: dict[str, list[dict]]) -> list[tuple[str, str, float, float]]:
    """(a, b, mean of score_a - score_b over the same seeds, CI95 half-width) per pair."""
    labels = list(results)
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            sa = {g["seed"]: g["score"] for g in results[a]}
            sb = {g["seed"]: g["score"] for g in results[b]}
            common = sorted(set(sa) & set(sb))
            d = np.array([sa[s] - sb[s] for s in common], dtype=np.float64)
            out.append((a, b, float(d.mean()), t_interval(d)))
    return out


def group_spread(results: dict[str, list[dict]], specs: Sequence[str]) -> list[tuple[str, int, float, float]]:
    """For each glob group: (pattern, models, mean of the models' means, std across them)."""
    out = []
    groups: dict[str, list[str]] = {}
    for label, _, group in expand_specs(specs):
        if group is not None:
            groups.setdefault(group, []).append(label)
    for group, labels in groups.items():
        means = np.array([np.mean([g["score"] for g in results[lab]]) for lab in labels])
        out.append((group, len(labels), float(means.mean()), float(means.std(ddof=1)) if len(means) > 1 else math.nan))
    return out


# ---------------------------------------------------------------------------- result files
SUMMARY_KEYS = ["agent", "games", "mean", "std", "ci95", "min", "max", "bonus_rate", "exact"]


def csv_text(rows: list[dict], keys: list[str]) -> str:
    """``rows`` as CSV text with the columns ``keys`` (a header line first)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_summary_csv(path: Path, summaries: list[Summary], exact: dict[str, float]) -> None:
    """The per-agent CSV: :data:`SUMMARY_KEYS` (``exact``: the solver's exact expected
    score, else empty), then the mean of each score part and row. Written atomically.

    Raises:
        OSError: the file cannot be written.
    """
    rows = [
        {
            "agent": s.label,
            "games": s.n,
            "mean": s.mean,
            "std": s.std,
            "ci95": s.ci95,
            "min": s.min,
            "max": s.max,
            "bonus_rate": s.bonus_rate,
            "exact": exact.get(s.label, ""),
            **s.parts,
        }
        for s in summaries
    ]
    write_text_file(path, csv_text(rows, SUMMARY_KEYS + list(summaries[0].parts)))


def write_games_csv(path: Path, results: dict[str, list[dict]]) -> None:
    """The per-game CSV: ``agent``, then the columns of :func:`play_game`'s result. Written atomically.

    Raises:
        OSError: the file cannot be written.
    """
    first = next(iter(results.values()))[0]
    write_text_file(
        path,
        csv_text([{"agent": label, **g} for label, games in results.items() for g in games], ["agent"] + list(first)),
    )


def record_file_name(label: str) -> str:
    """The records file of an agent: its label with ``/`` and any control character as
    ``_``, ``.zip`` dropped, ``.jsonl`` added."""
    return "".join(ch if ch.isprintable() and ch != "/" else "_" for ch in label).removesuffix(".zip") + ".jsonl"


def record_file_names(labels: Sequence[str]) -> dict[str, str]:
    """label -> its records file name, unique: :func:`record_file_name`, and where two labels
    give the same name (``/tmp/x/m/classic.zip`` and ``/tmp/x/m_classic.zip``; compared
    ignoring case, for case-insensitive file systems) the later agents, in the order given,
    get ``_2``, ``_3``, ... before ``.jsonl``, so no agent's records overwrite another's."""
    names: dict[str, str] = {}
    reserved = {record_file_name(label).casefold() for label in labels}  # no suffixed name takes another agent's own
    taken: set[str] = set()
    for label in dict.fromkeys(labels):
        name = own = record_file_name(label)
        stem, k = own.removesuffix(".jsonl"), 2
        while name.casefold() in taken or (name != own and name.casefold() in reserved):
            name, k = f"{stem}_{k}.jsonl", k + 1
        taken.add(name.casefold())
        names[label] = name
    return names


def short_label(label: str) -> str:
    """A label for the legend: a checkpoint path shortened to its file name (keeping its ``hybrid:``,
    ``rllib:`` or ``search:``), control characters escaped (:func:`~jamb_env.render.sheet.printable`)."""
    from jamb_env.render.sheet import printable

    prefix = next((p for p in PATH_PREFIXES if label.startswith(p)), "")
    rest = label.removeprefix(prefix)
    return printable(prefix + (Path(rest).name if "/" in rest else rest))


def plot_scores(results: dict[str, list[dict]], path: Path, ruleset: str) -> None:
    """The score distributions of ``results`` (label -> games) as step histograms, one per
    agent, written atomically to ``path`` (the format from its suffix; a failed write
    leaves the previous file intact).

    Raises:
        OSError: the file cannot be written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"text.parse_math": False}):  # labels from file names, e.g. '$\\frac{$', are text
        fig, ax = plt.subplots(figsize=(8, 4.5))
        _draw_scores(ax, results, ruleset)
        fig.tight_layout()
    try:
        with atomic_path(path) as tmp:  # a failed write leaves the previous plot intact
            fig.savefig(tmp, dpi=120, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)


def _draw_scores(ax, results: dict[str, list[dict]], ruleset: str) -> None:
    scores = {label: np.array([g["score"] for g in games]) for label, games in results.items()}
    lo = min(s.min() for s in scores.values())
    hi = max(s.max() for s in scores.values())
    bins = np.linspace(lo, hi, 60)
    for label, s in scores.items():
        ax.hist(s, bins=bins, histtype="step", linewidth=1.5, label=f"{short_label(label)} (mean {s.mean():.0f})")
    ax.set_xlabel("final score (points)")
    ax.set_ylabel("games")
    games = len(next(iter(scores.values())))
    ax.set_title(f"Jamb {short_label(ruleset)}: score distributions over {games} seeded games")
    ax.legend(fontsize=8)
