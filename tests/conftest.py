import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jamb_env import list_rulesets, load_ruleset  # noqa: E402


def playable_presets() -> list[str]:
    """Every preset file that loads (joly needs jokers and raises by design)."""
    out = []
    for name in list_rulesets():
        try:
            load_ruleset(name)
        except ValueError:
            continue
        out.append(name)
    return out


@pytest.fixture(scope="session")
def classic():
    return load_ruleset("classic")
