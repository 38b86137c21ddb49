"""The files shipped under ``models/``: where they are and which ruleset names may name one."""

from __future__ import annotations

import re
from pathlib import Path

#: Shipped models and value networks: ``models/<ruleset>.zip``, ``models/value_<ruleset>.npz``.
MODELS_DIR = Path(__file__).resolve().parents[1] / "models"

#: what a ruleset's name must look like to name a shipped file (``models/<name>.zip``): the
#: name comes from the ruleset's YAML file, so it must not reach outside ``models/``
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def shipped_name(name: str) -> bool:
    """Whether the ruleset name ``name`` can name a shipped file under ``models/``: letters,
    digits, ``_``, ``.``, ``-``, not starting with a dot (no ``/``, ``..`` or control
    characters, so the file stays inside the folder)."""
    return isinstance(name, str) and _FILE_NAME.fullmatch(name) is not None
