"""``kernel``: numba's ``njit(cache=True)`` with a cache that cannot go stale across files.

numba keys a cached function on its own file only, so a kernel that calls a kernel of
another file would keep running the old callee after an edit. Every kernel of this
package is compiled through :func:`kernel`, which puts the cache in a folder named by a
hash of all the kernel files (:data:`KERNEL_FILES`): any edit to any of them starts a
fresh cache. A test checks that every module using :func:`kernel` is listed.
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
    "rules/transition.py",
    "rules/match.py",
    "observation.py",
    "engine.py",
    "multiplayer_vector.py",
)


def _cache_dir() -> str:
    digest = hashlib.sha1()
    for name in KERNEL_FILES:
        path = _PKG / name
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"")
    base = os.environ.get("NUMBA_CACHE_DIR") or str(_PKG / "__pycache__")
    return os.path.join(base, f"numba-{digest.hexdigest()[:12]}")


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
