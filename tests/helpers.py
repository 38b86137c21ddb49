"""Shared test helpers: the playable presets, random legal actions, hand-built sheets."""

from __future__ import annotations

import base64
import importlib
import json
import os
import pickle
import shutil
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from jamb_env import list_rulesets
from jamb_env.rules import GameState, Ruleset, layout, new_game


def playable_presets() -> list[str]:
    """Every preset (each one loads)."""
    return list_rulesets()


def needs_module(module: str, what: str):
    """A skip mark for tests of an optional extra: skipped, with the reason, unless
    ``module`` imports (Ray and RLlib: the ``ray`` extra)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return pytest.mark.skipif(True, reason=f"{what} is not installed: make install-ray")
    return pytest.mark.skipif(False, reason="")


def slow_after(cases, keep: int = 1, *, fast=None) -> list:
    """The rows of a ``parametrize`` table, each row after the first ``keep`` marked slow:
    ``pytest -m "not slow"`` (the inner loop) runs the kept rows, CI (``make test``) runs
    every row. ``fast``: the rows to keep instead of the first ``keep`` (the cheapest), each
    a row's values or a row's first value; one that matches no row is an error. A row
    keeps its id and its own marks."""
    from _pytest.mark.structures import ParameterSet

    cases = list(cases)

    def values(case) -> tuple:
        if isinstance(case, ParameterSet):
            return tuple(case.values)
        return case if isinstance(case, tuple) else (case,)

    def matches(case, want) -> bool:
        row = values(case)
        return row == (want if isinstance(want, tuple) else (want,)) or (
            not isinstance(want, tuple) and row[:1] == (want,)
        )

    if fast is not None:
        fast = list(fast)
        unknown = [want for want in fast if not any(matches(case, want) for case in cases)]
        if unknown:
            raise ValueError(f"slow_after: no row is {unknown}")
    out = []
    for i, case in enumerate(cases):
        if (any(matches(case, want) for want in fast)) if fast is not None else i < keep:
            out.append(case)
        elif isinstance(case, ParameterSet):
            out.append(pytest.param(*case.values, marks=[*case.marks, pytest.mark.slow], id=case.id))
        else:
            out.append(pytest.param(*values(case), marks=pytest.mark.slow))
    return out


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def headless_chromium(profile_dir, window: str = "1200,760"):
    """A headless Chromium driven by selenium (Debian's /usr/bin/chromium and
    /usr/bin/chromedriver, ``make browser`` installs them; selenium-manager never goes
    online), its profile in ``profile_dir``; or a skip that says what is missing. The
    caller quits it."""
    if not (Path(CHROMIUM).is_file() and shutil.which(CHROMIUM) and Path(CHROMEDRIVER).is_file()):
        pytest.skip(
            f"headless Chromium not found at {CHROMIUM}: apt-get install chromium chromium-driver (make browser)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is missing: pip install -e '.[dev]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--window-size={window}",
        f"--user-data-dir={profile_dir}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def finishes(fn, seconds: float = 20.0):
    """``fn()``'s result, run in a thread: AssertionError when it is still running after
    ``seconds`` (a read blocked on a FIFO, or a device read for ever)."""
    out: dict = {}

    def work() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised below
            out["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} still runs after {seconds} s (blocked on a FIFO or reading a device)"
    if "error" in out:
        raise out["error"]
    return out["value"]


def random_legal(env, rng) -> int:
    """A uniform legal action of a JambEnv."""
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def random_actions(rng, masks):
    """A uniform legal action per row of ``masks`` (noise in [1, 2): a legal entry always wins)."""
    return ((rng.random(masks.shape) + 1.0) * masks).argmax(axis=1)


def sheet(
    rules: Ruleset,
    written: dict | None = None,
    dice=None,
    roll: int = 1,
    announced=None,
    answer_due=None,
    copy_row=None,
) -> GameState:
    """A state whose cells ``{(column, row): value}`` are written, with ``dice`` after ``roll``."""
    st = new_game(rules)
    values, filled = st.values.copy(), st.filled.copy()
    for (col, row), value in (written or {}).items():
        c, r = rules.columns.index(col), rules.rows.index(row)
        values[c, r] = value
        filled[c] |= 1 << r
    dice = np.sort(np.array(dice if dice is not None else [1, 2, 3, 4, 6], dtype=np.int8))
    return GameState(
        values=values,
        filled=filled,
        dice=dice,
        dice_index=rules.tables.index(dice),
        roll=roll,
        announced=rules.cell(*announced) if announced else -1,
        answer_due=rules.rows.index(answer_due) if answer_due else -1,
        turn=len(written or {}),
        copy_row=rules.rows.index(copy_row) if copy_row else -1,
    )


def fill(rules: Ruleset, columns, rows=None, value: int = 0) -> dict:
    """``{(column, row): value}`` for every row (or ``rows``) of ``columns``."""
    return {(c, r): value for c in columns for r in (rows or rules.rows)}


def open_cells(rules: Ruleset, st: GameState) -> set[tuple[str, str]]:
    """The (column, row) cells a write action may take now."""
    lay = layout(rules)
    from jamb_env.rules import legal_mask

    mask = legal_mask(rules, st)
    return {rules.cell_name(i) for i in np.flatnonzero(mask[lay.writes])}


def announceable(rules: Ruleset, st: GameState) -> set[tuple[str, str]]:
    lay = layout(rules)
    from jamb_env.rules import legal_mask

    mask = legal_mask(rules, st)
    return {
        rules.cell_name(int(lay.announce_cells[j]))
        for j in np.flatnonzero(mask[lay.announce_offset : lay.write_offset])
    }


def can_reroll(rules: Ruleset, st: GameState) -> bool:
    from jamb_env.rules import legal_mask

    return bool(legal_mask(rules, st)[: layout(rules).num_holds].any())


def logged_steps(run_dir) -> dict[str, list[int]]:
    """``{tag: [step, ...]}`` of every TensorBoard summary in the events files of
    ``run_dir``, read raw in file order (as a TFRecord reader or a plain export sees them:
    no ``purge_step`` applied)."""
    from pathlib import Path

    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    steps: dict[str, list[int]] = {}
    for path in sorted(Path(run_dir).glob("*tfevents*")):
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(int(event.step))
    return steps


def repeated_steps(run_dir) -> dict[str, list[int]]:
    """``{tag: [step logged more than once, ...]}`` over :func:`logged_steps` (empty: no
    tag has a step twice)."""
    from collections import Counter

    out = {}
    for tag, steps in logged_steps(run_dir).items():
        twice = sorted(s for s, n in Counter(steps).items() if n > 1)
        if twice:
            out[tag] = twice
    return out


def check_finished_sheet(rules, game) -> None:
    """Bonus and difference rules on every finished column (RULES.md §2), written out here
    on purpose: an oracle independent of the kernels it checks."""
    upper = [rules.rows.index(r) for r in ("ones", "twos", "threes", "fours", "fives", "sixes")]
    for c in range(len(rules.columns)):
        vals = game.values[c]
        up = int(vals[upper].sum())
        total = rules.column_points(vals, int(game.filled[c]))
        over = up - rules.bonus_threshold
        earned = over > 0 or (over == 0 and not rules.bonus_strict)
        bonus = rules.bonus_points + rules.bonus_per_point * over if earned else 0
        diff = int(vals[rules.rows.index("ones")]) * (
            int(vals[rules.rows.index("max")]) - int(vals[rules.rows.index("min")])
        )
        if rules.difference_clamp:
            diff = max(diff, 0)
        lower = sum(int(vals[r]) for r, row in enumerate(rules.rows) if r not in upper and row not in ("max", "min"))
        assert total == up + bonus + diff + lower
        assert (0 <= vals).all() and (vals <= rules.row_max).all()


def run_main(module: str, argv: list[str], capsys) -> tuple[int, str]:
    """``agents.apps.cli.<module>.main(argv)``: (exit status, stderr), argparse errors included."""
    main = importlib.import_module(f"agents.apps.cli.{module}").main
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def fake_train(calls):
    """A stand-in for ``agents.training.train.train`` that records each config and writes a run folder."""

    def train(cfg, run_dir=None, progress_bar=True, resume=False, imitation_games=None):
        calls.append(cfg)
        Path(run_dir).mkdir(parents=True)
        (Path(run_dir) / "config.yaml").write_text("x")
        return {"eval_score": 100.0 + len(calls), "wall_time_s": 0.0, "run_dir": str(run_dir)}

    return train


def selfplay_args(
    run_dir=None,
    *more: str,
    ruleset: str = "classic_down",
    n_envs: int = 2,
    n_steps: int = 32,
    snapshot_freq: int = 64,
    eval_freq: int = 10000,
    eval_games: int = 1,
    total_timesteps: int | None = 64,
) -> list[str]:
    """A small ``jamb-train-selfplay`` command line: these settings, ``--run-dir`` when given
    (else the default run folder), ``--total-timesteps`` unless None, then ``more``."""
    args = [
        *("--ruleset", str(ruleset), "--n-envs", str(n_envs), "--n-steps", str(n_steps)),
        *("--snapshot-freq", str(snapshot_freq), "--eval-freq", str(eval_freq), "--eval-games", str(eval_games)),
    ]
    args += [] if run_dir is None else ["--run-dir", str(run_dir)]
    args += [] if total_timesteps is None else ["--total-timesteps", str(total_timesteps)]
    return args + list(more)


def tiny_ppo_config(
    path: Path,
    *,
    total: int = 2048,
    n_envs: int = 4,
    n_steps: int = 64,
    batch_size: int = 128,
    net_arch: tuple[int, ...] = (32, 32),
    eval_freq: int = 512,
    eval_episodes: int = 2,
    eval_envs: int = 2,
    checkpoint_freq: int = 256,
    **top,
) -> Path:
    """The default PPO config (``ppo_classic.yaml``) cut to seconds of training on ``classic_down``,
    from scratch (no imitation stage), written to ``path``; ``top`` sets top-level keys."""
    from agents.training.config import CONFIGS_DIR

    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0  # the default starts from 2,000 planner games
    cfg.update({"total_timesteps": total, "ruleset": "classic_down", **top})
    cfg["env"]["n_envs"] = n_envs
    cfg["algo"].update(n_steps=n_steps, batch_size=batch_size, n_epochs=1, policy_kwargs={"net_arch": list(net_arch)})
    cfg["eval"].update(freq=eval_freq, episodes=eval_episodes, n_envs=eval_envs)
    cfg["checkpoint"]["freq"] = checkpoint_freq
    path.write_text(yaml.safe_dump(cfg))
    return path


def tiny_sb3(path: Path, **top) -> Path:
    """An SB3 config of a few seconds: 2 envs x 32 steps per rollout, 64 steps, one evaluation game."""
    return tiny_ppo_config(
        path,
        total=64,
        n_envs=2,
        n_steps=32,
        batch_size=32,
        net_arch=(16,),
        eval_freq=100_000,
        eval_episodes=1,
        eval_envs=1,
        checkpoint_freq=32,
        **top,
    )


def scalars(run_dir: Path) -> dict[str, list[int]]:
    """TensorBoard tag -> the steps logged, as TensorBoard shows them (what a resumed run's
    ``purge_step`` hides is left out), every events file of the folder read in order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [e.step for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


class _Marker:
    """Unpickling it makes the folder ``path``: proof that the pickled payload ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return os.mkdir, (self.path,)


def booby_trapped_model(path: Path, marker: Path) -> Path:
    """A file shaped like an SB3 model zip whose ``data`` holds a pickled object (as SB3
    saves policy classes): loading it with MaskablePPO.load runs ``os.mkdir(marker)``."""
    payload = base64.b64encode(pickle.dumps(_Marker(str(marker)))).decode()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":serialized:": payload}}))
    return path
