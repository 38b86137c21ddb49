"""Throughput measurements (``jamb-bench``): env steps per second under random legal play,
MaskablePPO and RLlib PPO training rates, and seconds per game of agents.

    single_env_loop / aec_loop / vec_env_loop    random legal play for some seconds -> (steps, env s, sampling s)
    env_rows(presets, seconds, repeats)          those loops on every env kind, per preset
    train_rows(total_steps)                      the PPO trainer with each vec-env kind
    trainer_rows(total_steps, config)            the PPO trainer on one config, in each precision
    training_rows(ruleset, nets, rounds)         the lean loop (precision auto and fp32) beside a plain fp32 loop
    rllib_rows(total_steps, runners)             RLlib PPO with each number of env runners (needs the ray extra)
    agent_rows(specs, ruleset, games)            seconds per game of agents (agents.load names and paths)

Each ``*_rows`` function returns a list of dicts (one per measured row: the keys are in its
docstring) and prints a progress line per row on stderr.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from jamb_env import JambEnv, JambVecEnv
from jamb_env.engine.random_play import sample_actions


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


def vec_env_loop(make, seconds: float, seed: int = 0, warmup: int = 3):
    """Random legal play on a VecEnv. Returns (steps, env seconds, sampling seconds)."""
    env = make()
    env.seed(seed)
    env.reset()
    rng = np.random.default_rng(seed)
    masks_of = (
        (lambda: env.action_masks())
        if hasattr(env, "action_masks")
        else (lambda: np.stack(env.env_method("action_masks")))
    )
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
    """The peak memory (MiB) that ``tracemalloc`` traces while ``fn(*args)`` runs."""
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def env_rows(presets: list[str], seconds: float, repeats: int = 5) -> list[dict]:
    """Per preset and env kind: the median over ``repeats`` runs of ``seconds / repeats``
    each of env steps/s (and with sampling), their range, and the peak memory. Rows:
    ``preset``, ``env`` (the kind), ``games``, ``env_steps_per_s``, ``env_range`` (min, max),
    ``with_sampling_per_s``, ``peak_mb``."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    rows = []
    for preset in presets:
        configs = [("JambEnv", 1, None)]
        configs += [
            (f"JambVecEnv({n})", n, (lambda n=n, preset=preset: JambVecEnv(n, preset))) for n in (1, 64, 1024, 4096)
        ]
        configs += [
            (
                f"DummyVecEnv({n} x JambEnv)",
                n,
                (lambda n=n, p=preset: DummyVecEnv([lambda: JambEnv(p) for _ in range(n)])),
            )
            for n in (8, 64)
        ]
        # multiplayer, 2 players: the AEC env (every move) and the learner seat of SeatVecEnv
        # (learner moves; the random opponents' moves happen inside each step, not counted)
        configs += [("multiplayer raw_env (AEC, 2p)", 1, "aec")]
        configs += [
            (f"SeatVecEnv({n}, 2p)", n, (lambda n=n, preset=preset: seat_vec_env(n, preset))) for n in (64, 1024)
        ]
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
            rows.append(
                {
                    "preset": preset,
                    "env": name,
                    "games": n,
                    "env_steps_per_s": rate,
                    "env_range": (min(env_rates), max(env_rates)),
                    "with_sampling_per_s": float(np.median(all_rates)),
                    "peak_mb": mem,
                }
            )
            print(
                f"  {preset:10s} {name:28s} {rate:>12,.0f} steps/s (median of {repeats}: "
                f"{min(env_rates):,.0f}-{max(env_rates):,.0f})",
                file=sys.stderr,
            )
    return rows


