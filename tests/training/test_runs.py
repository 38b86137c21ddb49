"""One run folder for every trainer (agents/training/runs.py): the checks of a new run's
folder, a ruleset's name kept inside runs/, atomic checkpoints, the newest checkpoint
that loads, and resumed runs whose TensorBoard curves never show a step twice (SB3,
self-play, the value learner)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from agents.training.config import CONFIGS_DIR, ConfigError
from tests.helpers import scalars, selfplay_args
from tests.training.test_resume import load, tiny_config

ROOT = Path(__file__).resolve().parents[2]


def assert_no_step_twice(run_dir: Path) -> dict[str, list[int]]:
    """Every tag's steps, each step once; returns them sorted (two events files written by
    one process within a second may be read out of time order: names sort .10 before .9)."""
    tags = scalars(run_dir)
    assert tags, f"no scalars in {run_dir}"
    for tag, steps in tags.items():
        assert len(steps) == len(set(steps)), f"{tag}: steps {steps}"
    return {tag: sorted(steps) for tag, steps in tags.items()}


# ---------------------------------------------------------------- run-folder names


@pytest.mark.parametrize("name", ["../../../somewhere", "/tmp/elsewhere", "a/b", "back\\slash"])
def test_a_ruleset_name_cannot_steer_the_run_folder_out_of_runs(name, tmp_path, monkeypatch):
    from agents.training.runs import default_run_dir, prepare_run_dir
    from jamb_env.rules import RULES_DIR

    rules = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())
    rules["name"] = name
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    monkeypatch.chdir(tmp_path)
    cfg = {"ruleset": str(path), "config_name": "tiny", "seed": 0}
    for call in (lambda: default_run_dir(cfg), lambda: prepare_run_dir(cfg, None, resume=False)):
        with pytest.raises(
            ConfigError, match=r"the ruleset's name .* cannot name a run folder under runs/ .*--run-dir"
        ):
            call()
    assert sorted(os.listdir(tmp_path)) == ["rules.yaml"]  # nothing written
    prepare_run_dir(cfg, tmp_path / "chosen", resume=False)  # --run-dir still takes it


def test_default_run_folders_stay_inside_runs(tmp_path):
    from agents.training.runs import RUNS_ROOT, default_run_dir, run_folder_name

    run_dir = default_run_dir({"ruleset": "classic_down", "config_name": "tiny", "seed": 3})
    assert run_dir.parent == RUNS_ROOT and run_dir.name.startswith("classic_down__tiny__3__")
    assert run_folder_name("my rules", "x.y", 0) == "my rules__x.y__0"  # names that were fine stay fine
    with pytest.raises(ConfigError, match="the config's name 'a/b'"):
        run_folder_name("classic", "a/b", 0)


def test_a_new_run_refuses_a_folder_that_holds_one(tmp_path):
    from agents.training.runs import check_new_run_dir

    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_new_run_dir(tmp_path / "file")
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    with pytest.raises(ConfigError, match="already holds a run; continue it with --resume"):
        check_new_run_dir(tmp_path / "run")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    assert check_new_run_dir(tmp_path / "other") == tmp_path / "other"  # SB3 and RLlib: only a run's files refuse it
    with pytest.raises(ConfigError, match="exists and is not empty: pass --resume"):
        check_new_run_dir(tmp_path / "other", empty=True)  # self-play: anything does


# ---------------------------------------------------------------- checkpoints


def test_the_newest_valid_checkpoint_is_found_past_damaged_ones(tmp_path, capsys):
    from agents.training.runs import newest_valid

    files = [tmp_path / n for n in ("c3", "c2", "c1", "c0")]
    for f in files:
        f.write_text("ok")
    files[0].write_text("cut")  # truncated: its problem is found before loading
    files[1].write_text("bad")  # looks fine, fails to load

    def load(path):
        if path.read_text() == "bad":
            raise RuntimeError("unpickling failed")
        return {"steps": int(path.name[1])}

    loaded, path = newest_valid(
        files, lambda p: "cut short" if p.read_text() == "cut" else None, load, lambda x: x["steps"]
    )
    assert (loaded, path) == ({"steps": 1}, files[2])
    out = capsys.readouterr().out
    assert (
        f"skipping checkpoint {files[0]}: cut short" in out
        and f"skipping checkpoint {files[1]}: cannot be loaded: RuntimeError" in out
    )
    assert f"resuming from {files[2]} (step 1)" in out
    assert newest_valid([files[1]], lambda p: None, load, lambda x: 0) == (None, None)  # none loads


def test_a_checkpoint_folder_is_complete_or_absent(tmp_path):
    from agents.training.runs import remove_killed_writes, save_checkpoint_folder

    def write(tmp):
        tmp.mkdir()
        (tmp / "weights").write_text("w")
        (tmp / "state.json").write_text("{}")

    def fail(tmp):
        tmp.mkdir()
        (tmp / "weights").write_text("half")
        raise KeyboardInterrupt

    path = save_checkpoint_folder(tmp_path, "checkpoint_1", write)
    assert path == tmp_path / "checkpoints" / "checkpoint_1" and (path / "state.json").exists()
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint_folder(tmp_path, "checkpoint_1", fail)
    assert (path / "weights").read_text() == "w" and os.listdir(tmp_path / "checkpoints") == ["checkpoint_1"]
    for n in (2, 3):
        save_checkpoint_folder(
            tmp_path,
            f"checkpoint_{n}",
            write,
            keep=2,
            listing=lambda run: sorted((run / "checkpoints").glob("checkpoint_*"), reverse=True),
        )
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["checkpoint_2", "checkpoint_3"]
    (tmp_path / "checkpoints" / ".checkpoint_4.tmp-dead").mkdir()  # what a kill mid-write leaves
    (tmp_path / ".config.yaml.tmp-dead").write_text("x")
    assert {p.name for p in remove_killed_writes(tmp_path)} == {".checkpoint_4.tmp-dead", ".config.yaml.tmp-dead"}
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["checkpoint_2", "checkpoint_3"]


# ---------------------------------------------------------------- resumed curves: no step twice


def test_a_resumed_sb3_run_logs_no_step_twice(tmp_path):
    from agents.training.config import resume_config
    from agents.training.train import train

    run_dir = tmp_path / "run"
    train(load(tiny_config(tmp_path, total=1024)), run_dir=run_dir, progress_bar=False)
    for later in ("model_768_steps.zip", "model_1024_steps.zip"):  # as if killed just after step 512's checkpoint
        (run_dir / "checkpoints" / later).unlink()
    before = scalars(run_dir)
    assert max(before["train/loss"]) > 512  # the killed attempt logged past the checkpoint
    train(resume_config(run_dir), run_dir=run_dir, progress_bar=False, resume=True)
    tags = assert_no_step_twice(run_dir)
    assert len(list(run_dir.glob("events.out.tfevents.*"))) == 2
    assert max(tags["train/loss"]) > 512 and tags["eval/score"] == [512, 1024]


SELFPLAY = selfplay_args(n_envs=4, snapshot_freq=256, eval_freq=512, total_timesteps=None)


@pytest.mark.slow  # two self-play training runs; the SB3 run below keeps the contract fast
def test_a_resumed_selfplay_run_logs_no_step_twice(tmp_path, capsys):
    """Interrupted just after the checkpoint of step 512, with its events logged to step
    1024: the resumed run's curves go on from 512, each step once (``purge_step``)."""
    from agents.apps.cli.train_selfplay import main

    run = tmp_path / "run"
    assert main(SELFPLAY + ["--run-dir", str(run), "--total-timesteps", "1024"]) == 0
    before = scalars(run)
    assert max(before["train/loss"]) >= 1024 - 128
    for later in ("model_768_steps.zip", "model_1024_steps.zip"):  # as if killed just after step 512's checkpoint
        (run / "checkpoints" / later).unlink()
    (run / "final_model.zip").unlink()
    capsys.readouterr()
    assert main(SELFPLAY + ["--run-dir", str(run), "--total-timesteps", "1024", "--resume"]) == 0
    assert f"resuming from {run / 'checkpoints' / 'model_512_steps.zip'} (step 512)" in capsys.readouterr().out
    tags = assert_no_step_twice(run)
    assert len(list(run.glob("events.out.tfevents.*"))) == 2
    assert tags["train/loss"][-1] == 1024 and tags["selfplay/win_rate_vs_greedy"] == [512, 1024]


