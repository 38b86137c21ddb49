"""The arguments of ``jamb-play`` (:mod:`agents.apps.cli.play`): its parser, and the
checks that refuse, before any game starts, an option the chosen mode would ignore, a bad
value, or a file that could not be read or written (each with a one-line message, exit 2)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, check_seed_option, path_arg
from agents.apps.session import HUMAN
from agents.registry import run_model
from jamb_env.replay.video import GIF_MAX_FPS, VIDEO_SUFFIXES
from jamb_env.utils.files import check_new_file, check_output_file, same_file

#: the options each mode cannot use (None: an interactive game)
NOT_WITH = {
    "--replay": ("players", "watch_players", "watch", "load", "save", "coach", "record", "seed", "ruleset", "scoring"),
    "--watch": ("players", "watch_players", "load", "save", "coach", "scoring"),
    "--load": ("watch_players", "seed", "ruleset", "scoring", "log", "record", "html", "video"),
    "--players": ("game", "html"),
    None: ("scoring", "log", "record", "delay", "game", "html", "video"),
}
#: why an option does not go with a mode, said after the refusal
HINTS = {
    "--save": " (use --record to keep a watched game)",
    "--record": " (a game of yours is saved with --save)",
    "--log": " (--log is for --watch and --replay)",
    "--game": " (--game picks a game of a --load or --replay file)",
    "--html": " (--html is for --watch and --replay)",
    "--video": " (--video is for --watch and --replay)",
    "--seed": " (the record has its seed)",
    "--ruleset": " (the record has its ruleset)",
    "--players": " (--players starts a match)",
    "--watch-players": " (--watch-players starts a match)",
    "--scoring": " (--scoring goes with --players)",
    "--coach": " (hints are for a person's seat)",
}


def make_parser(description: str) -> argparse.ArgumentParser:
    """jamb-play's parser (its help: ``description``)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--ruleset", default=None, help="preset name or rules YAML path (default classic)")
    parser.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    parser.add_argument(
        "--coach", help="agent for 'hint': greedy, expectimax, optimal, columnwise, ppo, hybrid or a MaskablePPO .zip"
    )
    parser.add_argument("--save", type=path_arg, help="save the game here after every move (a game record)")
    parser.add_argument("--load", type=path_arg, help="resume a saved game")
    parser.add_argument("--watch", help="an agent plays the game")
    parser.add_argument("--replay", type=path_arg, help="replay a game record file")
    parser.add_argument("--game", type=int, default=None, help="which game of a multi-game record file (default 0)")
    parser.add_argument(
        "--delay", type=float, default=None, help="seconds between steps when watching or replaying (default 0.5)"
    )
    parser.add_argument("--log", type=path_arg, help="watch/replay: write the whole game as text here, at the end")
    parser.add_argument("--record", type=path_arg, help="watch: write the game record here")
    parser.add_argument("--width", type=int, default=None, help="terminal width for drawing")
    parser.add_argument(
        "--html", type=path_arg, help="watch/replay: write the game as one self-contained web page here, at the end"
    )
    parser.add_argument(
        "--video",
        type=path_arg,
        help="watch/replay: write the game as a video here, at the end: .gif, or .mp4 (needs moviepy)",
    )
    parser.add_argument(
        "--fps", type=float, default=None, help="--video frames (steps) a second, 0.1..60 (50 for a .gif; default 2)"
    )
    parser.add_argument(
        "--players",
        nargs="+",
        metavar="SEAT",
        default=None,
        help="a match of 2..5 seats in this order, each 'human' (hot seat) or an agent name / MaskablePPO .zip",
    )
    parser.add_argument(
        "--watch-players",
        nargs="+",
        metavar="AGENT",
        default=None,
        help="watch a match of these 2..5 agents (as --players without a human seat)",
    )
    parser.add_argument(
        "--scoring",
        choices=("separate", "shared"),
        default=None,
        help="match: a sheet each (separate, default) or one shared sheet",
    )
    add_trust_model(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args) -> None:
    """Refuse options that the chosen mode would ignore, and bad values (``parser.error``)."""
    people = _check_seats(parser, args)
    _check_mode(parser, args, people)
    _check_values(parser, args)
    _check_files(parser, args)


