"""Regressions from an adversarial review: bad input gets a clear error, never a crash or a
silent acceptance, and a failed call leaves the state as it was."""

import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from jamb_env import JambEnv, JambVecEnv, RulesetError, load_ruleset
from jamb_env.records import RecordError, read_records

ROOT = Path(__file__).resolve().parents[1]


def test_vec_env_rejects_non_integer_and_misshapen_actions():
    vec = JambVecEnv(3, "classic", seed=0)
    vec.reset()
    before = vec.values.copy(), vec.pos.copy()
    for bad in (np.array([83.7, 1.0, 2.0]), np.array([True, True, True]), np.array(["83", "1", "2"])):
        with pytest.raises(TypeError, match="integers"):
            vec.step(bad)
    with pytest.raises(ValueError, match="expected 3 actions"):
        vec.step(np.array([1, 2]))
    assert (vec.values == before[0]).all() and (vec.pos == before[1]).all()
    with pytest.raises(ValueError, match="seed"):
        JambVecEnv(2, seed=True)


def test_vec_env_raise_mode_says_why():
    from jamb_env import IllegalActionError

    vec = JambVecEnv(2, "classic", seed=0, illegal_action="raise")
    vec.reset()
    actions = np.array([31, int(np.flatnonzero(vec.action_masks()[1])[0])])
    with pytest.raises(IllegalActionError, match="keeping every die is not a re-roll"):
        vec.step(actions)


def test_set_state_validates_before_applying():
    env = JambEnv()
    env.reset(seed=0)
    good = env.get_state()
    obs = env.observe()
    for bad, match in (
        (replace(good, game=replace(good.game, announced=999)), "announce cell"),
        (replace(good, game=replace(good.game, answer_due=50)), "answer_due"),
        (replace(good, game=replace(good.game, turn=5)), "cells are written"),
        (replace(good, game=replace(good.game, roll=9)), "roll"),
        (replace(good, score=12345), "sheet scores"),
        (replace(good, stream=good.stream[:10]), "stream"),
        (replace(good, position=-5), "position"),
    ):
        with pytest.raises(ValueError, match=match):
            env.set_state(bad)
        assert (env.observe() == obs).all() and env.score == 0  # unchanged
    other = JambEnv("klasik")
    other.reset(seed=0)
    with pytest.raises(ValueError, match="belongs to ruleset 'klasik'"):
        env.set_state(other.get_state())


def test_ruleset_type_errors(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "name": "x", "extends": "classic_down", "dice": 5.0}))
    with pytest.raises(RulesetError, match="'dice'"):
        load_ruleset(path)
    path.write_text(yaml.safe_dump({"schema_version": True, "name": "x", "extends": "classic_down"}))
    with pytest.raises(RulesetError, match="'schema_version'"):
        load_ruleset(path)
    path.write_text(yaml.safe_dump({"schema_version": 1, "name": "x", "extends": "classic_down", "options": {"jokers": 0}}))
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


def test_column_score_and_cell_name_check_ranges(classic):
    for cells in ({"ones": -5}, {"ones": 7}, {"full": 1}, {"max": 2**40}):
        with pytest.raises(ValueError, match="cannot be written"):
            classic.column_score(cells)
    with pytest.raises(ValueError, match="mapping"):
        classic.column_score([("ones", 1)])
    for cell in (-1, 52, 1.5, True):
        with pytest.raises(ValueError, match="cell index"):
            classic.cell_name(cell)


def test_core_rejects_float_dice_and_bool_actions(classic):
    from jamb_env.rules import apply_action, decode, new_game, start_turn

    with pytest.raises(ValueError, match="integer faces"):
        start_turn(classic, new_game(classic), [1.9, 2, 3, 4, 5])
    st = start_turn(classic, new_game(classic), [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="integer"):
        apply_action(classic, st, True)
    with pytest.raises(ValueError, match="integer"):
        decode(classic, 5.5)
    env = JambEnv()
    from jamb_env import Action

    with pytest.raises(ValueError, match="bools"):
        env.encode_action(Action("reroll", keep="10100"))
    with pytest.raises(ValueError, match="reward_scale"):
        JambEnv(reward_scale=True)
    assert JambEnv(reward_scale=np.float32(0.5)).reward_scale == 0.5


def test_records_reject_bad_types(tmp_path):
    bad = tmp_path / "r.jsonl"
    bad.write_text(json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": True}) + "\n")
    with pytest.raises(RecordError, match="non-negative integer seed"):
        read_records(bad)
    bad.write_text(json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1}) + "\n" + json.dumps({"type": "step", "action": True}) + "\n")
    with pytest.raises(RecordError, match="integer action"):
        read_records(bad)


