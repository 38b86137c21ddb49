"""Training the search agent's afterstate value network (:mod:`agents.search`) by
approximate policy iteration or by value iteration with exact one-turn backups.

Round ``k >= 1`` plays ``games`` games with the search agent on the network of round
``k - 1``; round 0 plays ``expectimax`` (``target: return``) or the search agent on the
prior alone (``target: backup``). Every write of a game but the last gives one sample: the
features of the sheet it leaves (:func:`agents.search.afterstate_features`) and a target,
what the rest of the game is worth from there, ``V = prior + network``:

* ``target: return`` (approximate policy iteration): round 0's Monte Carlo return, all
  points credited after the write; later rounds the λ-return of the value that played,
  ``G_t = p_{t+1} + (1 - λ) V(s_{t+1}) + λ G_{t+1}`` over the afterstates ``s_t`` and the
  points ``p_t`` of the writes (0 after the last);
* ``target: backup`` (value iteration): ``B_t``, the planner's exact expected value of
  the next turn from the afterstate ``s_t`` under the value that played (the next write's
  points plus ``V`` of the sheet it leaves, every first roll, hold, re-roll and
  announcement weighed exactly: :meth:`agents.heuristic.ExpectimaxAgent.fresh_turn_value`
  at the next turn's first roll, from the plans the agent builds anyway), with λ along the
  played path: ``G_t = B_t + λ (G_{t+1} - V(s_{t+1}))``, ``G = B`` at the last afterstate
  (nothing follows the last write). λ = 0 is the plain one-turn backup; the targets carry
  no dice noise of the turns after (only the path), which the value needs: the best two
  writes of a decision are often a few points apart.

The network learns the target minus the prior of the afterstate
(:func:`agents.search.sheet_prior`), what expectimax's model gets wrong. It is an MLP
(ReLU) fitted to the round's samples (mean squared error on targets standardised with the
first round's mean and deviation, Adam, 5% held out), warm-started from the previous
round. With ``valid_games`` each round's network then plays the validation games
(``reset(seed=30_000_000 + g)``, the same every round, so rounds compare paired): their
mean is the learning curve (``history.csv`` ``valid_mean``, TensorBoard ``value/valid_mean``).

Games: game ``i`` (counted over every round, so a resumed run with another ``games``
replays none) is ``game_seed(seed, i, STAGE_VALUE)`` (:mod:`jamb_env.engine.seeding`), so
no two games of a run, and no game of another seed, share dice. Each round writes
``<out>/value_iter<k>.npz`` and ``<out>/value.npz`` (the newest), appends a row to
``<out>/history.csv`` and TensorBoard scalars ``value/*``, all atomically; ``resume=True``
continues a killed run after its newest finished round.
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from agents.search import SearchAgent, ValueNet, feature_size, sheet_prior, sheet_sample
from agents.training.config import MAX_ROLLOUT, MAX_TORCH_THREADS, finite_number
from agents.training.run_lock import holding_run_dir
from agents.training.run_logs import logs_from, tensorboard_writer
from agents.training.runs import check_new_run_dir, check_same_rules, refuse_links, save_config, save_ruleset_record
from jamb_env import JambEnv, load_ruleset
from jamb_env.engine.doors import MAX_WIDTH, SEED_LIMIT, layer_widths
from jamb_env.engine.seeding import STAGE_VALUE, game_seed
from jamb_env.rules import layout
from jamb_env.utils.files import atomic_write_text, check_output_folder, read_regular_bytes

#: Most processes a run may play its games on.
MAX_WORKERS = 64
#: Most validation games a round may play.
MAX_VALID_GAMES = 100_000
#: Validation games of the learning curve: ``reset(seed=VALID_SEED_BASE + g)`` (docs: seeding).
VALID_SEED_BASE = 30_000_000
TARGETS = ("return", "backup")
HISTORY_FIELDS = (
    "iteration",
    "policy",
    "games",
    "samples",
    "mean_score",
    "fit_loss",
    "holdout_loss",
    "valid_mean",
    "wall_s",
    "cpu_s",
)


@dataclass
class ValueConfig:
    """Settings of a value-network run (YAML keys of the same names).

    Attributes:
        ruleset: preset name. seed: run seed (game seeds, weight initialisation).
        iterations: rounds (round 0 plays expectimax, or the search agent on the prior
            alone with ``target: backup``).
        games: games played per round. first_games: games of round 0 (default ``games``).
        hidden: hidden layer widths.
        target: ``"return"`` (λ-returns of the points: policy iteration) or ``"backup"``
            (exact one-turn backups with λ along the path: value iteration); module docstring.
        lam: λ of the targets (``return``: rounds >= 1). epochs: passes over a round's samples.
        valid_games: validation games each round's network plays (0..100,000; 0: none).
        lr: Adam learning rate. batch_size: samples per gradient step.
        workers: processes playing games (1..64). torch_threads: threads of the fit (1..256).
        Bounds: batch_size 1..1,048,576, hidden widths 1..MAX_WIDTH (65,536), seed 0..2**32-1; a value out of
        its range is a ValueError naming the key and what is allowed.
    """

    ruleset: str = "classic"
    seed: int = 0
    iterations: int = 4
    games: int = 2000
    first_games: int | None = None
    hidden: tuple[int, ...] = (256, 256)
    target: str = "return"
    lam: float = 0.7
    valid_games: int = 0
    epochs: int = 10
    lr: float = 1e-3
    batch_size: int = 512
    workers: int = 2
    torch_threads: int = 1

    def __post_init__(self):
        def is_int(x):
            return isinstance(x, int) and not isinstance(x, bool)

        ints = ("seed", "iterations", "games", "epochs", "batch_size", "workers", "torch_threads", "valid_games")
        for name in (*ints, "first_games"):
            value = getattr(self, name)
            if not (is_int(value) or (name == "first_games" and value is None)):
                raise ValueError(f"value config: {name} must be an integer, got {value!r}")
        for name in ("lam", "lr"):
            value = getattr(self, name)
            if not finite_number(value):  # an int too large for a float too: torch would fail on it
                raise ValueError(
                    f"value config: {name} must be a number (a finite one), got {value!r} "
                    "(write 1.0e-3, not 1e-3: YAML reads that as text)"
                )
        if self.target not in TARGETS:
            raise ValueError(f"value config: target must be 'return' or 'backup', got {self.target!r}")
        if not isinstance(self.ruleset, str):
            raise ValueError(f"value config: ruleset must be a preset name or a rules YAML path, got {self.ruleset!r}")
        try:
            self.rules_name = load_ruleset(self.ruleset).name  # RulesetError (a ValueError) for an unknown preset
        except FileNotFoundError as exc:
            raise ValueError(f"value config: ruleset {self.ruleset!r}: {exc}") from None
        if not isinstance(self.hidden, (list, tuple)) or not all(is_int(h) for h in self.hidden):
            raise ValueError(f"value config: hidden must be a list of positive integer widths, got {self.hidden!r}")
        self.hidden = tuple(self.hidden)
        checks = {
            "seed": 0 <= self.seed < SEED_LIMIT,
            "iterations": self.iterations >= 1,
            "games": self.games >= 2,
            "first_games": self.first_games is None or self.first_games >= 2,
            "epochs": self.epochs >= 1,
            "batch_size": 1 <= self.batch_size <= MAX_ROLLOUT,
            "workers": 1 <= self.workers <= MAX_WORKERS,
            "torch_threads": 1 <= self.torch_threads <= MAX_TORCH_THREADS,
            "lr": self.lr > 0,
            "lam": 0.0 <= self.lam <= 1.0,
            "valid_games": 0 <= self.valid_games <= MAX_VALID_GAMES,
            "hidden": layer_widths(self.hidden),
        }
        for name, ok in checks.items():
            if not ok:
                allowed = {
                    "lam": "0..1",
                    "lr": "> 0",
                    "hidden": f"a list of widths 1..{MAX_WIDTH:,}",
                    "seed": "0..2**32-1",
                    "games": ">= 2",
                    "first_games": ">= 2",
                    "workers": f"1..{MAX_WORKERS}",
                    "batch_size": f"1..{MAX_ROLLOUT:,}",
                    "torch_threads": f"1..{MAX_TORCH_THREADS}",
                    "valid_games": f"0..{MAX_VALID_GAMES:,}",
                }.get(name, ">= 1")
                raise ValueError(f"value config: {name} = {getattr(self, name)!r} is not allowed ({allowed})")

    @classmethod
    def from_dict(cls, d: dict) -> ValueConfig:
        """Raises ValueError naming unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"value config: unknown keys {unknown}; allowed: {sorted(known)}")
        return cls(**d)


