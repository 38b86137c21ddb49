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

Temporary files are named ``.<name>.tmp-<random>`` (hidden, never matching the
destination's glob such as ``model_*_steps.zip``); a writer killed by SIGKILL leaves one
behind, which :func:`remove_temp_files` clears. Pure Python: no Gymnasium, numpy or torch.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "TEMP_MARK", "atomic_path", "atomic_save_model", "atomic_write", "atomic_write_bytes", "atomic_write_text",
    "check_output_file", "check_output_folder", "is_temp_file", "remove_temp_files", "write_text_file",
]

#: The part of a temporary file's name between the destination's name and the random tail.
TEMP_MARK = ".tmp-"


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
    created if missing.

    Raises:
        FileNotFoundError: the block succeeded without creating the temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(path)
    if keep_suffix:
        tmp = tmp.with_name(tmp.name + path.suffix)
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
    absent) and the exception propagates. Returns ``path``."""
    path = Path(path)
    with atomic_path(path, fsync=fsync) as tmp:
        with open(tmp, "wb") as f:
            write_fn(f)
            f.flush()
    return path


def atomic_write_bytes(path: str | Path, data: bytes, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    return atomic_write(path, lambda f: f.write(data), fsync=fsync)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8", fsync: bool = True) -> Path:
    """Write ``text`` to ``path`` atomically (``encoding``, newlines as given); returns ``path``."""
    return atomic_write_bytes(path, text.encode(encoding), fsync=fsync)


def atomic_save_model(model: Any, path: str | Path, fsync: bool = True) -> Path:
    """``model.save`` (a Stable-Baselines3 model, or anything whose ``save`` takes a binary
    file object) to ``path`` atomically. The name is used as given: unlike ``model.save(path)``
    no ``.zip`` is appended. Returns ``path``."""
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
    folder, or a folder on the way is a file (not "[Errno 17] File exists")."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name")
    check_output_folder(path.parent, for_file=path)
    return path


def check_output_folder(folder: str | Path, for_file: str | Path | None = None) -> Path:
    """``folder`` as a Path if it is a folder or can be created; else an OSError that
    names the file in the way or the folder without write permission."""
    folder = Path(folder)
    what = f"cannot write {for_file}" if for_file is not None else f"cannot create the folder {folder}"
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


def write_text_file(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (jamb_env.files: a failed write leaves the
    previous file as it was), creating missing folders; clear OSErrors on bad paths."""
    path = check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path
