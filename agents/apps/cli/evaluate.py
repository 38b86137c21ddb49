"""Compare agents on the same seeded Jamb games, with 95% confidence intervals.

    jamb-evaluate --ruleset classic --agents random greedy expectimax columnwise \
        [runs/*/final_model.zip] --games 2000 --jobs 2 --out results/classic

Every agent plays the canonical evaluation seeds (agents/evaluation/solitaire.py: 20,000,000 + i),
so differences are paired. Prints Markdown tables (per agent, per column, per row, paired
differences, spread across checkpoints of a glob) and writes ``<out>.csv`` (per agent),
``<out>_games.csv`` (per game) and ``<out>.png`` (score distributions).

``--out`` is a prefix (``results/classic`` -> ``results/classic.csv``, ...; a ``.csv`` or
``.png`` ending is dropped), or a folder (an existing one, or a path ending in ``/``): then
the files go inside it, named after the ruleset (``results/ -> results/classic.csv``, ...).
Every file is written atomically (a failed write leaves the previous file intact); the
output paths are checked before any game is played: each must be a regular file or a new
one (jamb_env/utils/files.py: no device, FIFO or socket, nothing inside /dev, /proc or /sys; a
symbolic link is written through to its target). Exit status 2 on bad arguments or
paths; Ctrl-C stops the games at once (``--jobs`` workers included), writes nothing and
exits with 130, SIGTERM the same with 143.

``--ray`` (the ``ray`` extra: ``pip install "jamb-env[ray]"``) plays the same chunks of seeds as Ray
tasks, on a local Ray with ``--jobs`` CPUs (default 2) or on the cluster at ``--address
HEAD:6379``; the tables and files are the same as without it (agents/evaluation/ray_backend.py).

Multiplayer (``--players N``, RULES.md §6; agents/evaluation/matches.py): the agents play
each other instead of solitaire games.

    jamb-evaluate --ruleset standard --agents greedy expectimax --players 2 \
        --games 100 [--scoring separate|shared] [--jobs 2] [--out results/standard_2p]

With 2 players every pair of agents plays; with 3..5 all the agents (exactly N) sit at one
table. Each table plays every seed (20,000,000 + g) in each cyclic seat order (for two: A B
and B A) on the same dice, so results are paired per seed. Prints Markdown tables (per
pair: A's win rate against B, a tie counting one half, with its 95% Wilson score interval,
and the mean score margin A − B with its 95% Student-t interval, both over the seeds;
openskill Plackett–Luce ratings, sorted by ordinal) and writes ``PREFIX_matches.csv`` (per
pair), ``PREFIX_match_ratings.csv`` and ``PREFIX_match_games.csv`` (per game: seed, seat
order, agent per seat, starting seat, scores, winner). The default prefix is
``results/<ruleset>_<N>p_<scoring>``; ``--out`` takes a prefix or a folder as above.
``--scoring`` (default ``separate``: a sheet each; ``shared``: 003's one sheet) needs
``--players``.

Model files (``.zip`` paths, ``hybrid:``/``critic:`` with a path) are read as data: SB3
model files hold pickles that loading would run, so a file whose pickles name anything
but the types this project's models hold is refused before any game (exit status 2)
unless ``--trust-model``, which loads it as SB3 does (agents/model_files.py). A model
trained on normalised observations (VecNormalize) plays with its ``vecnormalize.pkl``
(a pickle: ``--trust-model`` too) or not at all. RLlib checkpoints (``rllib:``) are
pickles RLlib loads as they are: name only your own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, path_arg, untrusted_model
from agents.evaluation.solitaire import (
    EVAL_SEED_BASE,
    eval_seeds,
    expand_specs,
    group_spread,
    is_pattern,
    paired_differences,
    plot_scores,
    record_file_name,
    record_file_names,
    run_games,
    summarise,
    write_games_csv,
    write_summary_csv,
)
from agents.registry import AGENT_NAMES, parse_spec, run_model
from jamb_env.engine.doors import SEED_LIMIT
from jamb_env.render.sheet import printable
from jamb_env.replay.records import HUMAN, RecordError, read_records, write_records
from jamb_env.utils.files import OutputPathError, check_output_file, check_output_folder


def markdown(results, summaries, pairs, spreads, exact: dict[str, float]) -> str:
    lines = [
        "| agent | games | mean | std | 95% CI | min | max | bonus rate | exact expectation |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        ex = f"{exact[s.label]:.4f}" if s.label in exact else ""
        lines.append(
            f"| {s.label} | {s.n} | {s.mean:.1f} | {s.std:.1f} | ± {s.ci95:.1f} | {s.min} | {s.max} | "
            f"{s.bonus_rate:.3f} | {ex} |"
        )
    cols = [k for k in summaries[0].parts if k.startswith("col_")]
    lines += [
        "",
        "| agent | " + " | ".join(c[4:] for c in cols) + " | upper | bonus | difference | lower |",
        "|---" * (len(cols) + 5) + "|",
    ]
    for s in summaries:
        vals = [s.parts[c] for c in cols] + [s.parts[k] for k in ("upper", "bonus", "difference", "lower")]
        lines.append(f"| {s.label} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
    rows = [k for k in summaries[0].parts if k.startswith("row_")]
    lines += [
        "",
        "| row (sum over columns) | " + " | ".join(s.label for s in summaries) + " |",
        "|---" * (len(summaries) + 1) + "|",
    ]
    for r in rows:
        lines.append(f"| {r[4:]} | " + " | ".join(f"{s.parts[r]:.1f}" for s in summaries) + " |")
    if pairs:
        lines += ["", "| paired difference | mean | 95% CI |", "|---|---|---|"]
        for a, b, d, ci in pairs:
            lines.append(f"| {a} − {b} | {d:+.1f} | ± {ci:.1f} |")
    if spreads:
        lines += ["", "| checkpoints | models | mean of means | std across models |", "|---|---|---|---|"]
        for group, k, mean, sd in spreads:
            lines.append(f"| {group} | {k} | {mean:.1f} | {sd:.1f} |")
    return "\n".join(lines)


def _prefix(out_arg: str | None, stem: str, suffixes: tuple[str, ...]) -> Path:
    """The output prefix for ``--out``: ``results/<stem>`` by default, ``<folder>/<stem>``
    for a folder, else the prefix given (without one of ``suffixes``)."""
    if out_arg is None:
        return Path("results") / stem
    if os.path.isdir(out_arg) or out_arg.endswith(("/", os.sep)):  # isdir: False for a name too long, no OSError
        return Path(out_arg) / stem
    prefix = Path(out_arg)
    return prefix.with_suffix("") if prefix.suffix.lower() in suffixes else prefix


def output_paths(out_arg: str | None, ruleset: str) -> tuple[Path, Path, Path]:
    """``(per-agent csv, per-game csv, png)`` for ``--out`` (a prefix, or a folder: files inside it)."""
    prefix = _prefix(out_arg, Path(ruleset).stem, (".csv", ".png"))
    return (
        prefix.with_name(prefix.name + ".csv"),
        prefix.with_name(prefix.name + "_games.csv"),
        prefix.with_name(prefix.name + ".png"),
    )


MAX_GAMES = 10_000_000


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``jamb-evaluate`` (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--ruleset", default="classic", help="preset name or rules YAML path")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "greedy", "expectimax"],
        help="names (random, greedy, expectimax, optimal, columnwise, ppo: the shipped agents/models/<ruleset>.zip, "
        "hybrid: its cell choices with the exact planner's holds, hybrid:<model.zip>), critic (the exact turn "
        "planner with the shipped model's critic at its leaves; critic:<model.zip>), search (the exact turn "
        "planner on the shipped agents/models/value_<ruleset>.npz), search:<value network .npz>, MaskablePPO "
        ".zip paths (a glob groups several checkpoints) or rllib:<run or checkpoint folder> (jamb-train "
        "--engine rllib; needs the ray extra)",
    )
    parser.add_argument("--games", type=int, default=1000, help=f"games per agent (canonical seeds; 2..{MAX_GAMES:,})")
    parser.add_argument("--seed-base", type=int, default=EVAL_SEED_BASE, help="first seed (default: the canonical one)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default 1); with --ray: the CPUs of the local Ray (default 2)",
    )
    parser.add_argument(
        "--out",
        type=path_arg,
        default=None,
        help="output prefix PREFIX -> PREFIX.csv, PREFIX_games.csv, PREFIX.png; or a folder (existing, or ending in "
        "/) -> FOLDER/<ruleset>.csv, ... (default results/<ruleset>)",
    )
    parser.add_argument(
        "--records",
        type=path_arg,
        help="write each agent's games as replayable records (JSON lines, one <agent>.jsonl per agent) into this "
        "folder",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        help="play multiplayer matches between the agents, N players a table (2..5; 2: every pair of agents)",
    )
    parser.add_argument(
        "--scoring",
        choices=("separate", "shared"),
        default=None,
        help="multiplayer scoring (with --players): a sheet each (separate, default) or one shared sheet (shared)",
    )
    parser.add_argument(
        "--ray",
        action="store_true",
        help="play the games as Ray tasks, on a local Ray or the cluster at --address (needs the ray extra)",
    )
    parser.add_argument(
        "--address",
        help="with --ray: join the Ray cluster at HEAD:6379 (default: $RAY_ADDRESS, else start a local Ray)",
    )
    parser.add_argument("--no-progress", action="store_true")
    add_trust_model(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args) -> None:
    """Refuse bad values and options that do not go together (``parser.error``: exit 2);
    fills in the default ``--jobs``."""
    if args.address is not None and not args.ray:
        parser.error("--address is for --ray: add --ray to play on that Ray cluster")
    if args.ray and args.players is not None:
        parser.error("--ray plays solitaire games only; multiplayer matches (--players) run locally (--jobs)")
    if args.jobs is None:
        args.jobs = 2 if args.ray else 1
    if not 2 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be 2..{MAX_GAMES:,} (at least 2 for confidence intervals), got {args.games}")
    max_jobs = max(64, 4 * (os.cpu_count() or 1))
    if not 1 <= args.jobs <= max_jobs:
        parser.error(f"--jobs must be 1..{max_jobs}, got {args.jobs}")
    if args.seed_base < 0 or args.seed_base + args.games > SEED_LIMIT:
        parser.error("--seed-base must be >= 0 (seeds are seed_base .. seed_base + games - 1 < 2**32)")
    check_agents(parser, args)
    if args.players is None and args.scoring is not None:
        parser.error(f"--scoring {args.scoring} is for multiplayer matches: add --players N (2..5)")


def check_agents(parser: argparse.ArgumentParser, args) -> None:
    """Every ``--agents`` spec names an agent (:func:`agents.registry.parse_spec`), once; a
    glob matches files; an RLlib checkpoint folder and a search agent's network are read
    now, so a wrong one fails before any game is played."""
    if len(set(args.agents)) != len(args.agents):
        parser.error("an agent is named twice: each agent plays the same games once")
    if any(not a.strip() for a in args.agents):
        parser.error("--agents: an empty agent name")
    try:
        args.agents = [run_model(spec) for spec in args.agents]  # a training run folder: its model
    except ValueError as exc:
        parser.error(f"--agents {exc}")
    for spec in args.agents:
        try:
            kind, path = parse_spec(spec)
            if kind == "model" and not spec.endswith(".zip"):  # this tool takes MaskablePPO models as .zip paths only
                raise ValueError(spec)
        except ValueError:
            if is_pattern(spec):  # a glob of checkpoints: expanded (and checked) below
                continue
            parser.error(
                f"--agents: unknown agent {spec!r}; agents are {', '.join(AGENT_NAMES)}, MaskablePPO .zip paths "
                "(globs too), "
                "search:<value network .npz> or rllib:<RLlib run or checkpoint folder>"
            )
        if kind == "rllib":  # an RLlib checkpoint (agents/rllib_agent.py): the folder is checked now
            from agents.rllib_agent import find_module_dir

            try:
                find_module_dir(path or ".")
            except FileNotFoundError as exc:
                parser.error(f"--agents {spec}: {exc}")
    try:
        labels = [label for label, _, _ in expand_specs(args.agents)]
    except FileNotFoundError as exc:
        parser.error(f"--agents: {exc}")
    why = untrusted_model(labels, args.trust_model)  # a model file holding pickled code: refused before any game
    if why is not None:
        parser.error(f"--agents: {why}")
    for label in labels:  # a search agent's network is read now: a wrong file or ruleset fails before any game
        if label == "search" or label.startswith("search:"):  # a glob's label may name no agent: run_games says so
            from agents import load

            try:
                load(label, ruleset=args.ruleset)
            except (ValueError, FileNotFoundError) as exc:
                parser.error(f"--agents {label}: {exc}")
    if len(set(labels)) != len(labels):
        twice = sorted({x for x in labels if labels.count(x) > 1})
        parser.error(
            f"--agents: {', '.join(twice)} named twice (a glob matches a file named on its own?): each agent plays "
            "the same games once"
        )


class Terminated(KeyboardInterrupt):
    """SIGTERM while ``jamb-evaluate`` runs: it stops the evaluation as Ctrl-C does (exit status 143)."""


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM raises :class:`Terminated`
    there, so it unwinds like Ctrl-C: the pool's workers are killed and nothing is written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _played(play, *args, **kwargs) -> tuple[object, int | None]:
    """``(play(*args, **kwargs), None)``; on Ctrl-C, a dead worker or a bad input, one line printed and
    ``(None, exit code)``: nothing is written then."""
    try:
        return play(*args, **kwargs), None
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the workers are stopped (solitaire.process_pool)
        return None, interrupted(exc, "; nothing written")
    except BrokenProcessPool as exc:  # a worker killed from outside (the OOM killer, kill -9)
        print(
            f"error: a --jobs worker process died before finishing its games; nothing written ({exc})", file=sys.stderr
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    return None, 2


def interrupted(exc: KeyboardInterrupt, detail: str) -> int:
    """Print "interrupted" (Ctrl-C) or "terminated (SIGTERM)", then ``detail``; return the
    exit status: 130 for Ctrl-C, 143 for SIGTERM."""
    terminated = isinstance(exc, Terminated)
    print(f"\n{'terminated (SIGTERM)' if terminated else 'interrupted'}{detail}", file=sys.stderr)
    return 128 + (signal.SIGTERM if terminated else signal.SIGINT)


def main(argv: list[str] | None = None) -> int:
    with sigterm_interrupts():
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            check_arguments(parser, args)
            if args.players is not None:
                return main_matches(parser, args, [spec for _, spec, _ in expand_specs(args.agents)])
            return main_solitaire(args)
        except KeyboardInterrupt as exc:  # while the arguments and agents are checked
            return interrupted(exc, "; nothing written")


def main_solitaire(args) -> int:
    """Solitaire games of every agent on the same seeds: the tables, then the files."""
    paths = output_paths(args.out, args.ruleset)
    try:  # fail before playing, not after
        for path in paths:
            check_output_file(path)
        if args.records:
            check_output_folder(args.records)
            names = record_file_names([label for label, _, _ in expand_specs(args.agents)])
            for name in names.values():  # a FIFO or device, a link or a file of something else
                check_records_file(Path(args.records) / name, args.seed_base)
            if any(name != record_file_name(label) for label, name in names.items()):
                for label, name in names.items():  # two labels with one file name: say which file is whose
                    print(f"records of {label}: {Path(args.records) / name}", file=sys.stderr)
    except OSError as exc:
        print(f"error: cannot write the outputs: {exc}", file=sys.stderr)
        return 2
    results, code = _played(play_solitaire, args)
    if results is None:  # a line printed (code), or play_solitaire's own (2)
        return 2 if code is None else code
    records = {label: [g.pop("record") for g in games] for label, games in results.items()} if args.records else {}
    summaries = summarise(results)
    exact = exact_expectations(results, args.ruleset)
    print(
        printable(
            markdown(results, summaries, paired_differences(results), group_spread(results, args.agents), exact),
            newlines=True,
        )
    )  # labels from globbed file names
    try:
        write_solitaire_outputs(args, results, summaries, exact, records, paths)
    except OSError as exc:
        print(f"error: cannot write the outputs: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return interrupted(exc, " while writing; each file is either complete or as it was")
    csv_path, games_path, png_path = paths
    print(
        f"\nwrote {csv_path}, {games_path}, {png_path}" + (f" and records in {args.records}" if args.records else ""),
        file=sys.stderr,
    )
    return 0


def play_solitaire(args) -> dict[str, list[dict]] | None:
    """:func:`agents.evaluation.solitaire.run_games` in local processes, or as Ray tasks with
    ``--ray``; None (the error printed) when Ray is unavailable."""
    seeds = eval_seeds(args.games, args.seed_base)
    if not args.ray:
        return run_games(
            args.agents,
            args.ruleset,
            seeds,
            jobs=args.jobs,
            progress=not args.no_progress,
            record=bool(args.records),
            trusted=args.trust_model,
        )
    from agents.evaluation.ray_backend import RayExecutor, RayUnavailable, ray_session

    try:
        with ray_session(args.address, args.jobs):
            return run_games(
                args.agents,
                args.ruleset,
                seeds,
                progress=not args.no_progress,
                record=bool(args.records),
                executor=RayExecutor(),
                trusted=args.trust_model,
            )
    except RayUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def check_records_file(path: Path, seed_base: int = EVAL_SEED_BASE, player: str | None = None) -> None:
    """Refuse a ``--records`` file that holds something other than an earlier evaluation's
    records: only a new file, or a plain file (not a link) of one agent's solitaire games on
    the seeds ``seed_base``, ``seed_base + 1``, ... in order (what an evaluation from that
    seed writes), is replaced; with ``player`` (the name the new records give their agent),
    only that agent's.

    Raises:
        OutputPathError: a link, a file that does not read as game records, a record of a
            person's games or (``player``) of another agent's (the message names it and the way
            on); as :func:`check_output_file`.
    """
    check_output_file(path)
    if not (path.exists() or path.is_symlink()):
        return
    why = None
    if path.is_symlink():
        why = "a symbolic link"
    else:
        try:
            games = read_records(path)
        except RecordError:
            why = "not a record of agents' games"
        else:
            players = {g.player for g in games}
            if HUMAN in players:
                why = "a record of a person's games"
            elif len(players) != 1 or [g.seed for g in games] != list(range(seed_base, seed_base + len(games))):
                why = f"not one agent's games on the evaluation seeds from {seed_base}"
            elif player is not None and players != {player}:
                why = printable(f"the records of another agent ({next(iter(players))[:80]}, not {player[:80]})")
    if why is not None:
        raise OutputPathError(
            f"{path} is {why}: --records replaces only the records an earlier evaluation wrote; "
            "move it away or give another folder"
        )


def exact_expectations(results: dict, ruleset: str) -> dict[str, float]:
    """label -> the exact expected score, for the solvers (optimal, columnwise) among the agents."""
    exact = {}
    for label in results:
        if label in ("optimal", "columnwise"):
            from agents import load

            exact[label] = load(label, ruleset=ruleset).expected_score
    return exact


def write_solitaire_outputs(
    args, results: dict, summaries, exact: dict, records: dict, paths: tuple[Path, Path, Path]
) -> None:
    """The records (``--records``), the per-agent and per-game CSVs and the plot, each atomically.

    Raises:
        OSError: a records file of another agent (nothing written: :func:`check_records_file`), a
            file that cannot be written (the ones before it are written).
    """
    csv_path, games_path, png_path = paths
    if args.records:
        folder = Path(args.records)
        names = record_file_names(list(records))
        for label, recs in records.items():  # now the agents' names are known: each file is its own agent's
            check_records_file(folder / names[label], args.seed_base, recs[0].player if recs else None)
        for label, recs in records.items():
            write_records(folder / names[label], recs)
    write_summary_csv(csv_path, summaries, exact)
    write_games_csv(games_path, results)
    plot_scores(results, png_path, args.ruleset)


# ---------------------------------------------------------------------------- multiplayer
def match_output_paths(out_arg: str | None, ruleset: str, players: int, scoring: str) -> tuple[Path, Path, Path]:
    """``(per-pair csv, ratings csv, per-game csv)`` for ``--out`` in multiplayer mode:
    ``PREFIX_matches.csv``, ``PREFIX_match_ratings.csv``, ``PREFIX_match_games.csv`` (a
    folder: ``FOLDER/<ruleset>_<N>p_<scoring>_...``)."""
    prefix = _prefix(out_arg, f"{Path(ruleset).stem}_{players}p_{scoring}", (".csv",))
    return tuple(
        prefix.with_name(prefix.name + tail) for tail in ("_matches.csv", "_match_ratings.csv", "_match_games.csv")
    )


def matches_markdown(rr) -> str:
    seeds = sorted({g["seed"] for g in rr.games})
    head = (
        f"{rr.players}-player {rr.ruleset}, {rr.scoring} {'sheets' if rr.scoring == 'separate' else 'sheet'}: "
        f"{len(seeds)} seeds ({seeds[0]}..{seeds[-1]}) x {rr.players} seat orders, {len(rr.games)} games; "
        f"the starting seat won {rr.first_player_win_rate:.3f} of them"
    )
    lines = [
        head,
        "",
        "| A | B | seeds | games | A wins | B wins | ties | win rate of A | 95% CI (Wilson) | margin A − B | 95% CI "
        "| mean A | mean B |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in rr.pairings:
        lines.append(
            f"| {p.a} | {p.b} | {p.units} | {p.games} | {p.wins_a} | {p.wins_b} | {p.ties} | {p.win_rate:.3f} | "
            f"{p.win_low:.3f}–{p.win_high:.3f} "
            f"| {p.margin:+.1f} | ± {p.margin_ci95:.1f} | {p.mean_a:.1f} | {p.mean_b:.1f} |"
        )
    lines += ["", "| rank | agent | mu | sigma | ordinal | games | mean score |", "|---|---|---|---|---|---|---|"]
    for k, r in enumerate(rr.ratings, 1):
        lines.append(
            f"| {k} | {r.agent} | {r.mu:.2f} | {r.sigma:.2f} | {r.ordinal:.2f} | {r.games} | {r.mean_score:.1f} |"
        )
    return "\n".join(lines)


def main_matches(parser: argparse.ArgumentParser, args, specs: list[str]) -> int:
    """``--players N``: the multiplayer round robin (module docstring)."""
    from agents.evaluation.matches import round_robin, write_match_csvs
    from jamb_env import load_ruleset
    from jamb_env.rules.match import MAX_PLAYERS, MIN_PLAYERS, check_match
    from jamb_env.utils.errors import RulesetError

    scoring = args.scoring or "separate"
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {args.players}")
    if args.records:
        parser.error("--records is for solitaire games; it cannot be used with --players")
    if len(specs) < 2:
        parser.error(f"--players: a match needs at least 2 agents, got {len(specs)} ({', '.join(specs)})")
    if args.players > 2 and len(specs) != args.players:
        parser.error(
            f"--players {args.players}: all the agents sit at one table, so give exactly {args.players} agents, got "
            f"{len(specs)}"
        )
    try:
        check_match(load_ruleset(args.ruleset), args.players, scoring)
    except (RulesetError, OSError) as exc:
        parser.error(f"--ruleset {args.ruleset}: {exc}")
    paths = match_output_paths(args.out, args.ruleset, args.players, scoring)
    try:  # fail before playing, not after
        for path in paths:
            check_output_file(path)
    except OSError as exc:
        print(f"error: cannot write the outputs: {exc}", file=sys.stderr)
        return 2
    rr, code = _played(
        round_robin,
        args.ruleset,
        specs,
        args.games,
        scoring=scoring,
        seed_base=args.seed_base,
        jobs=args.jobs,
        players=args.players,
        progress=not args.no_progress,
        trusted=args.trust_model,
    )
    if code is not None:
        return code
    print(printable(matches_markdown(rr), newlines=True))
    pairs_path, ratings_path, games_path = paths
    try:
        write_match_csvs(rr, pairs_path, ratings_path, games_path)
    except OSError as exc:
        print(f"error: cannot write the outputs: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return interrupted(exc, " while writing; each file is either complete or as it was")
    print(f"\nwrote {pairs_path}, {ratings_path}, {games_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