#: ``policy`` of :func:`play` for the search agent on the prior alone (a network that outputs 0).
PRIOR = "prior"


def _agent(rules, policy: str | None):
    """expectimax (``policy`` None), the search agent on the prior alone (:data:`PRIOR`) or
    on the network file ``policy``."""
    from agents.heuristic import ExpectimaxAgent

    if policy is None:
        return ExpectimaxAgent()
    if policy == PRIOR:
        F = feature_size(rules)
        zero = ValueNet([(np.zeros((F, 1), np.float32), np.zeros(1, np.float32))], 0.0, 1.0, {"ruleset": rules.name})
        return SearchAgent(zero, ruleset=rules)
    return SearchAgent(policy, ruleset=rules)


def _play_chunk(args) -> list[tuple]:
    """Play the games of ``seeds`` with ``policy`` (:func:`_agent`); per game (afterstate
    features float32 (T - 1, F), their priors (T - 1,), points of the T writes, score, and
    with ``backup`` the backups B float64 (T - 1,) of the afterstates, else None). With
    ``record`` False only the scores are kept (the features are empty)."""
    ruleset, policy, backup, record, seeds = args
    rules = load_ruleset(ruleset)
    agent = _agent(rules, policy)
    env = JambEnv(ruleset=rules)
    lay = layout(rules)
    out = []
    for s in seeds:
        obs, _ = env.reset(seed=int(s))
        feats, priors, points, B, pending, total, done = [], [], [], [], 0.0, 0.0, False
        while not done:
            a = agent.act(env, obs, env.action_masks())
            obs, r, term, trunc, _ = env.step(a)
            done = term or trunc
            pending += r
            total += r
            if lay.is_write(a):
                points.append(pending)
                pending = 0.0
                if record and not done:
                    st = env.game
                    feats.append(sheet_sample(rules, st))
                    priors.append(sheet_prior(rules, st))
                    if backup:  # the next turn's plans: act reuses them (the turn cache)
                        B.append(agent.fresh_turn_value(env, st))
        points[-1] += pending
        F = feature_size(rules)
        out.append(
            (
                np.array(feats, np.float32).reshape(-1, F),
                np.array(priors),
                np.array(points),
                total,
                np.array(B) if backup else None,
            )
        )
    return out


