"""Fourth hostile round (issue 27): the run folders of self-play, the value learner and
the SB3 trainer given FIFOs, devices, corrupt TensorBoard records and damaged histories;
YAML readers given a FIFO or a bad tag; the OpenSpiel door given a hostile state string.

Each case failed (a traceback, a hang, code run from data, or an unclear error) before
its fix; now it is a clear error or a skipped file with a message.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.training import runs
from tests.helpers import finishes, needs_fifo


def unblock(fifo: Path) -> None:
    """Let a reader blocked opening ``fifo`` go on (a writer that opens and closes it)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # no reader left
        pass


# ---------------------------------------------------------------- 1: checkpoints that are no files
@needs_fifo
def test_a_checkpoint_that_is_a_fifo_or_a_device_is_skipped_not_read(tmp_path):
    folder = tmp_path / "run" / runs.CHECKPOINTS
    folder.mkdir(parents=True)
    fifo, device = folder / "model_300_steps.zip", folder / "model_400_steps.zip"
    os.mkfifo(fifo)
    os.symlink("/dev/zero", device)
    try:
        assert "FIFO" in finishes(lambda: runs.checkpoint_problem(fifo))
        assert "character device" in finishes(lambda: runs.checkpoint_problem(device))
        assert finishes(lambda: runs.model_steps(fifo)) is None  # best_model.zip as a FIFO
        (tmp_path / "run" / runs.BEST_MODEL).symlink_to(fifo)
        assert finishes(lambda: runs.best_so_far(tmp_path / "run", {})) == float("-inf")
    finally:
        unblock(fifo)


# ---------------------------------------------------------------- 2: a record that is no event
def test_a_record_that_is_no_tensorboard_event_is_set_aside_not_a_traceback(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.summary.writer.record_writer import RecordWriter
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_scalar("value/loss", 1.0, 0)
    writer.add_scalar("value/loss", 2.0, 5)
    writer.close()
    forged = tmp_path / "events.out.tfevents.1.forged"
    with open(forged, "wb") as f:  # a well-framed record (its checksums right) that holds no Event
        RecordWriter(f).write(b"\xff\xff\xff\xff not an event")
    assert runs.set_aside_events(tmp_path, keep_before=3) == 2  # the step-5 value and the forged record
    assert "no TensorBoard event" in capsys.readouterr().out
    assert list(RawEventFileLoader(str(forged)).Load()) == []
    aside = list(RawEventFileLoader(str(tmp_path / "events_abandoned_1.tfrecord")).Load())
    assert len(aside) == 2 and b"not an event" in aside[0] + aside[1]  # kept, not lost


# ---------------------------------------------------------------- 3: a damaged value-run history
HISTORY = (
    "iteration,policy,games,samples,mean_score,fit_loss,holdout_loss,wall_s\n0,expectimax,2,24,146.5,1.0,1.2,8.7\n"
)


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda p: p.write_text(HISTORY + "1,x" + "y" * 200_000 + ",2,24,1,1,1,1\n"), "field larger than field limit"),
        (lambda p: p.write_bytes(HISTORY.encode() + b"\xff\xfe\n"), "not UTF-8 text"),
        (lambda p: p.write_text(HISTORY + "1,search(iter 0),-500,24,1,1,1,1\n"), "games '-500' is negative"),
        (lambda p: p.write_text(HISTORY.replace("8.7", "nan")), "wall_s 'nan' is not a finite number"),
        (lambda p: os.mkfifo(p), "FIFO"),
    ],
    ids=["huge field", "not utf-8", "negative games", "nan wall time", "fifo"],
)
def test_a_damaged_value_history_is_an_error_naming_the_file(tmp_path, damage, why):
    from agents.training.value import _read_history

    if why == "FIFO" and not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs (POSIX)")
    damage(tmp_path / "history.csv")
    with pytest.raises(ValueError, match="history.csv is damaged") as exc:
        finishes(lambda: _read_history(tmp_path))
    assert why in str(exc.value) and "\n" not in str(exc.value)


