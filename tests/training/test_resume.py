"""Research-grade runs: atomic files, lossless --resume, damaged checkpoints, Ctrl-C and
SIGTERM, a final evaluation for every run (agents/training/, jamb_env/utils/files.py)."""

import csv
import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from jamb_env.utils.files import (
    atomic_path,
    atomic_save_model,
    atomic_write,
    atomic_write_bytes,
    atomic_write_text,
    is_temp_file,
    remove_temp_files,
)
from tests.helpers import repeated_steps, tiny_ppo_config

ROOT = Path(__file__).resolve().parents[2]
TRAIN = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]


def tiny_config(tmp_path, total=2048, eval_freq=512, checkpoint_freq=256, name="tiny"):
    """A config small enough for seconds of training: 4 envs x 64 steps per rollout."""
    return tiny_ppo_config(tmp_path / f"{name}.yaml", total=total, eval_freq=eval_freq, checkpoint_freq=checkpoint_freq)


def load(path):
    from agents.training.config import load_config

    return load_config(path)


def eval_steps(run_dir):
    with np.load(run_dir / "evaluations.npz") as data:
        return [int(s) for s in data["timesteps"]], [float(np.mean(r)) for r in data["results"]]


def tb_steps(run_dir, tag="eval/score"):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)] if tag in acc.Tags()["scalars"] else []


def progress_steps(run_dir):
    with open(run_dir / "progress.csv", newline="") as f:
        return [int(float(row["time/total_timesteps"])) for row in csv.DictReader(f)]


def temp_files(run_dir):
    return [p for p in run_dir.rglob("*") if is_temp_file(p)]


# ---------------------------------------------------------------- (e) atomic helpers


