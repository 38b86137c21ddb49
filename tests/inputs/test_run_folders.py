"""Run folders as input (agents/training/runs.py and every trainer's --resume, jamb-plot): what a
run folder holds may be forged, damaged, a FIFO or a device, or left by a killed run.
Checkpoints, TensorBoard records, progress and history CSVs, saved settings, ``best.json``,
``init_from.json`` and the imitation stage's chunks are read only when sound; anything else
is set aside or refused with one clear line, and a run stopped early resumes from its start."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from agents.shipped import MODELS_DIR
from agents.training import run_logs, runs
from agents.training.config import CONFIGS_DIR, ConfigError, load_config
from jamb_env.utils.files import InputFileError, read_regular_bytes
from tests.helpers import finishes, needs_fifo, needs_module, selfplay_args, tiny_sb3

DEFAULT_CONFIG = CONFIGS_DIR / "ppo_classic.yaml"  # jamb-train's and jamb-tune's without --config


def digests(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


ROOT = Path(__file__).resolve().parents[2]


DEFAULT_RLLIB_CONFIG = CONFIGS_DIR / "rllib_classic.yaml"  # jamb-train --engine rllib's


needs_rllib = needs_module("ray.rllib", "RLlib")


GOOD = {
    "ruleset": "standard",
    "players": 2,
    "scoring": "separate",
    "reward": "win",
    "reward_scale": 1.0,
    "seed": 0,
    "baselines": ["random", "greedy"],
    "self_play": 0.8,
    "n_envs": 2,
    "n_steps": 8,
}


def _run(tmp_path: Path, **changes) -> Path:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "model_16_steps.zip").write_bytes(b"")
    (run / "selfplay.json").write_text(json.dumps({**GOOD, **changes}))
    return run


def unblock(fifo: Path) -> None:
    """Let a reader blocked opening ``fifo`` go on (a writer that opens and closes it)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # no reader left
        pass


HISTORY = (
    "iteration,policy,games,samples,mean_score,fit_loss,holdout_loss,wall_s\n0,expectimax,2,24,146.5,1.0,1.2,8.7\n"
)


SEEDS = [5, 6]


def chunk(**over):
    c = {
        "obs": np.zeros((4, 3), np.float32),
        "mask": np.ones((4, 2), bool),
        "action": np.array([0, 1, 0, 1], np.int16),
        "reward": np.zeros(4, np.float32),
        "done": np.array([0, 1, 0, 1], bool),
        "seeds": np.asarray(["5", "6"]),
    }
    c.update(over)
    return c


def read(path):
    from agents.training.imitation import _read_chunk

    return finishes(lambda: _read_chunk(path, SEEDS, 3, 2))


SETTINGS = {"games": 4, "teacher": "expectimax", "epochs": 1}


HUGE = 10**400  # YAML and JSON read an integer of any size; float() of it overflows


def _says(key, value):
    """The refusal of ``key: value`` in selfplay.json: ``selfplay.json: <key> must be ..., got <value>``."""
    return rf"selfplay\.json: {key} must be .*got {value!r}".replace("[", r"\[").replace("]", r"\]")


#: settings a self-play run folder's selfplay.json may hold -> what the ConfigError says
ODD_SETTINGS = [
    ({"n_envs": "2"}, _says("n_envs", "2")),
    ({"n_envs": 0}, _says("n_envs", 0)),
    ({"n_envs": True}, _says("n_envs", True)),
    ({"baselines": 5}, _says("baselines", 5)),
    ({"baselines": []}, _says("baselines", [])),
    ({"baselines": ["nobody"]}, _says("baselines", ["nobody"])),
    ({"self_play": "0.8"}, _says("self_play", "0.8")),
    ({"self_play": 1.5}, _says("self_play", 1.5)),
    ({"reward_scale": "x"}, _says("reward_scale", "x")),
    ({"reward_scale": -1.0}, _says("reward_scale", -1.0)),
    ({"reward_scale": 0}, _says("reward_scale", 0)),
    ({"n_steps": 2.5}, _says("n_steps", 2.5)),
    ({"n_steps": 1 << 21}, _says("n_steps", 1 << 21)),
    ({"players": "2"}, _says("players", "2")),
    ({"players": 9}, _says("players", 9)),
    ({"scoring": 3}, _says("scoring", 3)),
    ({"reward": "money"}, _says("reward", "money")),
    ({"seed": -1}, _says("seed", -1)),
    ({"seed": 1.0}, _says("seed", 1.0)),
    ({"ruleset": 7}, _says("ruleset", 7)),
    ({"n_envs": 1, "n_steps": 1}, "n_envs x n_steps"),  # a rollout of one step
    ({"reward_scale": float("inf")}, "reward_scale"),  # JSON's Infinity
]


