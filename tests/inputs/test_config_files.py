"""Configs as input: training, RLlib, value, self-play, imitation and rl-zoo configs, and every
YAML reader (nesting, size, encoding, duplicate and odd keys, aliases, FIFOs). Every bad
setting is one clear error naming the key before anything is written; every resource setting
has an upper bound; a ruleset's name keeps the default run folder inside ``runs/``.
(Ruleset files' own table: tests/inputs/test_ruleset_files.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.training.config import CONFIGS_DIR, ConfigError, load_config, resume_config
from agents.training.rllib_config import load_rllib_config, resume_rllib_config
from jamb_env import JambEnv, RulesetError, load_ruleset
from jamb_env import rules as core
from jamb_env.rules import RULES_DIR
from tests.helpers import finishes, needs_fifo, needs_module, selfplay_args, tiny_sb3

MAX_DEPTH, MAX_BYTES = 64, 1 << 20  # jamb_env/utils/safe_yaml.py's limits, as documented


def nested(levels: int) -> str:
    """A top-level mapping whose one value is ``levels - 1`` lists nested in flow style."""
    return "a: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n"


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


DEFAULT_CONFIG = CONFIGS_DIR / "ppo_classic.yaml"  # jamb-train's and jamb-tune's without --config
DEFAULT_RLLIB_CONFIG = CONFIGS_DIR / "rllib_classic.yaml"  # jamb-train --engine rllib's


def every_path(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def escaping_setup(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(rules YAML named ``name``, a working folder three levels below ``tmp_path``)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({**yaml.safe_load((RULES_DIR / "classic_down.yaml").read_text()), "name": name}))
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    return rules, cwd


ROOT = Path(__file__).resolve().parents[2]


needs_rllib = needs_module("ray.rllib", "RLlib")


CONFIG = """ruleset: {ruleset}
total_timesteps: 32
trainer: lean
env: {{n_envs: 2, vec_env: {vec_env}}}
algo: {{n_steps: 16, batch_size: 16, n_epochs: 1{algo}}}
eval: {{freq: 100000, episodes: 2, n_envs: 2}}
"""


def _lean_config(tmp_path, ruleset="classic", vec_env="batched", algo=""):
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG.format(ruleset=ruleset, vec_env=vec_env, algo=algo))
    return path


def _config(tmp_path: Path, algo: dict) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"algo": algo}))
    return path


def unblock(fifo: Path) -> None:
    """Let a reader blocked opening ``fifo`` go on (a writer that opens and closes it)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # no reader left
        pass


HUGE = 10**400  # YAML and JSON read an integer of any size; float() of it overflows


def _yaml_with(source, tmp_path, **changes):
    import yaml

    cfg = yaml.safe_load((CONFIGS_DIR / source).read_text())
    for key, value in changes.items():
        section, _, name = key.rpartition(".")
        (cfg[section] if section else cfg)[name] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _sb3_config(tmp_path):
    from agents.training.config import load_config

    load_config(_yaml_with("ppo_classic.yaml", tmp_path, **{"env.reward_scale": HUGE}))


def _rllib_config(tmp_path, key):
    from agents.training.rllib_config import load_rllib_config

    load_rllib_config(_yaml_with("rllib_classic.yaml", tmp_path, **{key: HUGE}))


def _value_config(tmp_path):
    from agents.training.value import ValueConfig

    ValueConfig(ruleset="classic_down", lr=HUGE)


SELFPLAY_SAVED = {  # a self-play run's selfplay.json
    "ruleset": "classic",
    "players": 2,
    "scoring": "separate",
    "reward": "score",
    "reward_scale": 0.01,
    "seed": 0,
    "baselines": ["random"],
    "self_play": 0.8,
    "n_envs": 2,
    "n_steps": 64,
}


def _selfplay_settings(tmp_path, key):
    from agents.training.selfplay import check_run_settings

    check_run_settings({**SELFPLAY_SAVED, key: HUGE}, tmp_path / "selfplay.json")


def test_a_selfplay_run_keeps_every_seed_the_other_commands_take(tmp_path):
    """0..SEED_LIMIT-1, as jamb-train-selfplay --seed (its settings stopped at 2**31-1)."""
    from agents.training.selfplay import check_run_settings
    from jamb_env.engine.doors import SEED_LIMIT

    check_run_settings({**SELFPLAY_SAVED, "seed": SEED_LIMIT - 1}, tmp_path / "selfplay.json")
    with pytest.raises(ValueError, match="seed"):
        check_run_settings({**SELFPLAY_SAVED, "seed": SEED_LIMIT}, tmp_path / "selfplay.json")


