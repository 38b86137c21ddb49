"""Atomic file writes: a file is either its old content or its complete new content, never
a half-written mix, whatever kills the writer (Ctrl-C, SIGKILL, a full disk, an exception).

Each writer writes a temporary file in the destination's own folder (so the final step is a
rename within one file system), flushes it to disk, then ``os.replace``\\ s it onto the
destination, which POSIX and Windows both do atomically. If the write fails, the temporary
file is removed and the destination is left as it was.

    atomic_write_bytes(path, data)        # bytes
    atomic_write_text(path, text)         # str (UTF-8 unless told)
    atomic_write(path, write_fn)          # write_fn(file object opened "wb")
    with atomic_path(path) as tmp:        # any writer that wants a path:
        np.savez(tmp, ...)                #   tmp is replaced onto path if the block succeeds
    atomic_save_model(model, path)        # an SB3 model (``model.save``) as ``path``
    write_text_file(path, text)           # check the path, create its folders, write atomically
    check_output_file(path), check_output_folder(folder)   # clear errors for bad output paths

Output paths: a file is only ever written as a regular file. A path that is a device, a
FIFO or a socket, or that lies inside ``/dev``, ``/proc`` or ``/sys`` (as given, or once its
links are followed; ``/dev/shm``, a RAM file system for ordinary files, excepted) is
refused with :class:`OutputPathError` before anything is written: the temporary file and
``os.replace`` would otherwise put a regular file in place of ``/dev/null`` (as root) or
fill ``/dev`` with files. A symbolic link is written through: its final target (every link
on the way followed, :func:`output_target`) is replaced atomically, the temporary file
beside it, so the link stays a link and its target gets the new content; the target must
itself be a regular file or not exist yet.

Temporary files are named ``.<name>.tmp-<random>`` (hidden, never matching the
destination's glob such as ``model_*_steps.zip``); a writer killed by SIGKILL leaves one
behind, which :func:`remove_temp_files` clears. Pure Python: no Gymnasium, numpy or torch.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "SYSTEM_FOLDERS",
    "TEMP_MARK",
    "OutputPathError",
    "atomic_path",
    "atomic_save_model",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_new_file",
    "check_output_file",
    "check_output_folder",
    "is_temp_file",
    "output_target",
    "remove_temp_files",
    "same_file",
    "write_text_file",
]

#: The part of a temporary file's name between the destination's name and the random tail.
TEMP_MARK = ".tmp-"


#: Folders of the operating system's devices and kernel views, never written into (POSIX).
SYSTEM_FOLDERS = ("/dev", "/proc", "/sys")
#: Folders inside :data:`SYSTEM_FOLDERS` that hold ordinary files.
_FILE_FOLDERS = ("/dev/shm",)


#: What reading a damaged or forged zip (a model .zip, an .npz) raises besides OSError and
#: ValueError: not a zip, cut short, or a member in a compression method Python cannot read.
ZIP_ERRORS = (zipfile.BadZipFile, EOFError, NotImplementedError)


class OutputPathError(OSError):
    """An output path that must not be written: a device, FIFO or socket (not a regular
    file), a path inside ``/dev``, ``/proc`` or ``/sys``, or a loop of symbolic links. The
    message names the path and why."""


class InputFileError(OSError):
    """An input that is not a regular file (a FIFO would block a read for ever, a device
    such as /dev/zero never ends it) or larger than the reader allows."""


#: The most bytes :func:`read_regular_bytes` reads of a small record (a JSON or YAML file of a run).
SMALL_FILE_BYTES = 16 * 1024 * 1024


def read_regular_bytes(path: str | Path, limit: int = SMALL_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: opened without
    blocking and checked with ``fstat`` before anything is read, so a FIFO, a device or a
    socket named by a run folder or a config is an error, not a hang.

    Raises:
        InputFileError: not a regular file, or larger than ``limit`` bytes.
        OSError: the file cannot be opened or read (FileNotFoundError when missing).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise InputFileError(f"{path}: {_file_kind(mode)}, not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputFileError(f"{path}: larger than {limit:,} bytes")
    return data


def check_regular_input(path: str | Path) -> Path:
    """``path`` if it is a regular file (following links); InputFileError for a FIFO,
    device or socket (a reader such as ``np.load`` or ``zipfile`` would block on one).
    FileNotFoundError when missing."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise InputFileError(f"{path}: {_file_kind(mode)}, not a regular file")
    return Path(path)


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return kind
    return "special file"