# ---------------------------------------------------------------------------- training
def train_rows(total_steps: int) -> list[dict]:
    """The PPO trainer on the default config with each vec-env kind: steps/s and env share.
    Rows: ``vec_env`` (batched, dummy, subproc), ``n_envs``, ``steps_per_s``, ``env_share``
    (the share of wall time spent inside the env, 0..1)."""
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnvWrapper

    from agents.training.config import CONFIGS_DIR, load_config
    from agents.training.envs import make_env_fn
    from agents.training.train import new_model

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

    cfg = load_config(CONFIGS_DIR / "ppo_classic.yaml")
    torch.set_num_threads(cfg["torch_threads"])
    rows = []
    for kind in ("batched", "dummy", "subproc"):
        n = (
            cfg["env"]["n_envs"] if kind == "batched" else min(cfg["env"]["n_envs"], 8)
        )  # one env object (a process) per game
        if kind == "batched":
            venv = JambVecEnv(n, cfg["ruleset"], seed=0, reward_scale=cfg["env"]["reward_scale"])
        else:
            venv = make_vec_env(
                make_env_fn(cfg), n_envs=n, seed=0, vec_env_cls=DummyVecEnv if kind == "dummy" else SubprocVecEnv
            )
        env = Timed(venv)
        model = new_model(cfg, env)
        model.learn(total_timesteps=2048)  # warm-up (numba compile, torch init)
        env.seconds = 0.0
        before = model.num_timesteps
        start = time.perf_counter()
        model.learn(total_timesteps=total_steps, reset_num_timesteps=False)
        wall = time.perf_counter() - start
        done = model.num_timesteps - before  # whole rollouts: at least n_steps x n_envs, whatever total_steps says
        env.close()
        rows.append({"vec_env": kind, "n_envs": n, "steps_per_s": done / wall, "env_share": env.seconds / wall})
        print(
            f"  train {kind:8s} {done / wall:,.0f} steps/s ({done:,} steps), "
            f"env {100 * env.seconds / wall:.1f}% of wall time",
            file=sys.stderr,
        )
    return rows


def trainer_rows(total_steps: int, config: str | Path) -> list[dict]:
    """The PPO trainer on the training config ``config`` in the precision ``auto`` resolves to here
    and, when that is bf16, in fp32 too, built as ``jamb-train`` builds it (its envs, its settings,
    its torch threads): train env steps/s after one warm-up rollout, over whole rollouts of at least
    ``total_steps``. Rows: ``trainer`` (``lean bf16`` or ``lean fp32``), ``n_envs``, ``rollout`` (steps
    per rollout), ``steps_per_s``, ``update_share`` (share of wall time in the PPO updates, 0..1)."""
    import torch

    from agents.training.config import load_config
    from agents.training.envs import make_envs
    from agents.training.lean_ppo import autocast_dtype
    from agents.training.train import new_model

    rows = []
    precisions = ["bf16", "fp32"] if autocast_dtype("auto", load_config(config)["device"]) is not None else ["fp32"]
    for precision in precisions:
        trainer = f"lean {precision}"
        cfg = load_config(config, {"precision": precision})
        torch.set_num_threads(cfg["torch_threads"])
        env, eval_env = make_envs(cfg)
        eval_env.close()
        model = new_model(cfg, env)
        rollout = model.n_steps * env.num_envs
        model.learn(total_timesteps=rollout)  # warm-up (numba compile, torch init)
        update = [0.0]
        train = model.train

        def timed_train(train=train, update=update):
            t = time.perf_counter()
            train()
            update[0] += time.perf_counter() - t

        model.train = timed_train
        before = model.num_timesteps
        start = time.perf_counter()
        model.learn(total_timesteps=total_steps, reset_num_timesteps=False)
        wall = time.perf_counter() - start
        done = model.num_timesteps - before
        env.close()
        rows.append(
            {
                "trainer": trainer,
                "n_envs": env.num_envs,
                "rollout": rollout,
                "steps_per_s": done / wall,
                "update_share": update[0] / wall,
            }
        )
        print(
            f"  trainer {trainer:9s} {done / wall:,.0f} steps/s ({done:,} steps), "
            f"updates {100 * update[0] / wall:.1f}% of wall time",
            file=sys.stderr,
        )
    return rows