def _envs(tmp_path, which):
    from jamb_env.multiplayer import raw_env

    (JambEnv if which == "solitaire" else raw_env)(reward_scale=HUGE)


def alias_bomb(path: Path) -> None:
    """A 1 kB file of nested aliases that stands for 9**10 nodes."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    path.write_text("\n".join(lines) + "\n")


#: what a YAML file holds -> (how to write it, what the one error line says after the file name)
BAD_YAML = {
    "nested 65 levels": (
        lambda p: p.write_text(nested(MAX_DEPTH + 1)),
        rf"nested more than {MAX_DEPTH} levels deep \(line 1, column \d+\); allowed: at most {MAX_DEPTH} levels",
    ),
    "nested 20,000 levels": (
        lambda p: p.write_text(nested(20_000)),
        rf"nested more than {MAX_DEPTH} levels deep \(line 1, column \d+\); allowed: at most {MAX_DEPTH} levels",
    ),
    "over 1 MiB": (  # a comment: valid (empty) YAML, too large to read
        lambda p: p.write_text("# " + "x" * MAX_BYTES + "\n"),
        r"more than 1,048,576 bytes; allowed: a YAML file of at most 1,048,576 bytes",
    ),
    "not UTF-8": (
        lambda p: p.write_bytes("name: caf\xe9\n".encode("latin-1")),
        r"not UTF-8 text \(invalid continuation byte at byte 9\); allowed: a UTF-8 YAML file",
    ),
    "a list as a key": (lambda p: p.write_text("? [a, b]\n: 1\n"), "not valid YAML: a key that is a list"),
    "a mapping as a key": (lambda p: p.write_text("? {a: 1}\n: 1\n"), "not valid YAML: a key that is a dict"),
    "a key given twice": (lambda p: p.write_text("seed: 1\nseed: 2\n"), ".*given twice"),
    "a Python tag": (  # one line naming the tag and the place, nothing run
        lambda p: p.write_text("!!python/object/apply:os.system ['echo hi']\n"),
        r".*python/object/apply:os\.system.*\(line 1, column 1\)",
    ),
    "aliases": (alias_bomb, ".*alias"),
    # YAML 1.1 reads these as 8 and 90 (PyYAML: silently), YAML 1.2 tools as 10 and a string
    "a leading-zero number": (lambda p: p.write_text("seed: 010\n"), r".*'010' is a YAML 1\.1 octal"),
    "a base-60 number": (lambda p: p.write_text("seed: 1:30\n"), r".*'1:30' is a YAML 1\.1 base-60"),
}


# (config text, the key its one error line names): jamb-train (scripts/train.py) refuses it before a run folder exists
BAD_TRAINING_SETTINGS = [
    ("algo: {n_steps: 0}", "algo.n_steps"),
    ("algo: {learning_rate: fast}", "algo.learning_rate"),
    ("device: tpu", "'device'"),
    ("eval: {seed: -5}", "eval.seed"),
    ("env: {reward_scale: .nan}", "reward_scale"),
]


# ---------------------------------------------------------------- every YAML reader
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("bad", BAD_YAML)
def test_every_yaml_reader_refuses_a_bad_file_in_one_line(bad, reader, tmp_path):
    read, error = READERS[reader]
    write, says = BAD_YAML[bad]
    path = tmp_path / "bad.yaml"
    write(path)
    with pytest.raises(error, match=shown(reader, path) + ": " + says) as refused:
        read(path)
    assert "\n" not in str(refused.value)


def test_yaml_nested_up_to_the_limit_still_reads(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("algo:\n  policy_kwargs: " + "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2) + "\n")
    assert load_config(path)["algo"]["policy_kwargs"]  # mapping, mapping, 62 lists: 64 levels
    path.write_text("algo:\n  policy_kwargs: " + "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1) + "\n")
    with pytest.raises(ConfigError, match="nested more than 64 levels deep"):
        load_config(path)


@needs_fifo
@pytest.mark.parametrize("reader", ["YAML reader", *[r for r in READERS if r != "a run's config.yaml"]])  # it copies
def test_a_yaml_file_that_is_a_fifo_is_refused_without_blocking(reader, tmp_path):
    """The readers check for a regular file before they open it (FileNotFoundError: ``... not found``);
    the YAML reader under them refuses one itself (jamb-train-value --config c.yaml hung in open())."""
    from jamb_env.rules.ruleset import read_yaml_mapping

    read, error = READERS[reader] if reader in READERS else (lambda p: read_yaml_mapping(p, ValueError), ValueError)
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    try:
        with pytest.raises((error, FileNotFoundError), match="not a regular file|not found") as refused:
            finishes(lambda: read(fifo))
        assert "c.yaml" in str(refused.value) and "\n" not in str(refused.value)
    finally:
        unblock(fifo)


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


# ---------------------------------------------------------------- rulesets (their own table: test_ruleset_files.py)
def test_ruleset_type_errors(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "name": "x", "extends": "classic_down", "dice": 5.0}))
    with pytest.raises(RulesetError, match="'dice'"):
        load_ruleset(path)
    path.write_text(yaml.safe_dump({"schema_version": True, "name": "x", "extends": "classic_down"}))
    with pytest.raises(RulesetError, match="'schema_version'"):
        load_ruleset(path)
    path.write_text(
        yaml.safe_dump({"schema_version": 1, "name": "x", "extends": "classic_down", "options": {"jokers": 0}})
    )
    with pytest.raises(RulesetError, match="options.jokers"):
        load_ruleset(path)
    with pytest.raises(RulesetError, match="cannot read"):
        load_ruleset("a" * 300)
    with pytest.raises(RulesetError, match="preset name or a YAML path"):
        load_ruleset(None)


def test_edited_ruleset_file_is_read_again(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "name": "one", "extends": "classic_down"}))
    assert load_ruleset(path).name == "one"
    import os
    import time

    path.write_text(yaml.safe_dump({"schema_version": 1, "name": "two", "extends": "classic_down"}))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert load_ruleset(path).name == "two"


def test_a_name_with_control_characters_is_refused_when_a_ruleset_is_read(tmp_path):
    """A name with an escape sequence would reach terminals."""
    evil = tmp_path / "evil.yaml"
    text = (core.RULES_DIR / "classic_down.yaml").read_text()
    evil.write_text(text.replace("name: classic_down", 'name: "evil\\e[31m\\e]0;pwned\\a"', 1))
    assert "evil" in evil.read_text()
    with pytest.raises(RulesetError, match="control character"):
        load_ruleset(str(evil))


def test_a_ruleset_path_in_an_unknown_users_home_is_a_ruleset_error(tmp_path, capsys):
    with pytest.raises(RulesetError, match="cannot read ruleset '~nosuchuser-jamb/r.yaml'"):
        load_ruleset("~nosuchuser-jamb/r.yaml")
    from agents.apps.cli import play as play_cli

    # before: Path.expanduser's RuntimeError traceback
    assert play_cli.main(["--ruleset", "~nosuchuser-jamb/r.yaml", "--watch", "greedy", "--delay", "0"]) == 2
    assert "cannot read ruleset" in capsys.readouterr().err


# ---------------------------------------------------------------- bad settings, keys the trainer owns, huge numbers
@pytest.mark.slow  # a jamb-train subprocess each; in process: test_jamb_train_refuses_a_private_algo_key_before_writing
@pytest.mark.parametrize("text, message", BAD_TRAINING_SETTINGS)
def test_jamb_train_refuses_a_bad_setting_before_making_the_run(tmp_path, text, message):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text + "\ntotal_timesteps: 1000\n")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress", "--config", str(cfg)]
        + ["--run-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2 and message in out.stderr, (text, out.stderr[-500:])
    assert not (tmp_path / "run").exists()  # a failed config leaves no run behind


@pytest.mark.slow  # a jamb-train subprocess; tests/training/test_runs.py refuses a run folder that is a file in process
def test_jamb_train_refuses_a_run_folder_that_is_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress", "--config", str(DEFAULT_CONFIG)]
        + ["--run-dir", str(blocker)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2 and "is a file" in out.stderr and blocker.read_text() == "x"


@pytest.mark.parametrize("key", ["_init_setup_model", "env", "policy", "seed", "device", "verbose", "tensorboard_log"])
def test_algo_keys_the_trainer_sets_are_refused(tmp_path, key):
    with pytest.raises(ConfigError, match=f"algo.{key}"):
        load_config(_config(tmp_path, {key: False}))


def test_jamb_train_refuses_a_private_algo_key_before_writing(tmp_path, monkeypatch, capsys):
    from agents.apps.cli.train import main

    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, {"_init_setup_model": False})
    assert main(["--config", str(cfg)]) == 2
    assert "algo._init_setup_model" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("value", [-1.0, 0, 0.0, float("inf"), True, "x"])
def test_non_positive_target_kl_is_refused(tmp_path, value):
    with pytest.raises(ConfigError, match="algo.target_kl"):
        load_config(_config(tmp_path, {"target_kl": value}))


@pytest.mark.parametrize("key", ["normalize_advantage", "use_sde"])
@pytest.mark.parametrize("value", ["false", "no", 0, 1, None, [False]])
def test_an_algo_switch_is_true_or_false_only(tmp_path, key, value):
    """Before: ``normalize_advantage: "false"`` was accepted, and the trainers read the
    string as true."""
    with pytest.raises(ConfigError, match=f"algo.{key}': expected true or false"):
        load_config(_config(tmp_path, {key: value}))
    assert load_config(_config(tmp_path, {key: False}))["algo"][key] is False


def test_compile_without_a_cxx_compiler_is_refused_before_the_run(tmp_path, monkeypatch):
    """Before: torch's 97-line InductorError traceback at the first update, the run folder made."""
    import agents.training.config as config

    (tmp_path / "c.yaml").write_text("compile: true\n")
    assert load_config(tmp_path / "c.yaml")["compile"] is True  # this machine has one
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert config.cxx_compiler() is None
    with pytest.raises(ConfigError, match="key 'compile': true needs a C\\+\\+ compiler"):
        load_config(tmp_path / "c.yaml")