def test_atomic_helpers_keep_the_old_file_when_a_write_fails(tmp_path):
    target = tmp_path / "sub" / "f.bin"
    assert atomic_write_bytes(target, b"old") == target and target.read_bytes() == b"old"  # folder created

    def half_then_fail(f):
        f.write(b"half a new fi")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, half_then_fail)
    assert target.read_bytes() == b"old"
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C mid-write: the same
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"new")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old"

    class Model:  # an SB3 model's save(file object) that fails midway
        def save(self, f):
            f.write(b"PK...")
            raise RuntimeError("torch.save failed")

    with pytest.raises(RuntimeError):
        atomic_save_model(Model(), target)
    assert target.read_bytes() == b"old" and os.listdir(target.parent) == ["f.bin"]  # no temporary file left

    atomic_write_text(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    with atomic_path(tmp_path / "a.npz") as tmp:
        assert tmp.parent == tmp_path and is_temp_file(tmp) and not tmp.name.endswith(".npz")
        with open(tmp, "wb") as f:
            np.savez(f, x=np.arange(3))
    assert list(np.load(tmp_path / "a.npz")["x"]) == [0, 1, 2]
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        with atomic_path(tmp_path / "never.txt"):
            pass
    assert not (tmp_path / "never.txt").exists()
    (tmp_path / "sub" / ".f.bin.tmp-0badc0de").write_bytes(b"left by SIGKILL")
    assert [p.name for p in remove_temp_files(tmp_path / "sub")] == [".f.bin.tmp-0badc0de"]
    assert os.listdir(tmp_path / "sub") == ["f.bin"]


# ---------------------------------------------------------------- (d) short runs, restart in place


def test_a_run_shorter_than_eval_freq_has_an_eval_score_and_a_best_model(tmp_path):
    from agents.training.train import train

    run_dir = tmp_path / "run"
    summary = train(load(tiny_config(tmp_path, total=512, eval_freq=100_000)), run_dir=run_dir, progress_bar=False)
    assert summary["timesteps"] == 512 and summary["eval_score"] is not None
    assert summary["best_model"] == str(run_dir / "best_model.zip") and (run_dir / "best.json").exists()
    assert eval_steps(run_dir)[0] == [512] and tb_steps(run_dir) == [512]
    assert (run_dir / "checkpoints" / "model_512_steps.zip").exists() and (run_dir / "final_model.zip").exists()
    assert not temp_files(run_dir)


def test_resume_without_a_checkpoint_restarts_in_place(tmp_path, capsys):
    from agents.training.config import resume_config
    from agents.training.runs import write_run_files
    from agents.training.train import train

    run_dir = tmp_path / "killed_early"
    write_run_files(
        run_dir, load(tiny_config(tmp_path, total=512)), None
    )  # what a run killed before its first checkpoint leaves
    (run_dir / "progress.csv").write_text(
        "eval/baseline_random,time/total_timesteps\n38.5,0\n1.0,25"
    )  # cut off mid-row
    summary = train(resume_config(run_dir), run_dir=run_dir, progress_bar=False, resume=True)
    out = capsys.readouterr().out
    assert "has no checkpoint (killed before its first one): starting it again from step 0 with its saved config" in out
    assert summary["timesteps"] == 512 and eval_steps(run_dir)[0] == [512]
    assert (run_dir / "progress_abandoned_1.csv").read_text().splitlines()[1:] == [
        "38.5,0",
        "1.0,25",
    ]  # kept aside, not lost
    assert progress_steps(run_dir)[0] == 0 and tb_steps(run_dir) == [512]
    from agents.model_files import read_model_data
    from jamb_env import load_ruleset

    stamp = {"name": "classic_down", "digest": load_ruleset("classic_down").digest}
    assert read_model_data(run_dir / "final_model.zip")["jamb_ruleset"] == stamp  # the model names its rules


@pytest.mark.parametrize("linked", ["progress.csv", "final_model.zip", "checkpoints"])
def test_resume_refuses_a_run_folder_holding_links(tmp_path, linked):
    """Before: ``--resume`` rewrote progress.csv, the models and the checkpoints through links
    put in the run folder, replacing files outside it."""
    from agents.training.config import ConfigError, resume_config
    from agents.training.runs import write_run_files
    from agents.training.train import train

    run_dir, outside = tmp_path / "run", tmp_path / "outside"
    write_run_files(run_dir, load(tiny_config(tmp_path, total=512)), None)
    outside.mkdir() if linked == "checkpoints" else outside.write_text("keep me")
    (run_dir / linked).symlink_to(outside)
    with pytest.raises(ConfigError, match=rf"cannot resume the run in .*: it holds symbolic links \({linked}\)"):
        train(resume_config(run_dir), run_dir=run_dir, progress_bar=False, resume=True)
    assert (list(outside.iterdir()) == []) if linked == "checkpoints" else outside.read_text() == "keep me"
    assert (run_dir / linked).is_symlink()


def test_resume_refuses_a_rules_file_changed_since_the_run_started(tmp_path):
    """Before: the run kept only the rules file's path, and resumed on whatever it said now."""
    from agents.training.config import ConfigError, resume_config
    from agents.training.runs import write_run_files
    from agents.training.train import train

    rules = tmp_path / "mine.yaml"
    rules.write_text("schema_version: 1\nname: mine\nextends: classic_down\n")
    cfg = load(tiny_config(tmp_path, total=512))
    cfg["ruleset"] = str(rules)
    run_dir = tmp_path / "run"
    write_run_files(run_dir, cfg, None)
    assert yaml.safe_load((run_dir / "ruleset.json").read_text())["name"] == "mine"
    rules.write_text("schema_version: 1\nname: mine\nextends: classic_down\nscoring: {jamb_bonus: 70}\n")
    with pytest.raises(ConfigError, match="now gives other rules than the run started on"):
        train(resume_config(run_dir), run_dir=run_dir, progress_bar=False, resume=True)
    assert not (run_dir / "final_model.zip").exists()


def test_a_self_play_resume_refuses_a_rules_file_changed_since(tmp_path):
    """Before: jamb-train-selfplay (and jamb-train-value) kept only the file's path and
    resumed on whatever it said now; they now keep ruleset.json as jamb-train does."""
    from agents.training import selfplay
    from agents.training.config import ConfigError
    from agents.training.runs import save_ruleset_record

    rules, run = tmp_path / "mine.yaml", tmp_path / "run"
    rules.write_text("schema_version: 1\nname: mine\nextends: classic\n")
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "model_512_steps.zip").write_bytes(b"")
    save_ruleset_record(run, str(rules))
    assert selfplay._resumable(run, {"ruleset": str(rules)})[1]  # the same rules: its checkpoint to resume from
    rules.write_text("schema_version: 1\nname: mine\nextends: classic\nscoring: {jamb_bonus: 70}\n")
    with pytest.raises(ConfigError, match="now gives other rules than the run started on"):
        selfplay._resumable(run, {"ruleset": str(rules)})


