"""One writer per run folder: the advisory lock every trainer holds for a run's whole life.

A run folder is written by one process at a time. Every trainer (``jamb-train``'s SB3 and
lean trainers, self-play, the value learner, RLlib, each tuning trial and the tuning
search's own folder) and every ``--resume`` takes the folder's lock before it looks at the
folder and keeps it until the run ends: a second writer is refused with
:class:`RunFolderBusy` (one line naming the holder's pid; the commands exit with status 2)
before it reads or writes anything there. Without it, two runs in one folder both finished
and left a mix of their files, and a ``--resume`` of a run still training moved the live
run's logs aside.

The lock is ``fcntl.flock`` on :data:`LOCK_FILE` in the folder (the holder's pid in it, for
the message). The kernel releases it when the holder's last descriptor closes, however the
process ends (SIGKILL included), so a lock file left by a dead process is no lock: the next
writer takes it over. The file is removed when the run ends; whoever opened it just before
(and then locked the removed file) notices and opens the new one. The lock is advisory: it
stops this project's writers, not ``rm`` or an editor. On a file system without ``flock``
(some network mounts) the folder cannot be locked, which is an error, not a silent pass.
Windows has no ``fcntl``: there the lock is a no-op.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import inspect
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agents.training.config import ConfigError
from jamb_env.utils.files import check_output_folder

try:
    import fcntl
except ImportError:  # Windows: no flock; runs are not locked there
    fcntl = None

#: The lock file in a locked run folder (hidden; holds the writer's pid).
LOCK_FILE = ".lock"
#: How many times a writer re-opens a lock file that was removed under it before giving up.
_TRIES = 50


class RunFolderBusy(ConfigError):
    """Another process holds the run folder's lock (it is writing a run there).

    Attributes: ``run_dir`` (Path), ``pid`` (the holder's process id; None if unknown)."""

    def __init__(self, run_dir: Path, pid: int | None):
        self.run_dir, self.pid = Path(run_dir), pid
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(
            f"{run_dir} is in use: {who} is writing a run there (one writer per run folder); "
            "wait for it to end (or stop it) before resuming, or choose another folder"
        )


def lock_holder(run_dir: str | Path) -> int | None:
    """The pid written in ``run_dir``'s lock file (the holder's, or the last holder's if
    the lock is free), or None: no lock file, or no pid in it."""
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return _pid(fd)
    finally:
        os.close(fd)


def _pid(fd: int) -> int | None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isascii() and text.isdigit() else None


def check_free(run_dir: str | Path) -> None:
    """Raise :class:`RunFolderBusy` if a process holds ``run_dir``'s lock now; create and
    change nothing (a command's checks of the folder say "busy" before anything else; the
    writer itself still takes the lock: :func:`hold_run_dir`)."""
    if fcntl is None:
        return
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return  # no lock file (or none that is a file): nobody holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise RunFolderBusy(Path(run_dir), _pid(fd)) from None
    finally:
        os.close(fd)


def _open_lock_file(path: Path) -> int:
    """A descriptor of the regular file ``path`` (created if missing; never through a link).

    Raises:
        ConfigError: ``path`` is a link, a folder or a special file.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise ConfigError(f"{path} is not a lock file (a link, a folder or a special file): remove it") from exc
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # a hard link: writing the pid would truncate another file
        os.close(fd)
        what = "a special file" if not stat.S_ISREG(st.st_mode) else "a second name of another file (a hard link)"
        raise ConfigError(f"{path} is not a lock file ({what}): remove it")
    return fd


def _holds_path(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a holder ending its run removes it)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


def acquire(run_dir: Path) -> int:
    """Lock ``run_dir`` (created if missing) for this process; return the lock file's
    descriptor (closing it releases the lock).

    Raises:
        RunFolderBusy: another process holds the lock.
        ConfigError: the lock file is no regular file, or the file system has no ``flock``.
        OSError: the folder cannot be created or written.
    """
    path = run_dir / LOCK_FILE
    for _ in range(_TRIES):
        fd = _open_lock_file(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _pid(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunFolderBusy(run_dir, pid) from None
            raise ConfigError(f"cannot lock {run_dir} ({exc.strerror}): a file system without flock?") from exc
        if _holds_path(fd, path):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)  # locked a lock file its holder has just removed: take the new one
    raise RunFolderBusy(run_dir, lock_holder(run_dir))


def release(fd: int, run_dir: Path, created: list[Path]) -> None:
    """Remove the lock file (if it is still ours) and close ``fd``, releasing the lock;
    the folders this writer ``created`` (deepest first) that are left empty are removed too."""
    path = run_dir / LOCK_FILE
    try:
        if _holds_path(fd, path):
            os.unlink(path)
    except OSError:
        pass  # the lock is released by the close below whatever happens to the file
    finally:
        os.close(fd)
    for folder in created:
        try:
            folder.rmdir()
        except OSError:  # not empty (the run wrote), or another writer's now
            break


@contextlib.contextmanager
def hold_run_dir(run_dir: str | Path) -> Iterator[Path]:
    """Hold ``run_dir``'s lock for the block (the folder is created if missing; if the
    block leaves it empty, a folder created here is removed again). Yields the folder.

    Raises:
        RunFolderBusy: another process is writing there (a ConfigError: exit status 2).
        ConfigError: ``run_dir`` is a file, or its lock file is no regular file.
        OSError: the folder cannot be created or written (a file in the way, no permission).
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"{run_dir} is a file, not a folder")
    check_output_folder(run_dir)  # OSError naming a file in the way or a folder without write permission
    if fcntl is None:
        yield run_dir
        return
    created = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # deepest first
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = acquire(run_dir)
    try:
        yield run_dir
    finally:
        release(fd, run_dir, created)


def holding_run_dir(param: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the function holds the lock of the folder named by its argument ``param``
    (:func:`hold_run_dir`) for its whole call, and raises what that raises first."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def locked(*args, **kwargs):
            with hold_run_dir(signature.bind(*args, **kwargs).arguments[param]):
                return fn(*args, **kwargs)

        return locked

    return wrap
