"""The package's seams: the pure rules core loads neither Gymnasium nor torch, importing
the package registers the envs, every kernel file keys the compiled cache, and the
scripts are import-safe. (That every front end plays the same game is
tests/conformance/test_lockstep.py.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from jamb_env.rules._jit import KERNEL_FILES

ROOT = Path(__file__).resolve().parents[2]


def test_rules_core_imports_neither_gymnasium_nor_torch():
    """``import jamb_env.rules`` and a whole game on the core work with Gymnasium, torch
    and stable-baselines3 blocked, and load none of them."""
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('gymnasium', 'torch', 'stable_baselines3', 'sb3_contrib'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import numpy as np
from jamb_env import rules as core
r = core.load_ruleset('classic')
rng = np.random.default_rng(0)
st, total = core.start_turn(r, core.new_game(r), rng.integers(1, 7, 5)), 0
while not core.is_over(r, st):
    a = int(rng.choice(np.flatnonzero(core.legal_mask(r, st))))
    dice = rng.integers(1, 7, core.reroll_count(r, a)) if core.reroll_count(r, a) else None
    st, pts = core.apply_action(r, st, a, dice)
    total += pts
    if st.roll == 0 and not core.is_over(r, st):
        st = core.start_turn(r, st, rng.integers(1, 7, 5))
assert total == core.score(r, st)
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'torch', 'stable_baselines3'))
print('LOADED', loaded)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "LOADED []" in out.stdout


def test_import_jamb_env_registers_the_envs():
    """In a fresh interpreter, ``import jamb_env`` alone makes ``gymnasium.make`` work."""
    code = (
        "import jamb_env, gymnasium; e = gymnasium.make('Jamb-v1'); e0 = gymnasium.make('Jamb-v0'); "
        "print(e.observation_space.shape, e0.observation_space.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "(590,) (226,)" in out.stdout


def test_every_kernel_file_is_in_the_cache_key():
    """A kernel's cache is keyed by KERNEL_FILES: a module compiling kernels outside that
    list could run a stale compiled copy after an edit of a file it calls."""
    users = {
        str(p.relative_to(ROOT / "jamb_env"))
        for p in (ROOT / "jamb_env").rglob("*.py")
        if re.search(r"^from \S*_jit import kernel", p.read_text(), re.M) or p.name == "_jit.py"
    }
    assert users == set(KERNEL_FILES)


def test_script_wrappers_are_import_safe():
    """scripts/*.py run their tool only as __main__: SubprocVecEnv's workers (spawn or
    forkserver) import the main module again, and an unguarded call would re-run it."""
    for path in sorted((ROOT / "scripts").glob("*.py")):
        text = path.read_text()
        assert 'if __name__ == "__main__":' in text, path.name
        assert "sys.path" not in text, path.name
