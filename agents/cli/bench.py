"""Benchmarks: env steps per second under random legal play, and MaskablePPO throughput.

    python scripts/bench.py [--seconds 5] [--repeats 5] [--presets classic six_dice] [--skip-train]
        [--rllib [--rllib-runners 1 2]] [--skip-env] [--agents expectimax search [--agent-games 5]]

One run, so the ratios are comparable. Env rows time the env calls only (step and the
mask read); the random legal action sampling is timed apart and reported as its own
column; each figure is the median of `--repeats` runs (their range beside it: shared
machines are noisy). Peak memory is the peak traced by ``tracemalloc`` during a short separate run
(Python and NumPy allocations of the env and the loop). Training rows run MaskablePPO on
the default config (``configs/ppo_classic.yaml``) with each vec-env kind and report
steps/s and the share of wall time spent inside the env (step, reset, masks). With
``--rllib`` (needs ``make install-ray``), RLlib PPO rows on ``configs/rllib_classic.yaml``
with 0 (the driver samples), 1 and 2 env runners on a local Ray: the sampling rate (env
steps/s of the env runners with the policy's inference, all runners together) and the
training rate (env steps/s of whole PPO iterations: sampling and updates). With
``--agents``, seconds per game of each agent (``agents.load`` names and paths) on the
first preset, over ``--agent-games`` games of the validation seeds after one warm-up game
(median and range).

Also runnable under pytest-benchmark: ``pytest benchmarks/``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from jamb_env import JambEnv, JambVecEnv

#: The repository root (configs/).
ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- env loops
def _turn_loop(masks_of, play, seconds: float, seed: int):
    """Random legal play, one action at a time: ``masks_of()`` gives the legal mask,
    ``play(action)`` steps (and resets at a game's end). Returns (steps, env seconds,
    sampling seconds)."""
    rng = np.random.default_rng(seed)
    steps, t_env, t_sample = 0, 0.0, 0.0
    start = time.perf_counter()
    while steps == 0 or time.perf_counter() - start < seconds:  # at least one step: no division by zero
        t0 = time.perf_counter()
        mask = masks_of()
        t1 = time.perf_counter()
        action = int(rng.choice(np.flatnonzero(mask)))
        t2 = time.perf_counter()
        play(action)
        t3 = time.perf_counter()
        t_env += (t1 - t0) + (t3 - t2)
        t_sample += t2 - t1
        steps += 1
    return steps, t_env, t_sample


def single_env_loop(preset: str, seconds: float, seed: int = 0):
    """Random legal play on one JambEnv. Returns (steps, env seconds, sampling seconds)."""
    env = JambEnv(preset)
    env.reset(seed=seed)

    def play(action):
        if env.step(action)[2]:
            env.reset()

    return _turn_loop(env.action_masks, play, seconds, seed)


def aec_loop(preset: str, seconds: float, seed: int = 0, num_players: int = 2):
    """Random legal play on the multiplayer AEC env (every player's move counts as a
    step; the observation of the player to move is built each step, as ``env.last()``).
    Returns (steps, env seconds, sampling seconds)."""
    from jamb_env.multiplayer import raw_env

    env = raw_env(preset, num_players)
    env.reset(seed=seed)

    def play(action):
        env.step(action)
        if all(env.terminations.values()):
            env.reset()

    return _turn_loop(lambda: env.observe(env.agent_selection)["action_mask"], play, seconds, seed)


def seat_vec_env(n: int, preset: str, num_players: int = 2):
    """A SeatVecEnv whose opponents play uniformly random legal actions (batched)."""
    from jamb_env.multiplayer_vector import SeatVecEnv

    rng = np.random.default_rng(1)

    def random_opponent(obs, masks, views):
        return sample_actions(rng, masks)

    random_opponent.batched = True
    return SeatVecEnv(n, random_opponent, ruleset=preset, num_players=num_players, seed=0)


def sample_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniform legal action per game: argmax of uniform noise in [1, 2) on the legal
    entries (0 elsewhere), so a legal entry always wins even when its noise draw is 0."""
    return ((rng.random(masks.shape, dtype=np.float32) + 1.0) * masks).argmax(axis=1)


