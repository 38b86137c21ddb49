"""Play Jamb in the terminal, watch an agent play, or replay a recorded game.

    python scripts/play.py [--ruleset classic] [--seed 7] [--coach expectimax]
                           [--save game.jsonl] [--load game.jsonl]
    python scripts/play.py --watch expectimax [--seed 7] [--delay 0.5] [--log game.txt] [--record game.jsonl]
                           [--html game.html] [--video game.mp4|game.gif [--fps 2]]
    python scripts/play.py --replay game.jsonl [--game 0] [--delay 0.5] [--log game.txt]
                           [--html game.html] [--video game.mp4|game.gif [--fps 2]]
    python scripts/play.py --players human expectimax [greedy ...] [--scoring separate|shared]
                           [--ruleset standard] [--seed 7] [--delay 0.5] [--coach greedy]
                           [--save match.jsonl] [--record match.jsonl]
    python scripts/play.py --watch-players greedy expectimax [--scoring shared] [--seed 7] [--delay 0.5]
                           [--log match.txt] [--record match.jsonl] [--video match.mp4|match.gif]

A match (multiplayer, RULES.md §6) seats 2..5 players in the order given: each ``human``
(people take turns at this keyboard, hot seat) or an agent (a name or a MaskablePPO .zip),
which moves by itself ``--delay`` seconds apart; with no ``human`` seat (or
``--watch-players``) you watch. ``--scoring separate`` (default): a sheet each;
``shared``: one sheet, each column going to who wrote most of it. Every sheet and score is
shown, the player to move marked; at the end the final scores and the winner(s). Match
records (``--save``, ``--record``) replay with ``--replay`` (``--video`` and ``--log``
too; ``--html`` is for solitaire games) and resume with ``--load``.

Type ``help`` in a game for the commands (keep / reroll / announce / write / hint /
sheet / save / quit). ``--save FILE`` saves the game after every move and on quit;
``--load FILE`` resumes it (and saves there unless ``--save`` says elsewhere). Saves and
``--record`` files are game records (JSON lines, jamb_env/records.py) that ``--replay``
plays back; scripts/evaluate.py writes them too (``--records DIR``). Every file is written
atomically (a failed save leaves the previous one intact). Ctrl-C ends any mode: the game
so far is saved (``--save``/``--load``; ``--record`` when watching) and the tool exits
with status 130. Bad arguments and unreadable records exit with status 2 and a message.

When watching or replaying, ``--html FILE`` writes the game as one self-contained web page
(jamb_env/replay_html.py: step through it with buttons or the arrow keys, no server or
network needed) and ``--video FILE`` writes it as a video, one frame per step plus the
start (the env's "rgb_array" picture), ``--fps`` frames a second: ``.gif`` with Pillow,
``.mp4`` with moviepy (``pip install -e '.[video]'``). Both are written, atomically, once
the game is over (not on Ctrl-C: replay the ``--record`` file to make them).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from jamb_env import RulesetError
from jamb_env.files import check_output_file, write_text_file
from jamb_env.play import (HUMAN, MatchSession, PlaySession, match_board, match_result, match_status, match_step_line,
                           sheet_table, status_line)
from jamb_env.rules import is_over
from jamb_env.rules import match as M
from jamb_env.records import GameRecord, MatchRecord, RecordError, match_env, read_any, replay, replay_match
from jamb_env.video import MOVIEPY_MISSING, VIDEO_SUFFIXES, MissingDependency, have_moviepy, video_frames, write_video



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
    write_outputs(args, session.record, console)
    return 0


def replay_file(args, console: Console) -> int:
    games = read_any(args.replay)
    if not 0 <= args.game < len(games):
        raise RecordError(f"{args.replay} holds games 0..{len(games) - 1}, not {args.game}")
    record: GameRecord = games[args.game]
    if isinstance(record, MatchRecord):
        return replay_match_file(args, record, console)
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
    write_outputs(args, record, console)
    return 0


MATCH_HTML = "--html makes a page of a solitaire game only, not of a multiplayer match: use --video (.gif or .mp4) or --log"


# ---------------------------------------------------------------------- matches
def match_title(record: MatchRecord) -> str:
    seats = " vs ".join(f"P{p + 1} {name}" for p, name in enumerate(record.players))
    return f"{seats}: {record.ruleset}, {record.scoring} {'sheets' if record.scoring == 'separate' else 'sheet'}, seed {record.seed}"


def replay_match_file(args, record: MatchRecord, console: Console) -> int:
    """--replay of a match record: every step, the board after each turn, the result."""
    if args.html:
        raise ValueError(MATCH_HTML)  # before anything is shown
    console.print(f"replaying the match {escape(match_title(record))} ({len(record.steps)} steps)")
    env, key = None, None
    try:
        for env, step in replay_match(record):
            console.print(match_step_line(step, record.players))
            ms = env.match
            now = (ms.to_move, int(M.sheet_in_play(ms).turn))
            if now != key or M.is_over(env.ruleset, ms):
                console.print(match_board(env, record.players))
                console.print(match_status(env, record.players))
                key = now
            if args.delay > 0:
                time.sleep(args.delay)
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    if env is None:
        env = match_env(record)
        env.reset(seed=record.seed)
        console.print(match_board(env, record.players))
        console.print(match_status(env, record.players))
    if M.is_over(env.ruleset, env.match):
        console.print(match_result(M.scores(env.ruleset, env.match), record.players))
    else:
        console.print(f"[bold]the record stops before the end[/]: {match_scores_text(env, record)}")
    write_outputs(args, record, console)
    return 0


def match_scores_text(env, record: MatchRecord) -> str:
    return ", ".join(f"P{p + 1} {escape(n)} {s}" for p, (n, s) in enumerate(zip(record.players, M.scores(env.ruleset, env.match))))


def load_seats(players, ruleset: str, seed: int) -> dict:
    """seat -> agent for every seat that is not human (a ``random`` agent seeded from the
    game's seed and its seat, so the same seed replays the same match)."""
    import numpy as np

    from agents import load

    policies = {}
    for p, name in enumerate(players):
        if name != HUMAN:
            policy = load(name, ruleset=ruleset)
            if isinstance(getattr(policy, "rng", None), np.random.Generator):
                policy.rng = np.random.default_rng([int(seed), p])
            policies[p] = policy
    return policies


def play_match(args, console: Console, record: MatchRecord | None = None) -> int:
    """A match from --players / --watch-players, or resumed from a --load record."""
    from jamb_env import load_ruleset

    if record is not None:
        players, ruleset, seed, scoring = record.players, record.ruleset, record.seed, record.scoring
    else:
        players, ruleset, seed, scoring = args.players, args.ruleset, args.seed, args.scoring or "separate"
    try:
        M.check_match(load_ruleset(ruleset), len(players), scoring)  # a clear error before any agent loads
    except (RecordError, ValueError) as exc:
        if record is not None:
            raise RecordError(f"{args.load}: {exc}") from exc
        raise
    coach = None
    if args.coach:
        from agents import load

        coach = load(args.coach, ruleset=ruleset)
    session = MatchSession(ruleset, seed, players, scoring, policies=load_seats(players, ruleset, seed), console=console,
                           coach=coach, delay=args.delay, sleep=lambda seconds: time.sleep(seconds))
    people = players.count(HUMAN)
    if record is not None:
        session.load(record)
        console.print(f"resumed {escape(args.load)}: {len(record.steps)} moves, {match_scores_text(session.aec, record)}")
    else:
        rec = session.record
        console.print(f"Jamb match {escape(match_title(rec))}."
                      + (" Type help for the commands." if people else ""))
    save_path = args.save or args.load
    record_path = getattr(args, "record", None)
    try:
        session.run(lambda prompt: console.input(prompt), save_path=save_path)
    except KeyboardInterrupt:
        saved = []
        if save_path:
            saved.append(f"the match is saved in {save_path} (resume with --load {save_path})")
        if record_path:
            session.record.write(record_path)
            saved.append(f"the match so far is in {record_path}")
        where = "; " + "; ".join(saved) if saved else " (not saved: start with --save or --record FILE to keep a match)"
        raise Interrupted(f"interrupted after {len(session.record.steps)} moves{where}") from None
    if record_path:
        session.record.write(record_path)
    if session.over and not people:
        write_outputs(args, session.record, console)
    return 0


def write_outputs(args, record: GameRecord | MatchRecord, console: Console) -> None:
    """--html and --video of a finished watch or replay."""
    if args.html and isinstance(record, MatchRecord):
        raise ValueError(MATCH_HTML)
    if args.html:
        from jamb_env.replay_html import replay_html

        write_text_file(args.html, replay_html(record))
        console.print(f"wrote the page {escape(str(args.html))}")
    if args.video:
        write_video(args.video, video_frames(record), args.fps)
        console.print(f"wrote the video {escape(str(args.video))} ({len(record.steps) + 1} frames, {args.fps:g} a second)")


def interactive(args, console: Console) -> int:
    coach = None
    record = None
    if args.load:
        games = read_any(args.load)
        if len(games) > 1 and not args.save:
            raise RecordError(f"{args.load} holds {len(games)} games; pick one with --game and save the resumed game elsewhere with --save FILE")
        if not 0 <= args.game < len(games):
            raise RecordError(f"{args.load} holds games 0..{len(games) - 1}, not {args.game}")
        record = games[args.game]
        if isinstance(record, MatchRecord):
            return play_match(args, console, record)
        if args.delay_given:
            raise ValueError("--delay cannot be used with a resumed solitaire game (it paces the agents of a match)")
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
    if args.players is not None and args.watch_players is not None:
        parser.error("--players and --watch-players: give one (--players with no human seat watches too)")
    match_seats = args.players if args.players is not None else args.watch_players
    people = 0
    if match_seats is not None:
        option = "--players" if args.players is not None else "--watch-players"
        if not all(name.strip() for name in match_seats):
            parser.error(f"{option}: an empty seat name")
        seats = [HUMAN if name.strip().lower() == HUMAN else name.strip() for name in match_seats]
        if args.watch_players is not None and HUMAN in seats:
            parser.error("--watch-players: agents only (seat a person with --players human ...)")
        if not 2 <= len(seats) <= 5:
            parser.error(f"{option}: a match needs 2..5 seats (each human or an agent), got {len(seats)}")
        args.players, args.watch_players = seats, None
        people = seats.count(HUMAN)
    mode = ("--replay" if args.replay else "--watch" if args.watch else "--load" if args.load
            else "--players" if match_seats is not None else None)
    not_with = {
        "--replay": ("players", "watch_players", "watch", "load", "save", "coach", "record", "seed", "ruleset", "scoring"),
        "--watch": ("players", "watch_players", "load", "save", "coach", "scoring"),
        "--load": ("players", "watch_players", "seed", "ruleset", "scoring", "log", "record", "html", "video"),
        "--players": ("game", "html") + (("log", "video") if people else ("save", "coach")),
        None: ("scoring", "log", "record", "delay", "game", "html", "video"),
    }[mode]
    given = [f"--{k.replace('_', '-')}" for k in not_with if getattr(args, k) is not None]
    if given:
        what = {"--replay": "a replay", "--watch": "watching", "--load": "a resumed game",
                "--players": "a match with a person playing" if people else "watching a match",
                None: "an interactive game"}[mode]
        hint = {"--save": " (use --record to keep a watched game)", "--record": " (a game of yours is saved with --save)",
                "--log": " (--log is for --watch and --replay)", "--game": " (--game picks a game of a --load or --replay file)",
                "--html": " (--html is for --watch and --replay)", "--video": " (--video is for --watch and --replay)",
                "--seed": " (the record has its seed)", "--ruleset": " (the record has its ruleset)",
                "--players": " (a match record names its players)" if mode == "--load" else " (--players starts a match)",
                "--watch-players": " (--watch-players starts a match)", "--scoring": " (--scoring goes with --players)",
                "--coach": " (hints are for a person's seat)"}.get(given[0], "")
        if mode == "--players" and given[0] in ("--log", "--video"):
            hint = f" ({given[0]} is for watching: seat agents only, or replay the match's --record file)"
        if given[0] == "--html" and mode == "--players":
            hint = " (a web page is made of a solitaire game only: watch a match with --video or --log)"
        parser.error(f"{', '.join(given)} cannot be used with {what}{hint}")
    if mode == "--players" and people == len(args.players) and args.delay is not None:
        parser.error("--delay paces the agents' moves, and every seat is human")
    for name in ("replay", "load", "save", "watch", "coach", "record", "log", "ruleset", "html", "video"):
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
    if args.fps is not None:
        if not args.video:
            parser.error("--fps goes with --video")
        if not 0.1 <= args.fps <= 60:  # NaN fails too
            parser.error(f"--fps must be 0.1..60 frames a second, got {args.fps:g}")
    if args.video and Path(args.video).suffix.lower() not in VIDEO_SUFFIXES:
        parser.error(f"--video {args.video}: the name must end in .mp4 or .gif (it picks the format)")
    outputs = [(f"--{name}", getattr(args, name)) for name in ("save", "record", "log", "html", "video") if getattr(args, name)]
    inputs = [(f"--{name}", getattr(args, name)) for name in ("load", "replay") if getattr(args, name)]
    seen: dict[str, str] = {}
    for option, path in outputs + inputs:
        key = os.path.realpath(path)
        if key in seen and not (option == "--load" and seen[key] == "--save"):  # --load X --save X: resume in place
            parser.error(f"{seen[key]} and {option} name the same file {path}")
        seen.setdefault(key, option)
    for name in ("save", "record", "log", "html", "video"):  # fail now, not after a game
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
    parser.add_argument("--html", help="watch/replay: write the game as one self-contained web page here, at the end")
    parser.add_argument("--video", help="watch/replay: write the game as a video here, at the end: .gif, or .mp4 (needs moviepy)")
    parser.add_argument("--fps", type=float, default=None, help="--video frames (steps) a second, 0.1..60 (default 2)")
    parser.add_argument("--players", nargs="+", metavar="SEAT", default=None,
                        help="a match of 2..5 seats in this order, each 'human' (hot seat) or an agent name / MaskablePPO .zip")
    parser.add_argument("--watch-players", nargs="+", metavar="AGENT", default=None,
                        help="watch a match of these 2..5 agents (as --players without a human seat)")
    parser.add_argument("--scoring", choices=("separate", "shared"), default=None,
                        help="match: a sheet each (separate, default) or one shared sheet")
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    args.delay_given = args.delay is not None
    args.ruleset = args.ruleset or "classic"
    args.game = args.game or 0
    args.delay = 0.5 if args.delay is None else args.delay
    args.fps = 2.0 if args.fps is None else args.fps
    if args.video and Path(args.video).suffix.lower() == ".mp4" and not have_moviepy():
        print(f"error: {MOVIEPY_MISSING}", file=sys.stderr)  # now, not after the game
        return 2
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
        elif args.players and not args.load:
            code = play_match(args, console)
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
    except (RulesetError, RecordError, MissingDependency, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