# ---------------------------------------------------------------- any file a run folder names: regular and bounded
@needs_fifo
def test_a_fifo_or_a_device_is_refused_before_any_read(tmp_path):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="FIFO"):
        read_regular_bytes(fifo)  # returns at once: opened without blocking, checked with fstat
    with pytest.raises(InputFileError, match="not a regular file"):
        read_regular_bytes("/dev/zero")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(InputFileError, match="larger than 100 bytes"):
        read_regular_bytes(big, limit=100)


# ---------------------------------------------------------------- a new run's folder
def test_a_new_run_refuses_a_folder_holding_files_a_run_writes(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from agents.apps.cli.train import main

    models = tmp_path / "models"
    models.mkdir()
    best = models / "best.json"
    best.write_text('{"classic": {"agent": "ppo", "mean": 1066.3}}\n')
    config = tmp_path / "c.yaml"
    config.write_text(
        "total_timesteps: 32\nenv: {n_envs: 2}\nalgo: {n_steps: 16, batch_size: 16, n_epochs: 1}\n"
        "eval: {freq: 16, episodes: 2, n_envs: 2}\ncheckpoint: {freq: 16}\n"
    )
    before = best.read_text()
    assert main(["--config", str(config), "--run-dir", str(models), "--no-progress"]) == 2  # before: 0
    assert "best.json" in capsys.readouterr().err
    assert best.read_text() == before and sorted(p.name for p in models.iterdir()) == ["best.json"]


def test_a_new_value_run_refuses_a_folder_holding_a_network_of_its_names(tmp_path, capsys):
    pytest.importorskip("torch")
    from agents.apps.cli.train_value import main

    out = tmp_path / "downloads"
    out.mkdir()
    net = out / "value.npz"
    net.write_bytes(b"PK\x05\x06" + bytes(18))  # any file of that name: someone's network
    before = net.read_bytes()
    argv = [
        "--ruleset",
        "classic_down",
        "--out",
        str(out),
        "--iterations",
        "1",
        "--games",
        "2",
        "--first-games",
        "2",
        "--epochs",
        "1",
    ]
    with pytest.raises(SystemExit) as exc:  # before: trained, and value.npz became the new network
        main(argv)
    assert exc.value.code == 2 and "value.npz" in capsys.readouterr().err
    assert net.read_bytes() == before and [p.name for p in out.iterdir()] == ["value.npz"]


def test_a_value_run_refuses_the_folder_of_another_run_and_keeps_its_config(tmp_path, capsys):
    from agents.apps.cli import train_value as value_cli
    from agents.training.config import DEFAULT_CONFIG, config_text

    run = tmp_path / "sb3_run"
    run.mkdir()
    text = config_text(load_config(DEFAULT_CONFIG))  # a jamb-train run's config.yaml
    (run / "config.yaml").write_text(text)
    for resume in ([], ["--resume"]):
        with pytest.raises(SystemExit) as exc:  # before: it wrote its own config.yaml over the run's
            value_cli.main(["--out", str(run), "--iterations", "1", "--games", "2", *resume])
        assert exc.value.code == 2
        assert "holds another run" in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == text and sorted(p.name for p in run.iterdir()) == ["config.yaml"]


def test_a_new_value_run_refuses_a_non_empty_folder_as_every_trainer(tmp_path, capsys):
    from agents.apps.cli.train_value import main

    out = tmp_path / "thesis"
    out.mkdir()
    (out / "thesis.tex").write_text("chapter 1")
    argv = ["--ruleset", "classic_down", "--out", str(out), "--iterations", "1", "--games", "2", "--epochs", "1"]
    with pytest.raises(SystemExit) as exc:  # before: trained beside thesis.tex (jamb-train-selfplay refuses)
        main(argv)
    assert exc.value.code == 2 and "is not empty" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]


