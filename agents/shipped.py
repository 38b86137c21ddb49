"""The files shipped under ``agents/models/``: where they are and which ruleset names may name one."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

#: Shipped models and value networks: ``agents/models/<ruleset>.zip``, ``agents/models/value_<ruleset>.npz``.
MODELS_DIR = Path(str(resources.files("agents").joinpath("models")))

#: what a ruleset's name must look like to name a shipped file (``agents/models/<name>.zip``): the
#: name comes from the ruleset's YAML file, so it must not reach outside ``agents/models/``
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def shipped_name(name: str) -> bool:
    """Whether the ruleset name ``name`` can name a shipped file under ``agents/models/``: letters,
    digits, ``_``, ``.``, ``-``, not starting with a dot (no ``/``, ``..`` or control
    characters, so the file stays inside the folder)."""
    return isinstance(name, str) and _FILE_NAME.fullmatch(name) is not None


#: The strongest shipped agent of each preset measured so far, what ``best`` names
#: (:func:`best_agent`): ``{preset: {"agent": spec, "mean": points, "games": n, "command": how}}``.
BEST_FILE = MODELS_DIR / "best.json"
#: ``best`` on a preset :data:`BEST_FILE` does not list: the strongest agent that needs no
#: trained file (docs/results.md: expectimax leads every baseline on every preset measured).
BEST_FALLBACK = "expectimax"
#: what an entry of :data:`BEST_FILE` may name: a built-in agent's plain name (``ppo`` plays
#: the shipped ``agents/models/<ruleset>.zip``), never a path or ``kind:<path>``
_AGENT_NAME = re.compile(r"[a-z]+")


def best_agent(ruleset_name: str) -> str:
    """The agent spec ``best`` stands for on ``ruleset_name``: its entry in
    :data:`BEST_FILE` (measured on the canonical games, docs/results.md "The strongest
    agent of each preset"), else :data:`BEST_FALLBACK`.

    Raises:
        ValueError: :data:`BEST_FILE` is not the mapping it should be.
    """
    import json

    from jamb_env.utils.files import read_regular_bytes

    try:
        table = json.loads(read_regular_bytes(BEST_FILE, 1024 * 1024).decode("utf-8"))
    except FileNotFoundError:
        return BEST_FALLBACK
    except (OSError, ValueError) as exc:
        raise ValueError(f"{BEST_FILE} is unreadable: {exc}") from exc
    entry = table.get(ruleset_name) if isinstance(table, dict) else None
    if entry is None:
        return BEST_FALLBACK
    if not isinstance(entry, dict) or not isinstance(entry.get("agent"), str) or entry["agent"] == "best":
        raise ValueError(f"{BEST_FILE}: entry {ruleset_name!r} names no agent: {entry!r}")
    if not _AGENT_NAME.fullmatch(
        entry["agent"]
    ):  # a file path or "kind:<path>" would load (and run) a file from anywhere
        raise ValueError(
            f"{BEST_FILE}: entry {ruleset_name!r} names {entry['agent']!r}, not a built-in agent's name "
            "(best names a shipped agent such as ppo or expectimax, never a file)"
        )
    return entry["agent"]