def _fake_compiler(tmp_path: Path, version_rc: int) -> dict:
    """The environment of a process whose C++ compiler ($CXX) answers ``--version`` with
    ``version_rc`` and fails to compile anything."""
    cxx = tmp_path / "bin" / "g++"
    cxx.parent.mkdir()
    cxx.write_text(f'#!/bin/sh\n[ "$1" = --version ] && exit {version_rc}\necho "cc1plus: broken" >&2\nexit 1\n')
    cxx.chmod(0o755)
    return {**os.environ, "CXX": str(cxx), "PATH": f"{cxx.parent}{os.pathsep}{os.environ['PATH']}"}


def test_a_cxx_compiler_that_does_not_run_is_no_compiler(tmp_path, monkeypatch):
    """Before: a ``g++`` on the PATH that fails passed the check, and the run died in torch's traceback."""
    import agents.training.config as config

    fake = _fake_compiler(tmp_path, version_rc=1)["CXX"]
    monkeypatch.setattr("shutil.which", lambda name: fake)  # every compiler name finds the broken one
    assert config.cxx_compiler() is None


@pytest.mark.slow
def test_a_compiler_that_fails_to_build_the_update_is_one_line(tmp_path):
    """Before: a compiler answering ``--version`` but failing to build (H29) ended jamb-train and
    jamb-bench --training-compile in torch's InductorError traceback."""
    pytest.importorskip("sb3_contrib")
    config = tmp_path / "c.yaml"
    config.write_text(
        "ruleset: classic_down\ncompile: true\ntotal_timesteps: 32\nimitation: {games: 0}\nenv: {n_envs: 2}\n"
        "algo: {n_steps: 16, batch_size: 16, n_epochs: 1}\neval: {freq: 16, episodes: 2, n_envs: 2}\n"
        "checkpoint: {freq: 16}\n"
    )
    env = _fake_compiler(tmp_path, version_rc=0)
    done = subprocess.run(
        [sys.executable, "-m", "agents.apps.cli.train", "--config", str(config), "--run-dir", str(tmp_path / "run"),
         "--no-progress"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "compile: true: torch.compile could not build the update" in done.stderr


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_compile_is_true_or_false_only(tmp_path, value):
    with pytest.raises(ConfigError, match="key 'compile': expected true or false"):
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"compile": value}))
        load_config(tmp_path / "c.yaml")


