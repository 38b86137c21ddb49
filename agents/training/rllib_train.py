"""RLlib PPO training on Jamb (``jamb-train --engine rllib``): the same games, logs and agent interface as the SB3 path.

RLlib's PPO on the new API stack (RLModule + Learner, EnvRunner + connectors) with RLlib's
action-masking PPO module (:mod:`agents.rllib_agent`). Each env runner steps
``num_envs_per_env_runner`` games with the batched kernels (``JambVectorEnv``, RLlib's
``gym_env_vectorize_mode="vector_entry_point"``: one process, N games as arrays), wrapped by
:class:`MaskedJambVectorEnv` into the ``{"observations", "action_mask"}`` dict the module
reads. ``num_env_runners: 0`` samples in the driver; N > 0 samples in N Ray actors (one CPU
each, on any node of the cluster). The learner (one, local) updates in the driver.

Seeds (:mod:`jamb_env.engine.seeding`): slot ``i`` of env runner ``w`` in the ``a``-th start of a
run (0 for a new run, 1 for its first resume, ...) plays the dice stream of
``game_seed(seed, a * 2**32 + w * N + i, STAGE_TRAIN)`` and its later games continue that
stream, so no two slots, runners or starts share a game, and none is a validation
(``30,000,000 + g``) or canonical (``20,000,000 + g``) game. Evaluations play ``eval_games``
games with seeds ``eval_seed + g`` greedily (masked argmax), in the driver.

Self-play (``players: N`` in the config): each env runner steps ``num_envs_per_env_runner``
multiplayer games (:func:`jamb_env.multiplayer.env` with the config's ``scoring`` and
``reward``) through RLlib's ``PettingZooEnv`` (:class:`JambSelfPlayEnv`, same keys and
seeds as above), every seat played by one shared module (``shared_policy``). Evaluations
then play ``greedy`` in the other seats, the learner once in each seat per seed
(``selfplay/win_rate_vs_greedy``, ``selfplay/margin_vs_greedy``); ``selfplay/episode_return``
is a seat's mean training return (in reward units); no solitaire ``eval/`` rows, no
``evaluations.npz``.

A run folder ``runs/<ruleset>__<config>__<seed>__<time>/`` holds ``config.yaml`` (the
resolved config), TensorBoard events (``jamb/score`` and its parts for the training games
finished in each iteration; ``eval/score``, ``eval/bonus_rate``, ``eval/mean_reward`` and
the baselines ``eval/baseline_<agent>`` as flat lines; ``train/`` PPO statistics;
``time/fps``; the config as text), ``evaluations.npz`` (SB3's layout) and
``checkpoints/checkpoint_<steps>/`` (``Algorithm.save_to_path``, the newest
``keep_checkpoints`` kept). A checkpoint is written into a hidden temporary folder and
renamed into place when complete (its ``jamb_state.json`` last), so a kill at any moment
leaves the newest complete checkpoint usable; ``--resume`` continues from it (the step
count and TensorBoard curves continue: what a killed attempt logged after that step is
moved aside: :func:`.run_logs.set_aside_events`; the evaluation history is cut there).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.solitaire import wilson_interval
from agents.rllib_agent import (
    CHECKPOINT_PREFIX,
    CHECKPOINT_STATE,
    CHECKPOINTS,
    RLlibAgent,
    checkpoint_problem,
    checkpoint_step,
    checkpoints,
    import_rllib,
)
from agents.training.baselines import baseline_scores
from agents.training.config import ConfigError, check_steps_left, config_text
from agents.training.envs import eval_seeds
from agents.training.rllib_config import ENGINE
from agents.training.rllib_envs import (  # noqa: F401 (re-exported: they were defined here)
    ENV_NAME,
    START_STRIDE,
    _register_env,
    _shared_policy,
    algo_config,
    make_env,
    module_id,
    module_spec,
)
from agents.training.run_logs import baseline_tags, log_start, logs_from, tensorboard_writer
from agents.training.runs import (
    append_evaluation,
    load_evaluations,
    newest_valid,
    open_run_dir,
    read_record,
    save_checkpoint_folder,
    save_config,
    save_evaluations,
    save_record,
    save_ruleset_record,
)
from agents.training.train import TrainingInterrupted
from jamb_env.utils.files import atomic_write_text

#: Run-level record of how many times the run was started (the ``a`` of the seeds).
RUN_RECORD = "rllib_run.json"
#: The most starts :data:`RUN_RECORD` may count (a forged count is read as 0).
MAX_STARTS = 2**20
TRAIN_STATS = ("policy_loss", "vf_loss", "entropy", "total_loss", "vf_explained_var")


class TrainingStopped(TrainingInterrupted):
    """SIGINT or SIGTERM stopped :func:`train_rllib` after saving a checkpoint (or before
    anything could be saved: ``checkpoint`` None). ``exit_code`` is 128 + the signal number."""

    def __str__(self) -> str:
        if self.checkpoint is not None:
            return (
                f"interrupted by {self.signal_name} at step {self.step}: saved checkpoint {self.checkpoint}; "
                f"continue with --resume {self.run_dir}"
            )
        return f"interrupted by {self.signal_name} before a checkpoint was saved" + (
            f"; continue with --resume {self.run_dir}" if self.run_dir else ""
        )


# ---------------------------------------------------------------------------- checkpoints
def checkpoint_folders(run_dir: Path) -> list[Path]:
    """Every ``checkpoints/checkpoint_<steps>`` folder of a run, complete or not, newest first
    (:func:`.runs.newest_valid` skips the incomplete ones, naming them)."""
    folder = Path(run_dir) / CHECKPOINTS
    found = [p for p in folder.iterdir() if checkpoint_step(p) is not None] if folder.is_dir() else []
    return sorted(found, key=checkpoint_step, reverse=True)


def save_algo(algo, run_dir: Path, state: Mapping[str, Any], keep: int) -> Path:
    """``algo.save_to_path`` into ``run_dir/checkpoints/checkpoint_<env_steps>`` atomically
    (:func:`.runs.save_checkpoint_folder`, :data:`CHECKPOINT_STATE` (``state``) written last);
    afterwards only the newest ``keep`` checkpoints are kept. Returns the checkpoint folder."""

    def write(tmp: Path) -> None:
        algo.save_to_path(str(tmp.resolve()))
        atomic_write_text(tmp / CHECKPOINT_STATE, json.dumps(dict(state), indent=1))

    name = f"{CHECKPOINT_PREFIX}{int(state['env_steps']):012d}"
    return save_checkpoint_folder(run_dir, name, write, keep=keep, listing=checkpoints)


def read_state(checkpoint: Path) -> dict[str, Any]:
    """A checkpoint's :data:`CHECKPOINT_STATE` (``env_steps``, ``iteration``, ``start``, ...)."""
    from jamb_env.utils.files import read_regular_bytes

    return json.loads(read_regular_bytes(Path(checkpoint) / CHECKPOINT_STATE).decode("utf-8"))


