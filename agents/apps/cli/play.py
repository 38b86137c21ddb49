"""Play Jamb in the terminal, watch an agent play, or replay a recorded game.

    jamb-play [--ruleset classic] [--seed 7] [--coach expectimax]
                 [--save game.jsonl] [--load game.jsonl]
    jamb-play --watch expectimax [--seed 7] [--delay 0.5] [--log game.txt] [--record game.jsonl]
                 [--html game.html] [--video game.mp4|game.gif [--fps 2]]
    jamb-play --replay game.jsonl [--game 0] [--delay 0.5] [--log game.txt]
                 [--html game.html] [--video game.mp4|game.gif [--fps 2]]
    jamb-play --players human expectimax [greedy ...] [--scoring separate|shared]
                 [--ruleset standard] [--seed 7] [--delay 0.5] [--coach greedy]
                 [--save match.jsonl] [--record match.jsonl]
    jamb-play --watch-players greedy expectimax [--scoring shared] [--seed 7] [--delay 0.5]
                 [--log match.txt] [--record match.jsonl] [--video match.mp4|match.gif]

A match (multiplayer, RULES.md §6) seats 2..5 players in the order given: each ``human``
(people take turns at this keyboard, hot seat) or an agent (a name or a MaskablePPO .zip),
which moves by itself ``--delay`` seconds apart; with no ``human`` seat (or
``--watch-players``) you watch. ``--scoring separate`` (default): a sheet each;
``shared``: one sheet, each column going to who wrote most of it. Every sheet and score is
shown, the player to move marked; at the end the final scores and the winner(s). Match
records (``--save``, ``--record``) replay with ``--replay`` (``--video`` and ``--log``
too; ``--html`` is for solitaire games) and resume with ``--load``. A record is data: a
resumed match re-creates its ``human`` seats and built-in agents (``greedy``, ``ppo``, ...)
by name, but loads a seat that names a file (a model .zip, ``hybrid:``/``search:``/
``rllib:`` with a path) only when you name the seats again, ``--load match.jsonl
--players human runs/x/final_model.zip`` (the record's seats, in order): a file the
record names is the user's choice, never the record's. A model file is read as data: one
holding pickled code (which SB3 would run on loading it) is refused unless ``--trust-model``
(agents/model_files.py; RLlib checkpoints are pickles RLlib loads as they are).

Type ``help`` in a game for the commands (keep / reroll / announce / write / hint /
sheet / save / quit). ``--save FILE`` saves the game after every move and on quit (FILE
new or empty: an existing file is never replaced, resume the game in it with ``--load``);
``--load FILE`` resumes it (and saves there unless ``--save`` says elsewhere; a file of
several games is never saved over: ``--game K --save OTHER``, OTHER not the same file). Saves and
``--record`` files are game records (JSON lines, jamb_env/replay/records.py) that ``--replay``
plays back; jamb-evaluate writes them too (``--records DIR``). Every file is written
atomically (a failed save leaves the previous one intact). Ctrl-C ends any mode: the game
so far is saved (``--save``/``--load``; ``--record`` when watching) and the tool exits
with status 130; SIGTERM and SIGHUP (a closed terminal) save the same and exit with 143
and 129. Bad arguments and unreadable records exit with status 2 and a message. Text from
files (players, ruleset names, step texts) is shown with control characters escaped
(``\\x1b``), so a record cannot drive the terminal.

When watching or replaying, ``--html FILE`` writes the game as one self-contained web page
(jamb_env/replay/html.py: step through it with buttons or the arrow keys, no server or
network needed) and ``--video FILE`` writes it as a video, one frame per step plus the
start (the env's "rgb_array" picture), ``--fps`` frames a second: ``.gif`` with Pillow,
``.mp4`` with moviepy (the ``video`` extra: ``pip install "jamb-env[video]"``). Both are written, atomically, once
the game is over; when Ctrl-C or a signal ends a ``--watch``, they are written of the game
so far (the message says so, or why not); an interrupted replay or watched match writes
neither and says so (replay the ``--record`` file to make them).
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import threading
import time
from pathlib import Path

from rich.console import Console

from agents.apps.cli.play_args import check_arguments, make_parser
from agents.apps.terminal import (
    HUMAN,
    MatchSession,
    PlaySession,
    match_board,
    match_result,
    match_status,
    match_step_line,
    sheet_table,
    shown,
    status_line,
)
from jamb_env import RulesetError
from jamb_env.render.sheet import printable
from jamb_env.replay.records import GameRecord, MatchRecord, RecordError, match_env, read_any, replay, replay_match
from jamb_env.replay.video import (
    MOVIEPY_MISSING,
    MissingDependency,
    have_moviepy,
    video_frames,
    write_video,
)
from jamb_env.rules import match as M
from jamb_env.utils.files import change_stamp, same_file, write_text_file


def show_steps(console: Console, steps, delay: float):
    """Draw the sheet after each (env, step) with the action taken; return the last env."""
    env = None
    for k, (env, step) in enumerate(steps):
        text = env.action_to_string(step["action"])
        where = (
            f"turn {step['turn'] + 1}, roll {step['roll']}"
            if isinstance(step.get("turn"), int) and isinstance(step.get("roll"), int)
            else f"step {k + 1}"
        )
        console.print(f"[bold]{where}: {shown(text)}[/] (score {env.score})")
        console.print(sheet_table(env))
        console.print(status_line(env))
        if delay > 0:
            time.sleep(delay)
    return env


class Interrupted(Exception):
    """Ctrl-C or another signal that ends the session, with what was saved (a message for
    the user) and the exit status (130 for Ctrl-C, 128 + the signal's number)."""

    def __init__(self, message: str, code: int = 130):
        super().__init__(message)
        self.code = code


class Stopped(KeyboardInterrupt):
    """A signal that ends the session (SIGINT, SIGTERM, SIGHUP): raised in the main
    thread by :func:`stop_signals`' handler, and handled everywhere as Ctrl-C is (the
    game so far saved, the tool exits with 128 + the signal's number)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)


#: the signals that end a session and save what Ctrl-C saves (SIGHUP where it exists)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def stopped(exc: BaseException) -> tuple[str, int]:
    """``("interrupted" or "stopped by SIGTERM", exit status)`` for a KeyboardInterrupt."""
    signum = getattr(exc, "signum", signal.SIGINT)
    if signum == signal.SIGINT:
        return "interrupted", 130
    return f"stopped by {signal.Signals(signum).name}", 128 + signum


@contextlib.contextmanager
def stop_signals():
    """While the block runs, each of :data:`STOP_SIGNALS` raises :class:`Stopped` (a
    KeyboardInterrupt, so every mode saves as on Ctrl-C); once one has arrived, further
    ones are ignored, so a second signal cannot cut the save short. The previous handlers
    come back afterwards. Outside the main thread (where Python cannot set handlers),
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived = []

    def handler(signum, frame):
        if arrived:
            return
        arrived.append(signum)
        raise Stopped(signum)

    old = {}
    try:
        for sig in STOP_SIGNALS:
            old[sig] = signal.signal(sig, handler)
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)


