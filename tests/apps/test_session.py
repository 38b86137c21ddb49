"""The game session both apps sit on (agents/apps/session.py): commands become the engine's
legal actions or a CommandError that changes nothing, a saved game goes on from its
replay with every step as the engine records it, and nothing in it draws (no rich)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agents.apps.session import CommandError, MatchGame, SoloGame
from jamb_env import rules as core
from jamb_env.replay.records import RecordError, read_any


def test_commands_are_the_engines_actions_and_refusals_change_nothing():
    game = SoloGame("classic", 7)
    rules = game.env.ruleset
    before = game.env.game.dice.tolist()
    for line, words in [
        ("write down jamb", "not allowed"),
        ("keep 1 2 3 4 5", "keeping every die"),
        ("keep 9", "positions"),
        ("keep " + "9" * 5000, "positions"),  # past int()'s 4,300 digits: it ended the game
        ("joker " + "6" * 5000 + " 1", "no jokers"),
        ("joker 6 1", "no jokers"),
        ("fly", "unknown command"),
        ("x" * 200_000, r"unknown command 'x{40}\.\.\.'"),  # a pasted page is not echoed back whole
    ]:
        with pytest.raises(CommandError, match=words) as refused:
            game.parse(line)
        assert len(str(refused.value)) < 200
    assert game.env.game.dice.tolist() == before and not game.record.steps
    action = game.parse("keep 4 5")
    assert core.decode(rules, action).kind == "reroll" and game.command_for(action) == "keep 4 5"
    game.apply(action)
    assert game.record.steps[-1]["text"].startswith("reroll") and game.parse("sheet") == "sheet"


def test_a_loaded_game_is_the_engines_not_the_files(tmp_path):
    """A forged step text, reward and score in a saved game are replaced by the engine's
    on load; a forged end score is a RecordError."""
    game = SoloGame("classic", 3)
    for line in ["keep", "keep", "write free max"]:
        game.apply(game.parse(line))
    path = tmp_path / "g.jsonl"
    game.record.write(path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[3].update(text="write free/jamb", reward=999.0, score=999)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    again = SoloGame("classic", 3)
    again.load(read_any(path)[0])
    assert again.record.steps == game.record.steps and again.env.score == game.env.score
    lines.append({"type": "end", "score": 5, "steps": 3})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(RecordError):
        SoloGame("classic", 3).load(read_any(path)[0])


def test_a_match_session_moves_its_agents_and_reloads():
    from agents import load

    match = MatchGame("classic", 4, ["human", "greedy"], policies={1: load("greedy", ruleset="classic")})
    while match.to_move == 1 or not match.record.steps:
        if match.to_move == 1:
            match.agent_move()
        else:
            match.apply(match.parse("keep"))
    again = MatchGame("classic", 4, ["human", "greedy"], policies={1: load("greedy", ruleset="classic")})
    again.load(match.record)
    assert again.record.steps == match.record.steps and again.scores == match.scores
    assert again.view().observe().shape == (again._solo,)


def test_the_session_draws_nothing():
    code = "import sys, agents.apps.session; print([m for m in sys.modules if m.split('.')[0] == 'rich'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stderr
