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

from agents.training.config import CONFIGS_DIR
from jamb_env import JambEnv, JambVecEnv, RulesetError, load_ruleset
from jamb_env.replay.records import RecordError, read_records

ROOT = Path(__file__).resolve().parents[1]


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
    bad.write_text(
        json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1})
        + "\n"
        + json.dumps({"type": "step", "action": True})
        + "\n"
    )
    with pytest.raises(RecordError, match="integer action"):
        read_records(bad)


def play_main(monkeypatch, capsys, argv, lines):
    from agents.apps.cli import play

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = play.main(argv + ([] if "--width" in argv else ["--width", "120"]))
    return code, capsys.readouterr()


def test_play_survives_markup_unicode_digits_and_bad_saves(monkeypatch, capsys, tmp_path):
    code, out = play_main(
        monkeypatch,
        capsys,
        ["--seed", "1"],
        ["keep [/]", "foo[/bold]", "keep ¹", f"save {tmp_path}", "write free ones", "quit"],
    )
    assert code == 0
    assert "dice positions are 1..5" in out.out and "could not save" in out.out and "> write free/ones" in out.out


def test_play_cli_argument_errors(monkeypatch, capsys, tmp_path):
    for argv, message in (
        (["--seed", "-1"], "--seed"),
        (["--delay", "inf"], "--delay"),
        (["--width", "-5"], "--width"),
    ):
        with pytest.raises(SystemExit):
            play_main(monkeypatch, capsys, argv, ["quit"])
        assert message in capsys.readouterr().err
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SystemExit) as exit_info:  # checked before the game, not after it
        play_main(monkeypatch, capsys, ["--log", str(tmp_path / "afile" / "x.txt"), "--watch", "random"], [])
    assert exit_info.value.code == 2 and "afile is a file, not a folder" in capsys.readouterr().err
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
    out = subprocess.run(
        ev + ["--agents", "random", "random", "--games", "3"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "named twice" in out.stderr
    out = subprocess.run(
        ev + ["--agents", "random", "--games", "3", "--jobs", "0"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "--jobs" in out.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = subprocess.run(
        ev + ["--agents", "random", "--games", "3", "--out", str(blocker / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "cannot write the outputs" in out.stderr
    tr = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]
    for text, message in (
        ("algo: {n_steps: 0}", "algo.n_steps"),
        ("algo: {learning_rate: fast}", "algo.learning_rate"),
        ("device: tpu", "'device'"),
        ("eval: {seed: -5}", "eval.seed"),
        ("env: {reward_scale: .nan}", "reward_scale"),
    ):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text + "\ntotal_timesteps: 1000\n")
        out = subprocess.run(
            tr + ["--config", str(cfg), "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 2 and message in out.stderr, (text, out.stderr[-500:])
    assert not (tmp_path / "run" / "config.yaml").exists()  # failed configs leave no run behind
    out = subprocess.run(
        tr + ["--config", str(CONFIGS_DIR / "ppo_classic.yaml"), "--run-dir", str(blocker)],
        capture_output=True,
        text=True,
        timeout=300,
    )
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


# ---------------------------------------------------------------- command-line tools: bad input
def run_main(module: str, argv: list[str], capsys) -> tuple[int, str]:
    """``agents.apps.cli.<module>.main(argv)``: (exit status, stderr), argparse errors included."""
    import importlib

    main = importlib.import_module(f"agents.apps.cli.{module}").main
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--presets", "nope"], "--presets nope: unknown ruleset 'nope'"),
        (["--games-per-preset", "0"], "--games-per-preset must be at least 1, got 0"),
        (["--games-per-preset", "-3"], "--games-per-preset must be at least 1, got -3"),
        (["--num-envs", "0"], "--num-envs must be 1..1,000,000"),
        (["--num-envs", "10000000000"], "--num-envs must be 1..1,000,000"),
        (["--games-per-preset", "ten"], "invalid int value: 'ten'"),
        (["--seed", "-1"], "--seed must be in 0..2**32-1"),
    ],
)
def test_soak_bad_arguments(capsys, argv, message):
    code, err = run_main("soak", argv, capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_soak_ctrl_c(monkeypatch, capsys):
    from agents.apps.cli import soak

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(soak, "soak", interrupted)
    code = soak.main(["--presets", "classic", "--games-per-preset", "1"])
    assert code == 130 and "interrupted during classic" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seconds", "0"], "--seconds must be more than 0"),
        (["--seconds", "-2"], "--seconds must be more than 0"),
        (["--seconds", "nan"], "--seconds must be more than 0"),
        (["--seconds", "inf"], "at most 3600"),
        (["--train-steps", "-5"], "--train-steps must be at least 1, got -5"),
        (["--train-steps", "0", "--skip-train"], "--train-steps must be at least 1"),
        (["--presets", "nope", "--skip-train"], "--presets nope: unknown ruleset"),
        (["--repeats", "0", "--skip-train"], "--repeats must be 1 to 100, got 0"),
    ],
)
def test_bench_bad_arguments(capsys, argv, message):
    code, err = run_main("bench", argv, capsys)
    assert code == 2 and message in err


def test_bench_rates_count_the_steps_taken():
    """A tiny --seconds still measures at least one step (no division by zero)."""
    from agents.apps.bench import single_env_loop, vec_env_loop

    steps, t_env, _ = single_env_loop("classic", 1e-9)
    assert steps >= 1 and t_env > 0
    steps, t_env, _ = vec_env_loop(lambda: JambVecEnv(4, "classic"), 1e-9, warmup=0)
    assert steps >= 4 and t_env > 0


def test_tune_bad_arguments(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    used = tmp_path / "used" / "trial_000"
    used.mkdir(parents=True)
    (used / "config.yaml").write_text("seed: 0\n")
    for argv, message in (
        (["--out", str(blocker / "x")], f"{blocker} is a file, not a folder"),
        (["--out", str(blocker)], f"{blocker} is a file, not a folder"),
        (["--out", str(tmp_path / "used")], "already holds a search (trial_000); choose another --out"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--steps", "-1"], "--steps must be at least 1"),
        (["--seed", "-1"], "--seed must be in 0..2**32-1"),
        (["--ruleset", "nope"], "--ruleset nope: unknown ruleset"),
        (["--config", str(tmp_path)], "is a folder; give a training config YAML"),
        (["--config", str(tmp_path / "none.yaml")], "training config not found"),
    ):
        code, err = run_main("tune", argv + (["--out", str(tmp_path / "o")] if "--out" not in argv else []), capsys)
        assert code == 2 and message in err, (argv, err)
        assert "File exists" not in err and "--run-dir" not in err and "--resume" not in err  # tune's own options
    assert blocker.read_text() == "x" and not (tmp_path / "o").exists()


def fake_train(calls):
    def train(cfg, run_dir=None, progress_bar=True, resume=False, imitation_games=None):
        calls.append(cfg)
        Path(run_dir).mkdir(parents=True)
        (Path(run_dir) / "config.yaml").write_text("x")
        return {"eval_score": 100.0 + len(calls), "wall_time_s": 0.0, "run_dir": str(run_dir)}

    return train


def test_tune_writes_the_users_eval_freq(monkeypatch, capsys, tmp_path):
    """Trials evaluate within --steps, but best_config.yaml keeps the base config's eval.freq."""
    import agents.training.train as training

    calls = []
    monkeypatch.setattr(training, "train", fake_train(calls))
    code, err = run_main("tune", ["--trials", "2", "--steps", "1000", "--out", str(tmp_path / "t")], capsys)
    assert code == 0, err
    base_freq = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())["eval"]["freq"]
    assert base_freq > 1000 and all(c["eval"]["freq"] == 1000 for c in calls)
    best = yaml.safe_load((tmp_path / "t" / "best_config.yaml").read_text())
    assert best["eval"]["freq"] == base_freq
    assert len((tmp_path / "t" / "trials.csv").read_text().splitlines()) == 3


def test_tune_ctrl_c_keeps_finished_trials(monkeypatch, capsys, tmp_path):
    import agents.training.train as training

    calls = []
    train = fake_train(calls)

    def interrupted_second(cfg, **kwargs):
        if calls:
            raise KeyboardInterrupt
        return train(cfg, **kwargs)

    monkeypatch.setattr(training, "train", interrupted_second)
    code, err = run_main("tune", ["--trials", "3", "--steps", "1000", "--out", str(tmp_path / "t")], capsys)
    assert code == 130 and "interrupted; 1 finished trials" in err and "Traceback" not in err
    assert (tmp_path / "t" / "best_config.yaml").is_file() and len(
        (tmp_path / "t" / "trials.csv").read_text().splitlines()
    ) == 2


def test_tune_failed_write_keeps_the_old_outputs(monkeypatch, capsys, tmp_path):
    import agents.training.train as training
    import jamb_env.utils.files as files

    out = tmp_path / "t"  # a folder holding a search is refused: the old outputs are the first trial's
    monkeypatch.setattr(training, "train", fake_train([]))
    real_replace, old = files.os.replace, {}

    def failing_replace(src, dst):  # the writes after the first trial's fail
        if Path(dst).name == "trials.csv" and Path(dst).exists():
            old.update(
                {
                    p.name: p.read_text()
                    for p in out.iterdir()
                    if p.is_file() and ".tmp-" not in p.name and p.name != ".lock"
                }
            )
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing_replace)
    code, err = run_main("tune", ["--trials", "2", "--steps", "1000", "--out", str(out)], capsys)
    assert code == 2 and "No space left on device" in err
    assert old and all((out / name).read_text() == text for name, text in old.items())
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]  # no temporary file left behind


def test_evaluate_out_folder_and_bad_outputs(capsys, tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(folder)], capsys
    )
    assert code == 0, err
    assert sorted(p.name for p in folder.iterdir()) == [
        "classic.csv",
        "classic.png",
        "classic_games.csv",
    ]  # inside, named after the ruleset
    assert not (tmp_path / "results.csv").exists()
    code, err = run_main(
        "evaluate",
        ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "new") + "/"],
        capsys,
    )
    assert code == 0 and (tmp_path / "new" / "classic.csv").is_file()
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "x.csv")], capsys
    )
    assert (
        code == 0
        and (tmp_path / "x.csv").is_file()
        and (tmp_path / "x_games.csv").is_file()
        and not (tmp_path / "x.csv.csv").exists()
    )
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for argv, message in (
        (["--out", str(blocker / "x")], f"{blocker} is a file, not a folder"),
        (["--records", str(blocker)], f"{blocker} is a file, not a folder"),
        (["--out", str(tmp_path / "pre"), "--agents", "random", "random"], "named twice"),
        (["--agents", str(tmp_path / "nothing*.zip")], "no checkpoint matches"),
        (["--agents", "nosuch"], "unknown agent 'nosuch'"),
        (["--agents", "runs/model"], "unknown agent 'runs/model'"),  # a model is a .zip path here
        (["--ruleset", "nope"], "unknown ruleset 'nope'"),
        (["--games", "1"], "--games must be 2.."),
        (["--games", "100000000"], "--games must be 2.."),
        (["--jobs", "100000"], "--jobs must be 1.."),
        (["--games", "many"], "invalid int value"),
    ):
        argv = (["--agents", "random"] if "--agents" not in argv else []) + ["--games", "2"] + argv + ["--no-progress"]
        code, err = run_main("evaluate", argv + ([] if "--out" in argv else ["--out", str(tmp_path / "pre")]), capsys)
        assert code == 2 and message in err and "Errno" not in err, (argv, err)
    assert not (tmp_path / "pre.csv").exists()


