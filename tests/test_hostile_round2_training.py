"""Second-round hostile inputs of the trainers: algo keys the trainer owns, odd saved
self-play settings, and the value trainer's default run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.training.config import ConfigError, load_config


def _config(tmp_path: Path, algo: dict) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"algo": algo}))
    return path


@pytest.mark.parametrize("key", ["_init_setup_model", "env", "policy", "seed", "device", "verbose", "tensorboard_log"])
def test_algo_keys_the_trainer_sets_are_refused(tmp_path, key):
    with pytest.raises(ConfigError, match=f"algo.{key}"):
        load_config(_config(tmp_path, {key: False}))


@pytest.mark.parametrize("value", [-1.0, 0, 0.0, float("inf"), True, "x"])
def test_non_positive_target_kl_is_refused(tmp_path, value):
    with pytest.raises(ConfigError, match="algo.target_kl"):
        load_config(_config(tmp_path, {"target_kl": value}))


def test_positive_or_null_target_kl_is_accepted(tmp_path):
    assert load_config(_config(tmp_path, {"target_kl": 0.02}))["algo"]["target_kl"] == 0.02
    assert load_config(_config(tmp_path, {"target_kl": None}))["algo"]["target_kl"] is None


def test_jamb_train_refuses_a_private_algo_key_before_writing(tmp_path, monkeypatch, capsys):
    from agents.apps.cli.train import main

    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, {"_init_setup_model": False})
    assert main(["--config", str(cfg)]) == 2
    assert "algo._init_setup_model" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


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


def test_good_saved_settings_are_read(tmp_path):
    from agents.training.selfplay import read_run_settings

    assert read_run_settings(_run(tmp_path)) == GOOD


@pytest.mark.parametrize(
    "key, value",
    [
        ("n_envs", "2"),
        ("n_envs", 0),
        ("n_envs", True),
        ("baselines", 5),
        ("baselines", []),
        ("baselines", ["nobody"]),
        ("self_play", "0.8"),
        ("self_play", 1.5),
        ("reward_scale", "x"),
        ("reward_scale", -1.0),
        ("reward_scale", 0),
        ("n_steps", 2.5),
        ("n_steps", 1 << 21),
        ("players", "2"),
        ("players", 9),
        ("scoring", 3),
        ("reward", "money"),
        ("seed", -1),
        ("seed", 1.0),
        ("ruleset", 7),
    ],
)
def test_odd_saved_settings_are_refused_naming_the_file_and_key(tmp_path, key, value):
    from agents.training.selfplay import read_run_settings

    run = _run(tmp_path, **{key: value})
    with pytest.raises(
        ConfigError, match=rf"selfplay\.json: {key} must be .*got {value!r}".replace("[", r"\[").replace("]", r"\]")
    ):
        read_run_settings(run)


def test_saved_rollout_of_one_step_is_refused(tmp_path):
    from agents.training.selfplay import read_run_settings

    with pytest.raises(ConfigError, match="n_envs x n_steps"):
        read_run_settings(_run(tmp_path, n_envs=1, n_steps=1))


def test_non_finite_saved_reward_scale_is_refused(tmp_path):
    from agents.training.selfplay import read_run_settings

    run = _run(tmp_path)
    (run / "selfplay.json").write_text(json.dumps({**GOOD, "reward_scale": float("inf")}))
    with pytest.raises(ConfigError, match="reward_scale"):
        read_run_settings(run)


def test_selfplay_resume_with_a_string_n_envs_exits_2(tmp_path, capsys):
    from agents.apps.cli.train_selfplay import run

    d = _run(tmp_path, n_envs="2")
    with pytest.raises(SystemExit) as exc:
        run(["--resume", "--run-dir", str(d)])
    assert exc.value.code == 2
    assert "n_envs must be an integer 1..65,536, got '2'" in capsys.readouterr().err


def test_value_default_run_dir_stays_under_runs_for_a_path_ruleset(tmp_path):
    from agents.training.value import ValueConfig, default_run_dir
    from jamb_env.rules import RULES_DIR

    rules = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())
    evil = tmp_path / "x" / "evil.yaml"
    evil.parent.mkdir()
    rules["name"] = "../../evil"
    evil.write_text(yaml.safe_dump(rules))
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    out = default_run_dir(ValueConfig.from_dict({"ruleset": str(deep / ".." / ".." / "x" / "evil.yaml")}))
    assert out == Path("runs/value_evil_s0")
    rules["name"] = "mine"
    evil.write_text(yaml.safe_dump(rules))
    assert default_run_dir(ValueConfig.from_dict({"ruleset": str(evil)})) == Path("runs/value_mine_s0")
    assert default_run_dir(ValueConfig.from_dict({"ruleset": "classic", "seed": 3})) == Path("runs/value_classic_s3")
