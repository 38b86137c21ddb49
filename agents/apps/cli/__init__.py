"""Command-line tools, each a module with ``main(argv=None) -> int``.

Run as ``jamb-<name>`` (``[project.scripts]``: train, evaluate, play, plot, tune, bench, soak,
export, train-selfplay, train-value, zoo, web) or ``python -m agents.apps.cli.<name>``; in a
checkout, ``python scripts/<name>.py`` too. Their help texts name the installed commands
and the package's own files (the default training configs are package data,
``agents/training/configs/``, read from any folder); the example configs they mention
(``configs/...``) are in the repository's ``configs/`` folder, to copy.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

#: The help of every model-loading command's ``--trust-model`` (:mod:`agents.model_files`).
TRUST_MODEL_HELP = (
    "load model files as SB3 does, running the code pickled in them, and apply a model's vecnormalize.pkl "
    "(a pickle too); without it a model file is read as data and one holding pickled code is refused. "
    "Only for files from a source you trust"
)


def path_arg(text: str) -> str:
    """An argparse ``type`` for a path option: the text as given, unless it is empty or blank
    (``--run-dir ''`` was taken as the working folder, and a run wrote among the user's files)."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: give a file or folder name")
    return text


def add_version(parser) -> None:
    """``--version``: the command's name and the jamb-env version (``jamb_env.__version__``)."""
    from jamb_env import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s (jamb-env {__version__})")


def check_seed_option(parser, seed: int | None, option: str = "--seed") -> None:
    """``parser.error`` (one usage line, exit 2) unless ``seed`` is None or in 0..SEED_LIMIT-1
    (:data:`jamb_env.engine.doors.SEED_LIMIT`, numpy's 32-bit seeds): every command's seed bound."""
    from jamb_env.engine.doors import SEED_LIMIT

    if seed is not None and not 0 <= seed < SEED_LIMIT:
        parser.error(f"{option} must be in 0..2**32-1, got {seed}")


def add_trust_model(parser) -> None:
    """Add ``--trust-model`` (:data:`TRUST_MODEL_HELP`) to an ``argparse`` parser."""
    parser.add_argument("--trust-model", action="store_true", help=TRUST_MODEL_HELP)


def untrusted_model(specs, trusted: bool) -> str | None:
    """Why a model file named by one of the agent ``specs`` (a ``.zip`` path, ``ppo:``,
    ``hybrid:``, ``critic:``) would be refused without ``--trust-model``
    (:class:`agents.model_files.UntrustedModelError`'s message), or None: checked before
    any game or worker starts. A damaged file is left to the loader to report."""
    if trusted:
        return None
    from agents.model_files import UntrustedModelError, data_objects
    from agents.registry import parse_spec

    for spec in specs:
        try:
            kind, path = parse_spec(spec)
        except ValueError:
            continue
        if kind in ("model", "ppo", "hybrid", "critic") and path:
            try:
                if Path(path).is_file():  # OSError for a name too long: the loader reports it
                    data_objects(path)
            except UntrustedModelError as exc:
                return str(exc)
            except (OSError, ValueError):
                continue
    return None


def interruptible(run: Callable[[list[str] | None], int], argv: list[str] | None, message: str) -> int:
    """``run(argv)``, with a Ctrl-C that reaches this far ending the tool with ``message``
    on stderr and exit status 130 (no traceback)."""
    try:
        return run(argv)
    except KeyboardInterrupt:
        print(f"\n{message}", file=sys.stderr)
        return 130