def test_evaluate_failed_write_keeps_the_old_files(monkeypatch, capsys, tmp_path):
    import jamb_env.utils.files as files

    for name in ("r.csv", "r_games.csv", "r.png"):
        (tmp_path / name).write_text("old")
    real_replace = files.os.replace

    def failing_replace(src, dst):
        if str(dst).endswith(".png"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing_replace)
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")], capsys
    )
    assert code == 2 and "cannot write the outputs" in err and "No space left" in err
    assert (tmp_path / "r.png").read_text() == "old" and (tmp_path / "r.csv").read_text() != "old"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    (tmp_path / "recs").mkdir()
    (tmp_path / "recs" / "random.jsonl").write_text("old")
    code, err = run_main(
        "evaluate",
        [
            "--agents",
            "random",
            "--games",
            "2",
            "--no-progress",
            "--out",
            str(tmp_path / "r"),
            "--records",
            str(tmp_path / "recs"),
        ],
        capsys,
    )
    assert code == 2 and (tmp_path / "recs" / "random.jsonl").read_text() == "old"


def test_evaluate_ctrl_c(monkeypatch, capsys, tmp_path):
    from agents.apps.cli import evaluate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "run_games", interrupted)
    code, err = run_main("evaluate", ["--agents", "random", "--games", "2", "--out", str(tmp_path / "r")], capsys)
    assert code == 130 and "interrupted; nothing written" in err and not list(tmp_path.iterdir())


