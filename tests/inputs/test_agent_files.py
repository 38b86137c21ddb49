"""Agent files as input: value networks (``search:<file.npz>``), agents/models/best.json,
shipped-model names and models of another ruleset. A forged or odd file is one clear error,
never a file loaded from a path the data names. (SB3 model files' own table:
tests/inputs/test_model_files.py.)"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents import registry
from agents.apps.cli import evaluate as evaluate_cli
from agents.search import VALUE_DIR, VALUE_FORMAT, ValueNet
from jamb_env import JambEnv
from tests.helpers import booby_trapped_model, finishes, needs_fifo, needs_module


def _unreadable_zip(path):
    import struct

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", '{"num_timesteps": 5}')
        zf.writestr("policy.pth", "weights")
    raw = bytearray(path.read_bytes())
    for at in (i for i in range(len(raw) - 4) if raw[i : i + 4] in (b"PK\x03\x04", b"PK\x01\x02")):
        offset = 8 if raw[at : at + 4] == b"PK\x03\x04" else 10  # the compression method of each header
        raw[at + offset : at + offset + 2] = struct.pack("<H", 99)  # 99: AES, which zipfile cannot read
    path.write_bytes(bytes(raw))
    return path


def _forged_net(path, meta: dict, **arrays):
    meta = {"format": VALUE_FORMAT, "mean": 0.0, "std": 1.0, "ruleset": "classic_down", "layers": 1} | meta
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path


def test_coach_model_must_match_the_ruleset(tmp_path):
    from sb3_contrib import MaskablePPO

    import agents

    MaskablePPO("MlpPolicy", JambEnv("classic"), n_steps=64, batch_size=64).save(tmp_path / "m.zip")
    with pytest.raises(ValueError, match="another ruleset"):
        agents.load(str(tmp_path / "m.zip"), ruleset="classic_down")
    (tmp_path / "junk.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    with pytest.raises(ValueError, match="not a MaskablePPO model"):
        agents.load(str(tmp_path / "junk.zip"))


def test_a_model_of_other_rules_with_the_same_shapes_is_told(tmp_path):
    """classic and slovenian have the same observation and action shapes. Before: a model
    of one played the other without a word; a trained model now names its rules."""
    import warnings

    from sb3_contrib import MaskablePPO

    import agents
    from agents.model_files import RulesetMismatchWarning, read_model_data, stamp_ruleset
    from jamb_env import load_ruleset

    model = MaskablePPO("MlpPolicy", JambEnv("classic"), n_steps=64, batch_size=64, policy_kwargs={"net_arch": [8]})
    stamp_ruleset(model, load_ruleset("classic"))
    model.save(tmp_path / "m.zip")
    assert read_model_data(tmp_path / "m.zip")["jamb_ruleset"]["name"] == "classic"
    with pytest.warns(RulesetMismatchWarning, match="trained on ruleset 'classic' and plays 'slovenian'"):
        agents.load(str(tmp_path / "m.zip"), ruleset="slovenian")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RulesetMismatchWarning)
        agents.load(str(tmp_path / "m.zip"), ruleset="classic")  # its own rules: no word
        MaskablePPO("MlpPolicy", JambEnv("classic"), n_steps=64, batch_size=64).save(tmp_path / "old.zip")
        agents.load(str(tmp_path / "old.zip"), ruleset="slovenian")  # no stamp (older files): not judged


def test_a_ruleset_name_cannot_point_the_shipped_model_outside_models(tmp_path):
    marker = tmp_path / "payload_ran"
    booby_trapped_model(tmp_path / "evil.zip", marker)
    name = os.path.relpath(tmp_path / "evil", registry.MODELS_DIR)  # ../../tmp/.../evil
    rules = tmp_path / "rules.yaml"
    rules.write_text(f"schema_version: 1\nname: {json.dumps(name)}\nextends: classic\ncolumns: [down]\n")
    for spec in ("ppo", "hybrid"):
        with pytest.raises(ValueError, match="not a plain file name|allowed: at most 64"):
            agents.load(spec, ruleset=str(rules))
    assert not marker.exists()
    assert (
        registry.shipped_name("classic_down") and not registry.shipped_name("../x") and not registry.shipped_name(".x")
    )


def test_a_model_zip_in_an_unknown_compression_method_is_no_traceback(tmp_path, capsys):
    from agents.training.curves import init_steps
    from agents.training.runs import checkpoint_problem, model_steps

    model = _unreadable_zip(tmp_path / "model.zip")
    # before: zipfile's NotImplementedError escaped each (jamb-train --resume of such a checkpoint, jamb-plot of
    # a run whose config's init_from is such a model: a traceback)
    assert checkpoint_problem(model).startswith("unreadable: NotImplementedError") and model_steps(model) is None
    assert init_steps(tmp_path, str(model)) == 0 and "whose step count is unknown" in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec",
    [
        "/tmp/evil.zip",
        "../evil.zip",
        "hybrid:/tmp/evil.zip",
        "search:/tmp/evil.npz",
        "rllib:/tmp/run",
        "agents/models/classic.zip",
    ],
)
def test_a_best_file_naming_a_path_is_refused_not_loaded(tmp_path, monkeypatch, spec):
    from agents import load, shipped

    best = tmp_path / "best.json"
    best.write_text(json.dumps({"classic": {"agent": spec}}))
    monkeypatch.setattr(shipped, "BEST_FILE", best)
    with pytest.raises(ValueError, match="not a built-in agent"):
        shipped.best_agent("classic")
    with pytest.raises(ValueError, match="not a built-in agent"):
        load("best", ruleset="classic")


@needs_fifo
def test_a_best_file_that_is_a_fifo_is_an_error_not_a_hang(tmp_path, monkeypatch):
    from agents import shipped

    best = tmp_path / "best.json"
    os.mkfifo(best)
    monkeypatch.setattr(shipped, "BEST_FILE", best)
    with pytest.raises(ValueError, match="unreadable"):
        finishes(lambda: shipped.best_agent("classic"))


@pytest.mark.parametrize(
    "meta, arrays",
    [
        ({}, {"W0": np.array(1.0, np.float32), "b0": np.zeros(1, np.float32)}),  # a scalar for a weight matrix
        ({"mean": 10**400}, {"W0": np.zeros((31, 1), np.float32), "b0": np.zeros(1, np.float32)}),  # no float holds it
    ],
    ids=["scalar-weights", "huge-mean"],
)
def test_a_forged_value_network_is_a_clear_error_not_a_traceback(tmp_path, meta, arrays):
    from agents import load

    path = _forged_net(tmp_path / "net.npz", meta, **arrays)
    with pytest.raises(ValueError, match="not a matrix and a vector|finite numbers"):
        ValueNet.load(path)
    with pytest.raises(ValueError):
        load(f"search:{path}", ruleset="classic_down")


@needs_module("flask", "Flask (the web extra)")
@pytest.mark.parametrize(
    "meta, says",
    [
        ({"ruleset": "/etc/hostname"}, "trained for ruleset '/etc/hostname'"),
        ({"layers": -1}, "at least one layer"),
        ({"mean": [1]}, "mean and std must be finite numbers"),
    ],
)
def test_a_value_network_with_a_forged_meta_is_a_usage_error(tmp_path, capsys, meta, says):
    src = VALUE_DIR / "value_classic_down.npz"
    arrays = dict(np.load(src))
    arrays["meta"] = np.array(json.dumps(ValueNet.load(src).meta | {"format": 2, "layers": 3} | meta))
    forged = tmp_path / "forged.npz"
    np.savez(forged, **arrays)
    with pytest.raises(SystemExit) as exc:
        evaluate_cli.main(
            [
                "--ruleset",
                "classic_down",
                "--agents",
                f"search:{forged}",
                "--games",
                "2",
                "--out",
                str(tmp_path / "res/"),
                "--no-progress",
            ]
        )
    assert exc.value.code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


# ---------------------------------------------------------------- a run folder names its model at every command
def _run_folder(tmp_path, *models):
    import shutil

    from agents.shipped import MODELS_DIR

    run = tmp_path / "run"
    run.mkdir()
    for name in models:
        shutil.copy(MODELS_DIR / "classic_down.zip", run / name)
    return run


@pytest.mark.parametrize("command", ["evaluate", "play", "web"])
def test_a_training_run_folder_plays_its_best_else_its_final_model(command, tmp_path, capsys):
    """As jamb-web always did: jamb-evaluate refused a run folder, jamb-play did not know it."""
    from tests.helpers import run_main

    run = _run_folder(tmp_path, "final_model.zip")
    if command == "web":
        from agents.apps.cli.web import agent_spec

        assert agent_spec(str(run)) == str(run / "final_model.zip")
        (run / "best_model.zip").write_bytes((run / "final_model.zip").read_bytes())
        assert agent_spec(str(run)) == str(run / "best_model.zip")
        return
    argv = {
        "evaluate": ["--agents", str(run), "--games", "2", "--out", str(tmp_path / "o"), "--no-progress"],
        "play": ["--watch", str(run), "--delay", "0", "--width", "120", "--seed", "1"],
    }[command]
    code, err = run_main(command, ["--ruleset", "classic_down", *argv], capsys)
    assert code == 0, err
    if command == "evaluate":
        assert str(run / "final_model.zip") in (tmp_path / "o.csv").read_text()


@pytest.mark.parametrize(
    "command, argv",
    [
        ("evaluate", ["--agents", "{run}", "--games", "2", "--no-progress"]),
        ("play", ["--watch", "{run}"]),
        ("play", ["--coach", "{run}"]),
        ("play", ["--players", "human", "{run}"]),
    ],
)
def test_a_folder_without_a_model_is_one_line_at_every_command(command, argv, tmp_path, capsys):
    from agents.apps.cli.web import agent_spec
    from tests.helpers import run_main

    run = _run_folder(tmp_path)
    code, err = run_main(command, [a.format(run=run) for a in argv], capsys)
    assert code == 2 and f"{run}: a folder without best_model.zip or final_model.zip" in err, err
    assert "Traceback" not in err and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    with pytest.raises(Exception, match="a folder without"):
        agent_spec(str(run))


def test_run_model_leaves_names_prefixes_and_unreadable_names_alone(tmp_path, monkeypatch):
    """A built-in agent's name is that agent even beside a folder of that name; only the four
    ``kind:`` prefixes keep a colon from naming a folder; a name too long to look up stays as it is."""
    monkeypatch.chdir(_run_folder(tmp_path, "final_model.zip").parent)
    (tmp_path / "greedy").mkdir()
    (tmp_path / "run" / "final_model.zip").rename(tmp_path / "greedy" / "final_model.zip")
    (tmp_path / "run:1").mkdir()
    (tmp_path / "run:1" / "best_model.zip").write_bytes((tmp_path / "greedy" / "final_model.zip").read_bytes())
    assert registry.run_model("greedy") == "greedy"
    assert registry.run_model("run:1") == str(Path("run:1") / "best_model.zip")
    assert registry.run_model("search:run:1") == "search:run:1"
    assert registry.run_model("a" * 300) == "a" * 300  # then "unknown agent": was OSError [Errno 36]


def test_a_glob_of_run_folders_is_their_models(tmp_path, monkeypatch, capsys):
    """``--agents 'runs/*'``: each run folder matched plays its model; one without a model is one line."""
    from tests.helpers import run_main

    model = _run_folder(tmp_path, "final_model.zip") / "final_model.zip"
    for name, file in (("a", "final_model.zip"), ("b", "best_model.zip")):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / file).write_bytes(model.read_bytes())
    monkeypatch.chdir(tmp_path)
    argv = ["--ruleset", "classic_down", "--agents", "runs/*", "--games", "2", "--no-progress", "--out", "o"]
    assert run_main("evaluate", argv, capsys)[0] == 0
    games = (tmp_path / "o_games.csv").read_text()
    assert "runs/a/final_model.zip" in games and "runs/b/best_model.zip" in games
    (tmp_path / "runs" / "c").mkdir()
    code, err = run_main("evaluate", [*argv[:-1], "o2"], capsys)
    assert code == 2 and "runs/c: a folder without best_model.zip or final_model.zip" in err, err
