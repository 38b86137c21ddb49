"""``jamb-tune --ray --config <RLlib config>``: the Ray Tune sweep over RLlib PPO settings.

The sweep test runs two tiny RLlib trials (the tiny run of tests/training/test_rllib.py: 16-unit
network, 256-step batches in the base, 2 evaluation games) on a local Ray with 2 CPUs in a
fresh process; it is skipped without RLlib. The other tests stop at the arguments and the
config, before Ray is imported, and run without it.
"""

from __future__ import annotations

import csv

import pytest
import yaml

from tests.helpers import needs_module
from tests.training.test_rllib import TINY, tool, write_config

needs_rllib = needs_module("ray.rllib", "RLlib")


def test_every_sampled_setting_is_a_valid_rllib_config(tmp_path):
    """The RLlib search space stays inside what the config loader accepts, and no batch
    choice exceeds a trial's budget (the smallest one is always there)."""
    import optuna

    from agents.training.rllib_config import load_rllib_config, validate_rllib_config
    from agents.training.tuning import NETS, RLLIB_BATCHES, sample

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    for steps, batches in ((1024, {1024}), (3000, {1024, 2048}), (10**6, set(RLLIB_BATCHES))):
        base = load_rllib_config(write_config(tmp_path / "tiny.yaml"), {"total_timesteps": steps})
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        seen = set()
        for _ in range(30):
            trial = study.ask()
            cfg = sample(trial, base)
            cfg.pop("config_name")
            assert validate_rllib_config(cfg, "sampled.yaml")["hidden_sizes"] in NETS.values()
            seen.add(cfg["train_batch_size"])
            study.tell(trial, 0.0)
        assert seen <= batches and RLLIB_BATCHES[0] in seen


@pytest.mark.parametrize(
    "argv, changes, message",
    [
        ([], {}, "is an RLlib config (engine: rllib): tune it with --ray"),
        (["--ray"], {"players": 2}, "key 'players': self-play configs cannot be tuned"),
        (["--ray", "--jobs", "2"], {"num_env_runners": 2}, "--jobs 2: a trial of"),
        (["--ray"], {"gamma": 2}, "key 'gamma': expected a number in (0.0, 1.0]"),
        (["--ray"], {"n_steps": 128}, "key 'n_steps': unknown"),  # an SB3 setting in an RLlib config
    ],
)
def test_bad_rllib_tune_arguments(monkeypatch, capsys, tmp_path, argv, changes, message):
    from agents.apps.cli import tune

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    config = write_config(tmp_path / "tiny.yaml", **changes)
    with pytest.raises(SystemExit) as exc:
        tune.main(["--config", str(config), "--trials", "1", "--steps", "64", "--out", str(tmp_path / "t"), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "t").exists()  # nothing made


@needs_rllib
@pytest.mark.slow
def test_ray_tune_rllib_tiny_search(tmp_path):
    from agents.training.rllib_config import load_rllib_config
    from agents.training.tuning import NETS

    out = tmp_path / "tune"
    config = write_config(tmp_path / "tiny.yaml")
    proc = tool(
        "tune",
        "--ray",
        "--jobs",
        "2",
        "--config",
        str(config),
        "--ruleset",
        "classic_down",
        "--trials",
        "2",
        "--steps",
        "1024",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "best: trial" in proc.stdout and "Traceback" not in proc.stderr
    rows = list(csv.DictReader((out / "trials.csv").open()))
    assert sorted(int(r["trial"]) for r in rows) == [0, 1]
    assert list(rows[0])[:3] == ["trial", "score", "wall_s"] and {"lr", "train_batch_size", "hidden_sizes"} <= set(
        rows[0]
    )
    best = load_rllib_config(out / "best_config.yaml")  # a valid RLlib config: jamb-train --config takes it
    top = max(rows, key=lambda r: float(r["score"]))
    assert best["engine"] == "rllib" and best["ruleset"] == "classic_down"
    assert best["train_batch_size"] == int(top["train_batch_size"]) == 1024  # the only batch within 1,024 steps
    assert best["hidden_sizes"] == NETS[top["hidden_sizes"]] and best["lr"] == pytest.approx(float(top["lr"]))
    assert (
        best["eval_freq"] == TINY["eval_freq"] and best["total_timesteps"] == 2_000_000
    )  # the base's, not the trials'
    assert "engine: rllib" in (out / "best_config.yaml").read_text()
    for n in (0, 1):
        run = out / f"trial_{n:03d}"
        assert (
            yaml.safe_load((run / "config.yaml").read_text())["engine"] == "rllib"
            and (run / "evaluations.npz").is_file()
        )