def write_run(folder: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(folder))
    for step, value in ((1000, 100.0), (2000, 200.0)):
        writer.add_scalar("eval/score", value, step)
    writer.close()


def test_plot_bad_input_and_atomic_write(monkeypatch, capsys, tmp_path):
    import jamb_env.utils.files as files

    run = tmp_path / "classic__ppo__0__x"
    write_run(run)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for argv, message in (
        ([str(run), "--out", str(blocker / "c.png")], f"{blocker} is a file, not a folder"),
        ([str(run), "--out", str(tmp_path)], "give a .png, .pdf or .svg file name"),
        ([str(run), "--out", str(tmp_path / "c.txt")], "give a .png, .pdf or .svg"),
        ([str(tmp_path / "none*"), "--out", str(tmp_path / "c.png")], "matched nothing"),
        ([str(blocker), "--out", str(tmp_path / "c.png")], "it is a file"),
        ([str(run), "--tag", "nope", "--out", str(tmp_path / "c.png")], "has no scalar 'nope'"),
    ):
        code, err = run_main("plot", argv, capsys)
        assert code == 2 and message in err, (argv, err)
    out = tmp_path / "c.svg"
    out.write_text("old")
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    code, err = run_main("plot", [str(run), "--out", str(out)], capsys)
    assert code == 2 and "No space left" in err and out.read_text() == "old"
    monkeypatch.undo()
    code, err = run_main("plot", [str(run), "--out", str(out)], capsys)
    assert code == 0 and out.read_text().startswith("<?xml")


