"""Command-line arguments as input: every command refuses a bad argument with exit status 2
and one line naming the option (argparse's or the command's own check), before it plays,
trains or writes anything."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.apps.cli import web as web_cli
from agents.training.config import CONFIGS_DIR
from jamb_env import JambVecEnv
from jamb_env.replay.records import read_records
from tests.helpers import needs_module


def play_main(monkeypatch, capsys, argv, lines):
    from agents.apps.cli import play

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = play.main(argv + ([] if "--width" in argv else ["--width", "120"]))
    return code, capsys.readouterr()


ROOT = Path(__file__).resolve().parents[2]


def run_main(module: str, argv: list[str], capsys) -> tuple[int, str]:
    """``agents.apps.cli.<module>.main(argv)``: (exit status, stderr), argparse errors included."""
    import importlib

    main = importlib.import_module(f"agents.apps.cli.{module}").main
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def fake_train(calls):
    def train(cfg, run_dir=None, progress_bar=True, resume=False, imitation_games=None):
        calls.append(cfg)
        Path(run_dir).mkdir(parents=True)
        (Path(run_dir) / "config.yaml").write_text("x")
        return {"eval_score": 100.0 + len(calls), "wall_time_s": 0.0, "run_dir": str(run_dir)}

    return train


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


@pytest.mark.parametrize("tool", ["evaluate", "play", "plot", "tune", "bench", "soak", "export"])
def test_every_tool_rejects_unknown_options(capsys, tool):
    code, err = run_main(tool, ["--no-such-option"] + (["a", "b"] if tool in ("plot", "export") else []), capsys)
    assert code == 2 and "unrecognized arguments: --no-such-option" in err


def test_evaluate_rejects_an_unknown_agent_before_playing():
    out = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--agents", "random", "nosuch", "--games", "2"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert (
        out.returncode == 2 and "unknown agent 'nosuch'" in out.stderr and "evaluating" not in out.stderr + out.stdout
    )


@pytest.mark.parametrize("seats", [[], ["--players", "human", "greedy"]])
def test_jamb_play_with_stdin_closed_ends_as_end_of_input(seats, tmp_path, monkeypatch, capsys):
    import sys

    from agents.apps.cli.play import main

    monkeypatch.setattr(sys, "stdin", None)  # what Python sets when started with fd 0 closed (jamb-play <&-)
    save = tmp_path / "game.jsonl"
    code = main(["--seed", "1", "--save", str(save), *seats])  # before: RuntimeError: input(): lost sys.stdin
    assert code == 0
    assert "end of input" in capsys.readouterr().out
    assert save.is_file()


@pytest.mark.parametrize(
    "command, args",
    [
        ("soak", ["--games-per-preset", "1", "--num-envs", "1"]),
        ("bench", ["--seconds", "0.1", "--repeats", "1", "--skip-train", "--skip-env"]),
    ],
)
def test_a_missing_rules_file_in_presets_is_a_one_line_usage_error(command, args, tmp_path, capsys):
    import importlib

    main = importlib.import_module(f"agents.apps.cli.{command}").main
    missing = tmp_path / "no such.yaml"
    with pytest.raises(SystemExit) as exit_:  # before: a FileNotFoundError traceback
        main([*args, "--presets", str(missing)])
    assert exit_.value.code == 2
    assert f"--presets {missing}: ruleset file not found" in capsys.readouterr().err


@needs_module("flask", "Flask (the web extra)")
def test_jamb_web_on_a_taken_port_exits_2_naming_the_address(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            rc = web_cli.main(["--port", str(port), "--records", "unused"])
        except SystemExit as exc:  # before: werkzeug's sys.exit(1)
            rc = exc.code
    assert rc == 2
    err = capsys.readouterr().err
    assert f"error: cannot listen on 127.0.0.1:{port}:" in err and "in use" in err
