"""Model files are data (agents/model_files.py): a contract table of hostile and odd SB3
model files x every loader of the project (agents.load and its model agents, jamb-export,
--init-from, resumed checkpoints, self-play snapshots) and every command that loads one;
a table of forged value network files (``search:<file.npz>``).
A file whose pickles would run code is refused in one line saying how to trust it, and
nothing of it runs; ``--trust-model`` (``trusted=True``) is the only way to load it; the
tensors are read with ``torch.load(weights_only=True)`` whatever the flag."""

from __future__ import annotations

import base64
import functools
import importlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import pytest

from agents.model_files import UntrustedModelError, data_objects, load_model
from agents.shipped import MODELS_DIR

BASE = MODELS_DIR / "classic_down.zip"  # a small shipped model (solitaire classic_down)
RULESET = "classic_down"


class Payload:
    """Unpickled, creates the marker file (``open(marker, "w")``): a stand-in for ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def forge(tmp_path: Path, how: str, marker: Path) -> Path:
    """A copy of :data:`BASE` with ``how`` done to it (see the table below)."""
    with zipfile.ZipFile(BASE) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["data"])

    def serialized(obj) -> dict:
        return {":type:": "<class 'object'>", ":serialized:": base64.b64encode(pickle.dumps(obj)).decode()}

    if how == "an unused entry":  # lr_schedule: SB3 unpickles it, the policy never needs it
        data["lr_schedule"] = serialized(Payload(marker))
    elif how == "a needed entry":  # the observation space every loader reads
        data["observation_space"] = serialized(Payload(marker))
    elif how == "inside an allowed type":  # a deque (allowed) holding the payload
        from collections import deque

        data["ep_info_buffer"] = serialized(deque([Payload(marker)]))
    elif how == "a new entry":
        data["anything"] = serialized(Payload(marker))
    elif how == "a function by value":  # cloudpickle pickles a lambda's code
        import cloudpickle

        code = f"lambda progress: open({str(marker)!r}, 'w') and 1e-4"
        data["learning_rate"] = {":serialized:": base64.b64encode(cloudpickle.dumps(eval(code))).decode()}
    elif how in ("policy.pth", "pytorch_variables.pth"):  # a torch pickle holding the payload
        import torch

        buf = io.BytesIO()
        torch.save({"weights": Payload(marker)}, buf)
        members[how] = buf.getvalue()
    else:
        raise AssertionError(how)
    members["data"] = json.dumps(data).encode()
    path = tmp_path / f"{how.replace(' ', '_')}.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return path


HOSTILE = ["an unused entry", "a needed entry", "inside an allowed type", "a new entry", "a function by value"]
TORCH = ["policy.pth", "pytorch_variables.pth"]


@functools.cache
def _tiny_model():  # one for every test: a refused init_from leaves it as it was
    from sb3_contrib import MaskablePPO

    from jamb_env import JambEnv

    return MaskablePPO("MlpPolicy", JambEnv(RULESET), n_steps=64, batch_size=64, device="cpu")


def _resume(path: Path) -> None:
    from agents.training.runs import resume_model
    from jamb_env import JambVecEnv

    resume_model([path], JambVecEnv(2, RULESET, seed=0), {"device": "cpu"})


def _snapshot(path: Path) -> None:
    from agents.training.selfplay import OpponentPool

    OpponentPool(["greedy"]).add_snapshot(path)


def _init_from(path: Path) -> None:
    from agents.training.weights import load_policy_weights

    load_policy_weights(_tiny_model(), path)


def _export(path: Path) -> None:
    from agents.export import export_model

    export_model(path, path.with_name("copy.zip"))


#: Every loader of a model file, as a function of its path (API level).
LOADERS = {
    "agents.load": lambda p: importlib.import_module("agents").load(str(p), ruleset=RULESET),
    "agents.load hybrid:": lambda p: importlib.import_module("agents").load(f"hybrid:{p}", ruleset=RULESET),
    "agents.load critic:": lambda p: importlib.import_module("agents").load(f"critic:{p}", ruleset=RULESET),
    "export_model": _export,
    "init_from": _init_from,
    "resume": _resume,
    "self-play snapshot": _snapshot,
}


@pytest.mark.parametrize("how", HOSTILE)
@pytest.mark.parametrize("loader", LOADERS)
def test_a_model_file_holding_code_is_refused_by_every_loader_and_nothing_runs(tmp_path, how, loader):
    marker = tmp_path / "ran"
    path = forge(tmp_path, how, marker)
    with pytest.raises(
        ValueError, match="--trust-model"
    ) as refused:  # UntrustedModelError, or the trainers' ConfigError
        LOADERS[loader](path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)
    assert not marker.exists()


@pytest.mark.parametrize("member", TORCH)
def test_pickled_code_in_the_tensors_is_refused_even_when_trusted(tmp_path, member):
    """SB3 reads the .pth members with torch.load(weights_only=True): no flag loads them."""
    marker = tmp_path / "ran"
    path = forge(tmp_path, member, marker)
    for trusted in (False, True):
        with pytest.raises(Exception, match="[Ww]eights only load failed|Unsupported global"):
            load_model(path, trusted=trusted, device="cpu")
        assert not marker.exists()


def test_trusted_loads_as_sb3_does_and_runs_what_the_file_holds(tmp_path):
    """``trusted=True`` is SB3's own load: the flag is the user's decision, and it works."""
    marker = tmp_path / "ran"
    path = forge(tmp_path, "an unused entry", marker)
    import agents

    agent = agents.load(str(path), ruleset=RULESET, trusted=True)
    assert marker.exists() and agent.model.num_timesteps > 0


def test_the_refusal_names_the_entry_and_the_global(tmp_path):
    path = forge(tmp_path, "a needed entry", tmp_path / "ran")
    with pytest.raises(UntrustedModelError) as refused:
        data_objects(path)
    assert "'observation_space' entry is a pickle naming io.open" in str(refused.value)


ODD = {
    "not a zip": lambda p: p.write_bytes(b"not a zip at all"),
    "cut short": lambda p: p.write_bytes(BASE.read_bytes()[: BASE.stat().st_size // 2]),
    "no data": lambda p: _zip(p, {"policy.pth": b"x"}),
    "data not JSON": lambda p: _zip(p, {"data": b"\xff\xfe{", "policy.pth": b"x"}),
    "data a list": lambda p: _zip(p, {"data": b"[1, 2]", "policy.pth": b"x"}),
    "not base64": lambda p: _zip(p, {"data": b'{"lr_schedule": {":serialized:": "%%%"}}', "policy.pth": b"x"}),
    "a cut pickle": lambda p: _zip(p, {"data": b'{"lr_schedule": {":serialized:": "gAWV"}}', "policy.pth": b"x"}),
    "data of 17 MB": lambda p: _zip(p, {"data": b'{"a": "' + b" " * (17 << 20) + b'"}', "policy.pth": b"x"}),
    "a FIFO": lambda p: os.mkfifo(p),
}


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("loader", ["agents.load", "export_model", "init_from"])
def test_an_odd_model_file_is_one_clear_error(tmp_path, odd, loader):
    path = tmp_path / "odd.zip"
    ODD[odd](path)
    with pytest.raises((ValueError, OSError)) as refused:  # FileNotFoundError for a FIFO: not a model file
        LOADERS[loader](path)
    assert str(path) in str(refused.value)


# ---------------------------------------------------------------- through every command


def _command(name: str, argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = importlib.import_module(f"agents.apps.cli.{name}").main(argv)
    except SystemExit as exc:  # argparse's parser.error
        code = exc.code
    return code, capsys.readouterr().err


def _tiny_config(tmp_path: Path) -> str:
    import yaml

    from agents.training.config import CONFIGS_DIR

    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0
    cfg.update(total_timesteps=256, ruleset=RULESET)
    cfg["env"]["n_envs"] = 2
    cfg["algo"].update(n_steps=64, batch_size=64, n_epochs=1)
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    return str(tmp_path / "tiny.yaml")


COMMANDS = {
    "evaluate": lambda m, t: ["--ruleset", RULESET, "--agents", "greedy", str(m), "--games", "2", "--no-progress"],
    "evaluate --players": lambda m, t: ["--ruleset", RULESET, "--agents", "greedy", str(m), "--players", "2"],
    "play": lambda m, t: ["--ruleset", RULESET, "--watch", str(m), "--seed", "1", "--log", str(t / "g.txt")],
    "play --coach": lambda m, t: ["--ruleset", RULESET, "--coach", str(m), "--seed", "1", "--width", "100"],
    "export": lambda m, t: [str(m), str(t / "copy.zip")],
    "train": lambda m, t: ["--config", _tiny_config(t), "--init-from", str(m), "--run-dir", str(t / "run")],
    "train_selfplay": lambda m, t: [
        *("--ruleset", RULESET, "--init-from", str(m), "--run-dir", str(t / "run")),
        *("--total-timesteps", "256", "--n-envs", "4", "--n-steps", "32"),
    ],
    "bench": lambda m, t: ["--presets", RULESET, "--agents", str(m), "--skip-env", "--skip-train"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_model_file_holding_code_in_one_line(tmp_path, capsys, monkeypatch, command):
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    marker = tmp_path / "ran"
    path = forge(tmp_path, "a needed entry", marker)
    code, err = _command(command.split()[0], COMMANDS[command](path, tmp_path), capsys)
    lines = [
        line for line in err.strip().splitlines() if not line.startswith("usage:") and line.startswith(" ") is False
    ]
    assert code == 2 and "--trust-model" in err and str(path) in err, err
    assert len(lines) == 1, err  # argparse's usage line aside
    assert not marker.exists()
    assert not (tmp_path / "copy.zip").exists() and not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", ["evaluate", "export"])
def test_trust_model_is_each_commands_way_to_load_a_file_of_a_trusted_source(tmp_path, capsys, command):
    marker = tmp_path / "ran"
    path = forge(tmp_path, "an unused entry", marker)
    code, err = _command(command, [*COMMANDS[command](path, tmp_path), "--trust-model"], capsys)
    assert code == 0, err
    assert marker.exists()


# ---------------------------------------------------------------- value network files (search:<file.npz>)
VALUE_NET = MODELS_DIR / "value_classic_down.npz"
#: a shipped network with its meta changed: (meta key, forged value, what the error says)
FORGED_VALUE_META = {
    "std 0 (flat values)": ("std", 0.0, "std must be positive"),
    "std negative (values reversed: the worst move looks best)": ("std", -42.0, "std must be positive"),
    "layers a float": ("layers", 2.9, "'layers' must be an integer"),
    "layers a string": ("layers", "3", "'layers' must be an integer"),
    "layers true": ("layers", True, "'layers' must be an integer"),
}


@pytest.mark.parametrize("forged", FORGED_VALUE_META)
def test_a_forged_value_network_meta_is_refused_naming_the_file(tmp_path, forged):
    import numpy as np

    from agents import load

    key, value, words = FORGED_VALUE_META[forged]
    with np.load(VALUE_NET) as z:
        arrays = {name: z[name] for name in z.files}
    meta = json.loads(str(arrays.pop("meta"))) | {key: value}
    path = tmp_path / "net.npz"
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ValueError, match=words) as refused:
        load(f"search:{path}", ruleset="classic_down")
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("content", [b"not a zip\n", b"\x80\x04K\x01."], ids=["text", "a pickle"])
def test_a_value_network_file_that_is_no_npz_is_refused_without_advice_to_unpickle_it(tmp_path, content):
    from agents import load

    path = tmp_path / "net.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a value network file") as refused:
        load(f"search:{path}", ruleset="classic_down")
    # before: NumPy's "If you trust the file you can load it unsafely using the `allow_pickle=` keyword"
    assert "allow_pickle" not in str(refused.value) and "unsafely" not in str(refused.value)


@pytest.mark.parametrize("trusted", ["no", "False", 1, None])
def test_trusted_must_be_a_bool_a_string_never_trusts_a_file(trusted):
    from agents import load

    # before: "no" (truthy) loaded the file as SB3 does, running what its pickles say
    with pytest.raises(ValueError, match="trusted must be True or False"):
        load(str(MODELS_DIR / "classic_down.zip"), ruleset="classic_down", trusted=trusted)