def _map(fn, items: list, head: tuple, workers: int) -> list:
    """``fn((*head, chunk))`` over ``workers`` interleaved chunks of ``items``; the
    results in the order of ``items``."""
    if workers == 1:
        return fn((*head, items))
    from agents.evaluation.solitaire import _worker_signals, stop_pool

    chunks = [items[i::workers] for i in range(workers)]
    # spawned, not forked: a child forked after the fit inherits torch's thread pools in a
    # state that made it play 10x slower. The workers leave SIGINT and SIGTERM to this
    # process, which kills them when anything stops it (left alone after a SIGTERM, they
    # waited on their task queue for ever, orphaned).
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_signals
    )
    try:
        parts = list(pool.map(fn, [(*head, c) for c in chunks]))
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown()
    out = [None] * len(items)
    for w, part in enumerate(parts):
        out[w::workers] = part
    return out


def default_run_dir(cfg: ValueConfig) -> Path:
    """``runs/value_<name>_s<seed>``: ``<name>`` is the loaded ruleset's name when it is a
    plain file name (:func:`agents.shipped.shipped_name`), else the ruleset file's stem with
    every character but letters, digits, ``_``, ``.`` and ``-`` made ``_`` (never the path
    text: the folder stays under ``runs/``)."""
    import re

    from agents.shipped import shipped_name

    name = cfg.rules_name
    if not shipped_name(name):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(str(cfg.ruleset)).stem).lstrip(".") or "ruleset"
    return Path("runs") / f"value_{name}_s{cfg.seed}"


