"""Hostile output paths and interrupted evaluations (jamb_env/utils/files.py, agents/apps/cli/evaluate.py,
agents/evaluation/solitaire.py's process pool).

Output goes to regular files only: a device, FIFO or socket, or a path inside /dev, /proc or
/sys, is refused before anything is written (the temporary file + ``os.replace`` would put a
regular file in its place); a symbolic link is written through to its target. Ctrl-C and
SIGTERM stop a ``--jobs`` evaluation at once (exit 130 / 143), writing nothing.

Nothing here writes into /dev on this code; the one test that could on code without the
check (``--out /dev/full`` as root) removes what it finds there.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import jamb_env.utils.files as files

ROOT = Path(__file__).resolve().parents[1]


def special_file(kind: str, folder: Path) -> Path:
    """A FIFO, a Unix socket or a character device (like /dev/null) in ``folder``."""
    path = folder / f"{kind}.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        if len(str(path)) > 100:
            pytest.skip("the temporary folder's path is too long for a Unix socket")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()  # the socket file stays
    else:
        try:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except (PermissionError, OSError):
            pytest.skip("no permission to create a device node here")
    return path


def is_special(path: Path) -> bool:
    mode = os.lstat(path).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class Model:
    def save(self, f):
        f.write(b"model")


def writers():
    """Every writer of jamb_env.utils.files, as ``name -> write(path)``."""

    def with_atomic_path(path):
        with files.atomic_path(path) as tmp:
            Path(tmp).write_text("x")

    return {
        "atomic_write": lambda p: files.atomic_write(p, lambda f: f.write(b"x")),
        "atomic_write_bytes": lambda p: files.atomic_write_bytes(p, b"x"),
        "atomic_write_text": lambda p: files.atomic_write_text(p, "x"),
        "atomic_save_model": lambda p: files.atomic_save_model(Model(), p),
        "atomic_path": with_atomic_path,
        "write_text_file": lambda p: files.write_text_file(p, "x"),
        "check_output_file": files.check_output_file,
    }


# ---------------------------------------------------------------------------- the policy, per writer
@pytest.mark.parametrize("kind, word", [("fifo", "FIFO"), ("socket", "socket"), ("device", "character device")])
@pytest.mark.parametrize("writer", list(writers()))
def test_every_writer_refuses_a_special_file_and_leaves_it(tmp_path, kind, word, writer):
    path = special_file(kind, tmp_path)
    with pytest.raises(OSError) as info:
        writers()[writer](path)
    assert str(path) in str(info.value) and word in str(info.value) and "not a regular file" in str(info.value)
    assert is_special(path)  # not replaced by a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary file left


@pytest.mark.parametrize("writer", list(writers()))
def test_every_writer_refuses_a_link_to_a_device(tmp_path, writer):
    link = tmp_path / "log.txt"
    link.symlink_to("/dev/null")
    with pytest.raises(OSError) as info:
        writers()[writer](link)
    assert str(link) in str(info.value) and "/dev/null" in str(info.value)
    assert link.is_symlink() and os.readlink(link) == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("writer", [w for w in writers() if w != "check_output_file"])
def test_a_symlink_is_written_through_to_its_target(tmp_path, writer):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "real.csv"
    target.write_text("old")
    link = tmp_path / "latest.csv"
    link.symlink_to(os.path.relpath(target, tmp_path))
    writers()[writer](link)
    assert link.is_symlink() and os.readlink(link) == "store/real.csv"  # still the link
    assert target.read_bytes() in (b"x", b"model")  # its target has the new content
    assert not [
        p for p in tmp_path.rglob("*") if files.is_temp_file(p)
    ]  # the temporary file went beside the target and is gone


def test_a_dangling_link_creates_its_target(tmp_path):
    link = tmp_path / "new.csv"
    link.symlink_to("made/later.csv")
    files.write_text_file(link, "fresh")
    assert link.is_symlink() and (tmp_path / "made" / "later.csv").read_text() == "fresh"


def test_a_link_loop_is_a_clear_error(tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to("loop.csv")
    with pytest.raises(OSError, match="symbolic links loop") as info:
        files.write_text_file(loop, "x")
    assert str(loop) in str(info.value) and loop.is_symlink()


@pytest.mark.parametrize(
    "path, top",
    [
        ("/dev/jamb-test-nothing/x.csv", "/dev"),
        ("/dev/full.csv", "/dev"),
        ("/dev/stdout", "/dev"),
        ("/proc/self/jamb.csv", "/proc"),
        ("/sys/jamb.csv", "/sys"),
    ],
)
def test_paths_inside_system_folders_are_refused(path, top):
    with pytest.raises(OSError) as info:
        files.check_output_file(path)
    assert path in str(info.value) and f"inside {top}" in str(info.value)
    assert not os.path.lexists(path) or path == "/dev/stdout"


@pytest.mark.parametrize("folder", ["/dev", "/dev/jamb-test-nothing", "/proc/self", "/sys/kernel"])
def test_folders_inside_system_folders_are_refused(folder):
    with pytest.raises(OSError, match=f"inside /{folder.split('/')[1]}") as info:
        files.check_output_folder(folder)
    assert folder in str(info.value)


def test_a_link_into_dev_is_refused_where_it_leads(tmp_path):
    (tmp_path / "out").symlink_to("/dev")
    with pytest.raises(OSError, match="inside /dev"):
        files.check_output_file(tmp_path / "out" / "jamb-test-nothing.csv")
    with pytest.raises(OSError, match="inside /dev"):
        files.check_output_folder(tmp_path / "out")
    if os.path.isdir("/dev/shm"):  # the exception: a RAM file system for ordinary files
        assert files.check_output_file("/dev/shm/jamb-test-nothing.csv") == Path("/dev/shm/jamb-test-nothing.csv")


# ---------------------------------------------------------------------------- jamb-evaluate refuses before playing
def evaluate(argv: list[str]) -> tuple[int, str, str]:
    """``agents.apps.cli.evaluate.main(argv)`` in this process: (exit status, stdout, stderr)."""
    from agents.apps.cli.evaluate import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


DEV_FULL = ("/dev/full.csv", "/dev/full_games.csv", "/dev/full.png")


def test_evaluate_out_dev_full_is_an_error_before_any_game():
    try:
        code, out, err = evaluate(["--agents", "random", "--games", "2", "--no-progress", "--out", "/dev/full"])
        assert code == 2 and err.startswith("error: ") and "/dev/full.csv" in err and "inside /dev" in err, err
        assert "| agent |" not in out and "Traceback" not in err  # nothing played
        assert not any(os.path.lexists(p) for p in DEV_FULL)
    finally:  # code without the check (as root) wrote these: remove them, never a device
        for p in DEV_FULL:
            if os.path.isfile(p) and not os.path.islink(p):
                os.unlink(p)


@pytest.mark.parametrize("players", [None, 2])
def test_evaluate_refuses_a_fifo_output_before_any_game(tmp_path, players):
    name = "r_matches.csv" if players else "r_games.csv"
    fifo = tmp_path / name
    os.mkfifo(fifo)
    argv = ["--agents", "random", "greedy", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")] + (
        ["--players", "2"] if players else []
    )
    code, out, err = evaluate(argv)
    assert code == 2 and err.startswith("error: ") and str(fifo) in err and "FIFO" in err and "Traceback" not in err, (
        err
    )
    assert "| agent |" not in out and "| A |" not in out  # no table: nothing was played
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == [name]


def test_evaluate_refuses_a_fifo_records_file_before_any_game(tmp_path):
    recs = tmp_path / "recs"
    recs.mkdir()
    os.mkfifo(recs / "random.jsonl")
    code, out, err = evaluate(
        ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r"), "--records", str(recs)]
    )
    assert code == 2 and str(recs / "random.jsonl") in err and "FIFO" in err, err
    assert "| agent |" not in out and stat.S_ISFIFO(os.lstat(recs / "random.jsonl").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recs"]


def test_evaluate_writes_through_a_linked_output(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "real.csv").write_text("old")
    (tmp_path / "r.csv").symlink_to(store / "real.csv")
    code, out, err = evaluate(["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")])
    assert code == 0, err
    assert (tmp_path / "r.csv").is_symlink() and (store / "real.csv").read_text().startswith("agent,games,mean")


# ---------------------------------------------------------------------------- Ctrl-C and SIGTERM with --jobs 2
def interrupt_evaluation(
    tmp_path: Path, signum: int, to_group: bool, extra: list[str], wait_for_games: bool
) -> tuple[int, float, str]:
    """Start ``scripts/evaluate.py --jobs 2 --games 2000`` (plenty to play), send ``signum``
    once it has played its first games (or, ``wait_for_games`` False, once its workers are
    at work): to its process group as a terminal's Ctrl-C does, or to it alone as ``kill``
    does. Returns (exit status, seconds from the signal to the exit, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "evaluate.py"),
        "--jobs",
        "2",
        "--games",
        "2000",
        "--out",
        str(tmp_path / "out" / "r"),
        *extra,
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        err, deadline = b"", time.monotonic() + 900  # a cold numba cache compiles for minutes
        while time.monotonic() < deadline:
            chunk = proc.stderr.read1(4096)
            if not chunk:
                break
            err += chunk
            done = [int(n) for n in re.findall(rb"(\d+)/\d+ \[", err)]
            if done and (max(done) > 0 or not wait_for_games):
                break
        assert proc.poll() is None, err.decode()
        if not wait_for_games:
            time.sleep(1.0)  # the workers are playing their first chunks
        sent = time.monotonic()
        if to_group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        try:
            _, rest = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still playing 15 s after {signal.Signals(signum).name}")
        return proc.returncode, time.monotonic() - sent, (err + rest).decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # any worker left behind


@pytest.mark.parametrize(
    "signum, code, to_group",
    [
        pytest.param(signal.SIGINT, 130, True, id="ctrl-c"),
        pytest.param(signal.SIGINT, 130, False, id="sigint", marks=pytest.mark.slow),
        pytest.param(signal.SIGTERM, 143, False, id="sigterm"),
    ],
)
def test_a_signal_stops_a_parallel_evaluation_at_once(tmp_path, signum, code, to_group):
    rc, seconds, err = interrupt_evaluation(tmp_path, signum, to_group, ["--agents", "random"], wait_for_games=True)
    assert rc == code and seconds < 5, (rc, seconds, err)
    assert "nothing written" in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_signal_stops_parallel_matches_at_once(tmp_path, signum, code):
    rc, seconds, err = interrupt_evaluation(
        tmp_path,
        signum,
        signum == signal.SIGINT,
        ["--ruleset", "classic_down", "--agents", "random", "greedy", "--players", "2"],
        wait_for_games=False,
    )
    assert rc == code and seconds < 5, (rc, seconds, err)
    assert "nothing written" in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()