def _inside(path: Path, folder: str) -> bool:
    return path == Path(folder) or Path(folder) in path.parents


def _system_folder(path: Path) -> str | None:
    """The system folder (:data:`SYSTEM_FOLDERS`) that the absolute ``path`` lies in, else None."""
    if os.name != "posix" or any(_inside(path, top) for top in _FILE_FOLDERS):
        return None
    return next((top for top in SYSTEM_FOLDERS if _inside(path, top)), None)


def _refuse_system_path(given: Path, resolved: Path, what: str, instead: str) -> None:
    """OutputPathError when ``given`` (as written, or ``resolved``: its links followed) lies in a system folder."""
    for candidate in (Path(os.path.abspath(given)), resolved):
        top = _system_folder(candidate)
        if top is not None:
            via = "" if candidate == Path(os.path.abspath(given)) else f" (where its links lead: {resolved})"
            raise OutputPathError(
                f"{what} {given}: it is inside {top}{via}, which holds the system's "
                f"{'devices' if top == '/dev' else 'kernel interfaces'}, not output files; give {instead} elsewhere"
            )


def output_target(path: str | Path) -> Path:
    """The file that writing ``path`` replaces: ``path`` itself, or, for a symbolic link, its
    final target (every link on the way followed); an absolute path.

    Raises:
        OutputPathError: the path or the target lies inside ``/dev``, ``/proc`` or ``/sys``
            (``/dev/shm`` excepted), the target is a device, FIFO or socket, or the links loop.
        IsADirectoryError: the target is a folder.
    """
    given = Path(path)
    target = Path(os.path.realpath(given))
    try:
        mode: int | None = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # a new file (a folder in the way is check_output_folder's to name)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputPathError(f"cannot write {given}: its symbolic links loop") from exc
        raise
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        where = "" if target == Path(os.path.abspath(given)) else f" (the target of its link, {target})"
        raise OutputPathError(
            f"cannot write {given}: it is a {_file_kind(mode)}{where}, not a regular file; "
            "output goes to regular files only (writing would replace it by one)"
        )
    _refuse_system_path(given, target, "cannot write", "a regular file")
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{given} is a folder; give a file name")
    return target


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMP_MARK}{secrets.token_hex(4)}")


def is_temp_file(path: str | Path) -> bool:
    """Whether ``path`` is named like a temporary file of these writers."""
    name = Path(path).name
    return name.startswith(".") and TEMP_MARK in name


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: not every OS or file system can)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, fsync: bool = True, keep_suffix: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds, the file written
    there replaces ``path`` atomically; when it raises (KeyboardInterrupt included), the
    temporary file is removed, ``path`` is left as it was and the exception propagates.

    The block must create the file at exactly the yielded path. That name does not end
    in ``path``'s suffix, so a writer that appends a missing suffix (``np.savez`` adds
    ``.npz``, SB3's ``model.save`` adds ``.zip``) must be given a file object opened on it
    instead, as :func:`atomic_write` does; ``keep_suffix=True`` ends it in the suffix, for
    writers that choose the format by it (video writers). The folder of ``path`` is
    created if missing. A symbolic link is written through: the temporary file goes beside
    its target, which it replaces (:func:`output_target`).

    Raises:
        OutputPathError: ``path`` is a device, FIFO or socket, or lies inside ``/dev``,
            ``/proc`` or ``/sys`` (checked before the block runs; module docstring).
        IsADirectoryError: ``path`` is a folder.
        FileNotFoundError: the block succeeded without creating the temporary file.
    """
    given = Path(path)
    path = output_target(given)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(path)
    if keep_suffix:
        tmp = tmp.with_name(tmp.name + given.suffix)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"atomic_path: nothing was written to the temporary file {tmp} for {path}")
        if fsync:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if fsync:
        _fsync_dir(path.parent)


def atomic_write(path: str | Path, write_fn: Callable[[IO[bytes]], Any], fsync: bool = True) -> Path:
    """Call ``write_fn(f)`` with a binary file opened for writing, then put what it wrote
    at ``path`` atomically; if ``write_fn`` raises, ``path`` keeps its old content (or stays
    absent) and the exception propagates. Returns ``path``.

    Raises:
        OutputPathError, IsADirectoryError: ``path`` is not a regular file or a new one
            (:func:`atomic_path`), before ``write_fn`` is called.
    """
    path = Path(path)
    with atomic_path(path, fsync=fsync) as tmp:
        with open(tmp, "wb") as f:
            write_fn(f)
            f.flush()
    return path


def atomic_write_bytes(path: str | Path, data: bytes, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``. Raises as :func:`atomic_write`."""
    return atomic_write(path, lambda f: f.write(data), fsync=fsync)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8", fsync: bool = True) -> Path:
    """Write ``text`` to ``path`` atomically (``encoding``, newlines as given); returns ``path``.
    Raises as :func:`atomic_write`."""
    return atomic_write_bytes(path, text.encode(encoding), fsync=fsync)


