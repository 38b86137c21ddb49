"""Play Jamb in the browser: a local web server (agents/apps/web/server.py) and its page.

    jamb-web [--host 127.0.0.1] [--port 8000] [--records games] [--max-records 5000] [--agent SPEC ...]

Open the address it prints. In the page: play any preset (click dice to keep them, roll,
announce, click a cell of the sheet to write it; each empty cell shows what it would
score now), ask a coach for a hint (any agent: its move, the reason in words and the
expected values of the top choices), watch an agent play a seeded game at a chosen speed,
or seat 2..5 people and agents at one table (separate sheets or one shared sheet).

Every game is saved after every move, atomically, as a game record in ``--records``
(``<id>.jsonl``: ``jamb-play --replay`` reads it; solitaire games also open as the HTML
replay of ``jamb-play --html``); saved games are listed in the page and open again there.
Beyond ``--max-records`` games the oldest finished ones are deleted to make room (a new
game is refused while every game there is unfinished).

The server binds 127.0.0.1 (this machine only) unless ``--host`` says otherwise. A request
names agents from the built-in ones (random, greedy, expectimax, optimal, columnwise, ppo,
hybrid, search) and those given with ``--agent``: a MaskablePPO .zip, a training run folder
(its best_model.zip, else final_model.zip), ``search:<file.npz>``, ``hybrid:<zip>`` or
``rllib:<path>``. Loading a model runs the code pickled in it, so only the command line
chooses model files, never a request or a saved game. Ctrl-C stops the server (exit 130; SIGTERM: 143).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from agents.apps.cli import add_version, path_arg
from agents.apps.web.lobby import MAX_RECORDS
from agents.apps.web.server import DEFAULT_HOST, DEFAULT_PORT, Lobby, make_server
from agents.registry import parse_spec, run_model
from jamb_env.utils.files import check_output_folder


def agent_spec(text: str) -> str:
    """An ``--agent`` value as the spec ``agents.load`` takes: a run folder becomes its
    best_model.zip (else final_model.zip); ArgumentTypeError for a spec of no agent, or a
    file that is not there or not the agent's kind of file (read as data)."""
    try:
        text = run_model(text)
        path = Path(text)
        spec = parse_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if spec.kind == "model" and not path.is_file():
        raise argparse.ArgumentTypeError(f"no model file {text}")
    if spec.kind in ("search", "hybrid", "critic") and spec.path and not Path(spec.path).is_file():
        raise argparse.ArgumentTypeError(f"no file {spec.path}")
    _check_agent_file(spec)
    return text


def _check_agent_file(spec) -> None:
    """ArgumentTypeError unless the file of an ``--agent`` spec reads as what it names (a model
    .zip's ``data``, a value network), read as data: found now, not as every game's 400."""
    from agents.model_files import read_model_data
    from agents.search import ValueNet

    if not spec.path:
        return
    if spec.kind == "rllib" and not Path(spec.path).is_dir():
        raise argparse.ArgumentTypeError(f"no RLlib checkpoint folder {spec.path}")
    try:
        if spec.kind == "search":
            ValueNet.load(spec.path)
        elif spec.kind in ("model", "ppo", "hybrid", "critic"):
            read_model_data(spec.path)
    except (OSError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"{spec.path} is not an agent's file: {str(exc)[:200]}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}: this machine only)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    parser.add_argument("--records", type=path_arg, default="games", help="folder of the game records (default games/)")
    parser.add_argument(
        "--max-records",
        type=int,
        default=MAX_RECORDS,
        metavar="N",
        help=f"games kept in --records; beyond, the oldest finished ones are deleted (default {MAX_RECORDS})",
    )
    parser.add_argument(
        "--agent",
        action="append",
        type=agent_spec,
        default=[],
        metavar="SPEC",
        help="also offer this agent (a model .zip, a run folder, search:/hybrid:/rllib: with a path); repeatable",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0..65535, got {args.port}")
    if not args.host.strip():
        parser.error("--host: empty")
    if args.max_records < 1:
        parser.error(f"--max-records must be 1 or more, got {args.max_records}")
    try:
        import flask  # noqa: F401
    except ImportError:
        print("error: jamb-web needs Flask: pip install -e '.[web]' (or make web)", file=sys.stderr)
        return 2
    records = Path(args.records)
    try:  # a file on the way or a system folder: say so now, not as every new game's internal error
        check_output_folder(records)
    except OSError as exc:
        parser.error(f"--records {args.records}: {exc}")
    from agents.training.config import ConfigError
    from agents.training.run_lock import RunFolderBusy, hold_run_dir

    try:
        # one server per records folder: two would each hold a game in memory and save over the other's moves
        with hold_run_dir(records):
            return _serve(args, records)
    except RunFolderBusy as exc:
        who = f"process {exc.pid}" if exc.pid is not None else "another process"
        print(
            f"error: --records {records}: {who} (another jamb-web?) is saving games there; one server per records "
            "folder (two would save over each other's moves): stop it, or give another --records",
            file=sys.stderr,
        )
        return 2
    except ConfigError as exc:  # its lock file is not a file
        print(f"error: --records {records}: {exc}", file=sys.stderr)
        return 2


def _serve(args, records: Path) -> int:
    """Serve until Ctrl-C or SIGTERM (``main``, holding the records folder); the exit status."""
    try:
        server = make_server(args.host, args.port, Lobby(records, agents=args.agent, max_records=args.max_records))
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"Jamb in the browser: http://{host}:{server.server_port}/  (records in {records}/; Ctrl-C stops)", flush=True
    )
    if not server.loopback:  # the address bound, however --host spells it
        print(f"note: bound to {args.host}, not loopback: anyone who reaches this address can play here", flush=True)
    arrived: list[int] = []

    def stop(signum, frame):  # werkzeug's serve_forever ends quietly on KeyboardInterrupt: note which signal it was
        arrived.append(signum)
        raise KeyboardInterrupt

    watched = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])
    previous = {sig: signal.signal(sig, stop) for sig in watched}
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        arrived.append(signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.server_close()
    if arrived:
        signum = arrived[0]
        how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
        print(f"\nstopped{how} (every game is saved)", file=sys.stderr)
        return 128 + signum
    return 0


if __name__ == "__main__":
    sys.exit(main())
