"""Play Jamb in the terminal, watch an agent play, or replay a recorded game.

    python scripts/play.py [--ruleset classic] [--seed 7] [--coach expectimax]
                           [--save game.jsonl] [--load game.jsonl]
    python scripts/play.py --watch expectimax [--seed 7] [--delay 0.5] [--log game.txt] [--record game.jsonl]
    python scripts/play.py --replay game.jsonl [--game 0] [--delay 0.5] [--log game.txt]

Type ``help`` in a game for the commands (keep / reroll / announce / write / hint /
sheet / save / quit). ``--save FILE`` saves the game after every move and on quit;
``--load FILE`` resumes it. Saves and ``--record`` files are game records (JSON lines,
jamb_env/records.py) that ``--replay`` plays back; scripts/evaluate.py writes them too
(``--records DIR``).
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.markup import escape

from jamb_env import RulesetError
from jamb_env.play import PlaySession, sheet_table, status_line
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


def watch(args, console: Console) -> int:
    from agents import load

    session = PlaySession(args.ruleset, args.seed, console=console, player=args.watch)
    agent = load(args.watch, ruleset=args.ruleset)
    env = session.env

    def steps():
        while not session.over:
            session.apply(agent.act(env, env.observe(), env.action_masks()))
            yield env, session.record.steps[-1]

    show_steps(console, steps(), args.delay)
    console.print(f"[bold]{args.watch} scored {env.score} points[/] ({args.ruleset}, seed {args.seed})")
    if args.record:
        session.record.write(args.record)
    return 0


def replay_file(args, console: Console) -> int:
    games = read_records(args.replay)
    if not 0 <= args.game < len(games):
        raise RecordError(f"{args.replay} holds games 0..{len(games) - 1}, not {args.game}")
    record: GameRecord = games[args.game]
    console.print(f"replaying {record.player} on {record.ruleset}, seed {record.seed} ({len(record.steps)} steps)")
    env = show_steps(console, replay(record), args.delay)
    if env is not None and record.final_score is not None and env.score != record.final_score:
        raise RecordError(f"the replay scored {env.score}, the record says {record.final_score}")
    console.print(f"[bold]final score {env.score if env else 0}[/]")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="classic", help="preset name or rules YAML path")
    parser.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    parser.add_argument("--coach", help="agent for 'hint': greedy, expectimax, optimal, columnwise, ppo, hybrid or a MaskablePPO .zip")
    parser.add_argument("--save", help="save the game here after every move (a game record)")
    parser.add_argument("--load", help="resume a saved game")
    parser.add_argument("--watch", help="an agent plays the game")
    parser.add_argument("--replay", help="replay a game record file")
    parser.add_argument("--game", type=int, default=0, help="which game of a multi-game record file")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds between steps when watching or replaying")
    parser.add_argument("--log", help="watch/replay: write the whole game as text here, at once")
    parser.add_argument("--record", help="watch: write the game record here")
    parser.add_argument("--width", type=int, default=None, help="terminal width for drawing")
    args = parser.parse_args(argv)
    if args.seed is not None and not 0 <= args.seed < 2**32:
        parser.error(f"--seed must be in 0..2**32-1, got {args.seed}")
    if not (0 <= args.delay < 3600):
        parser.error(f"--delay must be 0..3600 seconds, got {args.delay}")
    if args.width is not None and args.width < 40:
        parser.error(f"--width must be at least 40, got {args.width}")
    if args.seed is None:
        args.seed = int(time.time_ns() % 2**31)
    log = None
    try:
        log = open(args.log, "w", encoding="utf-8") if args.log else None
        console = Console(file=log, width=args.width or (120 if log else None), no_color=bool(log), highlight=False)
        if log:
            args.delay = 0.0
        if args.replay:
            return replay_file(args, console)
        if args.watch:
            return watch(args, console)
        coach = None
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
        if args.load:
            session = PlaySession(record.ruleset, record.seed, console=console, coach=coach)
            for env, step in replay(record, session.env):  # checks every action and the dice
                session.record.steps.append({k: v for k, v in step.items()})
            if session.over:
                session.record.final_score = session.env.score
            console.print(f"resumed {args.load}: {len(record.steps)} moves, score {session.env.score}")
        else:
            session = PlaySession(args.ruleset, args.seed, console=console, coach=coach)
            console.print(f"Jamb {session.env.ruleset.name}, seed {args.seed}. Type help for the commands.")
        session.run(lambda: console.input("[bold]> [/]"), save_path=args.save or args.load)
        return 0
    except (RulesetError, RecordError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if log:
            log.close()


if __name__ == "__main__":
    sys.exit(main())
