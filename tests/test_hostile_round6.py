"""Sixth hostile round: forged value network files (``search:<file.npz>``), a forged
best score in a run folder (``best.json``).

Each case failed (a traceback, or a forged score taken) before its fix; now it is a clear
error, or the forged value is set aside.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from agents.search import VALUE_FORMAT, ValueNet


def _forged_net(path, meta: dict, **arrays):
    meta = {"format": VALUE_FORMAT, "mean": 0.0, "std": 1.0, "ruleset": "classic_down", "layers": 1} | meta
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path


# ---------------------------------------------------------------------- value networks
@pytest.mark.parametrize("meta, arrays", [
    ({}, {"W0": np.array(1.0, np.float32), "b0": np.zeros(1, np.float32)}),  # a scalar for a weight matrix
    ({"mean": 10 ** 400}, {"W0": np.zeros((31, 1), np.float32), "b0": np.zeros(1, np.float32)}),  # no float holds it
], ids=["scalar-weights", "huge-mean"])
def test_a_forged_value_network_is_a_clear_error_not_a_traceback(tmp_path, meta, arrays):
    from agents import load

    path = _forged_net(tmp_path / "net.npz", meta, **arrays)
    with pytest.raises(ValueError, match="not a matrix and a vector|finite numbers"):
        ValueNet.load(path)
    with pytest.raises(ValueError):
        load(f"search:{path}", ruleset="classic_down")


# ---------------------------------------------------------------------- run folders
@pytest.mark.parametrize("reward", ["1" + "0" * 400, "NaN", "true"])
def test_a_forged_best_score_is_neither_taken_nor_a_traceback(tmp_path, reward):
    from agents.training import runs

    with zipfile.ZipFile(tmp_path / runs.BEST_MODEL, "w") as zf:  # model_steps reads the zip's "data" alone
        zf.writestr("data", json.dumps({"num_timesteps": 512}))
    (tmp_path / runs.BEST_RECORD).write_text(f'{{"step": 512, "mean_reward": {reward}}}')
    assert runs.best_so_far(tmp_path, {256: 0.5, 512: 0.25}) == 0.25  # the evaluation at the best model's step
