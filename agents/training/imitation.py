"""Imitation of a planner: MaskablePPO's policy and value start from a teacher's games.

A run with an ``imitation`` section (:mod:`agents.training.config`) first plays
``imitation.games`` games with the teacher (an ``agents.load`` name, ``expectimax`` by
default), then fits the new model's network to them before PPO starts:

* the **policy** by the masked cross-entropy of the teacher's action (behaviour cloning:
  the same masked distribution MaskablePPO samples from);
* the **value** head by the squared error to the discounted return that followed each
  decision in the teacher's game (the config's ``gamma`` and ``env.reward_scale``), so the
  first PPO advantages are measured against a critic of the teacher's level of play and
  do not undo the cloned policy (a fresh critic's errors make the first updates noise).

The teacher's games are ``game_seed(seed, i, STAGE_IMITATION)`` (jamb_env/engine/seeding.py: no
training, fine-tuning or evaluation game); the last :data:`HOLDOUT` of them (at least one)
are held out: the per-epoch held-out loss and agreement (how often the policy's most
likely action is the teacher's) are what ``imitation.json`` and the ``imitation/``
TensorBoard tags report.

Files (in the run folder): ``imitation/games_<k>.npz``, the teacher's games in chunks
of :data:`CHUNK` (written atomically; a killed run keeps the chunks it finished and plays
only the rest), ``imitation_model.zip`` (the fitted model, before any PPO step) and
``imitation.json`` (what was fitted, the per-epoch metrics). A resumed run whose
``imitation_model.zip`` loads starts from it without fitting again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jamb_env.utils.checks import finite_number
from jamb_env.utils.files import ZIP_ERRORS, atomic_save_model, atomic_write, check_regular_input

#: Teacher games per chunk file (and per task of a parallel generation).
CHUNK = 25
#: Share of the teacher's games held out of the fit to measure it.
HOLDOUT = 0.05
#: The arrays of a chunk file: ``obs`` float32 (T, D), ``mask`` bool (T, A), ``action``
#: int16 (T,), ``reward`` float32 (T,) (scaled by ``env.reward_scale``), ``done`` bool
#: (T,) (the last decision of a game), ``seeds`` uint64-as-str (G,) the games' seeds.
ARRAYS = {"obs": np.float32, "mask": np.bool_, "action": np.int16, "reward": np.float32, "done": np.bool_}
GAMES_DIR = "imitation"
MODEL_FILE = "imitation_model.zip"
RECORD_FILE = "imitation.json"


def teacher_seeds(seed: int, games: int) -> list[int]:
    """The teacher's games of a run seeded ``seed``: ``game_seed(seed, i, STAGE_IMITATION)``."""
    from jamb_env.engine.seeding import STAGE_IMITATION, game_seeds

    return game_seeds(seed, games, STAGE_IMITATION)


def play_teacher(args: tuple) -> dict[str, np.ndarray]:
    """One chunk: ``(ruleset, teacher, seeds, reward_scale, turn_features)`` -> the arrays
    of :data:`ARRAYS` over every decision of those games, in order (a pool task)."""
    from agents import load
    from jamb_env import JambEnv

    ruleset, teacher, seeds, reward_scale, turn_features = args
    env = JambEnv(ruleset=ruleset, reward_scale=reward_scale, turn_features=turn_features, illegal_action="raise")
    agent = load(teacher, ruleset=ruleset)
    obs_l, mask_l, act_l, rew_l, done_l = [], [], [], [], []
    for seed in seeds:
        obs, _ = env.reset(seed=int(seed))
        done = False
        while not done:
            mask = env.action_masks()
            action = int(agent.act(env, obs, mask))
            obs_l.append(obs)
            mask_l.append(mask)
            act_l.append(action)
            obs, reward, done, _, _ = env.step(action)
            rew_l.append(reward)
            done_l.append(done)
    columns = {"obs": obs_l, "mask": mask_l, "action": act_l, "reward": rew_l, "done": done_l}
    return {
        **{k: np.asarray(columns[k], dtype) for k, dtype in ARRAYS.items()},
        "seeds": np.asarray([str(s) for s in seeds]),
    }


def _chunk_path(folder: Path, k: int) -> Path:
    return folder / f"games_{k:05d}.npz"


