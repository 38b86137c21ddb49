import os

# numba: one thread per xdist worker (the workers already fill the cores); set before
# numba is imported anywhere in the worker
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import pytest

from jamb_env import list_rulesets, load_ruleset


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