def vec_env_loop(make, seconds: float, seed: int = 0, warmup: int = 3):
    """Random legal play on a VecEnv. Returns (steps, env seconds, sampling seconds)."""
    env = make()
    env.seed(seed)
    env.reset()
    rng = np.random.default_rng(seed)
    masks_of = (lambda: env.action_masks()) if hasattr(env, "action_masks") else (lambda: np.stack(env.env_method("action_masks")))
    for _ in range(warmup):  # compile and warm caches
        env.step(sample_actions(rng, masks_of()))
    steps, t_env, t_sample = 0, 0.0, 0.0
    start = time.perf_counter()
    while steps == 0 or time.perf_counter() - start < seconds:  # at least one step: no division by zero
        t0 = time.perf_counter()
        masks = masks_of()
        t1 = time.perf_counter()
        actions = sample_actions(rng, masks)
        t2 = time.perf_counter()
        env.step(actions)
        t3 = time.perf_counter()
        t_env += (t1 - t0) + (t3 - t2)
        t_sample += t2 - t1
        steps += env.num_envs
    env.close()
    return steps, t_env, t_sample


def peak_memory_mb(fn, *args) -> float:
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def env_rows(presets: list[str], seconds: float, repeats: int = 5) -> list[dict]:
    """Per preset and env kind: the median over ``repeats`` runs of ``seconds / repeats``
    each of env steps/s (and with sampling), their range, and the peak memory."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    rows = []
    for preset in presets:
        configs = [("JambEnv", 1, None)]
        configs += [(f"JambVecEnv({n})", n, (lambda n=n: JambVecEnv(n, preset))) for n in (1, 64, 1024, 4096)]
        configs += [(f"DummyVecEnv({n} x JambEnv)", n, (lambda n=n: DummyVecEnv([lambda: JambEnv(preset) for _ in range(n)]))) for n in (8, 64)]
        # multiplayer, 2 players: the AEC env (every move) and the learner seat of SeatVecEnv
        # (learner moves; the random opponents' moves happen inside each step, not counted)
        configs += [("multiplayer raw_env (AEC, 2p)", 1, "aec")]
        configs += [(f"SeatVecEnv({n}, 2p)", n, (lambda n=n: seat_vec_env(n, preset))) for n in (64, 1024)]
        for name, n, make in configs:
            env_rates, all_rates = [], []
            for _ in range(repeats):
                if make is None:
                    steps, t_env, t_sample = single_env_loop(preset, seconds / repeats)
                elif make == "aec":
                    steps, t_env, t_sample = aec_loop(preset, seconds / repeats)
                else:
                    steps, t_env, t_sample = vec_env_loop(make, seconds / repeats)
                env_rates.append(steps / t_env)
                all_rates.append(steps / (t_env + t_sample))
            if make is None:
                mem = peak_memory_mb(single_env_loop, preset, min(seconds, 0.5))
            elif make == "aec":
                mem = peak_memory_mb(aec_loop, preset, min(seconds, 0.5))
            else:
                mem = peak_memory_mb(vec_env_loop, make, min(seconds, 0.5), 0, 1)
            rate = float(np.median(env_rates))
            rows.append({"preset": preset, "env": name, "games": n, "env_steps_per_s": rate,
                         "env_range": (min(env_rates), max(env_rates)),
                         "with_sampling_per_s": float(np.median(all_rates)), "peak_mb": mem})
            print(f"  {preset:10s} {name:28s} {rate:>12,.0f} steps/s (median of {repeats}: "
                  f"{min(env_rates):,.0f}-{max(env_rates):,.0f})", file=sys.stderr)
    return rows


# ---------------------------------------------------------------------------- training
def train_rows(total_steps: int) -> list[dict]:
    """MaskablePPO on the default config with each vec-env kind: steps/s and env share."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnvWrapper

    from agents.training.config import load_config
    from agents.training.envs import make_env_fn

    class Timed(VecEnvWrapper):
        """Accumulates the wall time spent inside the wrapped VecEnv."""

        def __init__(self, venv):
            super().__init__(venv)
            self.seconds = 0.0

        def reset(self):
            t = time.perf_counter()
            out = self.venv.reset()
            self.seconds += time.perf_counter() - t
            return out

        def step_async(self, actions):
            t = time.perf_counter()
            self.venv.step_async(actions)
            self.seconds += time.perf_counter() - t

        def step_wait(self):
            t = time.perf_counter()
            out = self.venv.step_wait()
            self.seconds += time.perf_counter() - t
            return out

        def env_method(self, method_name, *args, indices=None, **kwargs):
            t = time.perf_counter()
            out = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
            self.seconds += time.perf_counter() - t
            return out

        def has_attr(self, attr_name):
            return self.venv.has_attr(attr_name)

    cfg = load_config(ROOT / "configs" / "ppo_classic.yaml")
    torch.set_num_threads(cfg["torch_threads"])
    rows = []
    for kind in ("batched", "dummy", "subproc"):
        n = cfg["env"]["n_envs"]
        if kind == "batched":
            venv = JambVecEnv(n, cfg["ruleset"], seed=0, reward_scale=cfg["env"]["reward_scale"])
        else:
            venv = make_vec_env(make_env_fn(cfg), n_envs=n, seed=0, vec_env_cls=DummyVecEnv if kind == "dummy" else SubprocVecEnv)
        env = Timed(venv)
        model = MaskablePPO("MlpPolicy", env, seed=0, device=cfg["device"], verbose=0, **cfg["algo"])
        model.learn(total_timesteps=2048)  # warm-up (numba compile, torch init)
        env.seconds = 0.0
        before = model.num_timesteps
        start = time.perf_counter()
        model.learn(total_timesteps=total_steps, reset_num_timesteps=False)
        wall = time.perf_counter() - start
        done = model.num_timesteps - before  # whole rollouts: at least n_steps x n_envs, whatever total_steps says
        env.close()
        rows.append({"vec_env": kind, "n_envs": n, "steps_per_s": done / wall, "env_share": env.seconds / wall})
        print(f"  train {kind:8s} {done / wall:,.0f} steps/s ({done:,} steps), env {100 * env.seconds / wall:.1f}% of wall time", file=sys.stderr)
    return rows