def _read_chunk(path: Path, seeds: list[int], obs_size: int, n_actions: int) -> dict[str, np.ndarray] | None:
    """The chunk at ``path`` if it holds exactly these games with these sizes, else None
    (missing, damaged, or from another config: played again)."""
    try:
        check_regular_input(path)  # a FIFO would block np.load for ever
        with np.load(path, allow_pickle=False) as data:
            chunk = {k: data[k] for k in (*ARRAYS, "seeds")}
    except (OSError, ValueError, KeyError, MemoryError, *ZIP_ERRORS):  # MemoryError: a forged huge shape
        return None
    if any(chunk[k].dtype != dtype for k, dtype in ARRAYS.items()) or chunk["seeds"].dtype.kind != "U":
        return None
    ok = (
        list(chunk["seeds"]) == [str(s) for s in seeds]
        and chunk["obs"].ndim == 2
        and chunk["obs"].shape[1] == obs_size
        and chunk["mask"].shape == (len(chunk["obs"]), n_actions)
        and all(chunk[k].ndim == 1 for k in ("action", "reward", "done"))
        and int(chunk["done"].sum()) == len(seeds)
        and all(len(chunk[k]) == len(chunk["obs"]) for k in ARRAYS)
        and bool(chunk["done"][-1])
    )
    if not ok:
        return None
    action = chunk["action"].astype(np.int64)
    in_range = bool(((action >= 0) & (action < n_actions)).all())
    legal = in_range and bool(chunk["mask"][np.arange(len(action)), action].all())
    finite = bool(np.isfinite(chunk["obs"]).all()) and bool(np.isfinite(chunk["reward"]).all())
    return chunk if legal and finite else None


def teacher_games(cfg: Mapping[str, Any], folder: Path, progress: bool = True) -> dict[str, np.ndarray]:
    """The teacher's games of the run ``cfg`` (``imitation.games`` of them), played in
    ``imitation.jobs`` processes and kept in ``folder`` in chunks; chunks already there
    for the same games are read, not played again. Returns the arrays of :data:`ARRAYS`
    concatenated in game order plus ``game`` int32 (T,), each decision's game index."""
    from tqdm.auto import tqdm

    from agents.evaluation.solitaire import process_pool
    from jamb_env import JambEnv

    im = cfg["imitation"]
    env = JambEnv(ruleset=cfg["ruleset"], turn_features=cfg["env"]["turn_features"])
    obs_size, n_actions = int(env.observation_space.shape[0]), int(env.action_space.n)
    seeds = teacher_seeds(cfg["seed"], im["games"])
    groups = [seeds[i : i + CHUNK] for i in range(0, len(seeds), CHUNK)]
    folder.mkdir(parents=True, exist_ok=True)
    chunks: dict[int, dict] = {}
    for k, group in enumerate(groups):
        chunk = _read_chunk(_chunk_path(folder, k), group, obs_size, n_actions)
        if chunk is not None:
            chunks[k] = chunk
    todo = [k for k in range(len(groups)) if k not in chunks]
    tasks = {
        k: (cfg["ruleset"], im["teacher"], groups[k], cfg["env"]["reward_scale"], cfg["env"]["turn_features"])
        for k in todo
    }

    def keep(k: int, chunk: dict) -> None:
        atomic_write(_chunk_path(folder, k), lambda f: np.savez(f, **chunk))
        chunks[k] = chunk
        bar.update(len(groups[k]))

    with tqdm(
        total=len(seeds),
        initial=len(seeds) - sum(len(groups[k]) for k in todo),
        disable=not progress,
        unit="game",
        desc=f"{im['teacher']} games",
    ) as bar:
        if im["jobs"] <= 1 or len(todo) <= 1:
            for k in todo:
                keep(k, play_teacher(tasks[k]))
        else:
            with process_pool(min(im["jobs"], len(todo))) as pool:
                futures = {k: pool.submit(play_teacher, tasks[k]) for k in todo}
                for k in todo:
                    keep(k, futures[k].result())
    parts = [chunks[k] for k in range(len(groups))]
    out = {name: np.concatenate([c[name] for c in parts]) for name in ARRAYS}
    out["game"] = np.cumsum(np.concatenate([[0], out["done"][:-1]])).astype(np.int32)
    return out