def watch(args, console: Console) -> int:
    from agents import load

    session = PlaySession(args.ruleset, args.seed, console=console, player=args.watch)
    agent = load(args.watch, ruleset=args.ruleset, trusted=args.trust_model)
    env = session.env

    def steps():
        while not session.over:
            session.apply(agent.act(env, env.observe(), env.action_masks()))
            yield env, session.record.steps[-1]

    try:
        show_steps(console, steps(), args.delay)
    except KeyboardInterrupt as exc:
        saved = ""
        if args.record:
            session.record.write(args.record)
            saved = f"; the game so far ({len(session.record.steps)} moves) is in {args.record}"
        saved += write_partial_outputs(args, session.record, console)
        what, code = stopped(exc)
        raise Interrupted(f"{what} after {len(session.record.steps)} moves{saved}", code) from None
    console.print(f"[bold]{shown(args.watch)} scored {env.score} points[/] ({shown(args.ruleset)}, seed {args.seed})")
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
    console.print(
        f"replaying {shown(record.player)} on {shown(record.ruleset)}, seed {record.seed} ({len(record.steps)} steps)"
    )
    try:
        env = show_steps(console, replay(record), args.delay)
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        raise Interrupted(what + not_written(args), code) from None
    console.print(f"[bold]final score {env.score if env else 0}[/]")
    write_outputs(args, record, console)
    return 0