# ---------------------------------------------------------------- 4: OpenSpiel state strings are data
class _Marker:
    """Unpickling it creates the file ``path`` (a stand-in for any code a pickle can run)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def test_a_forged_openspiel_state_string_runs_no_code(tmp_path):
    import base64
    import pickle

    pyspiel = pytest.importorskip("pyspiel")
    from jamb_env.openspiel import load_state

    game = pyspiel.load_game("python_jamb", {"ruleset": "classic_down"})
    state = game.new_initial_state()
    state.apply_action(5)  # a first roll
    state.apply_action(0)  # re-roll every die
    marker = tmp_path / "ran"
    forged = (
        state.serialize().split("__dict__=")[0] + "__dict__=" + base64.b64encode(pickle.dumps(_Marker(marker))).decode()
    )
    again = game.deserialize_state(forged)
    assert not marker.exists() and str(again) == str(state) and again.history() == state.history()
    text = pyspiel.serialize_game_and_state(game, state).split("__dict__=")[0] + forged.split("\n")[2]
    g2, s2 = load_state(text)
    assert not marker.exists() and str(g2) == str(game) and str(s2) == str(state)
    for bad, why in (
        ("history=0:5\nmove_number=1\n", "player -1 is to move"),
        ("history=-1:999\nmove_number=1\n", "chance outcome 999 is not possible"),
        ("history=-1:5\nmove_number=7\n", "move_number='7'"),
        ("5\n5\n", "not a serialized python_jamb state"),
    ):
        with pytest.raises(ValueError, match=why):
            game.deserialize_state(bad)
    with pytest.raises(ValueError, match="reads python_jamb games"):
        load_state(
            pyspiel.serialize_game_and_state(
                pyspiel.load_game("tic_tac_toe"), pyspiel.load_game("tic_tac_toe").new_initial_state()
            )
        )


@pytest.mark.parametrize("players, outcome", [(1, -1), (1, 10_000), (2, 7), (2, -3)])
def test_a_chance_outcome_out_of_range_has_no_name(players, outcome):
    pyspiel = pytest.importorskip("pyspiel")
    import jamb_env.openspiel  # noqa: F401  (registers python_jamb)

    game = pyspiel.load_game(
        "python_jamb", {"ruleset": "classic_down" if players == 1 else "standard", "players": players}
    )
    with pytest.raises(
        ValueError, match=f"chance outcome {outcome} is outside 0.."
    ):  # was a name (dice 6 6 6 6 6, player_7) or IndexError
        game.new_initial_state().action_to_string(pyspiel.PlayerId.CHANCE, outcome)


# ---------------------------------------------------------------- 5: YAML readers: a FIFO, a bad tag
@needs_fifo
def test_a_yaml_file_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    from jamb_env.rules.ruleset import read_yaml_mapping

    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    try:
        with pytest.raises(ValueError, match="not a regular file"):  # jamb-train-value --config c.yaml hung in open()
            finishes(lambda: read_yaml_mapping(fifo, ValueError))
    finally:
        unblock(fifo)


def test_a_yaml_error_is_one_line_naming_the_place(tmp_path):
    from jamb_env import RulesetError, load_ruleset

    bad = tmp_path / "r.yaml"
    bad.write_text("!!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(RulesetError) as exc:
        load_ruleset(bad)
    message = str(exc.value)
    assert "\n" not in message and "python/object/apply:os.system" in message and "(line 1, column 1)" in message


# ------------------------------------------------------- 6: a self-play run stopped before its first checkpoint
def test_a_selfplay_run_stopped_before_its_first_checkpoint_resumes_from_step_0(tmp_path, capsys):
    import shutil

    from agents.apps.cli.train_selfplay import main

    run = tmp_path / "run"
    args = [
        "--ruleset",
        "classic_down",
        "--n-envs",
        "2",
        "--n-steps",
        "32",
        "--snapshot-freq",
        "64",
        "--eval-freq",
        "10000",
        "--eval-games",
        "1",
        "--baselines",
        "random",
        "--run-dir",
        str(run),
        "--total-timesteps",
        "64",
    ]
    assert main(args) == 0
    shutil.rmtree(
        run / "checkpoints"
    )  # as a run that Ctrl-C stopped while it started: its settings saved, nothing learnt
    (run / "final_model.zip").unlink()
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0  # was: "no checkpoint ... remove the folder and start it again", exit 2
    assert "starting it again from step 0" in capsys.readouterr().out
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["model_64_steps.zip"] and (
        run / "final_model.zip"
    ).is_file()


# ---------------------------------------------------------------- 7: a resumed run's progress.csv
@pytest.mark.parametrize("damage", ["fifo", "device", "huge field", "infinite step"])
def test_a_progress_csv_that_cannot_be_read_back_is_moved_aside(tmp_path, damage, capsys):
    from agents.training.callbacks import ProgressCSV

    path = tmp_path / "progress.csv"
    if damage in ("fifo", "device") and not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs (POSIX)")
    if damage == "fifo":
        os.mkfifo(path)
    elif damage == "device":
        path.symlink_to("/dev/zero")
    elif damage == "huge field":
        path.write_text("time/total_timesteps,x\n64," + "y" * 200_000 + "\n")
    else:
        path.write_text("time/total_timesteps,x\n64,1\ninf,2\n1e400,3\n")
    try:
        writer = finishes(lambda: ProgressCSV(path, keep_before=100))
    finally:
        if damage == "fifo":
            unblock(path)  # where it was, or where it went
            unblock(tmp_path / "progress_unreadable_1.csv")
    if damage == "infinite step":  # rows of an unreadable step are kept (step 0), not a traceback
        assert [r["x"] for r in writer.rows] == ["1", "2", "3"]
        return
    assert "moved to progress_unreadable_1.csv" in capsys.readouterr().out
    assert os.path.lexists(tmp_path / "progress_unreadable_1.csv") and path.is_file() and not path.is_symlink()


# ---------------------------------------------------------------- 8: jamb-train-value stopped by a signal
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


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs Linux's /proc")
def test_sigterm_stops_jamb_train_value_and_its_workers(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
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


def test_a_value_run_stopped_in_its_first_iteration_resumes_from_iteration_0(tmp_path):
    from agents.training.value import ValueConfig, _yaml, train_value

    cfg = ValueConfig.from_dict(
        {"ruleset": "classic_down", "iterations": 1, "games": 2, "epochs": 1, "workers": 1, "hidden": [8]}
    )
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.yaml").write_text(_yaml(cfg))  # all a run killed in its first iteration leaves
    lines: list[str] = []
    assert (
        train_value(cfg, out, resume=True, log=lines.append) == out / "value.npz"
    )  # was: "holds no value run to continue"
    assert "starting it again from iteration 0" in lines[0] and (out / "value_iter0.npz").is_file()
    with pytest.raises(ValueError, match="holds no value run"):  # a folder of no value run is still refused
        train_value(cfg, tmp_path / "elsewhere", resume=True)


# ---------------------------------------------------------------- 9: forged RLlib run records
@pytest.mark.parametrize(
    "text",
    [
        '{"env_steps": 64, "iteration": "x"}',
        '{"env_steps": 64, "iteration": 1e400}',
        '{"env_steps": -64}',
        '{"env_steps": 64, "iteration": true}',
    ],
)
def test_a_forged_rllib_checkpoint_state_makes_it_no_checkpoint(tmp_path, text):
    from agents.rllib_agent import CHECKPOINT_STATE, checkpoint_problem, module_subpath

    checkpoint = tmp_path / "checkpoint_000000000064"
    (checkpoint / module_subpath(checkpoint)).mkdir(parents=True)
    (checkpoint / module_subpath(checkpoint) / "metadata.json").write_text("{}")
    (checkpoint / CHECKPOINT_STATE).write_text(
        text
    )  # int(state["iteration"]) was a ValueError or an OverflowError traceback
    assert "must be an integer >= 0" in checkpoint_problem(checkpoint)


@pytest.mark.parametrize("starts", ["1e400", "-3", "true", '"2"', str(2**40)])
def test_a_forged_start_count_is_read_as_0(tmp_path, starts, capsys):
    pytest.importorskip("ray")
    from agents.training.rllib_train import RUN_RECORD, _starts

    (tmp_path / RUN_RECORD).write_text(f'{{"engine": "rllib", "starts": {starts}}}')
    assert (
        _starts(tmp_path) == 0 and "counting from 0" in capsys.readouterr().out
    )  # inf: OverflowError; -3: negative game seeds
