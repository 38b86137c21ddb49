"""One writer per run folder (agents/training/run_lock.py): every trainer and every resume
holds the folder's lock for the run's life; a second writer is refused (exit status 2, one
line naming the holder's pid) before it reads or writes anything; the lock of a killed
writer is taken over; the lock file itself is never followed, blocked on or half-taken."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from agents.training.run_lock import LOCK_FILE, RunFolderBusy, acquire, check_free, hold_run_dir, lock_holder, release
from tests.helpers import tiny_ppo_config

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
HOLD = (
    "import sys, time\n"
    "from agents.training.run_lock import hold_run_dir\n"
    "with hold_run_dir(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(600)\n"
)


def tiny_config(tmp_path: Path, total: int = 2048, trainer: str = "sb3") -> Path:
    """A config of seconds of training: 4 envs x 64 steps per rollout, no imitation stage."""
    return tiny_ppo_config(tmp_path / f"tiny_{trainer}.yaml", total=total, trainer=trainer)


@contextmanager
def held_by_another_process(folder: Path):
    """A child process holding ``folder``'s lock for the block; yields its pid."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=ROOT, env=ENV, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"held", "the child did not take the lock"
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=30)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---------------------------------------------------------------- the lock itself


def test_a_lock_is_held_for_the_block_and_gone_after_it(tmp_path):
    run = tmp_path / "new" / "run"
    with hold_run_dir(run):
        assert lock_holder(run) == os.getpid() and listing(run) == [LOCK_FILE]
        with pytest.raises(RunFolderBusy, match=f"process {os.getpid()} is writing"):  # a second descriptor: refused
            acquire(run)
    assert not (tmp_path / "new").exists()  # created here and left empty: removed again
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("x")
    with hold_run_dir(run):
        pass
    assert listing(run) == ["config.yaml"]  # no lock file left behind


def test_a_second_process_is_refused_naming_the_holder(tmp_path):
    run = tmp_path / "run"
    with held_by_another_process(run) as pid:
        with pytest.raises(RunFolderBusy) as busy:
            with hold_run_dir(run):
                pytest.fail("took a lock another process holds")
        assert busy.value.pid == pid and f"process {pid}" in str(busy.value) and "\n" not in str(busy.value)
        with pytest.raises(RunFolderBusy, match=f"process {pid}"):
            check_free(run)
        assert listing(run) == [LOCK_FILE]


def test_the_lock_of_a_killed_writer_is_taken_over(tmp_path):
    """SIGKILL leaves the lock file with the dead writer's pid; the kernel released the lock."""
    run = tmp_path / "run"
    with held_by_another_process(run) as pid:
        pass  # killed on the way out
    assert lock_holder(run) == pid  # the file is still there ...
    check_free(run)  # ... but nobody holds it
    with hold_run_dir(run):
        assert lock_holder(run) == os.getpid()
    assert not (run / LOCK_FILE).exists()


def _contend(folder: str, times: int, inside, overlaps, taken) -> None:
    """Take and release ``folder``'s lock until this process has held it ``times`` times (60 s at most)."""
    end = time.monotonic() + 60
    while taken.value < times and time.monotonic() < end:
        try:
            fd = acquire(Path(folder))
        except RunFolderBusy:
            time.sleep(0.0002)
            continue
        with inside.get_lock():
            inside.value += 1
            if inside.value > 1:
                overlaps.value += 1
        taken.value += 1
        time.sleep(0.0005)
        with inside.get_lock():
            inside.value -= 1
        release(fd, Path(folder), [])


def test_writers_racing_for_a_lock_never_hold_it_together(tmp_path):
    """Four processes take and release one folder's lock 50 times each (the file is removed at
    each release, so a writer often locks a file just removed): never two holders at once."""
    ctx = multiprocessing.get_context("fork")
    inside, overlaps = ctx.Value("i", 0), ctx.Value("i", 0)
    counts = [ctx.Value("i", 0, lock=False) for _ in range(4)]
    tmp_path.joinpath("run").mkdir()
    procs = [ctx.Process(target=_contend, args=(str(tmp_path / "run"), 50, inside, overlaps, n)) for n in counts]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert overlaps.value == 0 and all(n.value == 50 for n in counts), [n.value for n in counts]


@pytest.mark.parametrize("kind", ["symlink", "hard link", "fifo", "folder"])
def test_a_lock_file_that_is_no_file_is_refused_and_left_alone(tmp_path, kind):
    """Before (hard link): the pid written into the lock truncated the other file (jamb-web's
    records folder takes the same lock)."""
    run, target = tmp_path / "run", tmp_path / "target"
    run.mkdir()
    target.write_text("keep")
    lock = run / LOCK_FILE
    make = {"symlink": lambda: lock.symlink_to(target), "hard link": lambda: os.link(target, lock)}
    {**make, "fifo": lambda: os.mkfifo(lock), "folder": lock.mkdir}[kind]()
    with pytest.raises(ValueError, match="is not a lock file"):
        with hold_run_dir(run):
            pass
    assert target.read_text() == "keep" and os.path.lexists(lock)


# ---------------------------------------------------------------- every trainer


