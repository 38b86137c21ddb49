"""Seventh hostile round: names of files in a run folder with digits ``int()`` refuses
(``model_²_steps.zip``, ``checkpoint_²``), names with matplotlib's TeX markup (``$\\frac{$``)
drawn in a figure, YAML whose keys are lists or mappings, and a forged ``init_from.json``
beside the model a run starts from.

Each case failed (a traceback) before its fix; now the file is no checkpoint, the name is
drawn as text, or the YAML is a clear error naming the file.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.shipped import MODELS_DIR
from agents.training.config import ConfigError, load_config
from jamb_env.rules.ruleset import load_ruleset
from jamb_env.utils.errors import RulesetError

MARKUP = "$\\frac{$"  # matplotlib's mathtext cannot parse it: a ValueError when the figure is drawn


# ---------------------------------------------------------------------- run folders
def test_a_checkpoint_named_with_a_superscript_digit_is_no_checkpoint(tmp_path):
    from agents.training.runs import checkpoints

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model_²_steps.zip").write_bytes(b"")  # '²'.isdigit(), but int('²') fails
    assert checkpoints(tmp_path) == []


def test_an_rllib_checkpoint_folder_named_with_a_superscript_digit_is_no_checkpoint(tmp_path):
    from agents.rllib_agent import checkpoints, find_module_dir

    (tmp_path / "checkpoints" / "checkpoint_²").mkdir(parents=True)
    assert checkpoints(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="no RLlib checkpoint in"):
        find_module_dir(tmp_path)  # jamb-evaluate --agents rllib:<run folder>


def test_selfplay_resume_of_a_folder_with_a_superscript_checkpoint_exits_2(tmp_path, capsys):
    from agents.apps.cli import train_selfplay

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model_²_steps.zip").write_bytes(b"")
    with pytest.raises(SystemExit) as exc:
        train_selfplay.main(["--resume", "--run-dir", str(tmp_path), "--total-timesteps", "64"])
    assert exc.value.code == 2
    assert "no checkpoint" in capsys.readouterr().err


# ---------------------------------------------------------------------- figures
def test_names_with_tex_markup_are_drawn_as_text(tmp_path):
    from agents.evaluation.solitaire import plot_scores
    from agents.training.curves import curves_figure, save_figure

    curve = (np.array([0, 1, 2]), np.array([1.0, 2.0, 3.0]))
    fig = curves_figure({(MARKUP, MARKUP): [curve]}, {MARKUP: {MARKUP: 5.0}}, MARKUP, MARKUP)
    save_figure(fig, tmp_path / "curves.png")  # a baseline tag of an event file, a config name: data
    assert (tmp_path / "curves.png").stat().st_size > 0
    games = [{"score": s} for s in (100, 200, 300)]
    labels = {f"/models/{MARKUP}.zip": games, "greedy": games}  # a file name a glob matched
    plot_scores(labels, tmp_path / "scores.png", MARKUP)
    assert (tmp_path / "scores.png").stat().st_size > 0


# ---------------------------------------------------------------------- YAML
@pytest.mark.parametrize("key", ["? [a, b]\n: 1\n", "? {a: 1}\n: 1\n"], ids=["list-key", "mapping-key"])
def test_a_yaml_key_that_is_a_list_or_mapping_is_a_clear_error(tmp_path, key):
    path = tmp_path / "rules.yaml"
    path.write_text(f"schema_version: 1\nname: x\nextends: classic\ncolumns: [down]\n{key}")
    with pytest.raises(RulesetError, match="rules.yaml: not valid YAML: a key that is a (list|dict)"):
        load_ruleset(path)
    config = tmp_path / "config.yaml"
    config.write_text(key)
    with pytest.raises(ConfigError, match="config.yaml: not valid YAML: a key that is a"):
        load_config(config)


# ---------------------------------------------------------------------- init_from
@pytest.mark.parametrize("forged", ['"x"', "1e400", "[]"], ids=["text", "inf", "list"])
def test_a_forged_init_record_beside_the_model_to_start_from_is_set_aside(tmp_path, forged, capsys):
    import shutil

    from sb3_contrib import MaskablePPO

    from agents.training.weights import load_policy_weights

    src = tmp_path / "model.zip"
    shutil.copy(MODELS_DIR / "classic.zip", src)
    (tmp_path / "init_from.json").write_text(f'{{"steps_before": {forged}}}')
    model = MaskablePPO.load(src, device="cpu")
    assert load_policy_weights(model, src) == model.num_timesteps  # not a ValueError, OverflowError or TypeError
    assert "is no step count" in capsys.readouterr().out


# ---------------------------------------------------------------------- self-play snapshots
def test_an_older_checkpoint_that_is_no_model_is_left_out_of_the_selfplay_pool(tmp_path, capsys):
    import zipfile

    from agents.apps.cli import train_selfplay

    run = tmp_path / "run"
    args = ["--run-dir", str(run), "--n-envs", "8", "--n-steps", "8", "--baselines", "random", "--eval-games", "2"]
    assert train_selfplay.main([*args, "--total-timesteps", "64"]) == 0
    with zipfile.ZipFile(run / "checkpoints" / "model_10_steps.zip", "w") as zf:  # whole, with both members, no model
        zf.writestr("data", '{"x": 1}')
        zf.writestr("policy.pth", "garbage")
    capsys.readouterr()
    assert train_selfplay.main([*args, "--total-timesteps", "128", "--resume"]) == 0  # not an UnpicklingError
    assert "leaving snapshot" in capsys.readouterr().out
