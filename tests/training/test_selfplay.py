"""Self-play training (agents/training/selfplay.py, jamb-train-selfplay)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.apps.cli.train_selfplay import main
from agents.training.selfplay import OpponentPool, batch_size_for
from tests.helpers import logged_steps, repeated_steps, selfplay_args

ROOT = Path(__file__).resolve().parents[2]


def refused(args, capsys) -> str:
    """``main(args)`` exits 2 (a parser error); returns its stderr."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()[-1]) > 0
    return err


def test_a_short_run_snapshots_evaluates_and_resumes(tmp_path, capsys):
    run = tmp_path / "run"
    args = selfplay_args(
        run, n_envs=4, n_steps=128, snapshot_freq=512, eval_freq=512, eval_games=2, total_timesteps=None
    )
    assert main(args + ["--total-timesteps", "1024"]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "against greedy" in out
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["model_1024_steps.zip", "model_512_steps.zip"]
    assert (run / "final_model.zip").exists() and list(run.glob("events.out.tfevents.*"))
    saved = json.loads((run / "selfplay.json").read_text())
    assert saved == {
        "ruleset": "classic_down",
        "players": 2,
        "scoring": "separate",
        "reward": "win",
        "reward_scale": 1.0,
        "seed": 0,
        "baselines": ["random", "greedy"],
        "self_play": 0.8,
        "n_envs": 4,
        "n_steps": 128,
    }
    # a resumed run keeps its settings: each one given differently is named, with both values
    for bad, named in (
        (["--players", "3"], "--players: saved 2, given 3"),
        (["--ruleset", "standard"], "--ruleset: saved 'classic_down', given 'standard'"),
        (["--seed", "1"], "--seed: saved 0, given 1"),
        (["--n-steps", "64"], "--n-steps: saved 128, given 64"),
        (["--baselines", "random"], "--baselines: saved ['random', 'greedy'], given ['random']"),
    ):
        assert named in refused(args + bad + ["--resume"], capsys)
    assert repeated_steps(run) == {}
    first = logged_steps(run)
    # as if killed before the checkpoint at 1024: what was logged at 1024 goes aside, then is logged again
    (run / "checkpoints" / "model_1024_steps.zip").unlink()
    (run / "final_model.zip").unlink()
    assert main(args + ["--total-timesteps", "1536", "--resume"]) == 0
    out = capsys.readouterr().out
    assert "resuming from" in out and "model_512_steps.zip" in out and "moved to events_abandoned_1.tfrecord" in out
    assert (run / "checkpoints" / "model_1536_steps.zip").exists()
    assert len(list(run.glob("events.out.tfevents.*"))) == 2  # the first part's curves are kept
    assert repeated_steps(run) == {}  # read raw, with no purge applied
    steps = logged_steps(run)
    assert steps["selfplay/win_rate_vs_greedy"] == [512, 1024, 1536] == first["selfplay/win_rate_vs_greedy"] + [1536]


@pytest.mark.parametrize(
    "bad,message",
    [
        (["--players", "6"], "num_players must be an integer in 2..5"),
        (["--ruleset", "nokaut", "--scoring", "shared"], "derived column"),
        (["--baselines", "grandmaster"], "unknown agent"),
        (["--n-envs", "0"], "at least 1"),
        (["--self-play", "1.5"], "probability"),
        (["--resume"], "--resume needs --run-dir"),
        (["--ruleset", "/no/such.yaml"], "--ruleset /no/such.yaml: ruleset file not found"),
        (["--ruleset", "{tmp}"], "--ruleset {tmp}: is a folder; give a preset name or a rules YAML file"),
        (["--ruleset", "{tmp}/rules.yaml"], "--ruleset {tmp}/rules.yaml: is a folder"),
        (["--n-envs", "1", "--n-steps", "1"], "--n-envs x --n-steps must be at least 2"),
        (["--n-envs", "65537"], "--n-envs must be in 1..65,536"),
        (["--eval-games", "100001"], "--eval-games must be in 1..100,000"),
        (["--run-dir", ""], "argument --run-dir: an empty path"),
        (["--run-dir", "  ", "--resume"], "argument --run-dir: an empty path"),
    ],
)
def test_bad_arguments_are_refused(bad, message, tmp_path, capsys):
    (tmp_path / "rules.yaml").mkdir()
    bad = [a.replace("{tmp}", str(tmp_path)) for a in bad]
    assert message.replace("{tmp}", str(tmp_path)) in refused(bad, capsys)


@pytest.mark.parametrize(
    "where, resume, message",
    [
        ("file", False, "--run-dir {path} is a file, not a folder"),
        ("file", True, "--run-dir {path} is a file, not a folder"),
        ("file/run", False, "--run-dir: cannot create the folder {path}: {tmp}/file is a file, not a folder"),
        ("missing", True, "--resume: no checkpoint in {path} to resume (no such folder)"),
        ("empty", True, "--resume: no checkpoint in {path} to resume"),
        ("stray", True, "--resume: no checkpoint in {path} to resume and no selfplay.json (not a self-play run?)"),
    ],
)
def test_a_run_dir_that_cannot_hold_the_run_is_refused(where, resume, message, tmp_path, capsys):
    (tmp_path / "file").write_text("keep")
    (tmp_path / "empty").mkdir()
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "notes.txt").write_text("{}")
    path = tmp_path / where
    err = refused(["--run-dir", str(path)] + ["--resume"] * resume, capsys)
    assert message.format(path=path, tmp=tmp_path) in err, err
    assert (tmp_path / "file").read_text() == "keep" and not (tmp_path / "missing").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_unwritable_run_dir_is_refused(capsys):
    err = refused(["--run-dir", "/proc/jamb_no_such_run"], capsys)
    assert "/proc/jamb_no_such_run" in err and "it is inside /proc" in err  # refused before anything is made


