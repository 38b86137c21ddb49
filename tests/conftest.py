import os

# numba: one thread per xdist worker (the workers already fill the cores); set before
# numba is imported anywhere in the worker
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import pytest

from jamb_env import load_ruleset


@pytest.fixture(scope="session")
def classic():
    return load_ruleset("classic")
