"""Hostile configs and rulesets: every YAML reader bounds the nesting and the size and
reports non-UTF-8 text (the ruleset files' own table, the ``extends:`` chain included:
tests/inputs/test_ruleset_files.py); every resource setting has an upper bound;
self-play checks its baselines before it makes a run folder; a resume with nothing left to
train is refused without writing; the default configs are found from any folder; a
ruleset's name keeps the default run folder inside ``runs/``.

Each refusal is a ConfigError / RulesetError (or ``error: ...`` and exit status 2 from a
command) naming the file or key and what is allowed, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.training.config import CONFIGS_DIR, ConfigError, load_config, resume_config
from agents.training.rllib_config import load_rllib_config, resume_rllib_config
from jamb_env import RulesetError, load_ruleset
from jamb_env.rules import RULES_DIR
from tests.helpers import needs_module

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = CONFIGS_DIR / "ppo_classic.yaml"  # jamb-train's and jamb-tune's without --config
DEFAULT_RLLIB_CONFIG = CONFIGS_DIR / "rllib_classic.yaml"  # jamb-train --engine rllib's
MAX_DEPTH, MAX_BYTES = 64, 1 << 20  # jamb_env/utils/safe_yaml.py's limits, as documented
CLASSIC = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())
needs_rllib = needs_module("ray.rllib", "RLlib")


def nested(levels: int) -> str:
    """A top-level mapping whose one value is ``levels - 1`` lists nested in flow style."""
    return "a: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n"


def tiny_sb3(path: Path, **top) -> Path:
    """An SB3 config of a few seconds: 2 envs x 32 steps per rollout, one evaluation game."""
    cfg = yaml.safe_load(DEFAULT_CONFIG.read_text())
    cfg["imitation"]["games"] = 0  # a tiny run from scratch (the default starts from 2,000 planner games)
    cfg.update({"total_timesteps": 64, "ruleset": "classic_down", **top})
    cfg["env"]["n_envs"] = 2
    cfg["algo"].update(n_steps=32, batch_size=32, n_epochs=1, policy_kwargs={"net_arch": [16]})
    cfg["eval"].update(freq=100_000, episodes=1, n_envs=1)
    cfg["checkpoint"]["freq"] = 32
    path.write_text(yaml.safe_dump(cfg))
    return path


def digests(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def every_path(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def read_as_run_config(path: Path):
    """resume_config of a run folder whose config.yaml is ``path``'s text (the error names
    ``<run>/config.yaml``: :func:`shown`)."""
    run = path.parent / "run"
    run.mkdir(exist_ok=True)
    (run / "config.yaml").write_bytes(path.read_bytes())
    return resume_config(run)


def shown(reader: str, path: Path) -> str:
    """The file name the error of ``reader`` names, as a regular expression."""
    return "run/config\\.yaml" if reader == "a run's config.yaml" else re.escape(path.name)


#: Every reader of a YAML file of this area, and the error it raises.
READERS = {
    "ruleset": (load_ruleset, RulesetError),
    "training config": (load_config, ConfigError),
    "RLlib config": (load_rllib_config, ConfigError),
    "a run's config.yaml": (read_as_run_config, ConfigError),
    "an RLlib run's config.yaml": (resume_rllib_config, ConfigError),
}


# ---------------------------------------------------------------- 1, 2: the YAML readers
@pytest.mark.parametrize("reader", READERS)
def test_yaml_nested_past_the_limit_is_refused_by_every_reader(reader, tmp_path):
    read, error = READERS[reader]
    for levels in (MAX_DEPTH + 1, 20_000):
        path = tmp_path / f"deep{levels}.yaml"
        path.write_text(nested(levels))
        with pytest.raises(
            error,
            match=rf"{shown(reader, path)}: nested more than {MAX_DEPTH} levels deep \(line 1, column \d+\); "
            rf"allowed: at most {MAX_DEPTH} levels",
        ):
            read(path)


def test_yaml_nested_up_to_the_limit_still_reads(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("algo:\n  policy_kwargs: " + "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2) + "\n")
    assert load_config(path)["algo"]["policy_kwargs"]  # mapping, mapping, 62 lists: 64 levels
    path.write_text("algo:\n  policy_kwargs: " + "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1) + "\n")
    with pytest.raises(ConfigError, match="nested more than 64 levels deep"):
        load_config(path)


@pytest.mark.parametrize("reader", READERS)
def test_a_yaml_file_over_1_mib_is_refused_by_every_reader(reader, tmp_path):
    read, error = READERS[reader]
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * MAX_BYTES + "\n")  # a comment: valid (empty) YAML, too large to read
    with pytest.raises(
        error,
        match=shown(reader, path) + r": more than 1,048,576 bytes; allowed: a YAML file of at most 1,048,576 bytes",
    ):
        read(path)


@pytest.mark.parametrize("reader", READERS)
def test_a_file_that_is_not_utf8_is_a_clear_error_for_every_reader(reader, tmp_path):
    read, error = READERS[reader]
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(
        error,
        match=shown(reader, path)
        + r": not UTF-8 text \(invalid continuation byte at byte 9\); allowed: a UTF-8 YAML file",
    ):
        read(path)


@pytest.mark.parametrize(
    "content, message",
    [
        ("name: caf\xe9\n".encode("latin-1"), "not UTF-8 text (invalid continuation byte at byte 9)"),
        (nested(20_000).encode(), "nested more than 64 levels deep"),
        (b"# " + b"x" * MAX_BYTES, "more than 1,048,576 bytes"),
        (b"- a list\n", "expected a mapping of keys at the top level, got list"),
    ],
)
def test_jamb_train_value_reports_a_bad_config_in_one_line(content, message, tmp_path, capsys):
    from agents.apps.cli.train_value import main

    path = tmp_path / "value.yaml"
    path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        main(
            ["--config", str(path), "--out", str(tmp_path / "out"), "--iterations", "0"]
        )  # the file is refused before the option
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"error: --config: {path}: {message}" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_training_commands_report_a_deeply_nested_ruleset(tmp_path, capsys):
    from agents.apps.cli import evaluate, train, train_selfplay

    deep = tmp_path / "deep.yaml"
    deep.write_text(nested(20_000))
    message = f"{deep}: nested more than 64 levels deep"
    assert (
        train.main(
            [
                "--config",
                str(tiny_sb3(tmp_path / "tiny.yaml")),
                "--ruleset",
                str(deep),
                "--run-dir",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert evaluate.main(["--ruleset", str(deep), "--agents", "random", "--games", "2", "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        train_selfplay.main(["--ruleset", str(deep), "--run-dir", str(tmp_path / "sp")])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "run").exists() and not (tmp_path / "sp").exists()


# ---------------------------------------------------------------- 4: resource settings
@pytest.mark.parametrize(
    "top, section, message",
    [
        ({"torch_threads": 1_000_000_000}, {}, "key 'torch_threads': 1,000,000,000 is too large; allowed: 1..256"),
        ({}, {"env": {"n_envs": 100_000_000}}, "key 'env.n_envs': 100,000,000 is too large; allowed: 1..65,536"),
        ({}, {"eval": {"n_envs": 65_537}}, "key 'eval.n_envs': 65,537 is too large; allowed: 1..65,536"),
        (
            {},
            {"eval": {"episodes": 100_001, "n_envs": 1}},
            "key 'eval.episodes': 100,001 is too large; allowed: 1..100,000",
        ),
        ({}, {"algo": {"n_steps": 2**21}}, "key 'algo.n_steps': 2,097,152 is too large; allowed: 1..1,048,576"),
        ({}, {"algo": {"batch_size": 2**21}}, "key 'algo.batch_size': 2,097,152 is too large; allowed: 1..1,048,576"),
        (
            {},
            {"env": {"n_envs": 1024}, "algo": {"n_steps": 2048}},
            "key 'env.n_envs': 1,024 envs x algo.n_steps 2,048 = 2,097,152 steps per rollout is too large; "
            "allowed: at most 1,048,576",
        ),
        (
            {},
            {"env": {"n_envs": 1024}, "algo": {"n_steps": None}},
            "x algo.n_steps 2,048 = 2,097,152 steps per rollout",
        ),  # SB3's default
        (
            {},
            {"env": {"n_envs": 65, "vec_env": "subproc"}},
            "key 'env.n_envs': 65 is too many for vec_env subproc (one process per env); allowed: 1..64",
        ),
    ],
)
def test_sb3_resource_settings_have_upper_bounds(top, section, message, tmp_path):
    cfg = yaml.safe_load(DEFAULT_CONFIG.read_text())
    cfg.update(top)
    for key, values in section.items():
        cfg[key].update(values)
        cfg[key] = {k: v for k, v in cfg[key].items() if v is not None}  # None: left out
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert message in str(exc.value) and "big.yaml" in str(exc.value)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"torch_threads": 1_000_000_000}, "key 'torch_threads': 1,000,000,000 is too large; allowed: 1..256"),
        ({"num_cpus": 100_000}, "key 'num_cpus': 100,000 is too large; allowed: 1..1,024"),
        ({"num_env_runners": 100_000}, "key 'num_env_runners': 100,000 is too large; allowed: 0..1,024"),
        (
            {"num_envs_per_env_runner": 100_000_000},
            "key 'num_envs_per_env_runner': 100,000,000 is too large; allowed: 1..65,536",
        ),
        (
            {"train_batch_size": 2**21, "minibatch_size": 256},
            "key 'train_batch_size': 2,097,152 is too large; allowed: 1..1,048,576",
        ),
        (
            {"rollout_fragment_length": 2**21},
            "key 'rollout_fragment_length': 2,097,152 is too large; allowed: 1..1,048,576",
        ),
        ({"eval_games": 100_001}, "key 'eval_games': 100,001 is too large; allowed: 1..100,000"),
    ],
)
def test_rllib_resource_settings_have_upper_bounds(changes, message, tmp_path):
    cfg = {**yaml.safe_load(DEFAULT_RLLIB_CONFIG.read_text()), **changes}
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError) as exc:
        load_rllib_config(path)
    assert message in str(exc.value) and "big.yaml" in str(exc.value)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"torch_threads": 1_000_000_000}, "torch_threads = 1000000000 is not allowed (1..256)"),
        ({"batch_size": 2**21}, "batch_size = 2097152 is not allowed (1..1,048,576)"),
        ({"hidden": [10**9]}, "hidden = (1000000000,) is not allowed (a list of widths 1..65,536)"),
    ],
)
def test_value_resource_settings_have_upper_bounds(changes, message):
    from agents.training.value import ValueConfig

    with pytest.raises(ValueError) as exc:
        ValueConfig.from_dict({"ruleset": "classic_down", **changes})
    assert message in str(exc.value)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--n-steps", "2000000"], "--n-steps must be in 1..1,048,576, got 2,000,000"),
        (["--n-envs", "65536", "--n-steps", "64"], "--n-envs x --n-steps must be at most 1,048,576 steps per rollout"),
    ],
)
def test_selfplay_rollout_sizes_have_upper_bounds(args, message, tmp_path, capsys):
    from agents.apps.cli.train_selfplay import main

    with pytest.raises(
        SystemExit
    ) as exc:  # the sizes are refused before the bad seed (a version without the bounds stops there)
        main(args + ["--run-dir", str(tmp_path / "run"), "--seed", "-1"])
    assert exc.value.code == 2 and message in capsys.readouterr().err and not (tmp_path / "run").exists()


# ---------------------------------------------------------------- 3: self-play baselines
@pytest.mark.parametrize(
    "baseline, why",
    [
        ("ppo", "no shipped PPO model for ruleset 'master'"),
        ("optimal", "the exact solver needs a sheet of one down or up column"),
    ],
)
def test_selfplay_checks_its_baselines_before_making_the_run(baseline, why, tmp_path, capsys):
    from agents.apps.cli.train_selfplay import main

    run = tmp_path / "run"
    for _attempt in range(2):  # refused the same way again: nothing was left behind
        with pytest.raises(SystemExit) as exc:
            main(
                [
                    "--ruleset",
                    "master",
                    "--baselines",
                    "greedy",
                    baseline,
                    "--total-timesteps",
                    "64",
                    "--run-dir",
                    str(run),
                ]
            )
        err = capsys.readouterr().err
        assert exc.value.code == 2 and f"error: --baselines: baseline {baseline!r} cannot play master: {why}" in err, (
            err
        )
        assert "Traceback" not in err and not run.exists()
    with pytest.raises(SystemExit):
        main(["--ruleset", "master", "--baselines", baseline, "--run-dir", str(run), "--resume"])
    assert "no checkpoint in" in capsys.readouterr().err and not run.exists()


def test_train_selfplay_writes_nothing_for_a_baseline_that_cannot_play(tmp_path):
    from agents.training.selfplay import SelfPlaySettings, train_selfplay

    run = tmp_path / "run"
    settings = SelfPlaySettings("standard", 2, "separate", "win", 1.0)
    with pytest.raises(ConfigError, match="baseline 'optimal' cannot play standard: the exact solver needs"):
        train_selfplay(settings, run, 64, n_envs=2, n_steps=32, baselines=("random", "optimal"), handle_signals=False)
    assert not run.exists()


# ---------------------------------------------------------------- 5: a resume with nothing to train
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
        "--run-dir",
        str(run),
    ]
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


# ---------------------------------------------------------------- 6: the default configs from any folder
def test_the_default_configs_are_found_from_any_folder(tmp_path, monkeypatch, capsys):
    from agents.apps.cli import train, tune
    from agents.training import config, rllib_config

    monkeypatch.chdir(tmp_path)
    # the config loads (and is then refused for the bad override): it was found from this folder
    assert train.main(["--total-timesteps", "0"]) == 2
    assert f"error: {DEFAULT_CONFIG}: key 'total_timesteps': expected a positive integer" in capsys.readouterr().err
    assert train.main(["--engine", "rllib", "--total-timesteps", "0"]) == 2
    assert (
        f"error: {DEFAULT_RLLIB_CONFIG}: key 'total_timesteps': expected a positive integer" in capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as exc:
        tune.main(
            ["--ruleset", "nope", "--trials", "1", "--steps", "64"]
        )  # the base config loads; the override is refused
    assert exc.value.code == 2 and "--ruleset nope: unknown ruleset 'nope'" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
    assert (config.DEFAULT_CONFIG, rllib_config.DEFAULT_RLLIB_CONFIG) == (DEFAULT_CONFIG, DEFAULT_RLLIB_CONFIG)


# ---------------------------------------------------------------- 7: a ruleset's name and the run folder
def escaping_setup(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(rules YAML named ``name``, a working folder three levels below ``tmp_path``)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({**yaml.safe_load((RULES_DIR / "classic_down.yaml").read_text()), "name": name}))
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    return rules, cwd


@pytest.mark.parametrize("name", ["../../../escape", "ABSOLUTE"])
def test_a_config_s_ruleset_name_cannot_steer_the_sb3_run_folder(name, tmp_path, monkeypatch, capsys):
    from agents.apps.cli.train import main

    name = str(tmp_path / "abs_escape") if name == "ABSOLUTE" else name
    rules, cwd = escaping_setup(tmp_path, name)
    config = tiny_sb3(tmp_path / "tiny.yaml", ruleset=str(rules))
    monkeypatch.chdir(cwd)
    before = every_path(tmp_path)
    assert main(["--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"error: the ruleset's name {name!r} cannot name a run folder under runs/" in err and "--run-dir" in err, err
    assert every_path(tmp_path) == before  # nothing written, inside runs/ or out of it


@needs_rllib
@pytest.mark.slow
def test_a_config_s_ruleset_name_cannot_steer_the_rllib_run_folder(tmp_path):
    rules, cwd = escaping_setup(tmp_path, "../../../escape")
    cfg = {
        **yaml.safe_load(DEFAULT_RLLIB_CONFIG.read_text()),
        "ruleset": str(rules),
        "total_timesteps": 128,
        "num_env_runners": 0,
        "num_envs_per_env_runner": 2,
        "rollout_fragment_length": 64,
        "train_batch_size": 128,
        "minibatch_size": 64,
        "num_epochs": 1,
        "hidden_sizes": [8],
        "eval_freq": 100_000,
        "eval_games": 1,
    }
    config = tmp_path / "rllib.yaml"
    config.write_text(yaml.safe_dump(cfg))
    before = every_path(tmp_path)
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "agents.apps.cli.train", "--config", str(config), "--no-progress"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "error: the ruleset's name '../../../escape' cannot name a run folder under runs/" in proc.stderr
    assert every_path(tmp_path) == before


def test_the_selfplay_run_folder_is_named_after_the_ruleset_file_inside_runs(tmp_path, monkeypatch):
    from agents.apps.cli.train_selfplay import main

    rules, cwd = escaping_setup(tmp_path, "../../../escape")
    monkeypatch.chdir(cwd)
    before = every_path(tmp_path)
    assert (
        main(
            [
                "--ruleset",
                str(rules),
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
                "--total-timesteps",
                "64",
            ]
        )
        == 0
    )
    made = every_path(tmp_path) - before
    assert made and all(p.startswith("a/b/c/runs") for p in made)
    assert (cwd / "runs" / "selfplay_rules_2p_separate_win_s0" / "final_model.zip").exists()
