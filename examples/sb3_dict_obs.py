"""sb3-contrib MaskablePPO with "MultiInputPolicy" on the Dict observation (mask_in_observation=True).

    python examples/sb3_dict_obs.py                                  # classic, 100k steps (a few minutes on one core)
    python examples/sb3_dict_obs.py --total-timesteps 512 --n-envs 2 --n-steps 128 --eval-games 2   # seconds

``gym.make("Jamb-v1", mask_in_observation=True)`` observes ``Dict({"observation": Box(D),
"action_mask": MultiBinary(A)})``; SB3's ``MultiInputPolicy`` takes Dict observations
(one flattening extractor per key, concatenated), so the envs go to SB3 unchanged, built
by SB3's own ``make_vec_env`` with ``env_kwargs``. The policy sees the mask as an input,
but what *masks* the actions is MaskablePPO's ``get_action_masks``: it calls each env's
``action_masks()`` (``JambEnv.action_masks``, reached through Gymnasium's wrappers and
SB3's ``Monitor``) at every step, and the evaluation passes the mask of the observation
(``obs["action_mask"]``) to ``predict(..., action_masks=...)``.

The evaluation plays the deterministic masked policy on the canonical evaluation games
(``reset(seed=20_000_000 + g)``, the games of ``scripts/evaluate.py``) and prints their
mean score in points. Rewards are scaled by 0.01 (the env's ``reward_scale``) and gamma
is 1 (a Jamb game has a fixed number of cells; its score is the undiscounted sum of the
rewards), as in ``configs/ppo_classic_tuned.yaml``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import jamb_env  # registers Jamb-v1
from agents.evaluation.solitaire import eval_seeds  # the canonical evaluation games: seeds 20_000_000 + g

REWARD_SCALE = 0.01  # returns in hundreds of points: value targets near 1-10
# Bounds of the arguments: numpy's seeds are 32-bit; more envs, games or threads than these
# exhaust the memory (or crash torch) long before training.
MAX_SEED = 2**32 - 1
MAX_N_ENVS = 65_536
MAX_EVAL_GAMES = 100_000
MAX_TORCH_THREADS = (os.cpu_count() or 1) * 4


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--ruleset", default="classic", help="Jamb preset name or YAML path")
    p.add_argument("--total-timesteps", type=int, default=100_000, help="env steps in all")
    p.add_argument("--n-envs", type=int, default=8, help=f"envs of the DummyVecEnv, 1..{MAX_N_ENVS}")
    p.add_argument("--n-steps", type=int, default=256, help="steps per env per rollout")
    p.add_argument(
        "--eval-games", type=int, default=20, help=f"evaluation games (the canonical seeds), 1..{MAX_EVAL_GAMES}"
    )
    p.add_argument("--seed", type=int, default=0, help=f"seed of the model and of the training envs, 0..{MAX_SEED}")
    p.add_argument("--torch-threads", type=int, default=1, help=f"torch CPU threads, 1..{MAX_TORCH_THREADS}")
    args = p.parse_args(argv)
    for name in ("total_timesteps", "n_envs", "n_steps", "eval_games", "torch_threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name, most in (("n_envs", MAX_N_ENVS), ("eval_games", MAX_EVAL_GAMES), ("torch_threads", MAX_TORCH_THREADS)):
        if getattr(args, name) > most:
            p.error(f"--{name.replace('_', '-')} must be in 1..{most:,}, got {getattr(args, name):,}")
    if not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed must be an integer in 0..{MAX_SEED} (2**32 - 1), got {args.seed}")
    try:
        jamb_env.load_ruleset(args.ruleset)
    except ValueError as e:  # RulesetError: unknown preset or invalid file; the message says why
        p.error(f"--ruleset: {e}")
    except OSError as e:  # no such file, a folder, unreadable
        what = "is a folder" if os.path.isdir(args.ruleset) else str(e)
        p.error(f"--ruleset {args.ruleset}: {what}; give a preset name or a rules YAML file")
    if args.n_envs * args.n_steps < 2:
        p.error("--n-envs x --n-steps must be at least 2 (PPO's rollout buffer)")
    return args


def evaluate(model: MaskablePPO, ruleset: str, games: int) -> list[int]:
    """Scores of the deterministic masked policy on the canonical games, played on the
    same Dict-observation env; the mask comes from the observation itself."""
    env = gym.make("Jamb-v1", ruleset=ruleset, mask_in_observation=True)
    scores = []
    for seed in eval_seeds(games):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=obs["action_mask"].astype(bool), deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        scores.append(int(info["score"]))
    env.close()
    return scores


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    start = time.perf_counter()

    env_kwargs = {"ruleset": args.ruleset, "mask_in_observation": True, "reward_scale": REWARD_SCALE}
    vec_env = make_vec_env("Jamb-v1", n_envs=args.n_envs, seed=args.seed, env_kwargs=env_kwargs)
    shapes = {key: (type(space).__name__, space.shape) for key, space in vec_env.observation_space.spaces.items()}
    print(f"Dict observation: {shapes}")

    batch = args.n_envs * args.n_steps
    # minibatches of at most 256, never a last one of a single sample (its advantage
    # normalisation would divide by a zero standard deviation: NaN)
    batch_size = min(256, batch)
    while batch_size > 2 and batch % batch_size == 1:
        batch_size -= 1
    model = MaskablePPO(
        "MultiInputPolicy",
        vec_env,
        n_steps=args.n_steps,
        batch_size=batch_size,
        n_epochs=5,
        gamma=1.0,
        gae_lambda=0.9,
        ent_coef=0.001,
        learning_rate=5e-4,
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=args.total_timesteps)  # masks: get_action_masks(env) -> env.action_masks()
    vec_env.close()
    trained = time.perf_counter() - start

    scores = evaluate(model, args.ruleset, args.eval_games)
    print(f"trained {model.num_timesteps} steps in {trained:.1f} s")
    print(
        f"deterministic evaluation: mean score {np.mean(scores):.1f} over {len(scores)} games "
        f"(seeds {eval_seeds(1)[0]}..{eval_seeds(len(scores))[-1]}; min {min(scores)}, max {max(scores)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
