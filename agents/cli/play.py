"""Play Jamb in the terminal, watch an agent play, or replay a recorded game.

    python scripts/play.py [--ruleset classic] [--seed 7] [--coach expectimax]
                           [--save game.jsonl] [--load game.jsonl]
    python scripts/play.py --watch expectimax [--seed 7] [--delay 0.5] [--log game.txt] [--record game.jsonl]
    python scripts/play.py --replay game.jsonl [--game 0] [--delay 0.5] [--log game.txt]

Type ``help`` in a game for the commands (keep / reroll / announce / write / hint /
sheet / save / quit). ``--save FILE`` saves the game after every move and on quit;
``--load FILE`` resumes it (and saves there unless ``--save`` says elsewhere). Saves and
``--record`` files are game records (JSON lines, jamb_env/records.py) that ``--replay``
plays back; scripts/evaluate.py writes them too (``--records DIR``). Every file is written
atomically (a failed save leaves the previous one intact). Ctrl-C ends any mode: the game
so far is saved (``--save``/``--load``; ``--record`` when watching) and the tool exits
with status 130. Bad arguments and unreadable records exit with status 2 and a message.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time

from rich.console import Console
from rich.markup import escape

from jamb_env import RulesetError
from jamb_env.files import check_output_file, write_text_file
from jamb_env.play import PlaySession, sheet_table, status_line
from jamb_env.rules import is_over
from jamb_env.records import GameRecord, RecordError, read_records, replay


def show_steps(console: Console, steps, delay: float):
    """Draw the sheet after each (env, step) with the action taken; return the last env."""
    env = None
    for k, (env, step) in enumerate(steps):
        text = env.action_to_string(step["action"])
        where = f"turn {step['turn'] + 1}, roll {step['roll']}" if isinstance(step.get("turn"), int) and isinstance(step.get("roll"), int) else f"step {k + 1}"
        console.print(f"[bold]{where}: {escape(text)}[/] (score {env.score})")
        console.print(sheet_table(env))
        console.print(status_line(env))
        if delay > 0:
            time.sleep(delay)
    return env


class Interrupted(Exception):
    """Ctrl-C, with what was saved (a message for the user)."""


def watch(args, console: Console) -> int:
    from agents import load

    session = PlaySession(args.ruleset, args.seed, console=console, player=args.watch)
    agent = load(args.watch, ruleset=args.ruleset)
    env = session.env

    def steps():
        while not session.over:
            session.apply(agent.act(env, env.observe(), env.action_masks()))
            yield env, session.record.steps[-1]

    try:
        show_steps(console, steps(), args.delay)
    except KeyboardInterrupt:
        saved = ""
        if args.record:
            session.record.write(args.record)
            saved = f"; the game so far ({len(session.record.steps)} moves) is in {args.record}"
        raise Interrupted(f"interrupted after {len(session.record.steps)} moves{saved}") from None
    console.print(f"[bold]{escape(args.watch)} scored {env.score} points[/] ({escape(args.ruleset)}, seed {args.seed})")
    if args.record:
        session.record.write(args.record)
    return 0


def replay_file(args, console: Console) -> int:
    games = read_records(args.replay)
    if not 0 <= args.game < len(games):
        raise RecordError(f"{args.replay} holds games 0..{len(games) - 1}, not {args.game}")
    record: GameRecord = games[args.game]
    console.print(f"replaying {escape(record.player)} on {escape(record.ruleset)}, seed {record.seed} ({len(record.steps)} steps)")
    try:
        env = show_steps(console, replay(record), args.delay)
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    if record.final_score is not None:
        if env is None or not is_over(env.ruleset, env.game):
            raise RecordError(f"{args.replay}: the record has an end line but its steps stop before the game's end")
        if env.score != record.final_score:
            raise RecordError(f"{args.replay}: the replay scored {env.score}, the record's end line says {record.final_score}")
    console.print(f"[bold]final score {env.score if env else 0}[/]")
    return 0


def interactive(args, console: Console) -> int:
    coach = None
    record = None
    if args.load:
        games = read_records(args.load)
        if len(games) > 1 and not args.save:
            raise RecordError(f"{args.load} holds {len(games)} games; pick one with --game and save the resumed game elsewhere with --save FILE")
        if not 0 <= args.game < len(games):
            raise RecordError(f"{args.load} holds games 0..{len(games) - 1}, not {args.game}")
        record = games[args.game]
        args.ruleset = record.ruleset
    if args.coach:
        from agents import load

        coach = load(args.coach, ruleset=args.ruleset)
    if record is not None:
        session = PlaySession(record.ruleset, record.seed, console=console, coach=coach)
        for env, step in replay(record, session.env):  # checks every action and the dice
            session.record.steps.append({k: v for k, v in step.items()})
        if session.over:
            session.record.final_score = session.env.score
        console.print(f"resumed {escape(args.load)}: {len(record.steps)} moves, score {session.env.score}")
    else:
        session = PlaySession(args.ruleset, args.seed, console=console, coach=coach)
        console.print(f"Jamb {escape(session.env.ruleset.name)}, seed {args.seed}. Type help for the commands.")
    save_path = args.save or args.load
    try:
        session.run(lambda: console.input("[bold]> [/]"), save_path=save_path)  # saves on the way out, Ctrl-C included
    except KeyboardInterrupt:
        where = f"; the game is saved in {save_path} (resume with --load {save_path})" if save_path else " (not saved: start with --save FILE to keep a game)"
        raise Interrupted(f"interrupted after {len(session.record.steps)} moves{where}") from None
    return 0


def check_arguments(parser: argparse.ArgumentParser, args) -> None:
    """Refuse options that the chosen mode would ignore, and bad values."""
    mode = "--replay" if args.replay else "--watch" if args.watch else "--load" if args.load else None
    not_with = {
        "--replay": ("watch", "load", "save", "coach", "record", "seed", "ruleset"),
        "--watch": ("load", "save", "coach"),
        "--load": ("seed", "ruleset", "log", "record", "delay"),
        None: ("log", "record", "delay", "game"),
    }[mode]
    given = [f"--{k}" for k in not_with if getattr(args, k) is not None]
    if given:
        what = {"--replay": "a replay", "--watch": "watching", "--load": "a resumed game", None: "an interactive game"}[mode]
        hint = {"--save": " (use --record to keep a watched game)", "--record": " (a game of yours is saved with --save)",
                "--log": " (--log is for --watch and --replay)", "--game": " (--game picks a game of a --load or --replay file)",
                "--seed": " (the record has its seed)", "--ruleset": " (the record has its ruleset)"}.get(given[0], "")
        parser.error(f"{', '.join(given)} cannot be used with {what}{hint}")
    for name in ("replay", "load", "save", "watch", "coach", "record", "log", "ruleset"):
        value = getattr(args, name)
        if value is not None and not value.strip():
            parser.error(f"--{name}: empty")
    if args.seed is not None and not 0 <= args.seed < 2**32:
        parser.error(f"--seed must be in 0..2**32-1, got {args.seed}")
    if args.delay is not None and not (0 <= args.delay < 3600):
        parser.error(f"--delay must be 0..3600 seconds, got {args.delay}")
    if args.width is not None and not 40 <= args.width <= 10_000:
        parser.error(f"--width must be 40..10000, got {args.width}")
    if args.game is not None and args.game < 0:
        parser.error(f"--game must be 0 or more, got {args.game}")
    for name in ("save", "record", "log"):  # fail now, not after a game
        if getattr(args, name):
            try:
                check_output_file(getattr(args, name))
            except OSError as exc:
                parser.error(f"--{name}: {exc}")
    for name in ("load", "replay"):
        path = getattr(args, name)
        if path and not os.path.isfile(path):
            parser.error(f"--{name} {path}: {'a folder, not a game record file' if os.path.isdir(path) else 'no such file'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default=None, help="preset name or rules YAML path (default classic)")
    parser.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    parser.add_argument("--coach", help="agent for 'hint': greedy, expectimax, optimal, columnwise, ppo, hybrid or a MaskablePPO .zip")
    parser.add_argument("--save", help="save the game here after every move (a game record)")
    parser.add_argument("--load", help="resume a saved game")
    parser.add_argument("--watch", help="an agent plays the game")
    parser.add_argument("--replay", help="replay a game record file")
    parser.add_argument("--game", type=int, default=None, help="which game of a multi-game record file (default 0)")
    parser.add_argument("--delay", type=float, default=None, help="seconds between steps when watching or replaying (default 0.5)")
    parser.add_argument("--log", help="watch/replay: write the whole game as text here, at the end")
    parser.add_argument("--record", help="watch: write the game record here")
    parser.add_argument("--width", type=int, default=None, help="terminal width for drawing")
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    args.ruleset = args.ruleset or "classic"
    args.game = args.game or 0
    args.delay = 0.5 if args.delay is None else args.delay
    if args.seed is None:
        args.seed = int(time.time_ns() % 2**31)
    log = io.StringIO() if args.log else None
    try:
        console = Console(file=log, width=args.width or (120 if log else None), no_color=bool(log), highlight=False)
        if log:
            args.delay = 0.0
        if args.replay:
            code = replay_file(args, console)
        elif args.watch:
            code = watch(args, console)
        else:
            code = interactive(args, console)
        if log:
            write_text_file(args.log, log.getvalue())
        return code
    except Interrupted as exc:
        if log:
            write_text_file(args.log, log.getvalue())
        print(f"\n{exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except (RulesetError, RecordError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