def test_positive_or_null_target_kl_is_accepted(tmp_path):
    assert load_config(_config(tmp_path, {"target_kl": 0.02}))["algo"]["target_kl"] == 0.02
    assert load_config(_config(tmp_path, {"target_kl": None}))["algo"]["target_kl"] is None


@pytest.mark.parametrize(
    "check",
    [
        _sb3_config,
        lambda p: _rllib_config(p, "reward_scale"),
        lambda p: _rllib_config(p, "lr"),
        _value_config,
        lambda p: _selfplay_settings(p, "reward_scale"),
        lambda p: _selfplay_settings(p, "self_play"),
        lambda p: _envs(p, "solitaire"),
        lambda p: _envs(p, "multiplayer"),
    ],
    ids=[
        "sb3-reward_scale",
        "rllib-reward_scale",
        "rllib-lr",
        "value-lr",
        "selfplay-reward_scale",
        "selfplay-self_play",
        "JambEnv",
        "multiplayer",
    ],
)
def test_a_number_no_float_holds_is_refused_not_an_overflow(tmp_path, check):
    from agents.training.config import ConfigError

    with pytest.raises((ConfigError, ValueError), match="number|probability|finite"):
        check(tmp_path)


@pytest.mark.parametrize(
    "teacher,ruleset,plays",
    [
        ("optimal", "classic", False),
        ("optimal", "classic_down", True),
        ("search", "classic", False),
        ("search", "jnn", True),
        ("search", "classic_down", True),
        ("columnwise", "joly", False),
        ("expectimax", "joly", True),
    ],
)
def test_a_teacher_that_cannot_play_the_ruleset_is_a_config_error(tmp_path, teacher, ruleset, plays):
    """Before the fix the teacher failed in the imitation stage, after the run folder was written."""
    from agents.training.config import ConfigError, load_config

    path = tmp_path / "c.yaml"
    path.write_text(f"ruleset: {ruleset}\ntotal_timesteps: 1000\nimitation:\n  games: 4\n  teacher: {teacher}\n")
    if plays:
        assert load_config(path)["imitation"]["teacher"] == teacher
    else:
        with pytest.raises(ConfigError, match=f"imitation.teacher.*{teacher} cannot teach {ruleset}"):
            load_config(path)


