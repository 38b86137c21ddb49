"""What the help texts and docs tell a user who installed the package: every console
command's ``--version`` and ``--help`` names the installed commands and the package's own files (not
``python scripts/<tool>.py`` or the repository's paths), every command that loads a model
offers ``--trust-model``, ``help(jamb_env)`` shows the doors' current signatures, and
docs/usage.md says what is built."""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
#: The commands that load model files (agents/model_files.py).
LOADS_MODELS = (
    "jamb-evaluate",
    "jamb-play",
    "jamb-export",
    "jamb-train",
    "jamb-train-selfplay",
    "jamb-tune",
    "jamb-bench",
)


def help_text(command: str, capsys, option: str = "--help") -> str:
    module = importlib.import_module(SCRIPTS[command].split(":")[0])
    with pytest.raises(SystemExit) as done:
        module.main([option])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_every_command_says_its_version(command, capsys):
    """``--version``: the package's version, the one pyproject.toml reads (``jamb_env.__version__``)."""
    import jamb_env

    assert help_text(command, capsys, "--version").strip().endswith(f"(jamb-env {jamb_env.__version__})")
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dynamic"] == ["version"]


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_help_names_the_installed_commands_and_the_packages_files(command, capsys):
    text = help_text(command, capsys)
    assert "python scripts/" not in text and "scripts/" not in re.sub(r"in a checkout[^.]*", "", text), text
    assert "repository's agents/" not in text, text  # the default configs are package data, not the repository's
    for path in re.findall(r"(?<![\w/.])(configs/[\w./*<>-]+)", text):  # a repository path is said to be one
        assert "repository" in text, f"{command}: {path} without saying it is the repository's"


@pytest.mark.parametrize("command", LOADS_MODELS)
def test_every_command_that_loads_a_model_offers_trust_model(command, capsys):
    assert "--trust-model" in help_text(command, capsys)


def _documented_parameters(doc: str, name: str) -> list[str]:
    call = re.search(rf"^\s*{name}\((.*?)\)\s*(\(|$)", doc, flags=re.M | re.S)
    assert call, f"help(jamb_env) shows no {name}(...)"
    return [p.split("=")[0].strip() for p in call.group(1).replace("\n", " ").split(",") if p.strip()]


@pytest.mark.parametrize("name", ["JambEnv", "JambVecEnv"])
def test_help_of_the_package_shows_the_doors_current_signatures(name):
    import jamb_env

    shown = _documented_parameters(jamb_env.__doc__, name)
    params = inspect.signature(getattr(jamb_env, name)).parameters.values()
    assert shown == [p.name for p in params if p.kind is not p.KEYWORD_ONLY]


def test_usage_says_the_opponent_column_is_built_and_it_plays():
    from agents.evaluation.matches import round_robin

    usage = (ROOT / "docs" / "usage.md").read_text()
    assert not re.search(r"[Nn]ot built yet[^.]*opponent column", usage)
    assert "`copy`, preset\n`six_dice_copy`" in usage or "`copy`, preset `six_dice_copy`" in usage
    for scoring in ("separate", "shared"):  # the column the page describes, in both modes it names
        rr = round_robin("six_dice_copy", ["random", "greedy"], 1, scoring=scoring)
        assert len(rr.games) == 2 and all(g["steps"] > 0 for g in rr.games)
