"""The package is the product: a wheel and an sdist build from the checkout and pass
``twine check``; the wheel installed into a fresh virtual environment outside the checkout
loads every preset, env id, shipped agent and default config, runs the console commands,
writes nothing into its own folder, and ``pip uninstall`` leaves nothing behind.

The fresh environments reuse the project environment's installed dependencies (a ``.pth``
line) and install the wheel itself with ``--no-deps``, so the test needs no network and
stays within a minute; what the wheel asks of pip is checked on its metadata (the core
brings no training stack; each extra names what it needs).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What ``pip install jamb-env`` (no extras) may bring: the env and nothing of a training stack.
CORE = {"numpy", "numba", "gymnasium", "pyyaml", "platformdirs"}
HEAVY = {"torch", "stable-baselines3", "sb3-contrib", "tensorboard", "optuna", "matplotlib", "flask", "pettingzoo"}

pytestmark = pytest.mark.slow


def run(cmd, cwd, env=None, timeout=600):
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=out)
    wheel, sdist = next(out.glob("*.whl")), next(out.glob("*.tar.gz"))
    run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], cwd=out)
    return wheel


def requirements(wheel: Path) -> dict[str | None, set[str]]:
    """extra (None: the core) -> the distribution names it requires."""
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    out: dict[str | None, set[str]] = {}
    for line in meta.splitlines():
        if line.startswith("Requires-Dist:"):
            m = re.match(r"Requires-Dist:\s*([A-Za-z0-9_.-]+)(\[[^]]*\])?[^;]*(?:;\s*extra\s*==\s*\"([^\"]+)\")?", line)
            name, extra = m.group(1).lower().replace("_", "-"), m.group(3)
            out.setdefault(extra, set()).add(name)
    return out


def test_the_core_is_small_and_the_extras_name_their_stacks(dist):
    req = requirements(dist)
    assert req[None] == CORE
    assert {"torch", "stable-baselines3", "sb3-contrib", "tensorboard", "optuna", "matplotlib"} <= req["train"]
    assert "pettingzoo" in req["multiplayer"] and "flask" in req["apps"] and "requests" in req["zoo"]
    with zipfile.ZipFile(dist) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
    assert not re.search(r"Requires-Dist: torch\s*==", meta), "an exact torch pin rewrites the researcher's stack"


def test_the_wheel_carries_its_data(dist):
    names = set(zipfile.ZipFile(dist).namelist())
    presets = {p.name for p in (ROOT / "jamb_env" / "rules" / "presets").glob("*.yaml")}
    assert {f"jamb_env/rules/presets/{p}" for p in presets} <= names
    models = {str(p.relative_to(ROOT)) for p in (ROOT / "agents" / "models").rglob("*") if p.is_file()}
    assert models <= names
    assert "agents/training/configs/ppo_classic.yaml" in names and "agents/training/configs/zoo/ppo_mask.yml" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "runs/"))]


def fresh_venv(path: Path) -> Path:
    """A virtual environment at ``path`` that sees this environment's installed
    dependencies (one ``.pth`` line) but not the checkout; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_the_wheel_works_outside_the_checkout_and_uninstalls_cleanly(dist, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    run([*pip, "install", "--quiet", "--no-deps", str(dist)], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    code = """
import gymnasium as gym, numpy as np, jamb_env, agents
from pathlib import Path
assert 'site-packages' in jamb_env.__file__ and 'site-packages' in agents.__file__, (jamb_env.__file__, agents.__file__)
names = jamb_env.list_rulesets()
assert len(names) >= 20, names
for p in names:
    for env in (gym.make('Jamb-v1', ruleset=p), gym.make(f'Jamb-{p}-v1')):
        env.reset(seed=0)
from agents import load
for name in ('ppo', 'best', 'expectimax'):
    agent = load(name, ruleset='classic')
env = jamb_env.JambEnv(ruleset='classic')
obs, info = env.reset(seed=20_000_000)
done = False
while not done:
    obs, r, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
print('SCORE', info['score'])
"""
    out = run([str(python), "-c", code], cwd=work, env=env)
    assert "SCORE" in out
    bin_ = python.parent
    run([str(bin_ / "jamb-evaluate"), "--ruleset", "classic", "--agents", "greedy", "--games", "4"], cwd=work, env=env)
    run([str(bin_ / "jamb-play"), "--watch", "greedy", "--seed", "1", "--delay", "0"], cwd=work, env=env)
    tiny = """
import yaml
from agents.training.config import DEFAULT_CONFIG
cfg = yaml.safe_load(DEFAULT_CONFIG.read_text())
cfg['env'].update(n_envs=8)
cfg['algo'].update(n_steps=64, batch_size=256)
cfg['eval'].update(freq=2048, episodes=4, n_envs=4)
cfg['checkpoint']['freq'] = 2048
cfg['imitation'].update(games=4, jobs=1, epochs=1)
open('tiny.yaml', 'w').write(yaml.safe_dump(cfg))
"""
    run([str(python), "-c", tiny], cwd=work, env=env)  # the default config, read from the installed package
    run([str(bin_ / "jamb-train"), "--config", "tiny.yaml", "--total-timesteps", "4096", "--no-progress"], work, env)
    assert list((work / "runs").glob("classic__tiny__0__*/final_model.zip"))
    assert (tmp_path / "cache" / "jamb_env").is_dir(), "the compiled kernels are cached in the user's cache folder"
    site = Path(
        run(
            [str(python), "-c", "import jamb_env, os; print(os.path.dirname(os.path.dirname(jamb_env.__file__)))"],
            cwd=work,
            env=env,
        ).strip()
    )
    run([*pip, "uninstall", "--quiet", "--yes", "jamb-env"], cwd=tmp_path)
    left = [p.name for p in site.iterdir() if p.name.startswith(("jamb_env", "agents"))]
    assert left == [], f"pip uninstall left {left} in {site}"
