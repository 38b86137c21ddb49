"""Command-line tools, each a module with ``main(argv=None) -> int``.

Run as ``jamb-<name>`` (``[project.scripts]``), ``python scripts/<name>.py`` or
``python -m agents.apps.cli.<name>``: train, evaluate, play, plot, tune, bench, soak, export, zoo.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def interruptible(run: Callable[[list[str] | None], int], argv: list[str] | None, message: str) -> int:
    """``run(argv)``, with a Ctrl-C that reaches this far ending the tool with ``message``
    on stderr and exit status 130 (no traceback)."""
    try:
        return run(argv)
    except KeyboardInterrupt:
        print(f"\n{message}", file=sys.stderr)
        return 130