def test_resume_without_the_ruleset_record_judges_the_rules_its_models_name(tmp_path):
    """Before (H49): with ruleset.json removed, a run whose rules file was edited since resumed on
    the new rules; its models name the rules they were trained on."""
    from agents.training.config import ConfigError, resume_config
    from agents.training.train import train

    rules = tmp_path / "mine.yaml"
    rules.write_text("schema_version: 1\nname: mine\nextends: classic_down\n")
    cfg = load(tiny_config(tmp_path, total=256))
    cfg["ruleset"] = str(rules)
    run_dir = tmp_path / "run"
    train(cfg, run_dir=run_dir, progress_bar=False)
    (run_dir / "ruleset.json").unlink()
    rules.write_text("schema_version: 1\nname: mine\nextends: classic_down\nscoring: {jamb_bonus: 70}\n")
    resumed = resume_config(run_dir)
    resumed["total_timesteps"] = 512
    with pytest.raises(ConfigError, match="its models were trained on other rules"):
        train(resumed, run_dir=run_dir, progress_bar=False, resume=True)


def test_a_run_started_from_a_model_of_other_rules_says_so(tmp_path):
    """classic and slovenian have the same shapes. Before: --init-from a classic model into a
    slovenian run said nothing, and the run's models were then stamped slovenian."""
    from sb3_contrib import MaskablePPO

    from agents.model_files import RulesetMismatchWarning, stamp_ruleset
    from agents.training.train import train
    from jamb_env import JambEnv, load_ruleset

    src = MaskablePPO("MlpPolicy", JambEnv("classic"), n_steps=64, batch_size=64, policy_kwargs={"net_arch": [32, 32]})
    stamp_ruleset(src, load_ruleset("classic"))
    src.save(tmp_path / "classic.zip")
    cfg = load(tiny_config(tmp_path, total=256, eval_freq=256))
    cfg.update(ruleset="slovenian", init_from=str(tmp_path / "classic.zip"))
    with pytest.warns(RulesetMismatchWarning, match="trained on ruleset 'classic' and plays 'slovenian'"):
        train(cfg, run_dir=tmp_path / "run", progress_bar=False)


# ---------------------------------------------------------------- (b) a damaged newest checkpoint


def test_resume_skips_damaged_checkpoints_and_says_so(tmp_path, capsys):
    import zipfile

    from agents.training.config import resume_config
    from agents.training.runs import checkpoint_problem
    from agents.training.train import train

    run_dir = tmp_path / "run"
    train(load(tiny_config(tmp_path, total=1024)), run_dir=run_dir, progress_bar=False)
    ckpts = run_dir / "checkpoints"
    newest, second = ckpts / "model_1024_steps.zip", ckpts / "model_768_steps.zip"
    newest.write_bytes(newest.read_bytes()[:50_000])  # cut off mid-write (an old run, a full disk)
    with zipfile.ZipFile(second, "w") as zf:  # a zip, but not a model
        zf.writestr("hello.txt", "hi")
    assert "not a complete zip" in checkpoint_problem(newest) and "not a model file" in checkpoint_problem(second)
    capsys.readouterr()
    summary = train(resume_config(run_dir, 1536), run_dir=run_dir, progress_bar=False, resume=True)
    out = capsys.readouterr().out
    assert f"skipping checkpoint {newest}: not a complete zip file" in out
    assert f"skipping checkpoint {second}: not a model file" in out
    assert f"resuming from {ckpts / 'model_512_steps.zip'} (step 512)" in out
    assert summary["timesteps"] == 1536
    steps, _ = eval_steps(run_dir)
    assert steps == [512, 1024, 1536] and tb_steps(run_dir) == steps  # 1024 evaluated again after 512, once
    assert checkpoint_problem(ckpts / "model_1024_steps.zip") is None  # rewritten whole
    rows = progress_steps(run_dir)
    assert rows == sorted(rows) and rows[-1] == 1536 and list(run_dir.glob("progress_abandoned_*.csv"))