# ---------------------------------------------------------------- a resume with nothing left to train
def test_an_sb3_resume_with_no_steps_left_is_refused_and_writes_nothing(tmp_path, capsys):
    from agents.apps.cli.train import main

    run = tmp_path / "run"
    assert main(["--config", str(tiny_sb3(tmp_path / "tiny.yaml")), "--run-dir", str(run), "--no-progress"]) == 0
    before = digests(run)
    assert "final_model.zip" in before and "checkpoints/model_64_steps.zip" in before
    capsys.readouterr()
    for extra in (
        ["--total-timesteps", "32"],
        [],
    ):  # below the steps done, and the run's own total (64): nothing to train
        assert main(["--resume", str(run), "--no-progress", *extra]) == 2
        err = capsys.readouterr().err
        total = extra[1] if extra else "64"
        assert (
            f"error: {run} has trained 64 steps already (the checkpoint it resumes from) "
            f"and total_timesteps is {total}: nothing to train, nothing written; pass --total-timesteps above 64" in err
        ), err
        assert digests(run) == before


def test_a_selfplay_resume_with_no_steps_left_is_refused_and_writes_nothing(tmp_path, capsys):
    from agents.apps.cli.train_selfplay import main

    run = tmp_path / "run"
    args = selfplay_args(run, total_timesteps=None)
    assert main(args + ["--total-timesteps", "64"]) == 0
    before = digests(run)
    capsys.readouterr()
    assert main(args + ["--total-timesteps", "32", "--resume"]) == 2
    err = capsys.readouterr().err
    assert (
        f"error: {run} has trained 64 steps already (the checkpoint it resumes from) "
        "and total_timesteps is 32: nothing to train" in err
    )
    assert "Traceback" not in err and digests(run) == before


