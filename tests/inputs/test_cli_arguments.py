"""Command-line arguments as input: every command refuses a bad argument with exit status 2
and one line naming the option (argparse's or the command's own check), before it plays,
trains or writes anything."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.apps.cli import web as web_cli
from agents.training.config import CONFIGS_DIR
from jamb_env import JambVecEnv
from tests.helpers import fake_train, needs_module, run_main, slow_after


def play_main(monkeypatch, capsys, argv, lines):
    from agents.apps.cli import play

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = play.main(argv + ([] if "--width" in argv else ["--width", "120"]))
    return code, capsys.readouterr()


ROOT = Path(__file__).resolve().parents[2]
TOOLS = ["evaluate", "play", "plot", "tune", "bench", "soak", "export"]


def test_play_survives_markup_unicode_digits_and_bad_saves(monkeypatch, capsys, tmp_path):
    code, out = play_main(
        monkeypatch,
        capsys,
        ["--seed", "1"],
        ["keep [/]", "foo[/bold]", "keep ¹", f"save {tmp_path}", "write free ones", "quit"],
    )
    assert code == 0
    assert "dice positions are 1..5" in out.out and "could not save" in out.out and "> write free/ones" in out.out


# (command, arguments, what its one error line says): "{file}" is a regular file, "{tmp}" the test's folder and
# "{used}" a folder holding a search; each command gets the rest of a valid command line from COMPLETE.
BAD_ARGUMENTS = [
    ("soak", ["--presets", "nope"], "--presets nope: unknown ruleset 'nope'"),
    ("soak", ["--games-per-preset", "0"], "--games-per-preset must be at least 1, got 0"),
    ("soak", ["--games-per-preset", "-3"], "--games-per-preset must be at least 1, got -3"),
    ("soak", ["--num-envs", "0"], "--num-envs must be 1..1,000,000"),
    ("soak", ["--num-envs", "10000000000"], "--num-envs must be 1..1,000,000"),
    ("soak", ["--games-per-preset", "ten"], "invalid int value: 'ten'"),
    ("soak", ["--seed", "-1"], "--seed must be in 0..2**32-1"),
    ("soak", ["--seed", "4294967296"], "--seed must be in 0..2**32-1"),
    # every command's seeds are numpy's 32-bit seeds (SEED_LIMIT); self-play's stopped at 2**31-1
    ("train_selfplay", ["--run-dir", "{tmp}/r", "--seed", "4294967296"], "--seed must be in 0..2**32-1"),
    ("train_selfplay", ["--run-dir", "{tmp}/r", "--seed", "-1"], "--seed must be in 0..2**32-1"),
    ("bench", ["--seconds", "0"], "--seconds must be more than 0"),
    ("bench", ["--seconds", "-2"], "--seconds must be more than 0"),
    ("bench", ["--seconds", "nan"], "--seconds must be more than 0"),
    ("bench", ["--seconds", "inf"], "at most 3600"),
    ("bench", ["--train-steps", "-5"], "--train-steps must be at least 1, got -5"),
    ("bench", ["--train-steps", "0", "--skip-train"], "--train-steps must be at least 1"),
    ("bench", ["--presets", "nope", "--skip-train"], "--presets nope: unknown ruleset"),
    ("bench", ["--repeats", "0", "--skip-train"], "--repeats must be 1 to 100, got 0"),
    ("tune", ["--out", "{file}/x"], "{file} is a file, not a folder"),
    ("tune", ["--out", "{file}"], "{file} is a file, not a folder"),
    ("tune", ["--out", "{used}"], "already holds a search (trial_000); choose another --out"),
    ("tune", ["--trials", "0"], "--trials must be at least 1"),
    ("tune", ["--steps", "-1"], "--steps must be at least 1"),
    ("tune", ["--seed", "-1"], "--seed must be in 0..2**32-1"),
    ("tune", ["--ruleset", "nope"], "--ruleset nope: unknown ruleset"),
    ("tune", ["--config", "{tmp}"], "is a folder; give a training config YAML"),
    ("tune", ["--config", "{tmp}/none.yaml"], "training config not found"),
    ("play", ["--seed", "-1"], "--seed"),
    ("play", ["--delay", "inf"], "--delay"),
    ("play", ["--width", "-5"], "--width"),
    ("play", ["--watch", "random", "--record", "{file}"], "--record {file}: the file exists"),  # was replaced
    ("play", ["--watch", "random", "--video", "{tmp}/g.gif", "--fps", "60"], "a .gif shows at most 50 frames"),
    ("play", ["--log", "{file}/x.txt", "--watch", "random"], "{file} is a file, not a folder"),  # before the game
    ("evaluate", ["--out", "{file}/x"], "{file} is a file, not a folder"),
    ("evaluate", ["--out", "{tmp}/" + "x" * 300], "the file name is 304 bytes"),  # was found after every game
    ("evaluate", ["--records", "{file}"], "{file} is a file, not a folder"),
    ("evaluate", ["--agents", "random", "random"], "named twice"),
    ("evaluate", ["--agents", "{tmp}/nothing*.zip"], "no checkpoint matches"),
    ("evaluate", ["--agents", "nosuch"], "unknown agent 'nosuch'"),
    ("evaluate", ["--agents", "runs/model"], "unknown agent 'runs/model'"),  # a model is a .zip path here
    ("evaluate", ["--ruleset", "nope"], "unknown ruleset 'nope'"),
    ("evaluate", ["--games", "1"], "--games must be 2.."),
    ("evaluate", ["--games", "100000000"], "--games must be 2.."),
    ("evaluate", ["--jobs", "0"], "--jobs must be 1.."),
    ("evaluate", ["--jobs", "100000"], "--jobs must be 1.."),
    ("evaluate", ["--games", "many"], "invalid int value"),
    ("evaluate", ["--agents", "a" * 300 + ".zip"], "no model file"),  # was a traceback: [Errno 36] from is_file
    ("evaluate", ["--agents", "a" * 300], "unknown agent 'aaa"),  # [Errno 36] from is_dir (run folders)
    ("play", ["--watch", "a" * 300], "unknown agent 'aaa"),
] + [(tool, ["--no-such-option"], "unrecognized arguments: --no-such-option") for tool in TOOLS]
# an empty path was the working folder (I05: a run written among the user's files)
EMPTY_PATHS = [
    ("train", "--run-dir"),
    ("train_selfplay", "--run-dir"),
    ("train_value", "--out"),
    ("web", "--records"),
    ("evaluate", "--out"),
    ("evaluate", "--records"),
    ("tune", "--out"),
    ("plot", "--out"),
    ("play", "--save"),
    ("play", "--log"),
    ("play", "--record"),
    ("play", "--html"),
    ("play", "--video"),
    ("play", "--load"),
    ("play", "--replay"),
    ("train", "--resume"),  # before: a new run in runs/ instead
    ("train", "--config"),  # before: the package's default config instead
    ("train", "--init-from"),
    ("train_selfplay", "--init-from"),
    ("train_value", "--config"),
    ("train_value", "--error-vs-optimal"),
    ("tune", "--config"),
]
BAD_ARGUMENTS += [(tool, [option, " "[:blank]], f"argument {option}: an empty path") for tool, option in EMPTY_PATHS
                  for blank in (0, 1)]  # fmt: skip


def complete(tool: str, argv: list[str], tmp: Path) -> list[str]:
    """``argv`` with the rest of a command line ``tool`` accepts (its output inside ``tmp``)."""
    if tool == "tune":
        return argv + ([] if "--out" in argv else ["--out", str(tmp / "o")])
    if tool == "evaluate":
        argv = (["--agents", "random"] if "--agents" not in argv else []) + ["--games", "2"] + argv + ["--no-progress"]
        return argv + ([] if "--out" in argv else ["--out", str(tmp / "pre")])
    if tool == "play":
        return argv + ([] if "--width" in argv else ["--width", "120"])
    if tool in ("plot", "export"):
        return argv + ["a", "b"]
    return argv


@pytest.mark.parametrize("tool, argv, message", BAD_ARGUMENTS, ids=[f"{t} {' '.join(a)}" for t, a, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_one_usage_line_before_anything_runs(tool, argv, message, capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    used = tmp_path / "used" / "trial_000"
    used.mkdir(parents=True)
    (used / "config.yaml").write_text("seed: 0\n")
    names = {"file": blocker, "tmp": tmp_path, "used": used.parent}
    argv = complete(tool, [a.format(**names) for a in argv], tmp_path)
    code, err = run_main(tool, argv, capsys)
    assert code == 2 and message.format(**names) in err, (argv, err)
    assert "Traceback" not in err and "Errno" not in err and "File exists" not in err
    if tool == "tune":
        assert "--run-dir" not in err and "--resume" not in err  # tune names its own options
    assert blocker.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["file", "used"]


def test_bench_rates_count_the_steps_taken():
    """A tiny --seconds still measures at least one step (no division by zero)."""
    from agents.apps.bench import single_env_loop, vec_env_loop

    steps, t_env, _ = single_env_loop("classic", 1e-9)
    assert steps >= 1 and t_env > 0
    steps, t_env, _ = vec_env_loop(lambda: JambVecEnv(4, "classic"), 1e-9, warmup=0)
    assert steps >= 4 and t_env > 0


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


def test_the_scripts_refuse_an_unknown_agent_before_playing():
    """scripts/evaluate.py, as run from a checkout: the same one line, before any game."""
    out = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--agents", "random", "nosuch", "--games", "2"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert (
        out.returncode == 2 and "unknown agent 'nosuch'" in out.stderr and "evaluating" not in out.stderr + out.stdout
    )


@pytest.mark.parametrize("seats", slow_after([[], ["--players", "human", "greedy"]]))
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