@pytest.mark.slow
def test_a_selfplay_run_killed_with_sigkill_resumes_without_repeating_a_step(tmp_path):
    """SIGKILL once events are logged past a checkpoint; the newest checkpoint is then cut
    short (as a kill mid-write of a non-atomic copy would): the resumed run skips it,
    starts from the one before, and TensorBoard shows each step once."""
    from agents.training.runs import checkpoints, model_steps

    run = tmp_path / "run"
    args = [
        sys.executable,
        "scripts/train_selfplay.py",
        *SELFPLAY,
        "--eval-freq",
        "100000000",
        "--total-timesteps",
        "100000000",
        "--run-dir",
        str(run),
    ]
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 300
        while not any((model_steps(p) or 0) >= 768 for p in checkpoints(run)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "no checkpoint of step 768 within 300 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    newest, older = checkpoints(run)[:2]
    assert max(scalars(run)["train/loss"]) > model_steps(older)  # logged past the checkpoint resumed from
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])
    resume = subprocess.run(
        [
            sys.executable,
            "scripts/train_selfplay.py",
            *SELFPLAY,
            "--run-dir",
            str(run),
            "--resume",
            "--total-timesteps",
            str(model_steps(older) + 512),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resume.returncode == 0, resume.stderr[-3000:]
    assert f"skipping checkpoint {newest}: not a complete zip file" in resume.stdout, resume.stdout
    assert f"resuming from {older} (step {model_steps(older)})" in resume.stdout, resume.stdout
    assert_no_step_twice(run)


def test_a_resumed_value_run_logs_no_iteration_twice(tmp_path):
    from agents.training import value as V

    out = tmp_path / "v"
    cfg = V.ValueConfig(ruleset="classic_down", iterations=2, games=2, hidden=(8,), epochs=1, workers=1)
    V.train_value(cfg, out, log=lambda *_: None)
    rows = V._read_history(out)
    V._write_history(out, rows[:1])  # as if killed after iteration 1 was logged but before its row was written
    V.train_value(cfg, out, resume=True, log=lambda *_: None)
    tags = assert_no_step_twice(out)
    assert tags["value/mean_score"] == [0, 1]


def test_the_train_cli_refuses_a_ruleset_name_with_a_path(tmp_path, monkeypatch, capsys):
    from agents.apps.cli.train import main
    from jamb_env.rules import RULES_DIR

    rules = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())
    rules["name"] = "../../../somewhere"
    (tmp_path / "evil.yaml").write_text(yaml.safe_dump(rules))
    monkeypatch.chdir(tmp_path)
    assert main(["--config", str(CONFIGS_DIR / "ppo_classic.yaml"), "--ruleset", "evil.yaml", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        "error: the ruleset's name '../../../somewhere' cannot name a run folder under runs/" in err
        and "Traceback" not in err
    )
    assert os.listdir(tmp_path) == ["evil.yaml"] and not list(tmp_path.parent.parent.glob("somewhere__*"))
