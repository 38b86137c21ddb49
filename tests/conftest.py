import os

# numba and torch: one thread per xdist worker (the workers already fill the cores); set
# before either is imported anywhere in the worker (torch's intra-op pool would otherwise
# take every core in every worker: about a tenth of `make test-fast` lost to oversubscription)
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import signal

import pytest

# A test run started in the background of a non-interactive shell inherits SIGINT ignored,
# and so would every command the tests start (Python keeps an ignored SIGINT): give the
# workers Python's handler, so their children start with the default, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from jamb_env import load_ruleset


@pytest.fixture(scope="session")
def classic():
    return load_ruleset("classic")


@pytest.fixture
def lobby(tmp_path):
    """jamb-web's games (agents/apps/web/server.py), recorded in ``tmp_path/games``."""
    from agents.apps.web.server import Lobby

    return Lobby(tmp_path / "games")


@pytest.fixture
def client(lobby):
    """A Flask test client of a jamb-web app over :func:`lobby` (needs the web extra)."""
    from agents.apps.web.server import create_app

    return create_app(lobby).test_client()