def discounted_returns(reward: np.ndarray, done: np.ndarray, gamma: float) -> np.ndarray:
    """float32 (T,): at each decision the discounted sum of the rewards from it to the end
    of its game (``done`` marks each game's last decision)."""
    out = np.empty(len(reward), np.float64)
    acc = 0.0
    for t in range(len(reward) - 1, -1, -1):
        if done[t]:
            acc = 0.0
        acc = float(reward[t]) + gamma * acc
        out[t] = acc
    return out.astype(np.float32)


def fit(
    model, games: Mapping[str, np.ndarray], im: Mapping[str, Any], gamma: float, seed: int = 0, progress: bool = True
) -> list[dict[str, float]]:
    """Fit ``model``'s policy and value to the teacher's ``games`` (module docstring) for
    ``im["epochs"]`` epochs of minibatches of ``im["batch_size"]`` decisions with Adam at
    ``im["learning_rate"]``; return one dict a epoch: ``loss``, ``policy_loss``,
    ``value_loss`` (the training minibatches' means), ``holdout_policy_loss``,
    ``holdout_value_loss``, ``holdout_agreement`` (share of held-out decisions where the
    policy's most likely action is the teacher's), ``seconds``."""
    import torch
    from tqdm.auto import tqdm

    policy = model.policy
    device = policy.device
    returns = discounted_returns(games["reward"], games["done"], gamma)
    n_games = int(games["game"][-1]) + 1
    held = max(1, math.ceil(HOLDOUT * n_games)) if n_games > 1 else 0
    train_idx = np.flatnonzero(games["game"] < n_games - held)
    hold_idx = np.flatnonzero(games["game"] >= n_games - held)
    tensors = {
        "obs": torch.as_tensor(games["obs"]),
        "mask": torch.as_tensor(games["mask"]),
        "action": torch.as_tensor(games["action"].astype(np.int64)),
        "ret": torch.as_tensor(returns),
    }
    optimizer = torch.optim.Adam(policy.parameters(), lr=float(im["learning_rate"]))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 29]))
    vf_coef = float(im["vf_coef"])
    history = []

    def losses(idx: np.ndarray):
        obs = tensors["obs"][idx].to(device)
        mask = tensors["mask"][idx].numpy()
        values, log_prob, _ = policy.evaluate_actions(obs, tensors["action"][idx].to(device), action_masks=mask)
        policy_loss = -log_prob.mean()
        value_loss = torch.nn.functional.mse_loss(values.flatten(), tensors["ret"][idx].to(device))
        return policy_loss, value_loss

    policy.set_training_mode(True)
    for epoch in range(int(im["epochs"])):
        start = time.perf_counter()
        order = rng.permutation(train_idx)
        sums = np.zeros(3)
        batches = range(0, len(order), int(im["batch_size"]))
        for i in tqdm(batches, disable=not progress, desc=f"imitation epoch {epoch + 1}/{im['epochs']}", leave=False):
            policy_loss, value_loss = losses(order[i : i + int(im["batch_size"])])
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            sums += (loss.item(), policy_loss.item(), value_loss.item())
        row = dict(zip(("loss", "policy_loss", "value_loss"), (sums / max(1, len(batches))).tolist()))
        row.update(holdout(policy, tensors, hold_idx, losses))
        row["seconds"] = time.perf_counter() - start
        history.append(row)
    policy.set_training_mode(False)
    return history


def holdout(policy, tensors: Mapping[str, Any], idx: np.ndarray, losses) -> dict[str, float]:
    """The held-out metrics of :func:`fit` (empty without held-out decisions)."""
    import torch

    if len(idx) == 0:
        return {}
    policy.set_training_mode(False)
    sums, agree = np.zeros(2), 0
    with torch.no_grad():
        for i in range(0, len(idx), 8192):
            part = idx[i : i + 8192]
            p_loss, v_loss = losses(part)
            sums += np.array([float(p_loss), float(v_loss)]) * len(part)
            obs = tensors["obs"][part].to(policy.device)
            dist = policy.get_distribution(obs, action_masks=tensors["mask"][part].numpy())
            agree += int((dist.distribution.probs.argmax(dim=1).cpu() == tensors["action"][part]).sum())
    policy.set_training_mode(True)
    return {
        "holdout_policy_loss": sums[0] / len(idx),
        "holdout_value_loss": sums[1] / len(idx),
        "holdout_agreement": agree / len(idx),
    }