def atomic_save_model(model: Any, path: str | Path, fsync: bool = True) -> Path:
    """``model.save`` (a Stable-Baselines3 model, or anything whose ``save`` takes a binary
    file object) to ``path`` atomically. The name is used as given: unlike ``model.save(path)``
    no ``.zip`` is appended. Returns ``path``. Raises as :func:`atomic_write`."""
    return atomic_write(path, model.save, fsync=fsync)


def remove_temp_files(folder: str | Path) -> list[Path]:
    """Remove the temporary files these writers left in ``folder`` (not recursively) when
    killed mid-write; return the paths removed. Only call it when no writer is at work
    in ``folder``."""
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for p in folder.iterdir():
        if is_temp_file(p) and p.is_file():
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p)
    return removed


# ---------------------------------------------------------------------------- output paths
def check_output_file(path: str | Path) -> Path:
    """``path`` as a Path if a file can be written there (its missing folders created on
    writing); else an OSError whose message names the real obstacle: ``path`` is a
    folder, or a folder on the way is a file (not "[Errno 17] File exists"), or the
    writers would refuse it (:func:`output_target`: a device, FIFO or socket, a path
    inside ``/dev``, ``/proc`` or ``/sys``). A symbolic link is checked where it leads.

    Raises:
        OutputPathError, IsADirectoryError, NotADirectoryError, PermissionError: as above.
    """
    path = Path(path)
    _check_name_length(path)
    target = output_target(path)
    check_output_folder(path.parent, for_file=path)
    if target.parent != Path(os.path.abspath(path.parent)):  # a link: the temporary file goes beside its target
        _check_name_length(target)
        check_output_folder(target.parent, for_file=path)
    return path


#: Bytes a temporary file's name adds to its file's (``.``, :data:`TEMP_MARK`, 8 hex digits, a kept suffix).
_TEMP_NAME_EXTRA = 1 + len(TEMP_MARK) + 8 + 8


def _check_name_length(path: Path) -> None:
    """OutputPathError for a file name too long for its folder's file system together with
    its temporary file's (checked before the work, not found when the result is written)."""
    folder = next((p for p in (path.parent, *path.parent.parents) if p.is_dir()), Path("."))
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    limit = name_max - _TEMP_NAME_EXTRA
    if len(os.fsencode(path.name)) > limit:
        raise OutputPathError(
            f"{path.name[:40]!r}...: the file name is {len(os.fsencode(path.name))} bytes, "
            f"longer than the {limit} this folder's file system allows (with the temporary file's name)"
        )


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether paths ``a`` and ``b`` name one file, however spelt (``./x``, a symlink, a
    hard link): :func:`os.path.samefile` where both exist, else their resolved paths."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_new_file(path: str | Path, what: str) -> Path:
    """``path`` as a Path unless it is an existing, non-empty file, which a new save (a
    game ``what`` names, e.g. ``"--save x.jsonl"``) would replace: ``jamb-play --save``
    and the in-game ``save FILE`` never write over another game or any other file.

    Raises:
        FileExistsError: the file exists and is not empty (the message says what to do).
    """
    path = Path(path)
    if path.is_file() and path.stat().st_size:
        raise FileExistsError(
            f"{what}: the file exists, and saving would replace it; to resume a game saved there, "
            f"--load {path}; else save this game in a new file"
        )
    return path