def play_main(monkeypatch, capsys, argv, lines):
    from agents.cli import play

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = play.main(argv + ([] if "--width" in argv else ["--width", "120"]))
    return code, capsys.readouterr()


def test_play_survives_markup_unicode_digits_and_bad_saves(monkeypatch, capsys, tmp_path):
    code, out = play_main(monkeypatch, capsys, ["--seed", "1"], ["keep [/]", "foo[/bold]", "keep ¹", f"save {tmp_path}", "write free ones", "quit"])
    assert code == 0
    assert "dice positions are 1..5" in out.out and "could not save" in out.out and "> write free/ones" in out.out


def test_play_cli_argument_errors(monkeypatch, capsys, tmp_path):
    for argv, message in ((["--seed", "-1"], "--seed"), (["--delay", "inf"], "--delay"), (["--width", "-5"], "--width")):
        with pytest.raises(SystemExit):
            play_main(monkeypatch, capsys, argv, ["quit"])
        assert message in capsys.readouterr().err
    code, out = play_main(monkeypatch, capsys, ["--log", str(tmp_path / "no" / "dir" / "x.txt"), "--watch", "random"], [])
    assert code == 2 and "error:" in out.err
    multi = tmp_path / "multi.jsonl"
    for seed in (1, 2):
        multi.open("a").write(json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": seed}) + "\n")
    code, out = play_main(monkeypatch, capsys, ["--load", str(multi)], ["quit"])
    assert code == 2 and "holds 2 games" in out.err
    assert len(read_records(multi)) == 2  # nothing overwritten


def test_coach_model_must_match_the_ruleset(tmp_path):
    from sb3_contrib import MaskablePPO

    import agents

    MaskablePPO("MlpPolicy", JambEnv("classic"), n_steps=64, batch_size=64).save(tmp_path / "m.zip")
    with pytest.raises(ValueError, match="another ruleset"):
        agents.load(str(tmp_path / "m.zip"), ruleset="classic_down")
    (tmp_path / "junk.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    with pytest.raises(ValueError, match="not a MaskablePPO model"):
        agents.load(str(tmp_path / "junk.zip"))


def test_evaluate_and_train_cli_errors(tmp_path):
    ev = [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--no-progress"]
    out = subprocess.run(ev + ["--agents", "random", "random", "--games", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "named twice" in out.stderr
    out = subprocess.run(ev + ["--agents", "random", "--games", "3", "--jobs", "0"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--jobs" in out.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = subprocess.run(ev + ["--agents", "random", "--games", "3", "--out", str(blocker / "x")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "cannot write the outputs" in out.stderr
    tr = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]
    for text, message in (("algo: {n_steps: 0}", "algo.n_steps"), ("algo: {learning_rate: fast}", "algo.learning_rate"), ("device: tpu", "'device'"),
                          ("eval: {seed: -5}", "eval.seed"), ("env: {reward_scale: .nan}", "reward_scale")):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text + "\ntotal_timesteps: 1000\n")
        out = subprocess.run(tr + ["--config", str(cfg), "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=300)
        assert out.returncode == 2 and message in out.stderr, (text, out.stderr[-500:])
    assert not (tmp_path / "run" / "config.yaml").exists()  # failed configs leave no run behind
    out = subprocess.run(tr + ["--config", str(ROOT / "configs" / "ppo_classic.yaml"), "--run-dir", str(blocker)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "is a file" in out.stderr


def test_duplicate_yaml_keys_are_errors(tmp_path):
    from agents.training.config import ConfigError, load_config

    rules = tmp_path / "dup.yaml"
    rules.write_text("schema_version: 1\nname: dup\nextends: classic_down\ndice: 5\ndice: 6\n")
    with pytest.raises(RulesetError, match="given twice"):
        load_ruleset(rules)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("seed: 1\nseed: 2\n")
    with pytest.raises(ConfigError, match="given twice"):
        load_config(cfg)