#: The training rows' shapes (issue 43): 1,024 games x 32 steps per rollout, 4 epochs of 8 minibatches of 4,096.
TRAINING_SHAPES = {"n_envs": 1024, "n_steps": 32, "n_epochs": 4, "batch_size": 4096}
#: The training rows' networks (hidden layers of the policy and of the value network).
TRAINING_NETS = ((256, 256), (512, 512, 256))


class ReferenceLoop:
    """A plain fp32 PPO loop (CleanRL-style, no SB3) of the lean trainer's shapes, the yardstick of
    :func:`training_rows`: the policy and value MLPs (tanh), masked sampling, GAE, 4 x 8 minibatch
    updates of the clipped loss with Adam, all in fp32 torch with no logging."""

    def __init__(self, ruleset: str, net: tuple[int, ...], shapes: dict, seed: int = 0):
        import torch

        self.torch, self.shapes = torch, shapes
        self.env = JambVecEnv(shapes["n_envs"], ruleset, seed=seed, reward_scale=0.01)
        self.obs = self.env.reset()
        obs_dim, n_actions = self.env.observation_space.shape[0], int(self.env.action_space.n)
        torch.manual_seed(seed)

        def mlp(out: int):
            sizes, layers = (obs_dim, *net), []
            for a, b in zip(sizes[:-1], sizes[1:]):
                layers += [torch.nn.Linear(a, b), torch.nn.Tanh()]
            return torch.nn.Sequential(*layers, torch.nn.Linear(sizes[-1], out))

        self.pi, self.vf = mlp(n_actions), mlp(1)
        self.opt = torch.optim.Adam([*self.pi.parameters(), *self.vf.parameters()], lr=1e-4, eps=1e-5)

    def _logp(self, obs, masks):
        return self.torch.log_softmax(self.pi(obs).masked_fill(~masks, -1e8), dim=1)

    def round(self) -> int:
        """One rollout and one update; returns the env steps played."""
        torch, (n, T) = self.torch, (self.shapes["n_envs"], self.shapes["n_steps"])
        obs, masks, acts, logps, vals, rews, dones = ([] for _ in range(7))
        with torch.no_grad():
            for _ in range(T):
                o, m = torch.as_tensor(self.obs), torch.as_tensor(self.env.action_masks())
                logp = self._logp(o, m)
                a = torch.multinomial(logp.exp(), 1)
                obs.append(o), masks.append(m), acts.append(a), logps.append(logp.gather(1, a).squeeze(1))
                vals.append(self.vf(o).squeeze(1))
                self.obs, r, d, _ = self.env.step(a.squeeze(1).numpy())
                (
                    rews.append(torch.as_tensor(r, dtype=torch.float32)),
                    dones.append(torch.as_tensor(d, dtype=torch.float32)),
                )
            last, adv, gae = self.vf(torch.as_tensor(self.obs)).squeeze(1), [None] * T, 0.0
            for t in reversed(range(T)):
                nxt = last if t == T - 1 else vals[t + 1]
                delta = rews[t] + 0.995 * nxt * (1 - dones[t]) - vals[t]
                adv[t] = gae = delta + 0.995 * 0.95 * (1 - dones[t]) * gae
        obs, masks, acts = torch.cat(obs), torch.cat(masks), torch.cat(acts)
        old, adv = torch.cat(logps), torch.cat(adv)
        ret = adv + torch.cat(vals)
        size, batch = n * T, self.shapes["batch_size"]
        params = [*self.pi.parameters(), *self.vf.parameters()]
        for _ in range(self.shapes["n_epochs"]):
            perm = torch.randperm(size)
            for start in range(0, size, batch):
                i = perm[start : start + batch]
                logp_all = self._logp(obs[i], masks[i])
                ratio = torch.exp(logp_all.gather(1, acts[i]).squeeze(1) - old[i])
                a = (adv[i] - adv[i].mean()) / (adv[i].std() + 1e-8)
                loss = -torch.min(a * ratio, a * ratio.clamp(0.9, 1.1)).mean()
                loss = loss + 0.5 * ((self.vf(obs[i]).squeeze(1) - ret[i]) ** 2).mean()
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 0.5)
                self.opt.step()
        return size