MATCH_HTML = (
    "--html makes a page of a solitaire game only, not of a multiplayer match: use --video (.gif or .mp4) or --log"
)


# ---------------------------------------------------------------------- matches
def match_title(record: MatchRecord) -> str:
    seats = " vs ".join(f"P{p + 1} {name}" for p, name in enumerate(record.players))
    sheets = "sheets" if record.scoring == "separate" else "sheet"
    return f"{seats}: {record.ruleset}, {record.scoring} {sheets}, seed {record.seed}"


def replay_match_file(args, record: MatchRecord, console: Console) -> int:
    """--replay of a match record: every step, the board after each turn, the result."""
    if args.html:
        raise ValueError(MATCH_HTML)  # before anything is shown
    console.print(f"replaying the match {shown(match_title(record))} ({len(record.steps)} steps)")
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
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        raise Interrupted(what + not_written(args), code) from None
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
    return ", ".join(
        f"P{p + 1} {shown(n)} {s}" for p, (n, s) in enumerate(zip(record.players, M.scores(env.ruleset, env.match)))
    )


def load_seats(players, ruleset: str, seed: int, trusted: bool = False) -> dict:
    """seat -> agent for every seat that is not human (a ``random`` agent seeded from the
    game's seed and its seat, so the same seed replays the same match); model files are
    loaded as :func:`agents.load` does with ``trusted``."""
    import numpy as np

    from agents import load

    policies = {}
    for p, name in enumerate(players):
        if name != HUMAN:
            policy = load(name, ruleset=ruleset, trusted=trusted)
            if isinstance(getattr(policy, "rng", None), np.random.Generator):
                policy.rng = np.random.default_rng([int(seed), p])
            policies[p] = policy
    return policies


def record_seat_loads_file(name: str) -> bool:
    """Whether a seat name read from a match record would make ``agents.load`` open a
    file that the record chose: a model path, ``hybrid:<zip>``, ``search:<npz>`` or
    ``rllib:<path>`` (:func:`agents.registry.parse_spec`, which looks at no file). Not
    ``human``, a built-in agent (``greedy``, ``ppo``, ...: those open only the shipped
    files under ``agents/models/``) or a name of no agent (``agents.load`` refuses it)."""
    from agents.registry import parse_spec

    if name == HUMAN:
        return False
    try:
        return parse_spec(name).path is not None
    except ValueError:
        return False


def check_record_seats(args, record: MatchRecord) -> None:
    """A resumed match re-creates only what the command line allows: a record is data.

    Its seats named ``human`` or a built-in agent are re-created by name. A seat that
    names a file (a model path, ``hybrid:``/``search:``/``rllib:`` with a path) is loaded
    only when the user names the match's seats again with ``--players``, the same names
    in the same order: a file (and what a trusted model file runs, ``--trust-model``) is
    the user's choice, never the record's.

    Raises:
        RecordError: ``--players`` that differ from the record's seats, or a seat that
            names a file without ``--players`` (the message says how to resume).
    """
    seats = " ".join(_quoted(name) for name in record.players)
    if args.players is not None:
        if list(args.players) != list(record.players):
            raise RecordError(
                f"{args.load}: --players {' '.join(_quoted(n) for n in args.players)} are not the record's seats "
                f"{seats}; give exactly those, in that order, or leave --players out"
            )
        return  # the user named every seat: load them
    files = [f"P{p + 1} {_quoted(name)}" for p, name in enumerate(record.players) if record_seat_loads_file(name)]
    if files:
        raise RecordError(
            f"{args.load}: the record's seat(s) {', '.join(files)} name a file, which a record cannot load by "
            "itself (a model file runs the code pickled in it); if you trust that file, resume with "
            f"--load {_quoted(str(args.load))} --players {seats}"
        )