def restore(algo, candidates: list[Path]) -> tuple[dict[str, Any] | None, Path | None]:
    """``(state, checkpoint)`` of the newest of ``candidates`` that ``algo`` restores from
    (:func:`.runs.newest_valid`); ``(None, None)`` when none does."""

    def load(path: Path) -> dict[str, Any]:
        algo.restore_from_path(str(path.resolve()))
        return read_state(path)

    return newest_valid(candidates, checkpoint_problem, load, lambda state: int(state["env_steps"]))


# ---------------------------------------------------------------------------- evaluation
def play_games(agent: RLlibAgent, ruleset: str, seeds: list[int]) -> dict[str, np.ndarray]:
    """Play one game per seed (``reset(seed=s)``, the game ``JambEnv`` plays) greedily with
    ``agent``, all together on the batched kernels. Returns int64 ``(G,)`` arrays
    ``score``, ``length`` and float64 ``bonus_rate``."""
    from jamb_env.gym_vector import JambVectorEnv

    n = len(seeds)
    env = JambVectorEnv(n, ruleset, illegal_action="raise")
    obs, info = env.reset(seed=[int(s) for s in seeds])
    done = np.zeros(n, dtype=bool)
    score, length, bonus = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.float64)
    while not done.all():
        obs, _, terminated, _, info = env.step(agent.act_batch(obs, info["action_mask"]))
        length[~done] += 1
        new = terminated & ~done
        if new.any():
            score[new] = info["score"][new]
            cols = [k for k in info["column_scores"] if not k.startswith("_")]
            bonus[new] = info["score_parts"]["bonus_columns"][new] / len(cols)
            done |= new
    env.close()
    return {"score": score, "length": length, "bonus_rate": bonus}