def _check_seats(parser, args) -> int:
    """The seats of a match (--players / --watch-players, normalised into ``args.players``);
    returns how many are people."""
    if args.players is not None and args.watch_players is not None:
        parser.error("--players and --watch-players: give one (--players with no human seat watches too)")
    match_seats = args.players if args.players is not None else args.watch_players
    if match_seats is not None:
        option = "--players" if args.players is not None else "--watch-players"
        if not all(name.strip() for name in match_seats):
            parser.error(f"{option}: an empty seat name")
        seats = [HUMAN if name.strip().lower() == HUMAN else name.strip() for name in match_seats]
        if args.watch_players is not None and args.load:
            parser.error(
                "--watch-players cannot be used with a resumed game (the match record names its seats; "
                "--players repeats them to let a seat load a model file)"
            )
        if args.watch_players is not None and HUMAN in seats:
            parser.error("--watch-players: agents only (seat a person with --players human ...)")
        if not 2 <= len(seats) <= 5:
            parser.error(f"{option}: a match needs 2..5 seats (each human or an agent), got {len(seats)}")
        args.players, args.watch_players = seats, None
        return seats.count(HUMAN)
    return 0


def _check_mode(parser, args, people: int) -> None:
    """The options the mode cannot use."""
    mode = (
        "--replay"
        if args.replay
        else "--watch"
        if args.watch
        else "--load"
        if args.load
        else "--players"
        if args.players is not None
        else None
    )
    not_with = NOT_WITH[mode] + ((("log", "video") if people else ("save", "coach")) if mode == "--players" else ())
    given = [f"--{k.replace('_', '-')}" for k in not_with if getattr(args, k) is not None]
    if given:
        what = {
            "--replay": "a replay",
            "--watch": "watching",
            "--load": "a resumed game",
            "--players": "a match with a person playing" if people else "watching a match",
            None: "an interactive game",
        }[mode]
        hint = HINTS.get(given[0], "")
        if mode == "--players" and given[0] in ("--log", "--video"):
            hint = f" ({given[0]} is for watching: seat agents only, or replay the match's --record file)"
        if given[0] == "--html" and mode == "--players":
            hint = " (a web page is made of a solitaire game only: watch a match with --video or --log)"
        parser.error(f"{', '.join(given)} cannot be used with {what}{hint}")
    if mode == "--players" and people == len(args.players) and args.delay is not None:
        parser.error("--delay paces the agents' moves, and every seat is human")


def _check_values(parser, args) -> None:
    """Empty names (empty paths: :func:`~agents.apps.cli.path_arg`), and numbers out of range."""
    for name in ("watch", "coach", "ruleset"):
        value = getattr(args, name)
        if value is not None and not value.strip():
            parser.error(f"--{name}: empty")
    check_seed_option(parser, args.seed)
    try:  # a training run folder plays its model
        for name in ("watch", "coach"):
            if getattr(args, name):
                setattr(args, name, run_model(getattr(args, name)))
        if args.players:
            args.players = [seat if seat == HUMAN else run_model(seat) for seat in args.players]
    except ValueError as exc:
        parser.error(str(exc))
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
        if Path(args.video).suffix.lower() == ".gif" and args.fps > GIF_MAX_FPS:
            parser.error(f"--fps {args.fps:g}: a .gif shows at most {GIF_MAX_FPS} frames a second (write an .mp4)")
    if args.video and Path(args.video).suffix.lower() not in VIDEO_SUFFIXES:
        parser.error(f"--video {args.video}: the name must end in .mp4 or .gif (it picks the format)")


def _check_files(parser, args) -> None:
    """Files named twice, outputs that could not be written, a --save or --record that would
    replace another file, inputs that are not there."""
    outputs = [
        (f"--{name}", getattr(args, name)) for name in ("save", "record", "log", "html", "video") if getattr(args, name)
    ]
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
    resumed_in_place = args.load and args.save and same_file(args.save, args.load)
    for name in ("save", "record"):  # a game record is never replaced by another game
        path = getattr(args, name)
        if path and not (name == "save" and resumed_in_place):
            try:
                check_new_file(path, f"--{name} {path}")
            except FileExistsError as exc:
                parser.error(str(exc))
    for name in ("load", "replay"):
        path = getattr(args, name)
        if path and not os.path.isfile(path):
            parser.error(
                f"--{name} {path}: {'a folder, not a game record file' if os.path.isdir(path) else 'no such file'}"
            )
