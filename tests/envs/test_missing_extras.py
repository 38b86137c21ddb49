"""The core without the extras: ``import jamb_env`` and the Gymnasium envs work with
stable-baselines3, sb3-contrib, torch, PettingZoo, Pillow, rich and OpenSpiel missing (an
import blocker in a child process), the documented submodules are attributes of the
package, and each door whose library is missing says, in one line, which extra to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys

BLOCKED = {"stable_baselines3", "sb3_contrib", "torch", "pettingzoo", "PIL", "rich", "pyspiel"}


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
import gymnasium as gym
import numpy as np
import jamb_env

out = {}
env = gym.make("Jamb-v1", ruleset="classic_down")
_, info = env.reset(seed=0)
done, total = False, 0.0
while not done:
    _, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    total += reward
out["game"] = total == info["score"] and "score_parts" in info
vec = gym.make_vec("Jamb-v1", num_envs=2)
out["vector"] = vec.reset(seed=0)[0].shape == (2, 590)
out["wrappers"] = type(jamb_env.wrappers.LegalActions(jamb_env.JambEnv())).__name__
for expr in ("jamb_env.JambVecEnv", "jamb_env.multiplayer", "jamb_env.multiplayer_vector",
             "jamb_env.JambEnv(render_mode='rgb_array')", "jamb_env.openspiel"):
    try:
        eval(expr)
        out[expr] = "no error"
    except ImportError as exc:
        out[expr] = str(exc)
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps(out))
"""


@pytest.mark.slow  # a subprocess importing every door with the extras blocked
def test_the_core_works_without_the_extras_and_each_door_names_its_extra():
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out.pop("game") and out.pop("vector") and out.pop("wrappers") == "LegalActions"
    assert out.pop("loaded") == []
    expected = {
        "jamb_env.JambVecEnv": 'JambVecEnv needs stable-baselines3: pip install "jamb-env[train]"',
        "jamb_env.multiplayer": 'jamb_env.multiplayer needs pettingzoo: pip install "jamb-env[multiplayer]"',
        "jamb_env.multiplayer_vector": 'SeatVecEnv needs stable-baselines3: pip install "jamb-env[train]"',
        "jamb_env.JambEnv(render_mode='rgb_array')": 'render_mode="rgb_array" needs Pillow: '
        'pip install "jamb-env[apps]"',
        "jamb_env.openspiel": 'jamb_env.openspiel needs OpenSpiel (pyspiel): pip install "jamb-env[openspiel]"',
    }
    for expr, message in expected.items():
        assert out[expr].startswith(message) and "\n" not in out[expr], (expr, out[expr])


def test_documented_submodules_are_attributes_after_import_jamb_env():
    code = (
        "import jamb_env\n"
        "assert 'jamb_env.wrappers' not in __import__('sys').modules\n"
        "print(jamb_env.wrappers.LegalActions.__name__, jamb_env.gym_vector.JambVectorEnv.__name__,"
        " jamb_env.multiplayer.raw_env.__name__, jamb_env.testing.api_test.__name__)"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["LegalActions", "JambVectorEnv", "raw_env", "api_test"]