def _lean_loop(ruleset: str, net: tuple[int, ...], shapes: dict, precision: str, threads: int, compiled: bool = False):
    """The lean trainer as ``jamb-train`` builds it for ``configs/ppo_jnn_lean.yaml`` with these shapes and
    network, no imitation, no callbacks: a function playing one rollout and one update (returns its steps)."""
    from agents.training.config import CONFIGS_DIR, load_config
    from agents.training.envs import make_envs
    from agents.training.train import new_model

    overrides = {"ruleset": ruleset, "trainer": "lean", "precision": precision, "compile": compiled}
    cfg = load_config(CONFIGS_DIR / "ppo_classic.yaml", overrides)  # ConfigError: compile without a C++ compiler
    cfg.update(torch_threads=threads)
    cfg["imitation"]["games"] = 0
    cfg["env"]["n_envs"] = shapes["n_envs"]
    cfg["algo"].update(
        {k: shapes[k] for k in ("n_steps", "n_epochs", "batch_size")}, policy_kwargs={"net_arch": list(net)}
    )
    env, eval_env = make_envs(cfg)
    eval_env.close()
    model = new_model(cfg, env)
    rollout = shapes["n_envs"] * shapes["n_steps"]

    def round_() -> int:
        before = model.num_timesteps
        model.learn(total_timesteps=rollout, reset_num_timesteps=False)
        return model.num_timesteps - before

    return round_


def training_rows(
    ruleset: str = "jnn",
    nets: tuple[tuple[int, ...], ...] = TRAINING_NETS,
    rounds: int = 2,
    threads: int = 2,
    shapes: dict | None = None,
    compiled: bool = False,
) -> list[dict]:
    """Per network: the lean trainer with ``precision: auto`` (bf16 where the CPU has bf16 units) and
    ``fp32``, beside :class:`ReferenceLoop` (plain fp32) of the same shapes (:data:`TRAINING_SHAPES`), in
    this one process with ``threads`` torch threads: after a warm-up round each, ``rounds`` alternating rounds
    of one rollout and one update of every loop (so a load that comes and goes touches all alike). Rows:
    ``net`` ("256x256"), ``loop`` (lean; lean+compile, with ``compiled``: ``compile: true``; reference),
    ``precision`` (what ran: bf16 or fp32), ``steps_per_s`` (median over the rounds), ``range`` (min,
    max), ``vs_reference`` (the ratio of the medians to the reference's)."""
    import torch

    from agents.training.lean_ppo import autocast_dtype

    shapes = {**TRAINING_SHAPES, **(shapes or {})}
    torch.set_num_threads(threads)
    bf16 = autocast_dtype("auto", "cpu") is not None
    rows = []
    for net in nets:
        loops = {
            ("lean", "bf16" if bf16 else "fp32"): _lean_loop(ruleset, net, shapes, "auto", threads),
            ("reference", "fp32"): ReferenceLoop(ruleset, net, shapes).round,
        }
        if bf16:
            loops[("lean", "fp32")] = _lean_loop(ruleset, net, shapes, "fp32", threads)
        if compiled:
            for precision in ("auto", "fp32") if bf16 else ("fp32",):
                name = "bf16" if precision == "auto" else "fp32"
                loops[("lean+compile", name)] = _lean_loop(ruleset, net, shapes, precision, threads, compiled=True)
        rates: dict = {key: [] for key in loops}
        for r in range(rounds + 1):  # round 0: the warm-up (numba compile, torch init)
            for key, play in loops.items():
                torch.set_num_threads(threads)
                start = time.perf_counter()
                steps = play()
                if r:
                    rates[key].append(steps / (time.perf_counter() - start))
        reference = float(np.median(rates[("reference", "fp32")]))
        name = "x".join(map(str, net)) if len(set(net)) == 1 else "-".join(map(str, net))
        for (loop, precision), values in rates.items():
            median = float(np.median(values))
            rows.append(
                {
                    "net": name,
                    "loop": loop,
                    "precision": precision,
                    "steps_per_s": median,
                    "range": (min(values), max(values)),
                    "vs_reference": median / reference,
                }
            )
            print(
                f"  training {ruleset} {name:12s} {loop:12s} {precision}: {median:,.0f} steps/s "
                f"({min(values):,.0f}-{max(values):,.0f}), {median / reference:.2f}x the reference",
                file=sys.stderr,
            )
    return rows