# ---------------------------------------------------------------- upper bounds; rollouts that cannot train
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


@pytest.mark.parametrize("trainer", ["sb3", "lean"])
def test_a_rollout_leaving_a_minibatch_of_one_step_is_refused(tmp_path, trainer):
    from agents.training.config import ConfigError, load_config

    raw = "ruleset: classic\ntrainer: {}\nenv: {{n_envs: 3}}\nalgo: {{n_steps: 11, batch_size: 16}}\n"
    path = tmp_path / "c.yaml"
    path.write_text(raw.format(trainer))
    # before: accepted; 33 steps in minibatches of 16, 16 and 1: the lone advantage's std is NaN, every weight NaN
    with pytest.raises(ConfigError, match="'algo.batch_size': 3 envs x algo.n_steps 11 = 33 steps .* minibatch of 1"):
        load_config(path)
    path.write_text("env: {n_envs: 1}\nalgo: {n_steps: 65}\n")  # SB3's default batch_size, 64
    with pytest.raises(ConfigError, match="minibatches of 64"):
        load_config(path)
    path.write_text("env: {n_envs: 1}\nalgo: {n_steps: 65, normalize_advantage: false}\n")
    assert load_config(path)["algo"]["n_steps"] == 65


def test_lean_trainer_learns_on_sb3s_vec_envs(tmp_path):
    from agents.training.config import load_config
    from agents.training.envs import make_envs
    from agents.training.train import new_model

    cfg = load_config(_lean_config(tmp_path, vec_env="dummy"))
    env, eval_env = make_envs(cfg)
    eval_env.close()
    model = new_model(cfg, env)
    model.learn(total_timesteps=32)  # before: AttributeError: 'DummyVecEnv' object has no attribute 'action_masks'
    assert model.num_timesteps == 32
    env.close()


def test_bench_trainers_refuses_a_config_whose_ruleset_or_algo_does_not_load(tmp_path, capsys):
    from agents.apps.cli import bench

    rules = tmp_path / "r.yaml"
    rules.write_text("name: x\n")
    base = ["--skip-env", "--skip-train", "--train-steps", "1", "--trainers"]
    with pytest.raises(SystemExit) as exc:  # before: RulesetError traceback after the other tables
        bench.main(base + [str(_lean_config(tmp_path, ruleset=str(rules)))])
    assert exc.value.code == 2
    assert "--trainers" in capsys.readouterr().err
    # before: ConfigError traceback from new_model (MaskablePPO refuses the network)
    assert bench.main(base + [str(_lean_config(tmp_path, algo=", policy_kwargs: {no_such_setting: 1}"))]) == 2
    err = capsys.readouterr().err
    assert "error: --trainers" in err and "MaskablePPO does not accept" in err and "Traceback" not in err


# ---------------------------------------------------------------- self-play's baselines
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