def rllib_rows(total_steps: int, runners: list[int]) -> list[dict]:
    """RLlib PPO on ``configs/rllib_classic.yaml`` with each number of env runners (a local
    Ray with max(2, runners) CPUs per row): sampling env steps/s and training env steps/s."""
    import logging

    import ray
    import torch

    from agents.training import rllib_train
    from agents.training.rllib_config import load_rllib_config

    for name in ("ray.rllib", "ray.tune", "ray._common.deprecation"):
        logging.getLogger(name).setLevel(logging.ERROR)
    rows = []
    for n in runners:
        cfg = load_rllib_config(ROOT / "configs" / "rllib_classic.yaml", {"num_env_runners": n, "rollout_fragment_length": "auto"})
        torch.set_num_threads(cfg["torch_threads"])
        ray.init(address="local", num_cpus=max(2, n), include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        try:
            rllib_train._register_env()
            algo = rllib_train.algo_config(cfg).build_algo()
            algo.train()  # warm-up (numba compile, torch init)
            group = algo.env_runner_group
            per_runner = cfg["train_batch_size"] // max(1, n)  # one train batch, all runners together
            start = time.perf_counter()
            if n == 0:
                episodes = [algo.env_runner.sample(num_timesteps=per_runner, explore=True)]
            else:
                episodes = group.foreach_env_runner(lambda er: er.sample(num_timesteps=per_runner, explore=True), local_env_runner=False)
            sample_wall = time.perf_counter() - start
            sampled = sum(len(e) for eps in episodes for e in eps)
            done, start = 0, time.perf_counter()
            while done < total_steps:
                done += int(algo.train()["env_runners"]["num_env_steps_sampled"])
            wall = time.perf_counter() - start
            rllib_train.stop_algo(algo)
        finally:
            ray.shutdown()
        rows.append({"env_runners": n, "games": cfg["num_envs_per_env_runner"], "sample_per_s": sampled / sample_wall,
                     "steps_per_s": done / wall, "steps": done})
        print(f"  rllib {n} env runner(s): sampling {sampled / sample_wall:,.0f} steps/s, training {done / wall:,.0f} steps/s "
              f"({done:,} steps)", file=sys.stderr)
    return rows


def agent_rows(specs: list[str], ruleset: str, games: int) -> list[dict]:
    """Seconds per game of each agent on ``ruleset`` (one warm-up game first: numba
    compilation and table building are not timed), on validation seeds 30,000,000 + g."""
    from agents import load
    from agents.evaluation import play_game

    rows = []
    for spec in specs:
        agent, env = load(spec, ruleset=ruleset), JambEnv(ruleset=ruleset)
        play_game(agent, env, 29_999_999)
        times = []
        for g in range(games):
            start = time.perf_counter()
            play_game(agent, env, 30_000_000 + g)
            times.append(time.perf_counter() - start)
        rows.append({"agent": spec, "ruleset": ruleset, "games": games, "s_per_game": float(np.median(times)),
                     "range": (min(times), max(times))})
        print(f"  {spec} on {ruleset}: {rows[-1]['s_per_game']:.2f} s/game", file=sys.stderr)
    return rows


def markdown(env_table: list[dict], train_table: list[dict], rllib_table: list[dict] | None = None,
             agent_table: list[dict] | None = None) -> str:
    lines = ["| preset | env | games | env steps/s (median) | range | with sampling | peak MB |", "|---|---|---|---|---|---|---|"] if env_table else []
    for r in env_table:
        lo, hi = r["env_range"]
        lines.append(f"| {r['preset']} | {r['env']} | {r['games']} | {r['env_steps_per_s']:,.0f} | {lo:,.0f}-{hi:,.0f} "
                     f"| {r['with_sampling_per_s']:,.0f} | {r['peak_mb']:.1f} |")
    if train_table:
        lines += [""] if lines else []
        lines += ["| MaskablePPO (configs/ppo_classic.yaml) | envs | steps/s | env share of wall time |", "|---|---|---|---|"]
        for r in train_table:
            lines.append(f"| vec_env: {r['vec_env']} | {r['n_envs']} | {r['steps_per_s']:,.0f} | {100 * r['env_share']:.1f}% |")
    if rllib_table:
        lines += [""] if lines else []
        lines += ["| RLlib PPO (configs/rllib_classic.yaml) | games per runner | sampling env steps/s | training env steps/s |",
                  "|---|---|---|---|"]
        for r in rllib_table:
            where = "the driver samples" if r["env_runners"] == 0 else f"{r['env_runners']} env runner(s)"
            lines.append(f"| num_env_runners: {r['env_runners']} ({where}) | {r['games']} | {r['sample_per_s']:,.0f} | {r['steps_per_s']:,.0f} |")
    if agent_table:
        lines += [""] if lines else []
        lines += ["| agent | ruleset | games | seconds per game (median) | range |", "|---|---|---|---|---|"]
        for r in agent_table:
            lo, hi = r["range"]
            lines.append(f"| {r['agent']} | {r['ruleset']} | {r['games']} | {r['s_per_game']:.2f} | {lo:.2f}-{hi:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per env measurement (more than 0, at most 3600)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per env measurement, reported as their median "
                        "and range (1-100; the --seconds are split between them)")
    parser.add_argument("--presets", nargs="+", default=["classic", "six_dice"], help="preset names or rules YAML paths")
    parser.add_argument("--train-steps", type=int, default=40_960, help="MaskablePPO steps per vec-env kind (at least 1)")
    parser.add_argument("--skip-train", action="store_true", help="no MaskablePPO rows")
    parser.add_argument("--skip-env", action="store_true", help="no env rows")
    parser.add_argument("--rllib", action="store_true", help="RLlib PPO rows too (needs make install-ray)")
    parser.add_argument("--rllib-runners", type=int, nargs="+", default=[0, 1, 2], help="env runner counts of the RLlib rows (0-64)")
    parser.add_argument("--agents", nargs="+", default=[], help="time these agents (seconds per game) on the first preset")
    parser.add_argument("--agent-games", type=int, default=5, help="timed games per agent (1-1000)")
    args = parser.parse_args(argv)
    if not 1 <= args.agent_games <= 1000:
        parser.error(f"--agent-games must be 1 to 1000, got {args.agent_games}")
    if any(not 0 <= n <= 64 for n in args.rllib_runners):
        parser.error(f"--rllib-runners must be 0 to 64, got {args.rllib_runners}")
    if args.rllib:
        try:
            import ray.rllib  # noqa: F401
        except ImportError:
            parser.error('--rllib: RLlib is not installed: make install-ray (or pip install -e ".[ray]")')
    if not 0 < args.seconds <= 3600:  # nan fails too
        parser.error(f"--seconds must be more than 0 and at most 3600, got {args.seconds}")
    if not 1 <= args.repeats <= 100:
        parser.error(f"--repeats must be 1 to 100, got {args.repeats}")
    if args.train_steps < 1:
        parser.error(f"--train-steps must be at least 1, got {args.train_steps}")
    from jamb_env import load_ruleset

    presets = list(dict.fromkeys(args.presets))
    for name in presets:
        try:
            load_ruleset(name)
        except ValueError as exc:
            parser.error(f"--presets {name}: {exc}")
    if args.agents:
        from agents import load

        for spec in args.agents:
            try:
                load(spec, ruleset=presets[0])
            except (ValueError, FileNotFoundError) as exc:
                parser.error(f"--agents {spec}: {exc}")
    try:
        print(f"# cores: {os.cpu_count()}, numba threads: {__import__('numba').get_num_threads()}", file=sys.stderr)
        env_table = [] if args.skip_env else env_rows(presets, args.seconds, args.repeats)
        train_table = [] if args.skip_train else train_rows(args.train_steps)
        rllib_table = rllib_rows(args.train_steps, args.rllib_runners) if args.rllib else []
        agent_table = agent_rows(args.agents, presets[0], args.agent_games) if args.agents else []
    except KeyboardInterrupt:
        print("\ninterrupted; no table", file=sys.stderr)
        return 130
    print(markdown(env_table, train_table, rllib_table, agent_table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