def _quoted(text: str) -> str:
    """``text`` as a shell word (for messages that say what to type)."""
    import shlex

    return shlex.quote(text)


def play_match(args, console: Console, record: MatchRecord | None = None) -> int:
    """A match from --players / --watch-players, or resumed from a --load record."""
    from jamb_env import load_ruleset

    if record is not None:
        check_record_seats(args, record)  # before anything is loaded
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

        coach = load(args.coach, ruleset=ruleset, trusted=args.trust_model)
    session = MatchSession(
        ruleset,
        seed,
        players,
        scoring,
        policies=load_seats(players, ruleset, seed, args.trust_model),
        console=console,
        coach=coach,
        delay=args.delay,
        sleep=lambda seconds: time.sleep(seconds),
    )
    people = players.count(HUMAN)
    if record is not None:
        session.load(record)
        session.remember(args.load, args.load_stamp)
        console.print(
            f"resumed {shown(args.load)}: {len(record.steps)} moves, {match_scores_text(session.aec, record)}"
        )
    else:
        rec = session.record
        console.print(f"Jamb match {shown(match_title(rec))}." + (" Type help for the commands." if people else ""))
    save_path = args.save or args.load
    record_path = getattr(args, "record", None)
    try:
        session.run(lambda prompt: read_line(console, prompt), save_path=save_path)
    except KeyboardInterrupt as exc:
        saved = []
        if save_path:
            saved.append(f"the match is saved in {save_path} (resume with --load {save_path})")
        if record_path:
            session.record.write(record_path)
            saved.append(f"the match so far is in {record_path}")
        where = "; " + "; ".join(saved) if saved else " (not saved: start with --save or --record FILE to keep a match)"
        where += not_written(args)
        what, code = stopped(exc)
        raise Interrupted(f"{what} after {len(session.record.steps)} moves{where}", code) from None
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
        from jamb_env.replay.html import replay_html

        write_text_file(args.html, replay_html(record))
        console.print(f"wrote the page {shown(str(args.html))}")
    if args.video:
        write_video(args.video, video_frames(record), args.fps)
        console.print(
            f"wrote the video {shown(str(args.video))} ({len(record.steps) + 1} frames, {args.fps:g} a second)"
        )


def _outputs(args) -> list[str]:
    """The --html and --video files asked for, as ``--html FILE``."""
    return [f"--{name} {getattr(args, name)}" for name in ("html", "video") if getattr(args, name, None)]


def not_written(args) -> str:
    """The end of an interrupt's message: which of --html and --video were not written."""
    outputs = _outputs(args)
    return f"; {' and '.join(outputs)} not written (interrupted)" if outputs else ""


def write_partial_outputs(args, record: GameRecord, console: Console) -> str:
    """--html and --video of a watched game cut short by Ctrl-C or a signal: the game so
    far, written as at a game's end (atomically); the end of the interrupt's message,
    saying what was written or why not."""
    outputs = _outputs(args)
    if not outputs:
        return ""
    try:
        write_outputs(args, record, console)
    except (OSError, RecordError, MissingDependency, ValueError) as exc:
        return f"; {' and '.join(outputs)} not written ({exc})"
    return f"; {' and '.join(outputs)} written (the game so far)"