def rllib_rows(total_steps: int, runners: list[int]) -> list[dict]:
    """RLlib PPO on ``agents/training/configs/rllib_classic.yaml`` with each number of env runners (a local
    Ray with max(2, runners) CPUs per row): sampling env steps/s and training env steps/s.
    Rows: ``env_runners``, ``games`` (per runner), ``sample_per_s``, ``steps_per_s``, ``steps``."""
    import logging

    import ray
    import torch

    from agents.training import rllib_train
    from agents.training.config import CONFIGS_DIR
    from agents.training.rllib_config import load_rllib_config

    for name in ("ray.rllib", "ray.tune", "ray._common.deprecation"):
        logging.getLogger(name).setLevel(logging.ERROR)
    rows = []
    for n in runners:
        cfg = load_rllib_config(
            CONFIGS_DIR / "rllib_classic.yaml", {"num_env_runners": n, "rollout_fragment_length": "auto"}
        )
        torch.set_num_threads(cfg["torch_threads"])
        ray.init(
            address="local",
            num_cpus=max(2, n),
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
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
                episodes = group.foreach_env_runner(
                    lambda er, k=per_runner: er.sample(num_timesteps=k, explore=True), local_env_runner=False
                )
            sample_wall = time.perf_counter() - start
            sampled = sum(len(e) for eps in episodes for e in eps)
            done, start = 0, time.perf_counter()
            while done < total_steps:
                done += int(algo.train()["env_runners"]["num_env_steps_sampled"])
            wall = time.perf_counter() - start
            rllib_train.stop_algo(algo)
        finally:
            ray.shutdown()
        rows.append(
            {
                "env_runners": n,
                "games": cfg["num_envs_per_env_runner"],
                "sample_per_s": sampled / sample_wall,
                "steps_per_s": done / wall,
                "steps": done,
            }
        )
        print(
            f"  rllib {n} env runner(s): sampling {sampled / sample_wall:,.0f} steps/s, "
            f"training {done / wall:,.0f} steps/s ({done:,} steps)",
            file=sys.stderr,
        )
    return rows


def agent_rows(specs: list[str], ruleset: str, games: int, trusted: bool = False) -> list[dict]:
    """Seconds per game of each agent on ``ruleset`` (one warm-up game first: numba
    compilation and table building are not timed), on validation seeds 30,000,000 + g;
    model files loaded as :func:`agents.load` does with ``trusted``.
    Rows: ``agent``, ``ruleset``, ``games``, ``s_per_game`` (the median), ``range`` (min, max).

    Raises:
        ValueError, FileNotFoundError: as :func:`agents.load` for a bad spec.
    """
    from agents import load
    from agents.evaluation.solitaire import play_game

    rows = []
    for spec in specs:
        agent, env = load(spec, ruleset=ruleset, trusted=trusted), JambEnv(ruleset=ruleset)
        play_game(agent, env, 29_999_999)
        times = []
        for g in range(games):
            start = time.perf_counter()
            play_game(agent, env, 30_000_000 + g)
            times.append(time.perf_counter() - start)
        rows.append(
            {
                "agent": spec,
                "ruleset": ruleset,
                "games": games,
                "s_per_game": float(np.median(times)),
                "range": (min(times), max(times)),
            }
        )
        print(f"  {spec} on {ruleset}: {rows[-1]['s_per_game']:.2f} s/game", file=sys.stderr)
    return rows