def test_train_refuses_a_folder_another_process_writes(tmp_path):
    from agents.training.config import load_config
    from agents.training.train import train

    for trainer in ("sb3", "lean"):
        run = tmp_path / f"run_{trainer}"
        cfg = load_config(tiny_config(tmp_path, trainer=trainer))
        with held_by_another_process(run) as pid:
            for resume in (False, True):
                with pytest.raises(RunFolderBusy, match=f"process {pid}"):
                    train(cfg, run_dir=run, progress_bar=False, resume=resume)
                assert listing(run) == [LOCK_FILE]


def test_selfplay_refuses_a_folder_another_process_writes(tmp_path):
    from agents.training.selfplay import SelfPlaySettings, train_selfplay

    settings = SelfPlaySettings("classic_down", 2, "separate", "win", 1.0)
    run = tmp_path / "run"
    with held_by_another_process(run) as pid:
        for resume in (False, True):
            with pytest.raises(RunFolderBusy, match=f"process {pid}"):
                train_selfplay(settings, run, 256, n_envs=4, n_steps=32, resume=resume, baseline_agents={})
        assert listing(run) == [LOCK_FILE]


def test_the_value_learner_refuses_a_folder_another_process_writes(tmp_path):
    from agents.training import value as V

    cfg = V.ValueConfig(ruleset="classic_down", iterations=1, games=2, hidden=(8,), epochs=1, workers=1)
    out = tmp_path / "v"
    with held_by_another_process(out) as pid:
        for resume in (False, True):
            with pytest.raises(RunFolderBusy, match=f"process {pid}"):
                V.train_value(cfg, out, resume=resume)
        assert listing(out) == [LOCK_FILE]


def test_rllib_refuses_a_folder_another_process_writes(tmp_path):
    pytest.importorskip("ray.rllib", reason="the ray extra is not installed")
    from agents.training.rllib_config import DEFAULT_RLLIB_CONFIG, load_rllib_config
    from agents.training.rllib_train import train_rllib

    run = tmp_path / "run"
    with held_by_another_process(run) as pid:
        with pytest.raises(RunFolderBusy, match=f"process {pid}"):
            train_rllib(load_rllib_config(DEFAULT_RLLIB_CONFIG), run_dir=run, progress=False)
        assert listing(run) == [LOCK_FILE]


@pytest.mark.parametrize(
    "command, args",
    [
        ("train_selfplay", ["--ruleset", "classic_down", "--total-timesteps", "256", "--run-dir", "{run}"]),
        ("train_selfplay", ["--ruleset", "classic_down", "--resume", "--run-dir", "{run}"]),
        ("train_value", ["--ruleset", "classic_down", "--iterations", "1", "--out", "{run}"]),
        ("tune", ["--config", "{config}", "--trials", "1", "--steps", "256", "--out", "{run}"]),
    ],
)
def test_commands_refuse_a_folder_another_process_writes_in_one_line(tmp_path, capsys, command, args):
    import importlib

    run = tmp_path / "run"
    argv = [a.format(run=run, config=tiny_config(tmp_path)) for a in args]
    with held_by_another_process(run) as pid:
        assert importlib.import_module(f"agents.apps.cli.{command}").main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert f"process {pid} is writing a run there" in err and len(err.splitlines()) == 1, err
        assert listing(run) == [LOCK_FILE]


@pytest.mark.slow
def test_two_jamb_train_at_once_the_second_exits_2_and_the_first_run_is_intact(tmp_path):
    """A live run, then a second ``jamb-train`` in its folder (another seed) and a ``--resume``
    of it: both exit 2 naming the live run's pid, before touching anything; the live run
    then ends (SIGINT: checkpoint and final model) with its own files alone."""
    from agents.training.runs import checkpoints, model_steps
    from jamb_env.utils.files import is_temp_file

    run = tmp_path / "run"
    config = tiny_config(tmp_path, total=10**8)
    base = [sys.executable, "-m", "agents.apps.cli.train", "--no-progress"]
    first = subprocess.Popen(
        [*base, "--config", str(config), "--run-dir", str(run)], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True
    )
    try:
        end = time.monotonic() + 300
        while not checkpoints(run):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < end, "no checkpoint within 300 s"
            time.sleep(0.1)
        before = {p for p in run.rglob("*") if p.name != LOCK_FILE and not is_temp_file(p)}  # the live run's files
        for args in (["--config", str(config), "--run-dir", str(run), "--seed", "1"], ["--resume", str(run)]):
            second = subprocess.run([*base, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
            assert second.returncode == 2, second.stderr[-2000:]
            assert f"process {first.pid} is writing a run there" in second.stderr
            assert len(second.stderr.strip().splitlines()) == 1, second.stderr
        assert first.poll() is None  # still training
        assert all(p.exists() for p in before)  # nothing of the live run moved aside or removed
        first.send_signal(signal.SIGINT)
        out, _ = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 130, out
    assert yaml.safe_load((run / "config.yaml").read_text())["seed"] == 0
    assert not list(run.rglob("*abandoned*")) and not (run / LOCK_FILE).exists()
    assert model_steps(run / "final_model.zip") == model_steps(checkpoints(run)[0])