def check_output_folder(folder: str | Path, for_file: str | Path | None = None) -> Path:
    """``folder`` as a Path if it is a folder or can be created; else an OSError that
    names the file in the way or the folder without write permission.

    Raises:
        OutputPathError: ``folder`` lies inside ``/dev``, ``/proc`` or ``/sys`` (as given or
            where its links lead; ``/dev/shm`` excepted).
        NotADirectoryError, PermissionError: a file or a broken link in the way, no write permission.
    """
    folder = Path(folder)
    what = f"cannot write {for_file}" if for_file is not None else f"cannot create the folder {folder}"
    if for_file is None:
        _refuse_system_path(folder, Path(os.path.realpath(folder)), "cannot write into the folder", "a folder")
    probe = folder
    while not probe.exists():
        if probe.is_symlink():
            raise NotADirectoryError(f"{what}: {probe} is a broken link")
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise NotADirectoryError(f"{what}: {probe} is a file, not a folder")
    if probe.is_dir() and not os.access(probe, os.W_OK | os.X_OK):
        raise PermissionError(f"{what}: no permission to write in {probe}")
    return folder


def own_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file of its folder itself: a symbolic link or a hard
    link (a second name of a file that may lie outside the folder: more than one link) is
    not, so a server never serves, reads or saves through it. False for a path that is gone."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def change_stamp(path: str | Path, missing_ok: bool = False) -> tuple[int, ...] | None:
    """What changes when a file does, for caches keyed on a file and for writers that must not
    save over another program's write: its device, inode, size, modification and change times
    (``touch -d`` or ``cp -p`` set the modification time back, never the change time; an
    atomic replace gives a new inode). ``missing_ok``: None for a file that is not there.

    Raises:
        OSError: ``path`` cannot be stat'ed (gone, unless ``missing_ok``).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class FileChangedError(OSError):
    """A file changed on disk since its writer last wrote or read it (:func:`write_unless_changed`)."""


def write_unless_changed(path: str | Path, stamp: tuple | None, write: Callable[[], object]) -> tuple | None:
    """Run ``write`` (which writes ``path``) unless another program changed ``path`` since
    ``stamp`` (its :func:`change_stamp` when the caller last wrote or read it; None: not known,
    nothing to compare); return the new stamp, for the next write. The game savers (jamb-web's
    tables, jamb-play's sessions) never save over another's moves this way.

    Raises:
        FileChangedError: ``path``'s stamp is no longer ``stamp`` (nothing written).
        OSError: from ``write``.
    """
    if stamp is not None and change_stamp(path, missing_ok=True) != stamp:
        raise FileChangedError(f"{path} was changed by another program")
    write()
    return change_stamp(path, missing_ok=True)


def symlinks_in(folder: str | Path) -> list[Path]:
    """The symbolic links in ``folder`` and its subfolders (a linked folder is listed, not
    entered), sorted; none for a folder that is not there."""
    found = []
    for root, dirs, names in os.walk(folder):
        found += [Path(root, n) for n in dirs + names if os.path.islink(os.path.join(root, n))]
    return sorted(found)


def write_text_file(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (jamb_env.utils.files: a failed write leaves the
    previous file as it was), creating missing folders; clear OSErrors on bad paths.

    Raises:
        OSError: as :func:`check_output_file` (OutputPathError for a device, FIFO, socket or
            system folder), or the write failed.
    """
    path = check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path
