"""``kernel``: numba's ``njit(cache=True)`` with a cache that cannot go stale across files.

numba keys a cached function on its own file only, so a kernel that calls a kernel of
another file would keep running the old callee after an edit. Every kernel of this
package is compiled through :func:`kernel`, which puts the cache in a folder named by a
hash of all the kernel files (:data:`KERNEL_FILES`, and :data:`CONSTANT_FILES`, whose
constants they compile in): any edit to any of them starts a fresh cache. A test checks
that every module using :func:`kernel` is listed.

The cache lives in the per-user cache folder (``platformdirs.user_cache_dir("jamb_env")``,
``~/.cache/jamb_env`` on Linux) or under ``$NUMBA_CACHE_DIR``, never inside the installed
package: a wheel's files stay those of its RECORD (``pip uninstall`` removes them all) and a
read-only install caches too. Where neither folder can be written the kernels compile at
every start, uncached.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import njit
from numba.core import config

_PKG = Path(__file__).resolve().parents[1]
#: Every file (relative to the ``jamb_env`` package) that defines kernels.
KERNEL_FILES = (
    "rules/_jit.py",
    "rules/kernels.py",
    "rules/params.py",
    "rules/scoring.py",
    "rules/transition.py",
    "rules/match.py",
    "engine/observation.py",
    "engine/batch.py",
    "multiplayer_vector.py",
)


#: Modules without kernels whose constants the kernels compile in (the ``OPEN_*`` codes):
#: part of the cache key too.
CONSTANT_FILES = ("rules/columns.py",)


def cache_root() -> Path:
    """Where the compiled kernels are cached: ``$NUMBA_CACHE_DIR``, else the per-user cache
    folder of ``jamb_env`` (``platformdirs.user_cache_dir``); never the installed package."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("jamb_env", appauthor=False))


def _cache_dir() -> str:
    digest = hashlib.sha1()
    for name in KERNEL_FILES + CONSTANT_FILES:
        path = _PKG / name
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"")
    folder = cache_root() / f"numba-{digest.hexdigest()[:12]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache folder: numba compiles at every start
        pass
    return str(folder)


_CACHE_DIR = _cache_dir()


def kernel(fn=None, *, parallel: bool = False, inline: bool = False, nrt: bool = False):
    """Compile ``fn`` in nopython mode (cached on disk, see the module docstring);
    ``inline``: inline it into its callers (small hot helpers).

    Kernels run without numba's reference-counted runtime (``_nrt=False``): they never
    allocate (scratch arrays are passed in), so the views they take of their arguments
    need no atomic reference counts, which cost about a third of a step otherwise. ``nrt``:
    keep the runtime (a kernel that Python calls with arrays it returns new arrays of)."""

    def wrap(f):
        saved = config.CACHE_DIR
        config.CACHE_DIR = _CACHE_DIR
        try:
            return njit(
                cache=True, parallel=parallel, error_model="numpy", inline="always" if inline else "never", _nrt=nrt
            )(f)
        finally:
            config.CACHE_DIR = saved

    return wrap if fn is None else wrap(fn)