@needs_rllib
@pytest.mark.slow
def test_an_rllib_resume_with_no_steps_left_is_refused_and_writes_nothing(tmp_path):
    cfg = {
        **yaml.safe_load(DEFAULT_RLLIB_CONFIG.read_text()),
        "ruleset": "classic_down",
        "total_timesteps": 256,
        "num_env_runners": 0,
        "num_envs_per_env_runner": 2,
        "rollout_fragment_length": 64,
        "train_batch_size": 128,
        "minibatch_size": 64,
        "num_epochs": 1,
        "hidden_sizes": [8],
        "eval_freq": 100_000,
        "eval_games": 1,
        "checkpoint_freq": 100_000,
    }
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run = tmp_path / "run"
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    train = [sys.executable, "-m", "agents.apps.cli.train", "--no-progress"]
    first = subprocess.run(
        train + ["--config", str(config), "--run-dir", str(run)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    before = digests(run)
    again = subprocess.run(
        train + ["--resume", str(run), "--total-timesteps", "128"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 2, again.stderr[-3000:]
    assert (
        f"error: {run} has trained 256 steps already (the checkpoint it resumes from) "
        "and total_timesteps is 128: nothing to train"
        in again.stderr
        and "Traceback" not in again.stderr
    )
    assert digests(run) == before


# ---------------------------------------------------------------- killed runs: stopped before their first checkpoint
def test_a_selfplay_run_stopped_before_its_first_checkpoint_resumes_from_step_0(tmp_path, capsys):

    from agents.apps.cli.train_selfplay import main

    run = tmp_path / "run"
    args = selfplay_args(run, "--baselines", "random")
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


# ---------------------------------------------------------------- a self-play run's saved settings (selfplay.json)
def test_good_saved_settings_are_read(tmp_path):
    from agents.training.selfplay import read_run_settings

    assert read_run_settings(_run(tmp_path)) == GOOD


@pytest.mark.parametrize("changes, says", ODD_SETTINGS, ids=[str(c) for c, _ in ODD_SETTINGS])
def test_odd_saved_settings_are_refused_naming_the_file_and_key(tmp_path, changes, says):
    from agents.training.selfplay import read_run_settings

    with pytest.raises(ConfigError, match=says):
        read_run_settings(_run(tmp_path, **changes))


def test_selfplay_resume_with_a_string_n_envs_exits_2(tmp_path, capsys):
    from agents.apps.cli.train_selfplay import run

    d = _run(tmp_path, n_envs="2")
    with pytest.raises(SystemExit) as exc:
        run(["--resume", "--run-dir", str(d)])
    assert exc.value.code == 2
    assert "n_envs must be an integer 1..65,536, got '2'" in capsys.readouterr().err


# ---------------------------------------------------------------- checkpoints
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


def test_a_checkpoint_named_with_a_superscript_digit_is_no_checkpoint(tmp_path):
    from agents.training.runs import checkpoints

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model_²_steps.zip").write_bytes(b"")  # '²'.isdigit(), but int('²') fails
    assert checkpoints(tmp_path) == []


def test_an_rllib_checkpoint_folder_named_with_a_superscript_digit_is_no_checkpoint(tmp_path):
    from agents.rllib_agent import checkpoints, find_module_dir

    (tmp_path / "checkpoints" / "checkpoint_²").mkdir(parents=True)
    assert checkpoints(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="no RLlib checkpoint in"):
        find_module_dir(tmp_path)  # jamb-evaluate --agents rllib:<run folder>


def test_selfplay_resume_of_a_folder_with_a_superscript_checkpoint_exits_2(tmp_path, capsys):
    from agents.apps.cli import train_selfplay

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model_²_steps.zip").write_bytes(b"")
    with pytest.raises(SystemExit) as exc:
        train_selfplay.main(["--resume", "--run-dir", str(tmp_path), "--total-timesteps", "64"])
    assert exc.value.code == 2
    assert "no checkpoint" in capsys.readouterr().err


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


def test_an_older_checkpoint_that_is_no_model_is_left_out_of_the_selfplay_pool(tmp_path, capsys):
    import zipfile

    from agents.apps.cli import train_selfplay

    run = tmp_path / "run"
    args = ["--run-dir", str(run), "--n-envs", "8", "--n-steps", "8", "--baselines", "random", "--eval-games", "2"]
    assert train_selfplay.main([*args, "--total-timesteps", "64"]) == 0
    with zipfile.ZipFile(run / "checkpoints" / "model_10_steps.zip", "w") as zf:  # whole, with both members, no model
        zf.writestr("data", '{"x": 1}')
        zf.writestr("policy.pth", "garbage")
    capsys.readouterr()
    assert train_selfplay.main([*args, "--total-timesteps", "128", "--resume"]) == 0  # not an UnpicklingError
    assert "leaving snapshot" in capsys.readouterr().out


@pytest.mark.parametrize("reward", ["1" + "0" * 400, "NaN", "true"])
def test_a_forged_best_score_is_neither_taken_nor_a_traceback(tmp_path, reward):
    from agents.training import runs

    with zipfile.ZipFile(tmp_path / runs.BEST_MODEL, "w") as zf:  # model_steps reads the zip's "data" alone
        zf.writestr("data", json.dumps({"num_timesteps": 512}))
    (tmp_path / runs.BEST_RECORD).write_text(f'{{"step": 512, "mean_reward": {reward}}}')
    assert runs.best_so_far(tmp_path, {256: 0.5, 512: 0.25}) == 0.25  # the evaluation at the best model's step


# ---------------------------------------------------------------- TensorBoard records, progress and history files
@needs_fifo
def test_run_records_that_are_fifos_are_errors_not_hangs(tmp_path):
    from agents.training.config import ConfigError

    run = tmp_path / "run"
    run.mkdir()
    for name in (runs.INIT_RECORD, runs.BEST_RECORD, runs.EVALUATIONS, "selfplay.json"):
        os.mkfifo(run / name)
    assert runs.init_record(run) == {}
    with pytest.raises(ConfigError, match="FIFO"):
        runs.read_record(run / "selfplay.json")
    (run / runs.BEST_MODEL).write_bytes(b"not a zip")
    assert runs.best_so_far(run, {}) == -np.inf
    history, means = runs.load_evaluations(run, keep_before=10)  # set aside as unreadable, with a message
    assert history["timesteps"] == [] and means == {}


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
    assert run_logs.set_aside_events(tmp_path, keep_before=3) == 2  # the step-5 value and the forged record
    assert "no TensorBoard event" in capsys.readouterr().out
    assert list(RawEventFileLoader(str(forged)).Load()) == []
    aside = list(RawEventFileLoader(str(tmp_path / "events_abandoned_1.tfrecord")).Load())
    assert len(aside) == 2 and b"not an event" in aside[0] + aside[1]  # kept, not lost


@pytest.mark.parametrize("damage", ["checksum", "forged length", "cut short"])
def test_an_events_file_is_never_rewritten_without_the_records_after_a_damaged_one(tmp_path, capsys, damage):
    """TensorBoard's reader stops quietly at a record that fails its checksum. Before: a
    resume rewrote the file from what it had read, dropping every intact record after the
    damage. A last record cut short by a kill is still simply dropped."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(tmp_path))
    for step in range(6):
        writer.add_scalar("value/loss", float(step), step)
    writer.close()
    (events,) = tmp_path.glob("*tfevents*")
    data = bytearray(events.read_bytes())
    frames = list(RawEventFileLoader(str(events)).Load())
    at = sum(len(r) + 16 for r in frames[:3])  # the version record and steps 0, 1: then step 2
    if damage == "checksum":
        data[at + 14] ^= 0xFF  # a byte of step 2's data: its checksum fails
    elif damage == "forged length":  # step 2's length field promises more than the file holds, its checksum right
        from tensorboard.summary.writer.record_writer import masked_crc32c

        data[at : at + 12] = struct.pack("<Q", 10**6) + struct.pack("<I", masked_crc32c(struct.pack("<Q", 10**6)))
    else:
        data = data[: len(data) - 3]  # the last record (step 5) cut short
    events.write_bytes(bytes(data))
    moved = run_logs.set_aside_events(tmp_path, keep_before=1)
    out = capsys.readouterr().out
    unreadable = tmp_path / "events_unreadable_1.tfrecord"
    if damage != "cut short":  # the intact records after the damage are kept, not dropped
        assert moved == 1 and "a damaged record at byte" in out and "events_unreadable_1.tfrecord" in out
        assert unreadable.read_bytes() == bytes(data[at:])  # steps 2-5, as they were
    else:
        assert moved == 4 and not unreadable.exists()  # steps 1-4 moved, the cut-off step 5 dropped


@pytest.mark.parametrize("where", ["the folder", "inside"])
def test_a_new_run_refuses_a_run_folder_that_is_or_holds_a_link(tmp_path, where):
    """Before: a new run wrote through a linked run folder (or a linked ``checkpoints``) into
    the folder the link leads to."""
    from agents.training.runs import check_new_run_dir

    outside = tmp_path / "thesis"
    outside.mkdir()
    run = tmp_path / "run"
    if where == "the folder":
        run.symlink_to(outside)
    else:
        run.mkdir()
        (run / "notes").symlink_to(outside)
    says = "is a symbolic link: a run writes only its own folder" if where == "the folder" else "holds symbolic links"
    with pytest.raises(ConfigError, match=says):
        check_new_run_dir(run)
    assert list(outside.iterdir()) == []


def test_a_search_refuses_an_out_folder_holding_a_linked_trial_folder(tmp_path, capsys):
    """Before: ``jamb-tune --out`` with ``trial_000`` linked to another folder trained the trial
    in there."""
    pytest.importorskip("optuna")
    from agents.apps.cli.tune import main

    out, outside = tmp_path / "out", tmp_path / "thesis"
    out.mkdir()
    outside.mkdir()
    (out / "trial_000").symlink_to(outside)
    with pytest.raises(SystemExit) as exc:
        main(["--config", str(tiny_sb3(tmp_path / "c.yaml")), "--out", str(out), "--trials", "1", "--steps", "64"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "holds symbolic links (trial_000)" in err and "Traceback" not in err, err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("trainer", ["selfplay", "value"])
def test_every_trainer_s_resume_refuses_a_run_folder_holding_links(tmp_path, capsys, trainer):
    """jamb-train's resume refused links (tests/training/test_resume.py); before, jamb-train-value
    and jamb-train-selfplay wrote their networks and models through them."""
    run, outside = tmp_path / "run", tmp_path / "thesis.txt"
    run.mkdir()
    outside.write_text("keep me")
    if trainer == "value":
        from agents.apps.cli.train_value import main

        (run / "value.npz").symlink_to(outside)
        argv = ["--config", str(Path(runs.__file__).parents[2] / "configs" / "value_jnn.yaml"), "--out", str(run)]
    else:
        from agents.apps.cli.train_selfplay import main

        (run / "checkpoints").mkdir()
        (run / "checkpoints" / "model_512_steps.zip").symlink_to(outside)
        argv = ["--run-dir", str(run)]
    try:
        code = main([*argv, "--resume"])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "it holds symbolic links" in err and "Traceback" not in err, err
    assert outside.read_text() == "keep me"


@needs_fifo
def test_jamb_plot_refuses_an_events_file_that_is_a_fifo(tmp_path, capsys):
    """Before: TensorBoard's reader opened it and waited for a writer for ever."""
    from agents.apps.cli.plot import main

    run = tmp_path / "classic__ppo__0__x"
    run.mkdir()
    os.mkfifo(run / "events.out.tfevents.1.x")
    assert main([str(run), "--out", str(tmp_path / "c.png")]) == 2
    assert "is not a regular file (a FIFO" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["[]", "null", '{"name": "classic"}'])
def test_a_ruleset_record_that_is_not_one_refuses_the_resume(tmp_path, content):
    """Before: a ruleset.json of [] or null turned the edited-rules check off."""
    from agents.training.config import ConfigError

    (tmp_path / runs.RULESET_RECORD).write_text(content)
    with pytest.raises(ConfigError, match="ruleset.json is not the record a run writes"):
        runs.check_same_rules(tmp_path, "classic")
    (tmp_path / runs.RULESET_RECORD).unlink()
    runs.check_same_rules(tmp_path, "classic")  # none: a run from before the record, not judged


@pytest.mark.parametrize("walls", [(float("nan"),) * 3, (5.0, 3.0, 1.0), (1.0, float("inf"), 3.0)])
def test_plot_minutes_refuses_wall_times_that_are_not_finite_or_go_back(tmp_path, capsys, walls):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    from agents.apps.cli.plot import main

    run = tmp_path / "classic__ppo_classic__0__x"
    writer = EventFileWriter(str(run))
    for i, wall in enumerate(walls):
        writer.add_event(
            Event(
                wall_time=wall,
                step=100 * (i + 1),
                summary=Summary(value=[Summary.Value(tag="eval/score", simple_value=100.0 + i)]),
            )
        )
    writer.close()
    out = tmp_path / "curves.png"
    assert main([str(run), "--x", "minutes", "--out", str(out)]) == 2  # before: 0, an empty or wrong curve
    err = capsys.readouterr().err
    assert "wall-clock time" in err and "--x steps" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main([str(run), "--out", str(out)]) == 0 and out.exists()  # the steps axis does not need them


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


@pytest.mark.parametrize("starts", ["1e400", "-3", "true", '"2"', str(2**40)])
def test_a_forged_start_count_is_read_as_0(tmp_path, starts, capsys):
    pytest.importorskip("ray")
    from agents.training.rllib_train import RUN_RECORD, _starts

    (tmp_path / RUN_RECORD).write_text(f'{{"engine": "rllib", "starts": {starts}}}')
    assert (
        _starts(tmp_path) == 0 and "counting from 0" in capsys.readouterr().out
    )  # inf: OverflowError; -3: negative game seeds


# ---------------------------------------------------------------- the model a run starts from (init_from.json)
@needs_fifo
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_plot_leaves_out_scores_that_are_not_finite_and_says_so(tmp_path, capsys, bad):
    """Before (J44): one NaN (or inf) score blanked the whole line, with numpy's warning and exit 0."""
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter

    from agents.apps.cli.plot import main
    from agents.training.curves import read_scalars, run_curve

    run = tmp_path / "classic__ppo_classic__0__x"
    with SummaryWriter(str(run)) as writer:
        for step, value in ((0, 100.0), (64, bad), (128, 200.0)):
            writer.add_scalar("eval/score", value, step)
    steps, values = run_curve(read_scalars(run), "eval/score")
    assert steps.tolist() == [0, 128] and values.tolist() == [100.0, 200.0]
    assert main([str(run), "--out", str(tmp_path / "c.png")]) == 0
    err = capsys.readouterr().err
    assert "eval/score is not a finite number at step(s) 64; left out" in err and "RuntimeWarning" not in err


def test_jamb_plot_survives_odd_init_from_values(tmp_path, capsys):
    from agents.training.curves import init_steps

    run = tmp_path / "run"
    run.mkdir()
    fifo = tmp_path / "fifo.zip"
    os.mkfifo(fifo)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data", b" " * (17 * 1024 * 1024))  # 17 MiB of spaces in a small file
    for value in (123, {"a": 1}, str(fifo), str(bomb), "/nonexist\x1b]0;pwned\x07"):
        assert init_steps(run, value) == 0
    err = capsys.readouterr().err
    assert "step count is unknown" in err and "\x1b" not in err and "\x07" not in err


def test_a_forged_init_step_count_is_unknown_not_a_plot_traceback(tmp_path, capsys):
    from torch.utils.tensorboard import SummaryWriter

    from agents.apps.cli.plot import main as plot
    from agents.training.curves import init_steps

    run = tmp_path / "run"
    writer = SummaryWriter(log_dir=str(run))
    writer.add_scalar("eval/score", 1.0, 0)
    writer.close()
    (run / "config.yaml").write_text("config_name: tiny\nruleset: classic\ninit_from: /nonexistent/model.zip\n")
    for forged in (str(HUGE), "-5", "true"):
        (run / "init_from.json").write_text(f'{{"steps_before": {forged}}}')
        assert init_steps(run, "/nonexistent/model.zip") == 0
    (run / "init_from.json").write_text(f'{{"steps_before": {HUGE}}}')
    assert plot([str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert "step count is unknown" in capsys.readouterr().err


@pytest.mark.parametrize("forged", ['"x"', "1e400", "[]"], ids=["text", "inf", "list"])
def test_a_forged_init_record_beside_the_model_to_start_from_is_set_aside(tmp_path, forged, capsys):

    from sb3_contrib import MaskablePPO

    from agents.training.weights import load_policy_weights

    src = tmp_path / "model.zip"
    shutil.copy(MODELS_DIR / "classic.zip", src)
    (tmp_path / "init_from.json").write_text(f'{{"steps_before": {forged}}}')
    model = MaskablePPO.load(src, device="cpu")
    assert load_policy_weights(model, src) == model.num_timesteps  # not a ValueError, OverflowError or TypeError
    assert "is no step count" in capsys.readouterr().out


# ---------------------------------------------------------------- the imitation stage's chunks and record
def test_a_true_chunk_is_read(tmp_path):
    np.savez(tmp_path / "c.npz", **chunk())
    assert read(tmp_path / "c.npz") is not None


@pytest.mark.parametrize(
    "forged",
    [
        {"action": np.array([7, 1, -3, 1], np.int16)},  # beyond the action space
        {"mask": np.zeros((4, 2), bool)},  # an action the mask forbids (log-prob -inf)
        {"obs": np.full((4, 3), np.nan, np.float32)},
        {"reward": np.full(4, np.inf, np.float32)},
        {"obs": np.full((4, 3), "x")},  # strings of the right shape
        {"action": np.array([0.5, 1, 0, 1.5])},
        {"mask": np.ones((4, 2), np.int64) * 3},
    ],
)
def test_a_forged_chunk_is_played_again_not_trained_on(tmp_path, forged):
    np.savez(tmp_path / "c.npz", **chunk(**forged))
    assert read(tmp_path / "c.npz") is None


def test_a_chunk_holding_a_pickle_is_not_unpickled(tmp_path):
    np.savez(tmp_path / "c.npz", **chunk(obs=np.array([[object()] * 3] * 4, dtype=object)))
    assert read(tmp_path / "c.npz") is None


@needs_fifo
def test_a_chunk_that_is_a_fifo_is_played_again_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "c.npz")
    assert read(tmp_path / "c.npz") is None


def test_a_chunk_declaring_a_huge_array_is_played_again_not_a_memory_error(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 3)})
    with zipfile.ZipFile(tmp_path / "c.npz", "w") as z:
        for key, value in chunk().items():
            if key == "obs":
                z.writestr("obs.npy", header.getvalue() + b"\0" * 64)
            else:
                buf = io.BytesIO()
                np.save(buf, value)
                z.writestr(f"{key}.npy", buf.getvalue())
    assert read(tmp_path / "c.npz") is None


@pytest.mark.parametrize(
    "history",
    ["loss", [1, 2], [{"loss": "x"}], [{"loss": None}], [{"loss": float("nan")}], [{"loss": [1]}], [{"loss": True}]],
)
def test_an_imitation_record_with_a_forged_history_is_imitated_again(tmp_path, monkeypatch, history):
    """A resumed run reuses imitation_model.zip only with a record imitate() could have written
    (its history is logged as numbers); before the fix a forged history was a traceback."""
    from agents.training import imitation, weights

    (tmp_path / imitation.RECORD_FILE).write_text(json.dumps({"settings": SETTINGS, "history": history}))
    (tmp_path / imitation.MODEL_FILE).write_bytes(b"weights")
    monkeypatch.setattr(weights, "load_policy_weights", lambda model, path: None)
    monkeypatch.setattr(imitation, "imitate", lambda *args, **kw: "imitated again")
    assert imitation.start_from_teacher(None, {"imitation": SETTINGS}, tmp_path) == "imitated again"


def test_a_sound_imitation_record_is_reused(tmp_path, monkeypatch):
    from agents.training import imitation, weights

    record = {"settings": SETTINGS, "history": [{"loss": 1.5, "agreement": 0.9, "seconds": 2}]}
    (tmp_path / imitation.RECORD_FILE).write_text(json.dumps(record))
    (tmp_path / imitation.MODEL_FILE).write_bytes(b"weights")
    monkeypatch.setattr(weights, "load_policy_weights", lambda model, path: None)
    monkeypatch.setattr(imitation, "imitate", lambda *args, **kw: "imitated again")
    assert imitation.start_from_teacher(None, {"imitation": SETTINGS}, tmp_path) == record


def test_a_resumed_value_run_keeps_its_own_settings(tmp_path):
    """Before (K22): ``jamb-train-value --resume --out RUN --iterations 6`` played the defaults'
    2,000 games a round (the run's were 20) and rewrote its config.yaml with them."""
    from agents.training.runs import save_config
    from agents.training.value import ValueConfig, _yaml, resumed_config

    run = tmp_path / "run"
    run.mkdir()
    first = ValueConfig(ruleset="classic_down", games=20, first_games=20, epochs=1, workers=1, iterations=3)
    save_config(run, _yaml(first))
    again = resumed_config(ValueConfig(iterations=6, workers=2), {"iterations", "workers"}, run)
    assert again == ValueConfig(ruleset="classic_down", games=20, first_games=20, epochs=1, workers=2, iterations=6)
    with pytest.raises(ValueError, match="these differ: games: saved 20, given 2000"):
        resumed_config(ValueConfig(iterations=6), {"iterations", "games"}, run)
    assert resumed_config(first, {"games"}, tmp_path / "none") == first  # nothing saved: as given