def test_resuming_twice_from_one_checkpoint_keeps_every_progress_file(tmp_path):
    from agents.training.config import resume_config
    from agents.training.train import train

    run_dir = tmp_path / "run"
    train(load(tiny_config(tmp_path, total=1024)), run_dir=run_dir, progress_bar=False)
    digests = {}
    for i in (1, 2):
        for later in ("model_768_steps.zip", "model_1024_steps.zip"):  # as if killed just after step 512's checkpoint
            (run_dir / "checkpoints" / later).unlink()
        train(resume_config(run_dir), run_dir=run_dir, progress_bar=False, resume=True)
        aside = run_dir / f"progress_abandoned_{i}.csv"
        assert [int(r["time/total_timesteps"]) for r in csv.DictReader(aside.open())][0] > 512
        digests[aside.name] = hashlib.sha256(aside.read_bytes()).hexdigest()
    assert {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in run_dir.glob("progress_abandoned_*.csv")
    } == digests
    rows = progress_steps(run_dir)
    assert rows == sorted(rows) and rows[-1] == 1024
    # TensorBoard reads events files in name order, and two writers of one process within a
    # second can sort out of time order (uid .10 before .9): compare the steps, each once
    assert eval_steps(run_dir)[0] == [512, 1024] == sorted(tb_steps(run_dir))


