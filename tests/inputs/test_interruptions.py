"""Interruptions as input: Ctrl-C and SIGTERM / SIGHUP while a command plays, evaluates,
watches, tunes or trains. Each stops at once with status 130 / 143, saves what a user
would lose (the record, the page, the finished trials) or says that nothing was written,
and leaves no worker behind."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.apps.cli import play
from jamb_env import JambEnv
from jamb_env.replay.records import GameRecord, read_matches, read_records, replay
from tests.helpers import fake_train, run_main, slow_after

ROOT = Path(__file__).resolve().parents[2]


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


def start(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "play.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


SIGNALS = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])


def _main(monkeypatch, capsys, argv, lines=("quit",)):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _two_games(path: Path) -> Path:
    text = ""
    for seed in (1, 2):
        rec = GameRecord(ruleset="classic", seed=seed, player="human")
        env = JambEnv(ruleset="classic")
        env.reset(seed=seed)
        rec.play(env, int(env.action_masks().nonzero()[0][0]))
        text += rec.text()
    path.write_text(text, encoding="utf-8")
    return path


def _have_pillow() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return True


def _children(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid`` (Linux's /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


#: a command -> (the function Ctrl-C stops, its arguments ("{tmp}": the test's folder), what it says)
CTRL_C = {
    "soak": ("soak", ["--presets", "classic", "--games-per-preset", "1"], "interrupted during classic"),
    "evaluate": (
        "run_games",
        ["--agents", "random", "--games", "2", "--out", "{tmp}/r"],
        "interrupted; nothing written",
    ),
    "plot": ("read_scalars", ["{tmp}", "--out", "{tmp}/c.png"], "interrupted; nothing written"),
}


@pytest.mark.parametrize("command", CTRL_C)
def test_ctrl_c_stops_a_command_with_130_and_writes_nothing(command, monkeypatch, capsys, tmp_path):
    import importlib

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    stopped, argv, says = CTRL_C[command]
    monkeypatch.setattr(importlib.import_module(f"agents.apps.cli.{command}"), stopped, interrupted)
    code, err = run_main(command, [a.format(tmp=tmp_path) for a in argv], capsys)
    assert code == 130 and says in err and "Traceback" not in err and not list(tmp_path.iterdir())


def test_tune_ctrl_c_keeps_finished_trials(monkeypatch, capsys, tmp_path):
    import agents.training.train as training

    calls = []
    train = fake_train(calls)

    def interrupted_second(cfg, **kwargs):
        if calls:
            raise KeyboardInterrupt
        return train(cfg, **kwargs)

    monkeypatch.setattr(training, "train", interrupted_second)
    code, err = run_main("tune", ["--trials", "3", "--steps", "1000", "--out", str(tmp_path / "t")], capsys)
    assert code == 130 and "interrupted; 1 finished trials" in err and "Traceback" not in err
    assert (tmp_path / "t" / "best_config.yaml").is_file() and len(
        (tmp_path / "t" / "trials.csv").read_text().splitlines()
    ) == 2


@pytest.mark.parametrize(
    "signum, code, to_group",
    slow_after(
        [
            pytest.param(signal.SIGINT, 130, True, id="ctrl-c"),
            pytest.param(signal.SIGINT, 130, False, id="sigint", marks=pytest.mark.slow),
            pytest.param(signal.SIGTERM, 143, False, id="sigterm"),
        ]
    ),  # a jamb-evaluate subprocess each
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


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_watching_saves_the_record(tmp_path, sig):
    rec = tmp_path / "w.jsonl"
    proc = start(["--watch", "greedy", "--seed", "3", "--delay", "0.05", "--record", str(rec)])
    try:
        seen = 0
        for line in proc.stdout:  # the game is under way once a few steps are shown
            seen += "turn " in line and ", roll " in line
            if seen >= 3:
                break
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    name = signal.Signals(sig).name
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {name} after" in err and "Traceback" not in err
    record = read_records(rec)[0]
    assert 3 <= len(record.steps) < 60 and record.final_score is None
    assert len(list(replay(record))) == len(record.steps)  # a valid prefix of the game


@pytest.mark.slow
def test_sigterm_at_a_match_prompt_saves_the_match(tmp_path):
    save = tmp_path / "m.jsonl"
    proc = start(["--players", "human", "greedy", "--seed", "4", "--save", str(save)], stdin=subprocess.PIPE)
    try:
        for line in proc.stdout:
            if "your turn" in line:
                break
        proc.send_signal(signal.SIGTERM)  # waiting at the prompt for the person's command
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    moved = re.search(rf"stopped by SIGTERM after (\d+) moves; the match is saved in {re.escape(str(save))}", err)
    assert moved and "Traceback" not in err, err
    record = read_matches(save)[0]
    assert record.players == ["human", "greedy"] and len(record.steps) == int(moved.group(1))


def test_ctrl_c_while_watching_writes_the_page_of_the_game_so_far(monkeypatch, capsys, tmp_path):
    real = play.show_steps

    def cut_short(console, steps, delay):  # Ctrl-C after 4 moves
        def four():
            for k, item in enumerate(steps):
                yield item
                if k == 3:
                    raise KeyboardInterrupt

        return real(console, four(), delay)

    monkeypatch.setattr(play, "show_steps", cut_short)
    rec, page = tmp_path / "r.jsonl", tmp_path / "g.html"
    code, out, err = _main(
        monkeypatch,
        capsys,
        ["--watch", "random", "--seed", "3", "--delay", "0", "--record", str(rec), "--html", str(page)],
        lines=(),
    )
    assert code == 130, err
    assert (
        f"interrupted after 4 moves; the game so far (4 moves) is in {rec}; --html {page} written (the game so far)"
        in err
    )
    assert len(read_records(rec)[0].steps) == 4 and page.read_text(encoding="utf-8").startswith("<!")


def test_ctrl_c_during_a_replay_says_the_page_is_not_written(monkeypatch, capsys, tmp_path):
    rec = _two_games(tmp_path / "r.jsonl")
    monkeypatch.setattr(play, "show_steps", lambda console, steps, delay: (_ for _ in ()).throw(KeyboardInterrupt))
    code, out, err = _main(monkeypatch, capsys, ["--replay", str(rec), "--html", str(tmp_path / "g.html")], lines=())
    assert code == 130 and f"--html {tmp_path / 'g.html'} not written (interrupted)" in err, err
    assert not (tmp_path / "g.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_watching_writes_record_page_and_video(tmp_path, sig):
    rec, page, video = tmp_path / "r.jsonl", tmp_path / "g.html", tmp_path / "v.gif"
    args = ["--watch", "random", "--seed", "3", "--delay", "0.05", "--record", str(rec), "--html", str(page)]
    if _have_pillow():
        args += ["--video", str(video)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "play.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = 0
        for line in proc.stdout:
            seen += "turn " in line and ", roll " in line
            if seen >= 3:
                break
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and f"--html {page}" in err and "written (the game so far)" in err, err
    record = read_records(rec)[0]
    assert 3 <= len(record.steps) < 60 and len(list(replay(record))) == len(record.steps)
    assert page.read_text(encoding="utf-8").startswith("<!")
    if _have_pillow():
        from PIL import Image

        assert f"--video {video}" in err
        with Image.open(video) as gif:
            assert gif.n_frames == len(record.steps) + 1


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs Linux's /proc")
def test_sigterm_stops_jamb_train_value_and_its_workers(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_NUM_THREADS="1")
    cmd = [
        sys.executable,
        "-m",
        "agents.apps.cli.train_value",
        "--ruleset",
        "classic_down",
        "--iterations",
        "1",
        "--games",
        "2000",
        "--epochs",
        "1",
        "--workers",
        "2",
        "--out",
        str(tmp_path / "run"),
    ]
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline, workers = time.monotonic() + 300, []
        while time.monotonic() < deadline and proc.poll() is None:
            workers = [p for p in _children(proc.pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
            if len(workers) == 2:
                break
            time.sleep(0.2)
        assert len(workers) == 2 and proc.poll() is None, "the two game workers never started"
        time.sleep(1.0)  # at work on their games
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143 and "terminated (SIGTERM)" in err.decode() and "Traceback" not in err.decode(), (
            err.decode()
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.2)
        assert not any(_alive(p) for p in workers), "the workers were left running, orphaned"
    finally:
        import contextlib

        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
