"""Eighth hostile round: the library used from Python in odd but plausible ways (agents
and envs of different rulesets, finished games, odd types at the public doors).

Each case failed (a traceback, or a game silently ended by an illegal action) before its
fix; now it is a clear error naming what to do.
"""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.shipped import MODELS_DIR
from jamb_env import JambEnv


def _finished(ruleset: str) -> JambEnv:
    env = JambEnv(ruleset=ruleset)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    return env


# ---------------------------------------------------------------------- solver agents
@pytest.mark.parametrize(
    "name, solved_for, plays",
    [
        ("columnwise", "classic", "klasik"),  # before: an illegal write (the game ends with -100 in 'terminate' mode)
        ("columnwise", "classic", "six_dice"),  # before: a matmul ValueError (252 vs 462 dice multisets)
        ("optimal", "yu48_down", "classic_down"),  # before: an IndexError
        ("optimal", "classic_down", "classic_up"),  # before: an illegal write
    ],
)
def test_a_solver_agent_refuses_an_env_of_another_ruleset(name, solved_for, plays):
    agent = agents.load(name, ruleset=solved_for)
    env = JambEnv(ruleset=plays)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=f"solved for ruleset '{solved_for}', the env plays '{plays}'"):
        agent.act(env, obs, env.action_masks())


@pytest.mark.parametrize("name, ruleset", [("columnwise", "classic"), ("optimal", "yu48_down")])
def test_a_solver_agent_on_a_finished_game_says_the_game_is_over(name, ruleset):
    agent = agents.load(name, ruleset=ruleset)
    env = _finished(ruleset)  # before: IndexError: list index out of range
    with pytest.raises(ValueError, match="the game is over"):
        agent.act(env, env.observe(), env.action_masks())


def test_a_solver_agent_still_plays_its_own_ruleset():
    agent = agents.load("optimal", ruleset="classic_down")
    env = JambEnv(ruleset="classic_down", illegal_action="raise")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(agent.act(env, obs, env.action_masks()))
    assert env.score > 0


@pytest.mark.parametrize(
    "name, ruleset", [("expectimax", "classic"), ("search", "classic_down"), ("optimal", "classic_down")]
)
def test_explain_on_a_finished_game_says_the_game_is_over(name, ruleset):
    agent = agents.load(name, ruleset=ruleset)
    with pytest.raises(ValueError, match="the game is over"):  # before: IndexError (expectimax, search)
        agent.explain(_finished(ruleset))


# ---------------------------------------------------------------------- jamb-play without a standard input
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


# ---------------------------------------------------------------------- jamb-soak, jamb-bench
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


# ---------------------------------------------------------------------- agents.export
def test_export_model_to_a_folder_is_refused_not_written_beside_it(tmp_path):

    from agents.export import export_model

    folder = tmp_path / "shipped"
    folder.mkdir()
    src = MODELS_DIR / "classic.zip"
    with pytest.raises(IsADirectoryError, match="is a folder; give the file name"):
        export_model(src, folder)  # before: wrote tmp_path/shipped.zip, outside the folder named
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shipped"]