def play(
    ruleset: str, policy: str | None, seeds: list[int], workers: int = 1, backup: bool = False, record: bool = True
) -> list[tuple]:
    """Games of ``seeds`` in order (see :func:`_play_chunk`), over ``workers`` processes."""
    return _map(_play_chunk, seeds, (ruleset, policy, backup, record), workers)


def targets(games, net: ValueNet | None, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(features (N, F), network targets (N,)) of the games: the target of each afterstate
    (module docstring: with backups B when the games carry them, else the return: Monte Carlo
    without ``net``, the λ-return of ``prior + net`` with it) minus its prior."""
    X = np.concatenate([g[0] for g in games])
    V = net(X) if net is not None and len(X) else np.zeros(len(X))
    Y, at = [], 0
    for f, prior, p, _, B in games:
        n = len(f)  # afterstates s_0 .. s_{n-1} after writes 0 .. n-1; p has the n + 1 writes' points
        v = prior + V[at : at + n]  # V(s_t) of the value that played
        G = np.zeros(n)
        g = 0.0
        for t in range(n - 1, -1, -1):
            last = t + 1 == n
            if B is not None:
                g = B[t] + (0.0 if last else lam * (g - v[t + 1]))
            elif net is None:
                g = p[t + 1] + g
            else:
                g = p[t + 1] + (0.0 if last else (1 - lam) * v[t + 1] + lam * g)
            G[t] = g
        Y.append(G - prior)
        at += n
    return X, np.concatenate(Y)


def fit(
    X: np.ndarray, Y: np.ndarray, cfg: ValueConfig, net: ValueNet | None, meta: dict, rng: np.random.Generator
) -> tuple[ValueNet, float, float]:
    """Fit a network to (X, Y), warm-started from ``net``; (network, training loss,
    hold-out loss) with the losses in standardised units, 5% of the samples held out."""
    import torch

    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(int(rng.integers(2**31)))
    mean, std = (net.mean, net.std) if net is not None else (float(Y.mean()), float(Y.std() or 1.0))
    sizes = [X.shape[1], *cfg.hidden, 1]
    mods = []
    for i in range(len(sizes) - 1):
        mods.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods)
    if net is not None and [W.shape for W, _ in net.layers] == [(a, b) for a, b in zip(sizes[:-1], sizes[1:])]:
        linears = [m for m in model if isinstance(m, torch.nn.Linear)]
        with torch.no_grad():
            for lin, (W, b) in zip(linears, net.layers):
                lin.weight.copy_(torch.from_numpy(W.T.copy()))
                lin.bias.copy_(torch.from_numpy(b))
    order = rng.permutation(len(X))
    n_hold = max(1, len(X) // 20)
    hold, train = order[:n_hold], order[n_hold:]
    Xt = torch.from_numpy(X)
    Yt = torch.from_numpy(((Y - mean) / std).astype(np.float32))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss = float("nan")
    for _ in range(cfg.epochs):
        perm = train[rng.permutation(len(train))]
        total, count = 0.0, 0
        for i in range(0, len(perm), cfg.batch_size):
            idx = torch.from_numpy(perm[i : i + cfg.batch_size])
            pred = model(Xt[idx])[:, 0]
            batch_loss = torch.nn.functional.mse_loss(pred, Yt[idx])
            opt.zero_grad()
            batch_loss.backward()
            opt.step()
            total += float(batch_loss.detach()) * len(idx)
            count += len(idx)
        loss = total / max(count, 1)
    with torch.no_grad():
        hold_loss = float(
            torch.nn.functional.mse_loss(model(Xt[torch.from_numpy(hold)])[:, 0], Yt[torch.from_numpy(hold)])
        )
    layers = [
        (m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
        for m in model
        if isinstance(m, torch.nn.Linear)
    ]
    return ValueNet(layers, mean, std, meta), loss, hold_loss


def _read_history(out: Path) -> list[dict]:
    """The finished iterations of the run in ``out`` ([] if there is no ``history.csv``).

    Raises:
        ValueError: ``history.csv`` is damaged (the message names it and why): not a
            regular file of at most :data:`jamb_env.utils.files.SMALL_FILE_BYTES`, not UTF-8 CSV,
            a row out of order, ``games`` not an integer >= 0 or ``wall_s`` not a finite
            number >= 0.
    """
    path = out / "history.csv"
    if not os.path.lexists(path):
        return []
    known = ", ".join(HISTORY_FIELDS)
    try:
        text = read_regular_bytes(path).decode("utf-8")  # a FIFO or a device: an error, not a hang
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        for i, row in enumerate(rows):
            if int(row["iteration"]) != i:
                raise ValueError(f"row {i + 1} is iteration {row['iteration']!r}")
            if int(row["games"]) < 0:
                raise ValueError(f"row {i + 1}: games {row['games']!r} is negative")
            wall = float(row["wall_s"])
            if not math.isfinite(wall) or wall < 0:
                raise ValueError(f"row {i + 1}: wall_s {row['wall_s']!r} is not a finite number >= 0")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is damaged (not UTF-8 text: {exc.reason} at byte {exc.start}); the fields are {known}"
        ) from None
    except (OSError, csv.Error, KeyError, ValueError, TypeError) as exc:  # OSError: a FIFO, a device, a folder
        raise ValueError(f"{path} is damaged ({' '.join(str(exc).split())[:300]}); the fields are {known}") from None
    return rows


def _write_history(out: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HISTORY_FIELDS)
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(out / "history.csv", buf.getvalue())


@holding_run_dir("out")  # one writer per run folder (agents/training/run_lock.py)
def train_value(cfg: ValueConfig, out: str | Path, resume: bool = False, log=print) -> Path:
    """Run the policy iteration of ``cfg`` into folder ``out``; return the newest network's path.

    A run stopped before its first iteration finished (only its ``config.yaml`` written)
    resumes from iteration 0.

    Raises:
        FileExistsError: ``out`` holds a run and ``resume`` is False, or holds another kind
            of run (a ``config.yaml`` that is not a value run's: jamb-train's, self-play's),
            or networks of a run's names (``value.npz``, ``value_iter<k>.npz``) but no value run.
        ConfigError: a new run (not ``resume``) in a folder that is not empty (a ValueError;
            :func:`.runs.check_new_run_dir` with ``empty``, as jamb-train-selfplay's).
        ValueError: ``resume`` of a folder with no value run, or whose network is of
            another ruleset, seed or size; a damaged ``history.csv``.
        RunFolderBusy: another process writes in ``out`` (a ValueError; the folder is locked for the whole run).
    """
    out = Path(out)
    check_output_folder(out)  # OSError: a file in the way, no permission
    if resume and out.is_dir():
        refuse_links(out)  # the run rewrites its files: never through a link
    rows = _read_history(out)
    if rows and not resume:
        raise FileExistsError(
            f"{out} already holds a value run ({len(rows)} iterations); "
            "pass --resume to continue it or choose a new --out"
        )
    if not rows and os.path.lexists(out / "config.yaml") and not _started_here(out):  # it would replace its config.yaml
        raise FileExistsError(f"{out} holds another run (its config.yaml is not a value run's); choose a new --out")
    clashes = sorted(p.name for p in out.glob("value*.npz") if p.name == "value.npz" or p.name.startswith("value_iter"))
    if not rows and clashes and not _started_here(out):  # no value run's: a network someone put there
        raise FileExistsError(
            f"{out} holds {', '.join(clashes[:3])}, which the run would replace "
            "(it holds no value run: no config.yaml of one); choose a new --out"
        )
    if not resume:  # a new run never writes beside someone's files
        check_new_run_dir(out, empty=True, option="--out")
    if resume and not rows and _started_here(out):
        log(f"{out}: no finished iteration (the run stopped during its first): starting it again from iteration 0")
        net = None
    else:
        net = _resumed_net(cfg, out, rows) if resume else None
    if resume:
        check_same_rules(out, cfg.ruleset)  # the same name, edited rules: refused too
    save_ruleset_record(out, cfg.ruleset)
    save_config(out, _yaml(cfg))
    # TensorBoard's step is the iteration: a resumed run hides what a killed one logged after its last finished one
    writer = tensorboard_writer(out, logs_from(resume, len(rows) - 1))
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, STAGE_VALUE, len(rows)]))
    started = time.time() - sum(float(r["wall_s"]) for r in rows)
    for it in range(len(rows), cfg.iterations):
        net = _round(cfg, out, it, net, rows, rng, started)
        _write_history(out, rows)
        row = rows[-1]
        for k in ("mean_score", "fit_loss", "holdout_loss", "valid_mean"):
            if row[k] != "":
                writer.add_scalar(f"value/{k}", row[k], it)
        writer.flush()
        valid = f"; validation {row['valid_mean']}" if row["valid_mean"] != "" else ""
        log(
            f"iteration {it}: {row['policy']} played {row['games']} games, mean {row['mean_score']}; "
            f"{row['samples']} samples, loss {row['fit_loss']} (hold-out {row['holdout_loss']}){valid}; "
            f"{row['wall_s']} s"
        )
    writer.close()
    return out / "value.npz"


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the playing workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _round(cfg: ValueConfig, out: Path, it: int, net, rows: list[dict], rng, started: float) -> ValueNet:
    """Round ``it``: play, fit, save the network, validate; appends the round's row to ``rows``."""
    t0, c0 = time.time(), _cpu_seconds()
    backup = cfg.target == "backup"
    if net is not None:
        policy = str(out / f"value_iter{it - 1}.npz")
    else:
        policy = PRIOR if backup else None
    played = sum(int(r["games"]) for r in rows)  # games of earlier rounds: never replayed
    n = cfg.games if it > 0 or cfg.first_games is None else cfg.first_games
    seeds = [game_seed(cfg.seed, played + i, STAGE_VALUE) for i in range(n)]
    games = play(cfg.ruleset, policy, seeds, workers=cfg.workers, backup=backup)
    X, Y = targets(games, net, cfg.lam)
    meta = {
        "ruleset": cfg.rules_name,
        "ruleset_digest": load_ruleset(cfg.ruleset).digest,  # a search agent plays the network on these rules only
        "iteration": it,
        "games": played + n,
        "seed": cfg.seed,
        "hidden": list(cfg.hidden),
        "target": cfg.target,
        "lam": cfg.lam,
    }
    net, loss, hold = fit(X, Y, cfg, net, meta, rng)
    net.meta["train_s"] = round(time.time() - started, 1)
    net.save(out / f"value_iter{it}.npz")
    net.save(out / "value.npz")
    valid = ""
    if cfg.valid_games:
        seeds = [VALID_SEED_BASE + g for g in range(cfg.valid_games)]
        scores = [g[3] for g in play(cfg.ruleset, str(out / "value.npz"), seeds, cfg.workers, record=False)]
        valid = round(float(np.mean(scores)), 2)
    rows.append(
        {
            "iteration": it,
            "policy": {None: "expectimax", PRIOR: "search(prior)"}.get(policy, f"search(iter {it - 1})"),
            "games": n,
            "samples": len(X),
            "mean_score": round(float(np.mean([g[3] for g in games])), 2),
            "fit_loss": round(loss, 5),
            "holdout_loss": round(hold, 5),
            "valid_mean": valid,
            "wall_s": round(time.time() - t0, 1),
            "cpu_s": round(_cpu_seconds() - c0, 1),
        }
    )
    return net


#: What a resumed value run may change: how far it goes and how fast (not what it learns).
RESUME_CHANGES = ("iterations", "workers", "torch_threads")


def resumed_config(cfg: ValueConfig, given: set[str], out: Path) -> ValueConfig:
    """The config a ``--resume`` of the value run in ``out`` trains on: its saved
    ``config.yaml``, with :data:`RESUME_CHANGES` taken from ``cfg`` where ``given`` names them
    (the keys the user set: a config file's and the options'). ``cfg`` itself when ``out``
    holds no value run's saved config (nothing to continue, or another run: :func:`train_value`
    says so).

    Raises:
        ValueError: a given setting other than :data:`RESUME_CHANGES` differs from the run's
            (a resumed run's rounds were played with the first ones: before, the defaults
            silently replaced them), or a saved config that does not read.
    """
    from jamb_env.rules.ruleset import read_yaml_mapping

    if not _started_here(out):  # no value run's config (none, or another run's: train_value refuses it)
        return cfg
    saved = ValueConfig.from_dict(read_yaml_mapping(out / "config.yaml", ValueError))
    differ = [
        f"{f.name}: saved {getattr(saved, f.name)!r}, given {getattr(cfg, f.name)!r}"
        for f in fields(ValueConfig)
        if f.name in given and f.name not in RESUME_CHANGES and getattr(cfg, f.name) != getattr(saved, f.name)
    ]
    if differ:
        raise ValueError(
            f"--resume continues {out} with its saved settings; these differ: {'; '.join(differ)} "
            f"(only {', '.join(RESUME_CHANGES)} can change)"
        )
    return replace(saved, **{k: getattr(cfg, k) for k in RESUME_CHANGES if k in given})


def _started_here(out: Path) -> bool:
    """Whether ``out`` holds the ``config.yaml`` of a value run (one stopped before its first
    iteration finished has nothing else)."""
    from jamb_env.rules.ruleset import read_yaml_mapping

    try:
        saved = read_yaml_mapping(out / "config.yaml", ValueError)
    except (OSError, ValueError):
        return False
    return "ruleset" in saved and set(saved) <= {f.name for f in fields(ValueConfig)}


def _resumed_net(cfg: ValueConfig, out: Path, rows: list[dict]) -> ValueNet:
    """The network of the newest finished iteration of the run in ``out``, checked to fit ``cfg``.

    Raises:
        ValueError: no finished iteration, a missing network, or another ruleset, seed or network.
    """
    if not rows:
        raise ValueError(f"--resume: {out} holds no value run to continue (no history.csv with a finished iteration)")
    try:
        net = ValueNet.load(out / f"value_iter{len(rows) - 1}.npz")
    except FileNotFoundError as exc:
        raise ValueError(f"--resume: {out} is damaged: {exc}") from None
    if net.ruleset != cfg.rules_name:
        raise ValueError(f"{out} trains ruleset {net.ruleset!r}, not {cfg.rules_name!r}")
    for key, now in (("seed", cfg.seed), ("hidden", list(cfg.hidden)), ("target", cfg.target)):
        if net.meta.get(key, "return" if key == "target" else None) != now:
            raise ValueError(
                f"--resume: {out} was trained with {key} {net.meta.get(key)!r}, not {getattr(cfg, key)!r}; "
                "a resumed run keeps its ruleset, seed and network"
            )
    return net


def _yaml(cfg: ValueConfig) -> str:
    import yaml

    d = asdict(cfg)
    d["hidden"] = list(cfg.hidden)
    return yaml.safe_dump(d, sort_keys=False)
