"""Self-play training on the multiplayer game: MaskablePPO plays one seat of every game
of the batched :class:`jamb_env.multiplayer_vector.SeatVecEnv` against a pool of
opponents, its own past snapshots and the baselines.

The pool (:class:`OpponentPool`): at the start of every rollout the other seats of all
games get one opponent drawn from it: with probability ``self_play`` (once a snapshot
exists) a snapshot of the learner (the newest with probability 1/2, otherwise one of the
older ones uniformly), else a baseline uniformly (a snapshot plays all its seats in one
batched forward pass). A snapshot is saved (atomically, as a checkpoint
``checkpoints/model_<steps>_steps.zip``) and joins the pool (which keeps the newest
:data:`MAX_SNAPSHOTS`, 50) every ``snapshot_freq``
steps. Every ``eval_freq`` steps the learner (deterministic, masked) plays
``eval_games`` games against each baseline on the validation seeds, seats rotated;
TensorBoard gets ``selfplay/win_rate_vs_<baseline>`` (:func:`jamb_env.rules.match.result`: k players
tied on top get 1/k each) and
``selfplay/margin_vs_<baseline>`` (own score minus the best opponent's). A run resumes
from its newest valid checkpoint (``--resume``), with every earlier snapshot back in the
pool; its TensorBoard curves go on from that checkpoint's step, what a killed attempt
logged after it moved aside (:func:`.run_logs.set_aside_events`). A run stopped before its
first checkpoint (its settings saved, nothing learnt) starts again from step 0.

A run's settings (:data:`SETTING_KEYS`) are saved (atomically) in ``selfplay.json``
(:data:`SETTINGS_FILE`) when it starts; a resumed run must have the same ones (only
``total_timesteps``, ``snapshot_freq``, ``eval_freq`` and ``eval_games`` may change).
Every run ends (SIGINT and SIGTERM included: training stops after the current step) by
saving a checkpoint of the current model and ``final_model.zip``, so ``--resume``
continues from where it stopped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.base import checked_mask
from agents.evaluation.solitaire import eval_seeds, wilson_interval
from agents.model_files import stamp_ruleset
from agents.training.config import (
    ConfigError,
    check_steps_left,
    leaves_one_sample,
)
from agents.training.run_logs import logs_from
from agents.training.runs import (
    INIT_RECORD,
    check_new_run_dir,
    check_same_rules,
    checkpoint_problem,
    checkpoint_steps,
    checkpoints,
    hold_run_dir,
    refuse_links,
    remove_killed_writes,
    resume_model,
    save_checkpoint,
    save_final,
    save_record,
    save_ruleset_record,
)
from agents.training.selfplay_settings import (  # noqa: F401 (re-exported: they were defined here)
    CHANGEABLE,
    SETTING_KEYS,
    SETTINGS_FILE,
    SelfPlaySettings,
    _is_int,
    _is_number,
    _same,
    check_run_settings,
    read_run_settings,
    ruleset_key,
    setting_differences,
)
from jamb_env.rules import load_ruleset
from jamb_env.rules import match as M

#: Seeds of the evaluation games: the validation seeds (the canonical test games stay unseen).
EVAL_SEED_BASE = 30_000_000


def load_baselines(names, ruleset: str, trusted: bool = False) -> dict[str, Any]:
    """name -> agent (:func:`agents.load`, ``trusted`` as there) of each baseline opponent, for ``ruleset``.

    Raises:
        ConfigError: a name that is no agent, or one that cannot play ``ruleset`` (``ppo``
            on a preset without a shipped model, ``optimal`` on a sheet the solver cannot
            play, ...); the message names the baseline and why.
    """
    from agents import load

    agents = {}
    for name in names:
        try:
            agents[name] = load(name, ruleset=ruleset, trusted=trusted)
        except (ValueError, OSError) as exc:  # FileNotFoundError: a model path that does not exist
            raise ConfigError(f"baseline {name!r} cannot play {ruleset}: {' '.join(str(exc).split())}") from None
    return agents


def batch_size_for(rollout: int, largest: int = 512) -> int:
    """The PPO minibatch size for a rollout of ``rollout`` (>= 2) samples: the largest
    size up to ``largest`` that leaves no last minibatch of one sample (advantage
    normalisation divides by the standard deviation of the minibatch: NaN for one)."""
    if rollout < 2:
        raise ValueError(f"a rollout needs at least 2 samples (n_envs x n_steps), got {rollout}")
    size = min(largest, rollout)
    while size > 2 and leaves_one_sample(rollout, size):
        size -= 1
    return size


class SnapshotAgent:
    """A saved self-play model as an opponent: ``act(view, observation, mask)`` is its
    deterministic masked action on the multiplayer observation; ``predict`` (SB3's) plays
    a batch of seats at once."""

    def __init__(self, model, name: str):
        self.model, self.name = model, name
        self.observation_size = int(model.observation_space.shape[0])

    def act(self, view, observation, mask) -> int:
        action, _ = self.model.predict(observation, action_masks=checked_mask(view, mask), deterministic=True)
        return int(action)

    def predict(self, observation, action_masks=None, deterministic=True):
        return self.model.predict(observation, action_masks=action_masks, deterministic=deterministic)


#: Snapshots the pool keeps in memory (the newest ones; each holds a loaded model).
MAX_SNAPSHOTS = 50


class OpponentPool:
    """Opponents drawn per game (see the module docstring); the newest
    :data:`MAX_SNAPSHOTS` snapshots stay in the pool."""

    def __init__(self, baselines: list, self_play: float = 0.8, trusted: bool = False):
        if not baselines:
            raise ValueError("the pool needs at least one baseline")
        if not 0.0 <= self_play <= 1.0:
            raise ValueError(f"self_play must be a probability in 0..1, got {self_play!r}")
        self.baselines, self.snapshots, self.self_play = list(baselines), [], float(self_play)
        self.trusted = trusted  # how snapshot files are loaded (agents.model_files.load_model)

    def add_snapshot(self, path: Path) -> None:
        from agents.model_files import load_model

        self.snapshots.append(SnapshotAgent(load_model(path, trusted=self.trusted, device="cpu"), Path(path).name))
        del self.snapshots[:-MAX_SNAPSHOTS]

    def draw(self, rng: np.random.Generator):
        if self.snapshots and rng.random() < self.self_play:
            if len(self.snapshots) == 1 or rng.random() < 0.5:
                return self.snapshots[-1]
            return self.snapshots[int(rng.integers(len(self.snapshots) - 1))]
        return self.baselines[int(rng.integers(len(self.baselines)))]


def evaluate_against(model, baseline, settings: SelfPlaySettings, games: int) -> tuple[float, float]:
    """(win rate, mean margin) of ``model`` (deterministic, masked) against ``baseline``
    in every other seat, over ``games`` games on the validation seeds (seat ``g % N``)."""
    from jamb_env.multiplayer import SeatEnv

    wins, margins = [], []
    for g, seed in enumerate(eval_seeds(games, EVAL_SEED_BASE)):
        env = SeatEnv(
            baseline,
            ruleset=settings.ruleset,
            num_players=settings.num_players,
            scoring=settings.scoring,
            reward=settings.reward,
            seat=g % settings.num_players,
        )
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, done, _, info = env.step(int(action))
        outcome = M.result(info["scores"])  # the one definition: a tie on top shares the win
        wins.append(float(outcome.win[info["seat"]]))
        margins.append(int(outcome.margin[info["seat"]]))
    return float(np.mean(wins)), float(np.mean(margins))


class SelfPlayCallback(BaseCallback):
    """Snapshots into the pool and win-rate evaluations, on multiples of their
    frequencies counted from step 0 (so a resumed run keeps the schedule)."""

    def __init__(
        self,
        pool: OpponentPool,
        run_dir: Path,
        settings: SelfPlaySettings,
        baselines: dict,
        snapshot_freq: int,
        eval_freq: int,
        eval_games: int,
        seed: int = 0,
    ):
        super().__init__()
        self.pool, self.run_dir, self.settings, self.baselines = pool, Path(run_dir), settings, baselines
        self.snapshot_freq, self.eval_freq, self.eval_games = snapshot_freq, eval_freq, eval_games
        self.rng = np.random.default_rng([int(seed), 17])

    def _init_callback(self) -> None:
        n = self.model.num_timesteps
        self.next_snapshot = (n // self.snapshot_freq + 1) * self.snapshot_freq
        self.next_eval = (n // self.eval_freq + 1) * self.eval_freq

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        self.training_env.set_opponent(self.pool.draw(self.rng))

    def _on_rollout_end(self) -> None:
        n = self.model.num_timesteps
        if n >= self.next_eval:
            self.next_eval = (n // self.eval_freq + 1) * self.eval_freq
            for name, agent in self.baselines.items():
                rate, margin = evaluate_against(self.model, agent, self.settings, self.eval_games)
                self.logger.record(f"selfplay/win_rate_vs_{name}", rate)
                self.logger.record(f"selfplay/margin_vs_{name}", margin)
                low, high = wilson_interval(rate, self.eval_games)
                print(
                    f"step {n}: win rate {rate:.3f} (95% CI {low:.3f}–{high:.3f}), margin {margin:+.1f} against {name}"
                )
        if n >= self.next_snapshot:
            self.next_snapshot = (n // self.snapshot_freq + 1) * self.snapshot_freq
            path = save_checkpoint(self.model, self.run_dir)
            self.pool.add_snapshot(path)
            self.logger.record("selfplay/pool_snapshots", len(self.pool.snapshots))


def ppo_settings(n_envs: int, n_steps: int, ppo_kwargs: dict | None = None) -> dict[str, Any]:
    """MaskablePPO's settings for rollouts of ``n_envs`` x ``n_steps``: the tuned solitaire
    ones (configs/ppo_classic_tuned.yaml) with :func:`batch_size_for`, updated by ``ppo_kwargs``.

    Raises:
        ValueError: a rollout of fewer than 2 samples, or a bad minibatch size.
    """
    rollout = n_envs * n_steps
    kwargs = {
        "n_steps": n_steps,
        "batch_size": batch_size_for(rollout),
        "n_epochs": 10,
        "learning_rate": 3e-4,
        "gamma": 1.0,
        "gae_lambda": 0.9,
        "ent_coef": 0.001,
        "policy_kwargs": {"net_arch": [256, 256]},
    }
    kwargs.update(ppo_kwargs or {})
    batch = kwargs["batch_size"]
    if not isinstance(batch, int) or batch < 2 or leaves_one_sample(rollout, batch):
        raise ValueError(
            f"batch_size must be an integer >= 2 leaving no minibatch of 1 sample in a rollout of {rollout}, got "
            f"{batch!r}"
        )
    return kwargs


def check_new_selfplay_dir(run_dir: Path) -> None:
    """A new self-play run may start in ``run_dir``: it holds no run (:func:`.runs.check_new_run_dir`),
    not even one stopped before its first checkpoint (its :data:`SETTINGS_FILE` alone).

    Raises:
        ConfigError: it holds a run, or a file a run would replace.
    """
    check_new_run_dir(run_dir)
    if os.path.lexists(run_dir / SETTINGS_FILE):
        raise ConfigError(
            f"{run_dir} already holds a self-play run ({SETTINGS_FILE}); continue it with --resume --run-dir "
            f"{run_dir} or choose another --run-dir"
        )


def _resumable(run_dir: Path, record: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[Path]]:
    """``(saved settings or None, checkpoints newest first)`` of the run to resume in
    ``run_dir``, after removing what a kill cut short; no checkpoints (``[]``) for a run
    stopped before its first one (its settings saved: it starts again from step 0).

    Raises:
        ConfigError: the run has other settings, or neither a checkpoint nor saved settings.
    """
    saved = read_run_settings(run_dir)
    if saved is not None:
        different = setting_differences(saved, record)
        if different:
            raise ConfigError(
                f"{run_dir} was started with other settings ({'; '.join(different)}); a resumed run keeps them"
            )
    refuse_links(run_dir)
    check_same_rules(run_dir, record["ruleset"])
    remove_killed_writes(run_dir)
    candidates = checkpoints(run_dir)
    if not candidates and saved is None:
        raise ConfigError(f"no checkpoint in {run_dir} to resume")
    return saved, candidates


def _resumed_model(candidates: list[Path], venv, run_dir: Path, settings: SelfPlaySettings, pool: OpponentPool):
    """The model of the newest checkpoint that loads, with every checkpoint up to its step
    (oldest first, as they were added) back in ``pool``.

    Raises:
        ConfigError: none loads, or they do not fit these settings' env.
    """
    try:
        model, _ = resume_model(candidates, venv, {"device": "cpu"}, trusted=pool.trusted)
    except ConfigError as exc:  # another observation or action space
        raise ConfigError(
            f"the checkpoints in {run_dir} do not fit these settings (ruleset {settings.ruleset}, "
            f"{settings.num_players} players, scoring {settings.scoring}): resume with the settings "
            "the run was started with"
        ) from exc
    if model is None:
        raise ConfigError(
            f"no checkpoint in {run_dir} loads (see the messages above); remove the folder to start the run again"
        )
    for path in reversed(checkpoints(run_dir)):
        if checkpoint_steps(path) <= model.num_timesteps:
            problem = checkpoint_problem(path)
            if problem is not None:
                print(f"leaving snapshot {path} out of the pool: {problem}")
                continue
            try:
                pool.add_snapshot(path)
            except Exception as exc:  # a whole zip that is no model: torch, pickle and SB3 raise assorted errors
                print(
                    f"leaving snapshot {path} out of the pool: cannot be loaded: {type(exc).__name__}: "
                    f"{' '.join(str(exc).split())[:200]}"
                )
    return model


def train_selfplay(
    settings: SelfPlaySettings,
    run_dir: Path,
    total_timesteps: int,
    n_envs: int = 64,
    n_steps: int = 64,
    baselines: tuple[str, ...] = ("random", "greedy"),
    self_play: float = 0.8,
    snapshot_freq: int = 50_000,
    eval_freq: int = 50_000,
    eval_games: int = 50,
    seed: int = 0,
    resume: bool = False,
    ppo_kwargs: dict | None = None,
    handle_signals: bool = True,
    baseline_agents: Mapping[str, Any] | None = None,
    init_from: str | Path | None = None,
    trusted: bool = False,
):
    """Train (or resume) a self-play run in ``run_dir``; returns the model.

    A new run saves its settings in ``run_dir/selfplay.json``; ``resume`` continues the
    run from its newest checkpoint that loads, with the same settings, and its TensorBoard
    curves from that checkpoint's step (what a killed attempt logged after it is moved aside:
    :func:`.run_logs.set_aside_events`). Training ends by saving (atomically) a checkpoint of
    the model and ``run_dir/final_model.zip``. With ``handle_signals`` (in the main
    thread), SIGINT or SIGTERM during training stops it after the current step, saves both
    and raises :class:`agents.training.train.TrainingInterrupted` naming them (a
    KeyboardInterrupt); before training starts, or a second time, they raise it at once.
    ``baseline_agents`` (name -> agent, from :func:`load_baselines`) saves loading the
    baselines again; by default they are loaded here, before anything is written.
    ``init_from`` (a new run only): the learner starts from that model's weights
    (:func:`.weights.init_from` with ``widen``: a solitaire model of the ruleset
    plays its seat exactly as it plays alone, the extra inputs weighted 0), and the run
    folder gets :data:`~.runs.INIT_RECORD`; ``ppo_kwargs`` are the PPO settings (a
    config's ``algo:`` keys, :func:`ppo_settings`). Model files (``init_from``, the
    checkpoints and snapshots, baselines given as paths) are read as data
    (:mod:`agents.model_files`); ``trusted``: as SB3 loads them, running their pickles.

    A resumed run whose checkpoint has ``total_timesteps`` steps or more is refused
    (nothing to train) before anything is written: ``final_model.zip`` is left as it was.

    The run folder is locked for the whole run (:func:`.runs.hold_run_dir`): a second
    writer there, a ``resume`` included, is refused before it reads or writes anything.

    Raises:
        ConfigError: ``run_dir`` holds a run (a new run), or another process writes there
            (:class:`.run_lock.RunFolderBusy`); a baseline that cannot play the ruleset (nothing written); an
            ``init_from`` that is no model of this ruleset's actions and network, or given
            with ``resume`` (nothing written);
            ``resume`` and the run has other settings, neither a checkpoint nor saved
            settings (with them and no checkpoint it starts again from step 0), none that loads,
            one that does not fit these settings' env, or ``total_timesteps`` steps
            already.
        ValueError: a rollout of fewer than 2 samples, or a bad minibatch size.
        TrainingInterrupted: SIGINT or SIGTERM.
    """
    return _SelfPlayRun(**locals()).train()  # every argument, by name


@dataclass
class _SelfPlayRun:
    """The arguments of one :func:`train_selfplay` call (the same names) and its steps:
    the checks before anything is written, the learner (new or resumed), the training."""

    settings: SelfPlaySettings
    run_dir: Path
    total_timesteps: int
    n_envs: int
    n_steps: int
    baselines: tuple[str, ...]
    self_play: float
    snapshot_freq: int
    eval_freq: int
    eval_games: int
    seed: int
    resume: bool
    ppo_kwargs: dict | None
    handle_signals: bool
    baseline_agents: Mapping[str, Any] | None
    init_from: str | Path | None
    trusted: bool

    def train(self):
        """:func:`train_selfplay`: check, hold the run folder, train, save; the model."""
        import torch

        from agents.training.callbacks import StopRequest
        from agents.training.train import TrainingInterrupted, _Signals

        settings = self.settings
        kwargs = ppo_settings(self.n_envs, self.n_steps, self.ppo_kwargs)
        M.check_match(load_ruleset(settings.ruleset), settings.num_players, settings.scoring)
        run_dir = self.run_dir = Path(self.run_dir)
        record = settings.saved(self.seed, self.baselines, self.self_play, self.n_envs, self.n_steps)
        if self.resume and self.init_from is not None:
            raise ConfigError("init_from starts a new run; a resumed run goes on from its own checkpoint")
        with hold_run_dir(run_dir):  # one writer per run folder, from before its checks to the end
            saved, candidates = self._check_folder(record)
            agents = (
                dict(self.baseline_agents)
                if self.baseline_agents is not None
                else load_baselines(self.baselines, settings.ruleset, self.trusted)
            )  # before any write

            stop = StopRequest()
            with _Signals(stop, self.handle_signals) as signals:
                torch.set_num_threads(1)
                pool = OpponentPool(list(agents.values()), self_play=self.self_play, trusted=self.trusted)
                venv = self._envs(pool)
                if self.resume:
                    model = self._resumed_model(venv, pool, kwargs, record, saved, candidates)
                else:
                    model = self._new_model(venv, kwargs, record)
                stamp_ruleset(model, load_ruleset(settings.ruleset))  # every model file of the run names its rules
                checkpoint, final = self._learn(model, signals, stop, pool, agents, candidates)
        if stop.signum is not None:
            raise TrainingInterrupted(stop.signum, run_dir, int(model.num_timesteps), checkpoint, final)
        return model

    def _envs(self, pool: OpponentPool):
        """The learner's games: ``n_envs`` tables of :class:`~jamb_env.multiplayer_vector.SeatVecEnv`,
        opponents drawn from ``pool``."""
        from jamb_env.multiplayer_vector import SeatVecEnv

        settings = self.settings
        return SeatVecEnv(
            self.n_envs,
            pool.draw(np.random.default_rng([self.seed, 16])),
            ruleset=settings.ruleset,
            num_players=settings.num_players,
            scoring=settings.scoring,
            reward=settings.reward,
            reward_scale=settings.reward_scale,
            seed=self.seed,
        )

    def _check_folder(self, record: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[Path] | None]:
        """A new run's folder is free; a resumed run's saved settings and checkpoints
        (:func:`_resumable`). ConfigError (nothing written) otherwise."""
        run_dir = self.run_dir
        if not self.resume:
            check_new_selfplay_dir(run_dir)
            return None, None
        saved, candidates = _resumable(run_dir, record)
        if not candidates and (run_dir / INIT_RECORD).exists():  # a model file a data file names is never loaded
            raise ConfigError(
                f"{run_dir} was started from a model ({INIT_RECORD}) and stopped before its first checkpoint: "
                "remove the folder and start the run again with its init_from"
            )
        return saved, candidates

    def _new_model(self, venv, kwargs: dict[str, Any], record: Mapping[str, Any]):
        """A new run's learner (from ``init_from``'s weights if given, checked before
        anything is written); the run's settings (and the model it started from) saved."""
        from agents.training.weights import init_from as start_from_model

        model = self._fresh_model(venv, kwargs)
        started_from = start_from_model(  # checked before anything is written; other rules said
            model, self.init_from, widen=True, trusted=self.trusted, rules=load_ruleset(self.settings.ruleset)
        )
        save_ruleset_record(self.run_dir, self.settings.ruleset)
        save_record(self.run_dir / SETTINGS_FILE, record)
        if started_from is not None:
            save_record(self.run_dir / INIT_RECORD, started_from)
        return model

    def _fresh_model(self, venv, kwargs: dict[str, Any]):
        """A new MaskablePPO learner (CPU, the run's seed and PPO settings)."""
        from sb3_contrib import MaskablePPO

        return MaskablePPO("MlpPolicy", venv, seed=self.seed, device="cpu", verbose=0, **kwargs)

    def _resumed_model(self, venv, pool, kwargs, record, saved, candidates):
        """A resumed run's learner: from its newest checkpoint that loads (its snapshots
        into the pool), or a new one when it stopped before its first checkpoint."""
        run_dir = self.run_dir
        if not candidates:  # stopped before its first checkpoint: nothing learnt to lose
            print(
                f"no checkpoint in {run_dir} (the run stopped before its first one): starting it again from step 0 "
                f"with its saved settings"
            )
            return self._fresh_model(venv, kwargs)
        model = _resumed_model(candidates, venv, run_dir, self.settings, pool)
        check_steps_left(run_dir, int(model.num_timesteps), self.total_timesteps)
        if saved is None:  # a run from before selfplay.json: its checkpoint fits these settings
            save_record(run_dir / SETTINGS_FILE, record)
        return model

    def _learn(self, model, signals, stop, pool, agents, candidates) -> tuple[Path, Path]:
        """Train up to ``total_timesteps`` (snapshots, evaluations, a stop request) and save
        the model as it ends; its checkpoint and final model."""
        from stable_baselines3.common.callbacks import CallbackList

        from agents.training.callbacks import StopOnRequestCallback, run_logger

        run_dir = self.run_dir
        # a new events file per (re)start: history kept, what came after the checkpoint hidden
        model.set_logger(
            run_logger(run_dir, logs_from(self.resume, model.num_timesteps if candidates else None), progress=False)
        )
        try:
            callback = CallbackList(
                [
                    SelfPlayCallback(
                        pool,
                        run_dir,
                        self.settings,
                        agents,
                        self.snapshot_freq,
                        self.eval_freq,
                        self.eval_games,
                        self.seed,
                    ),
                    StopOnRequestCallback(stop),
                ]
            )
            left = max(self.total_timesteps - model.num_timesteps, 0)
            signals.graceful = True
            model.learn(left, callback=callback, reset_num_timesteps=False)
            # the model as it ends (a snapshot at this step held it before its last update)
            return save_final(model, run_dir)
        finally:
            model.logger.close()