def test_export_bad_paths(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for argv, message in (
        ([str(tmp_path / "none.zip"), str(tmp_path / "o.zip")], "no model file"),
        ([str(tmp_path), str(tmp_path / "o.zip")], "is a folder, not a model file"),
        ([str(blocker), str(tmp_path)], "is a folder; give the file name of the copy"),
        ([str(blocker), str(blocker / "o.zip")], f"{blocker} is a file, not a folder"),
        ([str(blocker), str(tmp_path / "o.zip")], "not a MaskablePPO model file"),
    ):
        code, err = run_main("export", argv, capsys)
        assert code == 2 and message in err, (argv, err)
    assert not (tmp_path / "o.zip").exists() and not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


@pytest.mark.parametrize("tool", ["evaluate", "play", "plot", "tune", "bench", "soak", "export"])
def test_every_tool_rejects_unknown_options(capsys, tool):
    code, err = run_main(tool, ["--no-such-option"] + (["a", "b"] if tool in ("plot", "export") else []), capsys)
    assert code == 2 and "unrecognized arguments: --no-such-option" in err


# ---------------------------------------------------------------- records
def finished_record_lines(seed: int = 3) -> list[str]:
    from jamb_env.replay.records import GameRecord

    env = JambEnv("classic", illegal_action="raise")
    env.reset(seed=seed)
    rec = GameRecord("classic", seed)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, done, _, _ = rec.play(env, int(rng.choice(np.flatnonzero(env.action_masks()))))
    return list(rec.lines())


def test_record_step_after_the_end(tmp_path, capsys):
    from jamb_env.replay.records import replay

    lines = finished_record_lines()
    bad = tmp_path / "after_end.jsonl"
    bad.write_text("\n".join(lines + [lines[-2]]) + "\n")  # a step after the end line
    with pytest.raises(RecordError, match=rf"after_end.jsonl:{len(lines) + 1}: a step line after the end of the game"):
        read_records(bad)
    code, err = run_main("play", ["--replay", str(bad)], capsys)
    assert code == 2 and f"after_end.jsonl:{len(lines) + 1}:" in err and "Traceback" not in err
    step = json.loads(lines[-2])
    step.pop("dice")  # no dice to compare: the step itself must be refused
    bad.write_text("\n".join(lines[:-1] + [json.dumps(step)]) + "\n")  # a step after the last cell, no end line
    with pytest.raises(
        RecordError, match=rf"after_end.jsonl:{len(lines)}: step {len(lines) - 2}: a step after the game's end"
    ):
        list(replay(read_records(bad)[0]))
    code, err = run_main("play", ["--load", str(bad)], capsys)
    assert code == 2 and "a step after the game's end" in err
    bad.write_text("\n".join(lines[:-1] + [json.dumps({"type": "end", "score": 5, "steps": 2})]) + "\n")
    with pytest.raises(RecordError, match="the end line says 2 steps"):
        read_records(bad)
    bad.write_text("\n".join(lines[:-1] + [json.dumps({"type": "end", "score": "lots"})]) + "\n")
    with pytest.raises(RecordError, match="integer score"):
        read_records(bad)
    with pytest.raises(RecordError, match="is a folder"):
        read_records(tmp_path)


def test_record_write_is_atomic(monkeypatch, tmp_path):
    import jamb_env.utils.files as files
    from jamb_env.replay.records import GameRecord

    path = tmp_path / "g.jsonl"
    path.write_text("old game\n")
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    with pytest.raises(OSError, match="No space left"):
        GameRecord("classic", 1).write(path)
    assert path.read_text() == "old game\n" and [p.name for p in tmp_path.iterdir()] == ["g.jsonl"]
    with pytest.raises(IsADirectoryError, match="is a folder; give a file name"):
        GameRecord("classic", 1).write(tmp_path)
    with pytest.raises(NotADirectoryError, match="g.jsonl is a file, not a folder"):
        GameRecord("classic", 1).write(path / "x.jsonl")


def test_plot_ctrl_c(monkeypatch, capsys, tmp_path):
    from agents.apps.cli import plot

    def interrupted(run):
        raise KeyboardInterrupt

    monkeypatch.setattr(plot, "read_scalars", interrupted)
    code, err = run_main("plot", [str(tmp_path), "--out", str(tmp_path / "c.png")], capsys)
    assert code == 130 and "interrupted; nothing written" in err and not (tmp_path / "c.png").exists()


def test_evaluate_rejects_an_unknown_agent_before_playing():
    out = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--agents", "random", "nosuch", "--games", "2"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=120,
    )
    assert (
        out.returncode == 2 and "unknown agent 'nosuch'" in out.stderr and "evaluating" not in out.stderr + out.stdout
    )