def selfplay_vs_greedy(agent: RLlibAgent, cfg: Mapping[str, Any], seeds: list[int]) -> dict[str, float]:
    """The self-play learner against the ``greedy`` baseline at a ``players`` table (every
    other seat greedy): each seed once with the learner in each seat
    (:func:`agents.evaluation.matches.play_match`, the same dice). Returns ``win_rate``
    (:func:`jamb_env.rules.match.result`'s ``win``: 1 when the learner's score beats every
    other seat's, 1/k when k seats tie on top, else 0) and ``margin`` (the learner's score minus
    the best other), means over all games."""
    from agents import load
    from agents.evaluation.matches import _env, play_match
    from jamb_env.rules.match import result as match_result

    n = int(cfg["players"])
    greedy = load("greedy", ruleset=cfg["ruleset"])
    env = _env(cfg["ruleset"], n, cfg["scoring"])
    wins, margins = [], []
    for seed in seeds:
        for seat in range(n):
            policies = [agent if p == seat else greedy for p in range(n)]
            scores = play_match(cfg["ruleset"], policies, seed, scoring=cfg["scoring"], num_players=n, env=env)[
                "scores"
            ]
            outcome = match_result(scores)  # the one definition: a tie on top shares the win
            wins.append(float(outcome.win[seat]))
            margins.append(float(outcome.margin[seat]))
    env.close()
    return {"win_rate": float(np.mean(wins)), "margin": float(np.mean(margins))}