def imitate(
    model, cfg: Mapping[str, Any], run_dir: Path, progress: bool = True, games_dir: Path | None = None
) -> dict[str, Any]:
    """Play the teacher's games (kept in ``games_dir``, default ``run_dir/imitation/``), fit ``model`` to them,
    save it as ``run_dir/imitation_model.zip``; return the record saved as
    ``imitation.json``: the teacher, games, decisions, settings, per-epoch ``history``,
    ``play_seconds`` and ``fit_seconds``."""
    from agents.training.runs import save_record

    im = cfg["imitation"]
    start = time.perf_counter()
    games = teacher_games(cfg, Path(games_dir) if games_dir is not None else run_dir / GAMES_DIR, progress)
    played = time.perf_counter() - start
    history = fit(model, games, im, float(model.gamma), seed=cfg["seed"], progress=progress)
    record = {
        "teacher": im["teacher"],
        "games": int(im["games"]),
        "decisions": int(len(games["action"])),
        "settings": dict(im),
        "history": history,
        "play_seconds": played,
        "fit_seconds": sum(h["seconds"] for h in history),
    }
    atomic_save_model(model, run_dir / MODEL_FILE)
    save_record(run_dir / RECORD_FILE, record)
    return record


def start_from_teacher(
    model, cfg: Mapping[str, Any], run_dir: Path, progress: bool = True, games_dir: Path | None = None
) -> dict[str, Any]:
    """Set ``model``'s weights to the run's imitation of its teacher: those of
    ``run_dir/imitation_model.zip`` when it loads and its record matches the config's
    ``imitation`` settings (a resumed run that was killed after imitating), else from a
    new :func:`imitate` (``games_dir``: where the teacher's games are kept, e.g. one folder
    shared by the trials of a search, which all imitate the same games). Returns the
    imitation record."""
    from agents.training.config import ConfigError
    from agents.training.runs import read_record
    from agents.training.weights import load_policy_weights

    saved, record = run_dir / MODEL_FILE, None
    try:
        record = read_record(run_dir / RECORD_FILE, "the imitation record")
    except ConfigError as exc:
        print(f"{exc}: imitating the teacher again")
    if record is not None and not _sound_record(record, cfg):
        print(f"{run_dir / RECORD_FILE} is not this config's imitation record: imitating the teacher again")
    elif record is not None and saved.is_file():
        try:
            load_policy_weights(model, saved)
            return record
        except (ConfigError, OSError) as exc:
            print(f"{saved} does not load ({str(exc)[:200]}): imitating the teacher again")
    return imitate(model, cfg, run_dir, progress, games_dir)


def _sound_record(record: Any, cfg: Mapping[str, Any]) -> bool:
    """Whether ``record`` (a read ``imitation.json``) is one :func:`imitate` wrote for
    ``cfg``'s settings: its settings are the config's and its history is a list of rows of
    finite numbers (what :func:`log_imitation` logs); any other record is imitated again."""
    if not isinstance(record, dict) or record.get("settings") != dict(cfg["imitation"]):
        return False
    history = record.get("history")
    return isinstance(history, list) and all(
        isinstance(row, dict) and all(isinstance(k, str) and finite_number(v) for k, v in row.items())
        for row in history
    )


def log_imitation(run_dir: Path, record: Mapping[str, Any]) -> None:
    """The per-epoch metrics of ``record`` as TensorBoard scalars ``imitation/<metric>`` at
    step = epoch (1, 2, ...) in the run's ``imitation/`` folder (a TensorBoard run of its
    own beside the PPO curves, whose steps are env steps); events an earlier attempt wrote
    there are removed first, so each epoch is logged once."""
    from torch.utils.tensorboard import SummaryWriter

    folder = run_dir / GAMES_DIR
    for old in folder.glob("*tfevents*"):
        old.unlink()
    with SummaryWriter(log_dir=str(folder)) as writer:
        for epoch, row in enumerate(record["history"], start=1):
            for key, value in row.items():
                writer.add_scalar(f"imitation/{key}", float(value), epoch)
