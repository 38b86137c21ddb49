"""``best`` (agents.load, jamb-evaluate --agents): the strongest shipped agent of a preset,
as listed in agents/models/best.json; expectimax where it lists none."""

from __future__ import annotations

import json

import pytest

import agents.shipped as shipped
from agents import load
from agents.registry import parse_spec
from jamb_env import load_ruleset


def test_every_listed_agent_names_a_real_agent_of_a_real_preset():
    table = json.loads(shipped.BEST_FILE.read_text(encoding="utf-8"))
    assert table  # at least the presets with shipped models
    for preset, entry in table.items():
        assert load_ruleset(preset).name == preset
        kind, _ = parse_spec(entry["agent"])
        assert (
            kind != "best"
            and entry["mean"] > 0
            and entry["games"] > 0
            and entry["command"].startswith("python scripts/evaluate.py")
        )
        assert f"--ruleset {preset} " in entry["command"] and entry["agent"] in entry["command"].split()


def test_best_loads_the_listed_agent_and_expectimax_elsewhere():
    from agents.heuristic import ExpectimaxAgent
    from agents.ppo_agent import PPOAgent

    listed = shipped.best_agent("classic")
    assert isinstance(
        load("best", ruleset="classic"), PPOAgent if parse_spec(listed).kind in ("ppo", "model") else object
    )
    assert shipped.best_agent("master") == shipped.BEST_FALLBACK == "expectimax"
    assert isinstance(load("best", ruleset="master"), ExpectimaxAgent)


@pytest.mark.parametrize(
    "text", ["not json", '{"classic": {"agent": "best"}}', '{"classic": 3}', '{"classic": {"mean": 1}}']
)
def test_a_damaged_table_is_a_clear_error(tmp_path, monkeypatch, text):
    path = tmp_path / "best.json"
    path.write_text(text)
    monkeypatch.setattr(shipped, "BEST_FILE", path)
    with pytest.raises(ValueError, match="best.json"):
        shipped.best_agent("classic")


def test_jamb_evaluate_accepts_best(tmp_path, capsys):
    from agents.apps.cli import evaluate

    code = evaluate.main(
        [
            "--ruleset",
            "classic_down",
            "--agents",
            "best",
            "expectimax",
            "--games",
            "3",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert code in (0, None)
    assert "best" in capsys.readouterr().out