def eval_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The RLlib config's evaluation games in the SB3 config's terms (``eval_games`` games,
    seeds ``eval_seed + g``): :func:`.envs.eval_seeds` and
    :func:`.baselines.baseline_scores` (``eval/baseline_<agent>``) play the same games."""
    games = cfg["eval_games"]
    return {"ruleset": cfg["ruleset"], "eval": {"seed": cfg["eval_seed"], "n_envs": games, "episodes": games}}


# ---------------------------------------------------------------------------- the run
class _Stop:
    """SIGINT/SIGTERM while training: the first sets ``signum`` (the run saves a checkpoint
    after the current iteration and stops); a second raises KeyboardInterrupt at once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)

    def _handle(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
            os.write(
                2,
                (
                    f"\n{signal.Signals(signum).name}: stopping after this iteration to save a checkpoint "
                    "(again to quit at once)\n"
                ).encode(),
            )
            return
        raise KeyboardInterrupt


def _starts(run_dir: Path) -> int:
    """How many times the run in ``run_dir`` was started (its :data:`RUN_RECORD`; 0 if
    unreadable, or not an integer in 0..2**20: a start's games are ``starts x 2**32`` on)."""
    try:
        starts = (read_record(run_dir / RUN_RECORD) or {}).get("starts", 0)
    except (ConfigError, AttributeError):
        return 0
    if isinstance(starts, bool) or not isinstance(starts, int) or not 0 <= starts <= MAX_STARTS:
        print(f"{run_dir / RUN_RECORD}: starts {starts!r:.40} is not an integer in 0..{MAX_STARTS:,}; counting from 0")
        return 0
    return starts


def _env_steps(result: Mapping[str, Any]) -> int:
    runners = result.get("env_runners", {})
    return int(runners.get("num_env_steps_sampled", 0) or 0)


def train_rllib(
    cfg: dict[str, Any],
    run_dir: str | Path | None = None,
    resume: bool = False,
    address: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train RLlib PPO as ``cfg`` (:mod:`.rllib_config`) says; return a summary.

    Starts a local Ray with ``cfg["num_cpus"]`` CPUs (stopped at the end), or joins the
    cluster at ``address`` (left running). With ``resume``, ``run_dir`` is an existing run
    folder: training continues from its newest complete checkpoint (damaged ones skipped
    with a message; none: the run starts again from step 0) up to ``total_timesteps``; a
    checkpoint with that many steps already is refused before anything is written.

    Returns:
        ``{"run_dir", "checkpoint", "timesteps", "eval_score" (points, None if no
        evaluation ran), "baselines", "wall_time_s", "steps_per_s"}``.

    Raises:
        ConfigError: a bad run folder or one another process writes (the folder is locked
            for the whole run: :func:`.runs.open_run_dir`), or settings RLlib rejects, or more env runners than
            the cluster has CPUs, or (``resume``) a checkpoint with ``total_timesteps`` steps already.
        RLlibUnavailable, RayUnavailable: Ray/RLlib missing or
            unreachable. TrainingStopped: SIGINT/SIGTERM (after saving a checkpoint).
    """
    import_rllib()
    import logging

    import torch

    from agents.evaluation.ray_backend import ray_session

    for name in (
        "ray.rllib",
        "ray.tune",
        "ray._common.deprecation",
    ):  # RLlib's deprecation notes about its own example module, its API-stack banner
        logging.getLogger(name).setLevel(logging.ERROR)

    # the run folder's lock is held from before its checks to the end (one writer per folder)
    with (
        open_run_dir(cfg, run_dir, resume, listing=checkpoint_folders) as (run_dir, candidates),
        ray_session(address, cfg["num_cpus"]),
    ):
        starts = _starts(run_dir) if resume else 0
        torch.set_num_threads(cfg["torch_threads"])
        import ray

        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cfg["num_env_runners"] > cpus:
            raise ConfigError(
                f"key 'num_env_runners': {cfg['num_env_runners']} env runners need a CPU each; the Ray "
                f"{'cluster at ' + address if address else 'started here'} has {cpus} "
                f"(raise num_cpus, or join a bigger cluster with --address)"
            )
        _register_env()
        try:
            algo = algo_config(cfg, start=starts).build_algo()
        except (ValueError, TypeError) as exc:
            first = (str(exc).strip().splitlines() or [""])[
                0
            ]  # RLlib's second line suggests switching its validation off
            raise ConfigError(f"RLlib does not accept these settings: {type(exc).__name__}: {first[:400]}") from exc
        try:
            return _train_loop(cfg, algo, run_dir, candidates or [], starts, resume, progress)
        finally:
            stop_algo(algo)


def stop_algo(algo) -> None:
    """``algo.stop()``, and remove the empty ``~/ray_results/<date>`` folder RLlib's
    Trainable makes for logs it never writes here (the run's logs are in its run folder)."""
    logdir = getattr(algo, "logdir", None)
    algo.stop()
    if logdir and os.path.isdir(logdir) and not os.listdir(logdir):
        os.rmdir(logdir)


def eval_module(cfg: Mapping[str, Any]):
    """A fresh RLModule of the config's spaces, to evaluate the learner's weights in the driver."""
    spaces_env = make_env(
        {
            "ruleset": cfg["ruleset"],
            "reward_scale": cfg["reward_scale"],
            "seed": 0,
            "torch_threads": cfg["torch_threads"],
            "players": cfg.get("players"),
            "scoring": cfg["scoring"],
            "reward": cfg["reward"],
        }
    )
    try:
        if cfg.get("players"):
            seat = spaces_env.possible_agents[0]
            return module_spec(cfg, spaces_env.observation_spaces[seat], spaces_env.action_spaces[seat]).build()
        return module_spec(cfg, spaces_env.single_observation_space, spaces_env.single_action_space).build()
    finally:
        spaces_env.close()


class _Evaluator:
    """The run's evaluations: the learner's newest weights greedily on the evaluation
    games (solitaire: ``eval/`` rows beside the baselines, ``evaluations.npz``; self-play:
    against greedy). ``last`` holds the step and score of the latest one."""

    def __init__(
        self,
        cfg: Mapping[str, Any],
        algo,
        run_dir: Path,
        writer,
        history: dict[str, list],
        baselines: Mapping[str, float],
        progress: bool,
    ):
        self.cfg, self.algo, self.run_dir, self.writer, self.history = cfg, algo, run_dir, writer, history
        self.baselines, self.progress = dict(baselines), progress
        self.seeds = eval_seeds(eval_config(cfg))
        self.trained = module_id(cfg)
        self.module = eval_module(cfg)
        self.agent = RLlibAgent.from_module(self.module)
        self.last: dict[str, Any] = {"step": history["timesteps"][-1] if history["timesteps"] else None, "score": None}

    def __call__(self, step: int) -> float:
        self.module.set_state(
            self.algo.learner_group.get_weights([self.trained])[self.trained]
        )  # the learner's newest weights
        return self._selfplay(step) if self.cfg.get("players") else self._solitaire(step)

    def _solitaire(self, step: int) -> float:
        cfg, writer = self.cfg, self.writer
        games = play_games(self.agent, cfg["ruleset"], self.seeds)
        mean = float(games["score"].mean())
        for tag, value in baseline_tags(self.baselines).items():
            writer.add_scalar(tag, value, step)
        writer.add_scalar("eval/score", mean, step)
        writer.add_scalar("eval/bonus_rate", float(games["bonus_rate"].mean()), step)
        writer.add_scalar("eval/mean_reward", mean * cfg["reward_scale"], step)
        writer.add_scalar("eval/mean_ep_length", float(games["length"].mean()), step)
        writer.flush()
        append_evaluation(self.history, step, [float(s) * cfg["reward_scale"] for s in games["score"]], games["length"])
        save_evaluations(self.run_dir, self.history)
        self.last.update(step=step, score=mean)
        if self.progress:
            print(
                f"step {step:>10,}: eval score {mean:7.1f} points ({len(self.seeds)} games, seeds {self.seeds[0]}..)",
                flush=True,
            )
        return mean

    def _selfplay(self, step: int) -> float:
        result = selfplay_vs_greedy(self.agent, self.cfg, self.seeds)
        self.writer.add_scalar("selfplay/win_rate_vs_greedy", result["win_rate"], step)
        self.writer.add_scalar("selfplay/margin_vs_greedy", result["margin"], step)
        self.writer.flush()
        self.last.update(step=step, score=result["margin"], win_rate=result["win_rate"])
        if self.progress:
            low, high = wilson_interval(result["win_rate"], len(self.seeds))  # a seed in every seat: one unit
            print(
                f"step {step:>10,}: vs greedy win rate {result['win_rate']:.3f} (95% CI {low:.3f}–{high:.3f}), margin "
                f"{result['margin']:+.1f} points "
                f"({len(self.seeds)} games x {self.cfg['players']} seats, seeds {self.seeds[0]}..)",
                flush=True,
            )
        return result["margin"]


def _train_loop(
    cfg, algo, run_dir: Path, candidates: list[Path], starts: int, resume: bool, progress: bool
) -> dict[str, Any]:
    """Restore, write the run's files, train to ``total_timesteps`` with evaluations and
    checkpoints on their schedules, evaluate and save at the end; the summary."""
    state, checkpoint = restore(algo, candidates)
    if state is None and resume:
        print(f"{run_dir} has no usable checkpoint: starting it again from step 0 with its saved config")
    env_steps, iteration = (int(state["env_steps"]), int(state.get("iteration", 0))) if state else (0, 0)
    if state is not None:  # nothing to train: refused before anything is written
        check_steps_left(run_dir, env_steps, cfg["total_timesteps"])
    save_ruleset_record(run_dir, cfg["ruleset"])
    save_config(run_dir, config_text(cfg))
    save_record(run_dir / RUN_RECORD, {"engine": ENGINE, "starts": starts + 1})
    keep_before = logs_from(resume, env_steps if checkpoint is not None else None)
    history, _ = load_evaluations(run_dir, keep_before)
    baselines = {} if cfg.get("players") else baseline_scores(eval_config(cfg))
    writer = tensorboard_writer(run_dir, keep_before)
    try:
        evaluate = _Evaluator(cfg, algo, run_dir, writer, history, baselines, progress)
        log_start(writer, config_text(cfg), baselines, keep_before)
        loop = _Loop(cfg, algo, run_dir, writer, evaluate, starts, env_steps, iteration, checkpoint, progress)
        loop.run()
    finally:
        writer.close()
    return {
        "run_dir": str(run_dir),
        "checkpoint": str(loop.checkpoint),
        "timesteps": loop.env_steps,
        "eval_score": evaluate.last["score"],
        "win_rate": evaluate.last.get("win_rate"),
        "baselines": baselines,
        "wall_time_s": loop.wall,
        "steps_per_s": (loop.env_steps - env_steps) / max(loop.wall, 1e-9),
    }


class _Loop:
    """The training iterations of a run from ``env_steps``: evaluations every ``eval_freq``
    and checkpoints every ``checkpoint_freq`` env steps (counted from step 0, so a resumed
    run keeps the schedule), a last evaluation and checkpoint at the end; SIGINT/SIGTERM
    stop it after the current iteration (:class:`TrainingStopped`, after the checkpoint)."""

    def __init__(
        self,
        cfg,
        algo,
        run_dir: Path,
        writer,
        evaluate: _Evaluator,
        starts: int,
        env_steps: int,
        iteration: int,
        checkpoint: Path | None,
        progress: bool,
    ):
        self.cfg, self.algo, self.run_dir, self.writer, self.evaluate = cfg, algo, run_dir, writer, evaluate
        self.starts, self.env_steps, self.iteration, self.checkpoint, self.progress = (
            starts,
            env_steps,
            iteration,
            checkpoint,
            progress,
        )
        self.wall = 0.0

    def save(self) -> Path:
        state = {
            "env_steps": self.env_steps,
            "iteration": self.iteration,
            "start": self.starts,
            "engine": ENGINE,
            "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        path = save_algo(self.algo, self.run_dir, state, self.cfg["keep_checkpoints"])
        self.writer.flush()
        return path

    def step(self) -> float:
        """One training iteration and its TensorBoard rows; its env steps per second."""
        t0 = time.perf_counter()
        result = self.algo.train()
        wall = time.perf_counter() - t0
        self.iteration += 1
        done = _env_steps(result)
        self.env_steps += done
        _log_iteration(self.writer, result, self.env_steps, done / max(wall, 1e-9), self.evaluate.trained)
        return done / max(wall, 1e-9)

    def run(self) -> None:
        cfg, total = self.cfg, self.cfg["total_timesteps"]
        next_eval = (self.env_steps // cfg["eval_freq"] + 1) * cfg["eval_freq"]
        next_ckpt = (self.env_steps // cfg["checkpoint_freq"] + 1) * cfg["checkpoint_freq"]
        start = time.perf_counter()
        with _Stop() as stop:
            while self.env_steps < total and stop.signum is None:
                fps = self.step()
                if self.progress and stop.signum is None and self.iteration % 10 == 0:
                    print(f"step {self.env_steps:>10,}: {fps:,.0f} steps/s", flush=True)
                if next_eval <= self.env_steps < total:
                    self.evaluate(self.env_steps)
                    next_eval = (self.env_steps // cfg["eval_freq"] + 1) * cfg["eval_freq"]
                if next_ckpt <= self.env_steps < total:
                    self.checkpoint = self.save()
                    next_ckpt = (self.env_steps // cfg["checkpoint_freq"] + 1) * cfg["checkpoint_freq"]
            if stop.signum is None and self.evaluate.last["step"] != self.env_steps:
                self.evaluate(self.env_steps)
            self.wall = time.perf_counter() - start
            if self.checkpoint is None or checkpoint_step(self.checkpoint) != self.env_steps:
                self.checkpoint = self.save()
            if stop.signum is not None:
                raise TrainingStopped(stop.signum, self.run_dir, self.env_steps, self.checkpoint)


def _log_iteration(writer, result: Mapping[str, Any], step: int, fps: float, module: str = "default_policy") -> None:
    """TensorBoard rows of one training iteration at env step ``step``: the training games
    it finished (``jamb/``), the learner's statistics (``train/``), the throughput."""
    games = result.get("env_runners", {}).get("jamb_games") or []
    games = [g for g in games if isinstance(g, Mapping) and "score" in g]
    if games:
        writer.add_scalar("jamb/score", float(np.mean([g["score"] for g in games])), step)
        for key in ("upper", "bonus", "difference", "lower"):
            values = [g[key] for g in games if key in g]
            if values:
                writer.add_scalar(f"jamb/{key}", float(np.mean(values)), step)
        rates = [g["bonus_columns"] / g["columns"] for g in games if "bonus_columns" in g and g.get("columns")]
        if rates:
            writer.add_scalar("jamb/bonus_rate", float(np.mean(rates)), step)
        writer.add_scalar("jamb/games", len(games), step)
    learner = result.get("learners", {}).get(module, {})
    for key in TRAIN_STATS:
        value = learner.get(key)
        if isinstance(value, (int, float, np.floating, np.integer)) and np.isfinite(value):
            writer.add_scalar(f"train/{key}", float(value), step)
    returns = result.get("env_runners", {}).get("module_episode_returns_mean", {})
    value = returns.get(module) if isinstance(returns, Mapping) else None
    if isinstance(value, (int, float, np.floating, np.integer)) and np.isfinite(
        value
    ):  # self-play: mean return of a seat
        writer.add_scalar("selfplay/episode_return", float(value), step)
    writer.add_scalar("time/fps", fps, step)
