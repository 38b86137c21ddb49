"""Sixth hostile round: forged value network files (``search:<file.npz>``).

Each case failed (a traceback) before its fix; now it is a clear error.
"""

from __future__ import annotations

import json

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