# ---------------------------------------------------------------- rl-zoo's hyper-parameter files
@pytest.mark.parametrize(
    "text, says",
    [
        ("[1, 2]\n", "expected a mapping of env ids to hyper-parameters, got list"),
        ("Jamb-classic-v1: [1, 2]\n", "key 'Jamb-classic-v1': expected a mapping"),
        ("default: 5\n", "key 'default': expected a mapping"),
    ],
)
def test_jamb_zoo_refuses_a_conf_file_of_the_wrong_shape(tmp_path, capsys, text, says):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    conf = tmp_path / "hp.yml"
    conf.write_text(text)
    rc = zoo_cli.main(
        [
            "train",
            "--algo",
            "ppo_mask",
            "--env",
            "Jamb-classic-v1",
            "-conf",
            str(conf),
            "-n",
            "10",
            "-f",
            str(tmp_path / "logs"),
        ]
    )
    assert rc == 2  # before: rl_zoo3's AttributeError traceback ('list' object has no attribute 'keys')
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    "hyperparams, says",
    [
        (["n_steps:0"], "n_steps must be a positive integer"),
        (["batch_size:0"], "batch_size must be a positive integer"),
        (["n_steps:1", "batch_size:15"], "leave a last minibatch of one step"),
    ],
)
def test_jamb_zoo_train_refuses_ppo_mask_rollout_settings_it_cannot_train(tmp_path, capsys, hyperparams, says):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    rc = zoo_cli.main(
        [
            "train",
            "--algo",
            "ppo_mask",
            "--env",
            "Jamb-classic-v1",
            "-n",
            "64",
            "-f",
            str(tmp_path / "logs"),
            "--hyperparams",
            *hyperparams,
        ]
    )
    # before: n_steps 0 was MaskablePPO's UnboundLocalError traceback, batch_size 0 a bare range() error,
    # a one-step minibatch NaN weights
    assert rc == 2 and says in capsys.readouterr().err


# ---------------------------------------------------------------- a ruleset's name keeps the run folder in runs/
@pytest.mark.parametrize("name", ["../../../escape", "ABSOLUTE"])
def test_a_config_s_ruleset_name_cannot_steer_the_sb3_run_folder(name, tmp_path, monkeypatch, capsys):
    from agents.apps.cli.train import main

    name = f"/tmp/jamb_escape_{os.getpid()}" if name == "ABSOLUTE" else name  # short: a name has <= 64 characters
    rules, cwd = escaping_setup(tmp_path, name)
    config = tiny_sb3(tmp_path / "tiny.yaml", ruleset=str(rules))
    monkeypatch.chdir(cwd)
    before = every_path(tmp_path)
    assert main(["--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"error: the ruleset's name {name!r} cannot name a run folder under runs/" in err and "--run-dir" in err, err
    assert every_path(tmp_path) == before  # nothing written, inside runs/ or out of it
    assert not os.path.exists(name) or not os.path.isabs(name)


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
    assert main(selfplay_args(ruleset=rules)) == 0
    made = every_path(tmp_path) - before
    assert made and all(p.startswith("a/b/c/runs") for p in made)
    assert (cwd / "runs" / "selfplay_rules_2p_separate_win_s0" / "final_model.zip").exists()


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


@pytest.mark.parametrize(
    "net_arch, good",
    [
        ([64, 64], True),
        ({"pi": [32], "vf": [64, 64]}, True),
        ([], True),  # no hidden layer: a linear policy, as SB3 allows
        ([0], False),  # before (I02): trained a network whose logits ignore the observation
        ([64, -1], False),
        ([True], False),
        ([70_000], False),
        ({"pi": [0], "vf": [64]}, False),
    ],
)
def test_net_arch_is_hidden_layer_widths(tmp_path, net_arch, good):
    path = _config(tmp_path, {"policy_kwargs": {"net_arch": net_arch}})
    if good:
        assert load_config(path)["algo"]["policy_kwargs"]["net_arch"] == net_arch
    else:
        with pytest.raises(ConfigError, match="algo.policy_kwargs.net_arch': expected hidden-layer widths"):
            load_config(path)


def test_every_trainer_takes_seeds_below_2_to_the_32():
    """Before (I26): jamb-train-value took --seed 99999999999, jamb-train refused it."""
    from agents.training.value import ValueConfig

    with pytest.raises(ValueError, match="seed"):
        ValueConfig(ruleset="classic_down", seed=2**32)
    assert ValueConfig(ruleset="classic_down", seed=2**32 - 1).seed == 2**32 - 1