def interactive(args, console: Console) -> int:
    coach = None
    record = None
    if args.load:
        args.load_stamp = change_stamp(args.load, missing_ok=True)  # before it is read: a later write is seen
        games = read_any(args.load)
        if len(games) > 1 and not args.save:
            raise RecordError(
                f"{args.load} holds {len(games)} games; pick one with --game and save the resumed game "
                "elsewhere with --save FILE"
            )
        if len(games) > 1 and same_file(args.save, args.load):  # saving would keep one game of them
            raise RecordError(
                f"--save {args.save} is the --load file, which holds {len(games)} games: saving the resumed "
                "game there would replace them all with that one; save it elsewhere with --save OTHER"
            )
        if not 0 <= args.game < len(games):
            raise RecordError(f"{args.load} holds games 0..{len(games) - 1}, not {args.game}")
        record = games[args.game]
        if isinstance(record, MatchRecord):
            return play_match(args, console, record)
        if args.players is not None:
            raise ValueError(f"--players goes with a match record; {args.load} game {args.game} is a solitaire game")
        if args.delay_given:
            raise ValueError("--delay cannot be used with a resumed solitaire game (it paces the agents of a match)")
        args.ruleset = record.ruleset
    if args.coach:
        from agents import load

        coach = load(args.coach, ruleset=args.ruleset, trusted=args.trust_model)
    if record is not None:
        session = PlaySession(record.ruleset, record.seed, console=console, coach=coach)
        session.load(record)  # checks every action and the dice
        session.remember(args.load, args.load_stamp)
        console.print(f"resumed {shown(args.load)}: {len(record.steps)} moves, score {session.env.score}")
    else:
        session = PlaySession(args.ruleset, args.seed, console=console, coach=coach)
        console.print(f"Jamb {shown(session.env.ruleset.name)}, seed {args.seed}. Type help for the commands.")
    save_path = args.save or args.load
    try:
        # saves on the way out, Ctrl-C included
        session.run(lambda: read_line(console, "[bold]> [/]"), save_path=save_path)
    except KeyboardInterrupt as exc:
        where = (
            f"; the game is saved in {save_path} (resume with --load {save_path})"
            if save_path
            else " (not saved: start with --save FILE to keep a game)"
        )
        what, code = stopped(exc)
        raise Interrupted(f"{what} after {len(session.record.steps)} moves{where}", code) from None
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__)
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
    with stop_signals():  # SIGTERM and SIGHUP end a session as Ctrl-C does: saved, then exit 128 + the signal
        try:
            return run(args, log)
        except KeyboardInterrupt as exc:  # a signal while run was handling another error
            return stopped(exc)[1]


def read_line(console: Console, prompt: str) -> str:
    """A line typed at ``prompt``; EOFError (the session's end of input: saved, then the
    usual exit) when there is no standard input at all (started with it closed, ``<&-``),
    where ``input()`` raises a RuntimeError."""
    if sys.stdin is None:
        raise EOFError("no standard input")
    return console.input(prompt)


def _say(text: str) -> None:
    """A last message on stderr (file contents in it made safe for the terminal); a
    terminal that is gone (SIGHUP) does not turn it into a traceback."""
    with contextlib.suppress(OSError, ValueError):
        print(printable(text, newlines=True), file=sys.stderr)


def run(args, log: io.StringIO | None) -> int:
    """The chosen mode, with the errors and interrupts turned into a message and an exit status."""
    try:
        console = Console(
            file=log, width=args.width or (120 if log else None), no_color=bool(log), highlight=False, emoji=False
        )
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
            try:
                write_text_file(args.log, log.getvalue())
            except OSError as err:
                _say(f"error: --log {args.log}: {err}")
        _say(f"\n{exc}")
        return exc.code
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        _say(f"\n{what}")
        return code
    except (RulesetError, RecordError, MissingDependency, OSError, ValueError) as exc:
        _say(f"error: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