def test_a_run_from_before_selfplay_json_refuses_checkpoints_of_another_table(tmp_path, capsys):
    run = tmp_path / "run"
    args = selfplay_args(run, total_timesteps=None)
    assert main(args + ["--total-timesteps", "64"]) == 0
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["model_64_steps.zip"]
    (run / "selfplay.json").unlink()  # as a run started before the settings were saved
    capsys.readouterr()
    assert main(args + ["--players", "3", "--total-timesteps", "128", "--resume"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: the checkpoints in")
        and "do not fit these settings" in err
        and len(err.strip().splitlines()) == 1
    ), err
    assert not (run / "selfplay.json").exists()  # the wrong settings are not saved
    assert main(args + ["--total-timesteps", "128", "--resume"]) == 0  # the right ones are, once the checkpoint loads
    assert json.loads((run / "selfplay.json").read_text())["players"] == 2
    assert "is a file, not a folder" in refused(["--run-dir", str(run / "final_model.zip"), "--resume"], capsys)


def test_the_minibatch_size_never_leaves_a_minibatch_of_one():
    for rollout in range(2, 3000):
        size = batch_size_for(rollout)
        assert 2 <= size <= 512 and rollout % size != 1, (rollout, size)
    assert batch_size_for(4096) == 512 and batch_size_for(513) == 511
    with pytest.raises(ValueError, match="at least 2 samples"):
        batch_size_for(1)


@pytest.mark.slow  # two self-play training subprocesses
def test_sigint_and_sigterm_save_a_checkpoint_to_resume_from(tmp_path):
    from agents.training.runs import checkpoint_problem, checkpoints, model_steps

    run = tmp_path / "run"
    args = [
        *(sys.executable, "scripts/train_selfplay.py"),
        *selfplay_args(run, n_envs=4, snapshot_freq=128, eval_freq=100000000, total_timesteps=100000000),
    ]
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    steps_before = 0
    for sig, extra in ((signal.SIGINT, []), (signal.SIGTERM, ["--resume"])):
        proc = subprocess.Popen(
            args + extra, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            end = time.monotonic() + 120
            while not any(
                model_steps(p) and model_steps(p) > steps_before for p in checkpoints(run)
            ):  # training under way
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < end, "no checkpoint within 120 s"
                time.sleep(0.05)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:  # never leave a training process behind
                proc.kill()
                proc.communicate()
        assert proc.returncode == 128 + sig, err
        assert "Traceback" not in err and f"interrupted by {sig.name} at step" in err, err
        step = model_steps(run / "final_model.zip")
        ckpt = run / "checkpoints" / f"model_{step}_steps.zip"
        assert f"saved checkpoint {ckpt}" in err and f"--resume --run-dir {run}" in err, err
        assert checkpoint_problem(ckpt) is None and model_steps(ckpt) == step and checkpoints(run)[0] == ckpt
        if extra:
            assert f"resuming from {run / 'checkpoints' / f'model_{steps_before}_steps.zip'}" in out, out
        steps_before = step


def test_an_existing_run_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "x").write_text("keep")
    with pytest.raises(SystemExit):
        main(["--run-dir", str(tmp_path)])
    assert "--resume" in capsys.readouterr().err and (tmp_path / "x").read_text() == "keep"


def test_the_pool_draws_baselines_until_a_snapshot_exists_then_mostly_snapshots():
    pool = OpponentPool(["a", "b"], self_play=0.8)
    rng = np.random.default_rng(0)
    assert {pool.draw(rng) for _ in range(50)} == {"a", "b"}
    pool.snapshots = ["s1", "s2", "s3"]
    draws = [pool.draw(rng) for _ in range(4000)]
    share = {k: draws.count(k) / len(draws) for k in ("a", "b", "s1", "s2", "s3")}
    assert share["s3"] == pytest.approx(0.4, abs=0.03)  # newest: 0.8 * 1/2
    assert share["s1"] == pytest.approx(0.2, abs=0.03) and share["a"] == pytest.approx(0.1, abs=0.03)
    with pytest.raises(ValueError, match="at least one baseline"):
        OpponentPool([])


def test_a_self_play_model_plays_in_the_multiplayer_evaluation(tmp_path):
    from agents import load
    from agents.evaluation.matches import play_match

    run = tmp_path / "run"
    assert main(selfplay_args(run, n_envs=4, n_steps=64, snapshot_freq=10000, total_timesteps=256)) == 0
    model = load(str(run / "final_model.zip"), ruleset="classic_down")
    result = play_match(
        "classic_down", [model, load("greedy", ruleset="classic_down")], seed=3, scoring="separate", num_players=2
    )
    assert len(result["scores"]) == 2


@pytest.mark.parametrize(
    "scores,share",
    [
        ([100, 100], 0.5),
        ([100, 100, 90], 0.5),
        ([100, 100, 100], 1 / 3),
        ([120, 100, 120, 120], None),
        ([90, 100, 100, 80], None),
    ],
)
def test_self_play_evaluation_shares_a_tie_on_top_for_any_number_of_players(scores, share, monkeypatch):
    """Every seat in turn gets ``scores`` rotated so that the learner holds ``scores[0]``:
    its win counts 1/(players tied on top) when it is on top, 0 otherwise, for 2..4 players."""
    import jamb_env.multiplayer as MP
    from agents.training.selfplay import SelfPlaySettings, evaluate_against

    class Seat:  # SeatEnv's interface: a one-move game that ends with the scores
        def __init__(self, baseline, seat, **_):
            self.seat = seat

        def reset(self, seed=None):
            return np.zeros(1, dtype=np.float32), {}

        def action_masks(self):
            return np.ones(1, dtype=bool)

        def step(self, action):
            n = len(scores)
            rotated = [scores[(p - self.seat) % n] for p in range(n)]  # the learner's seat holds scores[0]
            return np.zeros(1, dtype=np.float32), 0.0, True, False, {"scores": rotated, "seat": self.seat}

    class Model:
        def predict(self, obs, action_masks=None, deterministic=True):
            return 0, None

    monkeypatch.setattr(MP, "SeatEnv", Seat)
    settings = SelfPlaySettings(
        ruleset="classic_down", num_players=len(scores), scoring="separate", reward="win", reward_scale=1.0
    )
    rate, margin = evaluate_against(Model(), object(), settings, games=2 * len(scores))
    top = max(scores)
    expected = (1 / scores.count(top) if scores[0] == top else 0.0) if share is None else share
    assert rate == pytest.approx(expected)
    assert margin == scores[0] - max(scores[1:])