# ---------------------------------------------------------------- (c) Ctrl-C and SIGTERM


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_process_left_behind():
    """A failed wait must not leave a training run going after its test."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)


def start(args, log_path, cwd):
    log = open(log_path, "w")
    proc = subprocess.Popen(TRAIN + args, stdout=log, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    _STARTED.append(proc)
    return proc, log


def wait_for(cond, proc, timeout=120.0, poll=0.01):
    end = time.monotonic() + timeout
    while not cond():
        assert proc.poll() is None, f"training ended early (rc {proc.returncode})"
        assert time.monotonic() < end, "timed out"
        time.sleep(poll)


@pytest.mark.slow  # two jamb-train subprocesses, each trained to two checkpoints
def test_sigint_and_sigterm_save_a_checkpoint_and_the_final_model(tmp_path):
    from agents.training.runs import checkpoint_problem, model_steps

    run_dir = tmp_path / "run"
    config = tiny_config(tmp_path, total=1_000_000, eval_freq=1024)
    for sig, args in (
        (signal.SIGINT, ["--config", str(config), "--run-dir", str(run_dir)]),
        (signal.SIGTERM, ["--resume", str(run_dir)]),
    ):
        before = len(list((run_dir / "checkpoints").glob("*.zip"))) if run_dir.exists() else 0
        proc, log = start(args, tmp_path / f"{sig.name}.log", tmp_path)
        wait_for(
            lambda before=before: len(list((run_dir / "checkpoints").glob("model_*_steps.zip"))) >= before + 2, proc
        )  # training under way
        proc.send_signal(sig)
        rc = proc.wait(timeout=120)
        log.close()
        out = (tmp_path / f"{sig.name}.log").read_text()
        assert rc == 128 + sig, out[-3000:]
        assert "Traceback" not in out and f"interrupted by {sig.name} at step" in out, out[-3000:]
        assert (
            "saved checkpoint" in out
            and f"final model {run_dir / 'final_model.zip'}" in out
            and f"--resume {run_dir}" in out
        )
        step = model_steps(run_dir / "final_model.zip")
        ckpt = run_dir / "checkpoints" / f"model_{step}_steps.zip"
        assert f"saved checkpoint {ckpt}" in out and checkpoint_problem(ckpt) is None and model_steps(ckpt) == step
    assert "resuming from" in (tmp_path / "SIGTERM.log").read_text()
    steps, _ = eval_steps(run_dir)
    assert steps == sorted(set(steps)) and tb_steps(run_dir) == steps and not temp_files(run_dir)
    assert repeated_steps(run_dir) == {}  # every tag, read raw


# ---------------------------------------------------------------- (a) the hard way: SIGKILL at random moments


def file_digests(run_dir):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in run_dir.glob("progress*.csv")
        if p.name != "progress.csv"
    }


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_loses_nothing(tmp_path):
    from agents.training.runs import checkpoint_problem, model_steps

    rng = random.Random(1234)
    total, eval_freq = 8192, 1024
    config = tiny_config(tmp_path, total=total, eval_freq=eval_freq, checkpoint_freq=512)
    run_dir = tmp_path / "run"
    ckpts = run_dir / "checkpoints"

    def n_ckpts():
        return len(list(ckpts.glob("model_*_steps.zip"))) if ckpts.is_dir() else 0

    def writing_checkpoint():
        return ckpts.is_dir() and any(is_temp_file(name) for name in os.listdir(ckpts))

    kept = {}  # abandoned progress files seen so far: never overwritten nor removed
    logs = []
    for attempt in range(4):
        args = ["--config", str(config), "--run-dir", str(run_dir)] if attempt == 0 else ["--resume", str(run_dir)]
        logs.append(tmp_path / f"attempt{attempt}.log")
        proc, log = start(args, logs[-1], tmp_path)
        if attempt == 0:  # killed before its first checkpoint: the folder holds only the config (and maybe logs)
            wait_for(lambda: (run_dir / "config.yaml").exists(), proc, poll=0.001)
            time.sleep(rng.uniform(0.0, 0.3))
            killed_before_first_checkpoint = n_ckpts() == 0
        elif attempt == 1:  # killed while a checkpoint is being written (or right after it appears)
            target = n_ckpts() + rng.randint(2, 5)
            wait_for(lambda target=target: n_ckpts() >= target, proc)
            seen = n_ckpts()
            wait_for(lambda seen=seen: writing_checkpoint() or n_ckpts() > seen, proc, poll=0.0002)
        elif attempt == 2:  # a random moment once training is under way
            target = n_ckpts() + 1
            wait_for(lambda target=target: n_ckpts() >= target, proc)
            time.sleep(rng.uniform(0.0, 1.5))
        if attempt < 3:
            proc.kill()  # SIGKILL: no handler runs
            proc.wait(timeout=60)
            log.close()
            if attempt == 1:
                caught_mid_write = writing_checkpoint()  # a cut-off checkpoint left behind
            digests = file_digests(run_dir)
            assert all(digests.get(name) == d for name, d in kept.items()), (
                "an abandoned progress file was overwritten or removed"
            )
            kept = digests
            continue
        rc = proc.wait(timeout=600)
        log.close()
        assert rc == 0, logs[-1].read_text()[-3000:]
    outs = [p.read_text() for p in logs]
    if killed_before_first_checkpoint:
        assert "killed before its first one): starting it again from step 0" in outs[1]
    assert "resuming from" in outs[2] and "resuming from" in outs[3], outs[3][-3000:]
    if caught_mid_write:  # the cut-off checkpoint was a temporary file: never a candidate, removed
        assert "a write cut short when the run was killed" in outs[2]
    assert all("Traceback" not in out for out in outs[1:])

    # finished, with every evaluation once, in order, from the first one on
    assert model_steps(run_dir / "final_model.zip") == total
    steps, means = eval_steps(run_dir)
    assert steps == list(range(eval_freq, total + 1, eval_freq))
    assert tb_steps(run_dir) == steps  # TensorBoard: no evaluation step twice (purged on resume)
    assert len(set(tb_steps(run_dir, "rollout/ep_rew_mean"))) == len(tb_steps(run_dir, "rollout/ep_rew_mean"))
    assert (
        repeated_steps(run_dir) == {}
    )  # every tag, read raw (no purge applied): the killed attempts' late values are aside
    # progress: one continuous log, and no abandoned rows lost
    rows = progress_steps(run_dir)
    assert rows[0] == 0 and rows == sorted(set(rows)) and rows[-1] == total
    assert all(file_digests(run_dir).get(name) == d for name, d in kept.items())
    # the best model is the best evaluation's (or a better one of a killed attempt)
    best = yaml.safe_load((run_dir / "best.json").read_text())
    assert (run_dir / "best_model.zip").exists() and model_steps(run_dir / "best_model.zip") == best["step"]
    assert best["mean_reward"] >= max(means) - 1e-9
    assert all(checkpoint_problem(p) is None for p in ckpts.glob("model_*_steps.zip")) and not temp_files(run_dir)
