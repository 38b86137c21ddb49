"""Self-play training on the multiplayer game: MaskablePPO plays one seat of every game
of the batched :class:`jamb_env.multiplayer_vector.SeatVecEnv` against a pool of
opponents, its own past snapshots and the baselines.

The pool (:class:`OpponentPool`): at the start of every rollout the other seats of all
games get one opponent drawn from it: with probability ``self_play`` (once a snapshot
exists) a snapshot of the learner (the newest with probability 1/2, otherwise one of the
older ones uniformly), else a baseline uniformly (a snapshot plays all its seats in one
batched forward pass). A snapshot is saved (atomically, as a checkpoint
``checkpoints/model_<steps>_steps.zip``) and joins the pool every ``snapshot_freq``
steps. Every ``eval_freq`` steps the learner (deterministic, masked) plays
``eval_games`` games against each baseline on the validation seeds, seats rotated;
TensorBoard gets ``selfplay/win_rate_vs_<baseline>`` (a tie counts 1/2) and
``selfplay/margin_vs_<baseline>`` (own score minus the best opponent's). A run resumes
from its newest valid checkpoint (``--resume``), with every earlier snapshot back in the
pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from jamb_env.rules import load_ruleset
from jamb_env.rules import match as M

from .runs import checkpoint_steps, checkpoints, resume_model, save_checkpoint

#: Seeds of the evaluation games: the validation seeds (the canonical test games stay unseen).
EVAL_SEED_BASE = 30_000_000


class SnapshotAgent:
    """A saved self-play model as an opponent: ``act(view, observation, mask)`` is its
    deterministic masked action on the multiplayer observation; ``predict`` (SB3's) plays
    a batch of seats at once."""

    def __init__(self, model, name: str):
        self.model, self.name = model, name
        self.observation_size = int(model.observation_space.shape[0])

    def act(self, view, observation, mask) -> int:
        action, _ = self.model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    def predict(self, observation, action_masks=None, deterministic=True):
        return self.model.predict(observation, action_masks=action_masks, deterministic=deterministic)


class OpponentPool:
    """Opponents drawn per game (see the module docstring)."""

    def __init__(self, baselines: list, self_play: float = 0.8):
        if not baselines:
            raise ValueError("the pool needs at least one baseline")
        if not 0.0 <= self_play <= 1.0:
            raise ValueError(f"self_play must be a probability in 0..1, got {self_play!r}")
        self.baselines, self.snapshots, self.self_play = list(baselines), [], float(self_play)

    def add_snapshot(self, path: Path) -> None:
        from sb3_contrib import MaskablePPO

        self.snapshots.append(SnapshotAgent(MaskablePPO.load(path, device="cpu"), Path(path).name))

    def draw(self, rng: np.random.Generator):
        if self.snapshots and rng.random() < self.self_play:
            if len(self.snapshots) == 1 or rng.random() < 0.5:
                return self.snapshots[-1]
            return self.snapshots[int(rng.integers(len(self.snapshots) - 1))]
        return self.baselines[int(rng.integers(len(self.baselines)))]


@dataclass
class SelfPlaySettings:
    ruleset: str
    num_players: int
    scoring: str
    reward: str
    reward_scale: float


def evaluate_against(model, baseline, settings: SelfPlaySettings, games: int) -> tuple[float, float]:
    """(win rate, mean margin) of ``model`` (deterministic, masked) against ``baseline``
    in every other seat, over ``games`` games on the validation seeds (seat ``g % N``)."""
    from jamb_env.multiplayer import SeatEnv

    wins, margins = [], []
    for g in range(games):
        env = SeatEnv(baseline, ruleset=settings.ruleset, num_players=settings.num_players, scoring=settings.scoring,
                      reward=settings.reward, seat=g % settings.num_players)
        obs, info = env.reset(seed=EVAL_SEED_BASE + g)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, done, _, info = env.step(int(action))
        s, p = info["scores"], info["seat"]
        wins.append((1.0 + M.ranks_reward(s)[p]) / 2.0 if settings.num_players == 2 else float(s[p] > max(x for q, x in enumerate(s) if q != p)))
        margins.append(s[p] - max(x for q, x in enumerate(s) if q != p))
    return float(np.mean(wins)), float(np.mean(margins))


class SelfPlayCallback(BaseCallback):
    """Snapshots into the pool and win-rate evaluations, on multiples of their
    frequencies counted from step 0 (so a resumed run keeps the schedule)."""

    def __init__(self, pool: OpponentPool, run_dir: Path, settings: SelfPlaySettings, baselines: dict,
                 snapshot_freq: int, eval_freq: int, eval_games: int, seed: int = 0):
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
                print(f"step {n}: win rate {rate:.3f}, margin {margin:+.1f} against {name}")
        if n >= self.next_snapshot:
            self.next_snapshot = (n // self.snapshot_freq + 1) * self.snapshot_freq
            path = save_checkpoint(self.model, self.run_dir)
            self.pool.add_snapshot(path)
            self.logger.record("selfplay/pool_snapshots", len(self.pool.snapshots))


def train_selfplay(settings: SelfPlaySettings, run_dir: Path, total_timesteps: int, n_envs: int = 64, n_steps: int = 64,
                   baselines: tuple[str, ...] = ("random", "greedy"), self_play: float = 0.8, snapshot_freq: int = 50_000,
                   eval_freq: int = 50_000, eval_games: int = 50, seed: int = 0, resume: bool = False,
                   ppo_kwargs: dict | None = None):
    """Train (or resume) a self-play run in ``run_dir``; returns the model. The final
    model is saved atomically as ``run_dir/final_model.zip``."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    from agents import load
    from jamb_env.files import atomic_save_model
    from jamb_env.multiplayer_vector import SeatVecEnv

    torch.set_num_threads(1)
    M.check_match(load_ruleset(settings.ruleset), settings.num_players, settings.scoring)
    run_dir = Path(run_dir)
    agents = {name: load(name, ruleset=settings.ruleset) for name in baselines}
    pool = OpponentPool(list(agents.values()), self_play=self_play)

    venv = SeatVecEnv(n_envs, pool.draw(np.random.default_rng([seed, 16])), ruleset=settings.ruleset,
                      num_players=settings.num_players, scoring=settings.scoring, reward=settings.reward,
                      reward_scale=settings.reward_scale, seed=seed)
    model = None
    if resume:
        model, _ = resume_model(checkpoints(run_dir), venv, {"device": "cpu"})
        for path in reversed(checkpoints(run_dir)):  # oldest first, as they were added
            if model is not None and checkpoint_steps(path) <= model.num_timesteps:
                pool.add_snapshot(path)
    if model is None:
        # the tuned solitaire settings (configs/ppo_classic_tuned.yaml); rollouts of n_envs x n_steps
        kwargs = {"n_steps": n_steps, "batch_size": min(512, n_envs * n_steps), "n_epochs": 10, "learning_rate": 3e-4, "gamma": 1.0,
                  "gae_lambda": 0.9, "ent_coef": 0.001, "policy_kwargs": {"net_arch": [256, 256]}}
        kwargs.update(ppo_kwargs or {})
        model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **kwargs)
    model.set_logger(configure(str(run_dir), ["tensorboard"]))  # a new events file per (re)start: history kept
    callback = SelfPlayCallback(pool, run_dir, settings, agents, snapshot_freq, eval_freq, eval_games, seed)
    left = max(total_timesteps - model.num_timesteps, 0)
    model.learn(left, callback=callback, reset_num_timesteps=False)
    atomic_save_model(model, run_dir / "final_model.zip")
    return model

