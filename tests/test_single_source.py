"""Each rule is written once: the single-game core (GameState functions) and the batched
engine (JambEnv, JambVecEnv) call the same kernels; these tests guard the seams."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jamb_env import rules as core
from jamb_env._batch import Batch
from jamb_env.observation import encoder
from jamb_env.rules import load_ruleset
from jamb_env.rules._jit import KERNEL_FILES
from jamb_env.rules.kernels import COLUMN_KINDS
from tests.helpers import playable_presets

ROOT = Path(__file__).resolve().parents[1]
EVERY_COLUMN = str(ROOT / "tests" / "rules" / "every_column.yaml")
RULESETS = playable_presets() + [EVERY_COLUMN]


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
    code = "import jamb_env, gymnasium; e = gymnasium.make('Jamb-v1'); e0 = gymnasium.make('Jamb-v0'); print(e.observation_space.shape, e0.observation_space.shape)"
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


def test_every_column_kind_is_played():
    """The differential test below reaches every column kind."""
    kinds = set()
    for name in RULESETS:
        r = load_ruleset(name)
        kinds |= set(r.columns) | set(r.derived_columns)
    assert kinds == set(COLUMN_KINDS)


@pytest.mark.parametrize("name", RULESETS, ids=lambda n: Path(n).stem)
def test_core_path_and_batched_engine_agree(name):
    """Random legal play until two games end: the GameState functions (legal_mask, apply_action, start_turn,
    score, score_parts, column_totals, the observation encoder) and the batched engine
    give the same masks, observations, points, scores and final sheets, step by step."""
    rules = load_ruleset(name)
    N, n = 3, rules.dice
    rng = np.random.default_rng(abs(hash(Path(name).stem)) % 2**32)
    batch = Batch(rules, N, turn_features=True)
    enc = encoder(rules, True)
    lay = core.layout(rules)

    def new_game(i):
        batch.games.stream[i] = rng.integers(1, 7, batch.games.stream.shape[1])
        batch.reset(np.array([i]))
        return core.start_turn(rules, core.new_game(rules), batch.games.stream[i, :n]), n

    games = [new_game(i) for i in range(N)]
    finished = 0
    for _ in range(5000):
        if finished >= 2:
            break
        actions = np.zeros(N, dtype=np.int64)
        for i, (st, _) in enumerate(games):
            mask = core.legal_mask(rules, st)
            assert (mask == batch.games.masks[i]).all()
            assert (enc.encode(st, mask=mask) == batch.games.obs[i]).all()
            assert core.score(rules, st) == batch.games.score[i]
            actions[i] = rng.choice(np.flatnonzero(mask))
        res = batch.step(actions)
        for i, (st, pos) in enumerate(games):
            a = int(actions[i])
            dice = None
            k = core.reroll_count(rules, a)  # a re-roll or a basket
            if k:
                dice, pos = batch.games.stream[i, pos : pos + k], pos + k
            st, points = core.apply_action(rules, st, a, dice)
            assert points == res.points[i]
            over = core.is_over(rules, st)
            assert bool(res.dones[i]) == over
            if over:
                finished += 1
                parts = core.score_parts(rules, st)
                assert list(parts.values()) == res.parts[i].tolist()
                assert list(core.column_totals(rules, st).values()) == res.cols[i, : len(core.column_totals(rules, st))].tolist()
                assert core.score(rules, st) == batch.games.score[i] == sum(res.cols[i])
                games[i] = new_game(i)
                continue
            if st.roll == 0:
                st, pos = core.start_turn(rules, st, batch.games.stream[i, pos : pos + n]), pos + n
            games[i] = (st, pos)
    assert finished >= 2


def test_script_wrappers_are_import_safe():
    """scripts/*.py run their tool only as __main__: SubprocVecEnv's workers (spawn or
    forkserver) import the main module again, and an unguarded call would re-run it."""
    for path in sorted((ROOT / "scripts").glob("*.py")):
        text = path.read_text()
        assert 'if __name__ == "__main__":' in text, path.name
        assert "sys.path" not in text, path.name
