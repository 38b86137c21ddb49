"""CleanRL-style single-file PPO with invalid-action masking on Gymnasium's vector API.

    python examples/cleanrl_ppo.py                                   # classic, 1M steps, 64 games at once
    python examples/cleanrl_ppo.py --total-timesteps 4096 --num-envs 16 --num-steps 32 --eval-games 5   # seconds
    tensorboard --logdir runs/cleanrl_ppo

Read it top to bottom like CleanRL's ``ppo.py`` (https://docs.cleanrl.dev/rl-algorithms/ppo/):
the arguments, the environments, the agent, then the training loop (rollout, GAE,
clipped-objective update) and, at the end, a greedy evaluation on fixed games.

What is specific to Jamb:

* The environments are ``gym.make_vec("Jamb-v1", vectorization_mode="vector_entry_point")``:
  one ``jamb_env.gym_vector.JambVectorEnv`` stepping every game in compiled kernels, no
  subprocesses.
* Invalid-action masking (Huang & Ontañón, "A Closer Look at Invalid Action Masking in
  Policy Gradient Algorithms", 2020): the logits of illegal actions are set to a large
  negative number before the softmax, so the policy never samples them and their
  gradient is zero. The mask of the next step is ``infos["action_mask"]`` (int8 (N, A)),
  and the mask of every stored step is stored with it, so the update recomputes the same
  masked distribution.
* ``--gamma 1.0``: a Jamb game has a fixed number of cells to fill (52 on ``classic``;
  about 150 steps), the episode always ends, and the score is the undiscounted sum of the
  rewards, so there is nothing to discount. GAE's ``--gae-lambda`` still trades bias for
  variance.
* ``--reward-scale 0.01``: the env's own ``reward_scale`` option multiplies every reward,
  so returns are in hundreds of points (value targets around 1 to 10 instead of 100 to
  1,000), which keeps the value loss and its gradients in a range PPO's defaults suit.
  Scores printed and logged are in points.

TensorBoard (``--run-dir``): ``charts/episodic_return`` (the return of the games that
ended, in points: equal to their score), ``charts/episodic_length``, ``jamb/score`` (the
env's final score), ``charts/learning_rate``, ``charts/SPS``, ``losses/*`` (as CleanRL) and
``eval/score`` (the greedy evaluation at the end). The final evaluation plays the greedy
policy (argmax over the legal actions) on ``--eval-games`` canonical evaluation games
(``reset(seed=20_000_000 + g)``, the games of ``scripts/evaluate.py``) and prints their
mean score.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions.categorical import Categorical
from torch.utils.tensorboard import SummaryWriter

import jamb_env  # registers Jamb-v1
from agents.evaluation.solitaire import eval_seeds  # the canonical evaluation games: seeds 20_000_000 + g
from jamb_env.utils.files import check_output_folder

# Logit of an illegal action. Finite rather than -inf: Categorical's entropy multiplies
# log-probabilities by probabilities, and a finite logit gives 0 * (large) = 0 there, never NaN.
MASKED_LOGIT = -1e8

# Bounds of the arguments: numpy's seeds are 32-bit; more games or threads than these
# exhaust the memory (or crash torch) long before training.
MAX_SEED = 2**32 - 1
MAX_NUM_ENVS = 65_536
MAX_EVAL_GAMES = 100_000
MAX_TORCH_THREADS = (os.cpu_count() or 1) * 4


def build_parser() -> argparse.ArgumentParser:
    """The command line: the arguments, the environments, the algorithm, the evaluation."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--ruleset", default="classic", help="Jamb preset name or YAML path")
    p.add_argument("--seed", type=int, default=0, help=f"seed of torch, numpy and the training games, 0..{MAX_SEED}")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help=f"torch CPU threads, 1..{MAX_TORCH_THREADS} (one is fastest for this small MLP on a busy machine)",
    )
    p.add_argument("--cuda", action=argparse.BooleanOptionalAction, default=True, help="use CUDA if available")
    p.add_argument("--run-dir", default="runs/cleanrl_ppo", help="TensorBoard folder")
    p.add_argument("--save-model", action="store_true", help="save the agent's weights to RUN_DIR/agent.pt")
    # algorithm
    p.add_argument("--total-timesteps", type=int, default=1_000_000, help="env steps in all (all games together)")
    p.add_argument("--learning-rate", type=float, default=5e-4, help="Adam learning rate")
    p.add_argument(
        "--anneal-lr", action=argparse.BooleanOptionalAction, default=True, help="decay the learning rate linearly to 0"
    )
    p.add_argument("--num-envs", type=int, default=64, help=f"games stepped together, 1..{MAX_NUM_ENVS}")
    p.add_argument("--num-steps", type=int, default=128, help="steps per game per rollout")
    p.add_argument(
        "--gamma",
        type=float,
        default=1.0,
        help="discount (1: fixed-length episodes whose score is the plain sum of rewards)",
    )
    p.add_argument("--gae-lambda", type=float, default=0.9, help="GAE lambda")
    p.add_argument("--num-minibatches", type=int, default=16, help="minibatches per epoch")
    p.add_argument("--update-epochs", type=int, default=10, help="passes over each rollout")
    p.add_argument("--norm-adv", action=argparse.BooleanOptionalAction, default=True, help="normalize advantages")
    p.add_argument("--clip-coef", type=float, default=0.2, help="PPO clip coefficient")
    p.add_argument("--clip-vloss", action=argparse.BooleanOptionalAction, default=True, help="clip the value loss")
    p.add_argument("--ent-coef", type=float, default=0.001, help="entropy bonus coefficient")
    p.add_argument("--vf-coef", type=float, default=0.5, help="value loss coefficient")
    p.add_argument("--max-grad-norm", type=float, default=0.5, help="gradient clipping norm")
    p.add_argument("--target-kl", type=float, default=None, help="stop an update early past this KL")
    p.add_argument("--hidden-size", type=int, default=256, help="width of the two hidden layers")
    p.add_argument(
        "--reward-scale",
        type=float,
        default=0.01,
        help="env option multiplying every reward (0.01: returns in hundreds of points)",
    )
    # evaluation
    p.add_argument(
        "--eval-games",
        type=int,
        default=100,
        help=f"greedy evaluation games at the end, 1..{MAX_EVAL_GAMES} (the canonical seeds 20,000,000 + g)",
    )
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, each checked (a parser error, exit status 2, names a bad one), with the
    sizes derived from them (``batch_size``, ``minibatch_size``, ``num_iterations``)."""
    p = build_parser()
    args = p.parse_args(argv)
    check_numbers(p, args)
    try:
        jamb_env.load_ruleset(args.ruleset)
    except ValueError as e:  # RulesetError: unknown preset or invalid file; the message says why
        p.error(f"--ruleset: {e}")
    except OSError as e:  # no such file, a folder, unreadable
        what = "is a folder" if os.path.isdir(args.ruleset) else str(e)
        p.error(f"--ruleset {args.ruleset}: {what}; give a preset name or a rules YAML file")

    args.batch_size = args.num_envs * args.num_steps
    if args.num_minibatches > args.batch_size:
        p.error(
            f"--num-minibatches ({args.num_minibatches}) exceeds the batch size "
            f"num_envs x num_steps = {args.batch_size}"
        )
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.num_iterations = args.total_timesteps // args.batch_size
    if args.num_iterations < 1:
        p.error(
            f"--total-timesteps ({args.total_timesteps}) is less than one rollout: "
            f"num_envs x num_steps = {args.batch_size}"
        )
    check_run_dir(p, args.run_dir)  # last: it creates the folder
    return args


def check_numbers(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (``p.error``) a count, a seed, a rate or a coefficient outside its range."""
    for name in (
        "num_envs",
        "num_steps",
        "num_minibatches",
        "update_epochs",
        "total_timesteps",
        "torch_threads",
        "hidden_size",
        "eval_games",
    ):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name, most in (
        ("num_envs", MAX_NUM_ENVS),
        ("eval_games", MAX_EVAL_GAMES),
        ("torch_threads", MAX_TORCH_THREADS),
    ):
        if getattr(args, name) > most:
            p.error(f"--{name.replace('_', '-')} must be in 1..{most:,}, got {getattr(args, name):,}")
    if not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed must be an integer in 0..{MAX_SEED} (2**32 - 1), got {args.seed}")
    for name in ("learning_rate", "gamma", "clip_coef", "max_grad_norm", "reward_scale"):
        value = getattr(args, name)
        if not (np.isfinite(value) and value > 0):
            p.error(f"--{name.replace('_', '-')} must be a positive number, got {value}")
    if args.gamma > 1 or not 0 <= args.gae_lambda <= 1:
        p.error("--gamma must be in (0, 1] and --gae-lambda in [0, 1]")
    for name in ("ent_coef", "vf_coef"):
        if not (np.isfinite(getattr(args, name)) and getattr(args, name) >= 0):
            p.error(f"--{name.replace('_', '-')} must be a non-negative number, got {getattr(args, name)}")

    if args.target_kl is not None and not (np.isfinite(args.target_kl) and args.target_kl > 0):
        p.error(f"--target-kl must be a positive number, got {args.target_kl}")


def check_run_dir(p: argparse.ArgumentParser, run_dir: str) -> None:
    """Create ``run_dir`` (the TensorBoard folder) or refuse it with a parser error: empty,
    a file, under a file, or not writable."""
    if not run_dir.strip():
        p.error("--run-dir is empty: give a folder for the TensorBoard events")
    if os.path.exists(run_dir) and not os.path.isdir(run_dir):
        p.error(f"--run-dir {run_dir} is a file, not a folder")
    try:
        check_output_folder(run_dir)  # names a file on the way or a folder without permission
        os.makedirs(run_dir, exist_ok=True)
    except OSError as e:
        p.error(f"--run-dir {run_dir}: cannot create this folder ({e.strerror})" if e.strerror else f"--run-dir: {e}")
    if not os.access(run_dir, os.W_OK | os.X_OK):
        p.error(f"--run-dir {run_dir}: no permission to write in it")


def make_envs(args: argparse.Namespace, num_envs: int):
    """The vector env. SAME_STEP autoreset: the step that ends a game already returns the
    next game's first observation and mask (the ended game's last observation and score are
    in ``infos["final_obs"]`` / ``infos["final_info"]``), so every transition stored in the
    rollout is a real one. With Gymnasium's default NEXT_STEP, the step after a game ends
    only resets that slot (the action is ignored, reward 0); stored as usual it would be a
    fake transition from the terminal observation, and the loss would have to mask it out.
    ``JambVectorEnv`` takes ``autoreset_mode`` as a constructor keyword, which ``make_vec``
    passes on (in this mode ``make_vec`` refuses ``vector_kwargs``)."""
    return gym.make_vec(
        "Jamb-v1",
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        ruleset=args.ruleset,
        reward_scale=args.reward_scale,
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate MLP actor and critic (tanh, orthogonal init), as CleanRL's ppo.py."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, num_actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def masked_logits(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The actor's logits with every illegal action (``mask`` False) at MASKED_LOGIT."""
        return torch.where(mask, self.actor(x), torch.tensor(MASKED_LOGIT, device=x.device))

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        probs = Categorical(logits=self.masked_logits(x, mask))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def evaluate(agent: Agent, args: argparse.Namespace, device: torch.device) -> np.ndarray:
    """Scores of the greedy masked policy on the canonical games ``20_000_000 + g``.

    All games are played side by side: ``reset(seed=[s_0, ...])`` plays in slot ``g`` the
    game of ``JambEnv().reset(seed=s_g)``, so these are the games of ``scripts/evaluate.py``.
    A slot's first finished game is its score; the games started after it are not counted."""
    envs = make_envs(args, args.eval_games)
    obs, infos = envs.reset(seed=eval_seeds(args.eval_games))
    scores = np.full(args.eval_games, -1, dtype=np.int64)
    with torch.no_grad():
        while (scores < 0).any():
            x = torch.as_tensor(obs, device=device)
            mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool, device=device)
            action = agent.masked_logits(x, mask).argmax(dim=1)
            obs, _, terminated, truncated, infos = envs.step(action.cpu().numpy())
            new = (terminated | truncated) & (scores < 0)
            if new.any():
                scores[new] = infos["final_info"]["score"][new]
    envs.close()
    return scores


class Rollout:
    """The storage of one rollout: ``(num_steps, num_envs)`` of each, as CleanRL's ppo.py,
    plus the legal-action mask of every stored step (``(num_steps, num_envs, num_actions)``)."""

    def __init__(self, args: argparse.Namespace, obs_dim: int, num_actions: int, device: torch.device):
        shape = (args.num_steps, args.num_envs)
        self.obs = torch.zeros(shape + (obs_dim,), device=device)
        self.masks = torch.zeros(shape + (num_actions,), dtype=torch.bool, device=device)
        self.actions = torch.zeros(shape, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(shape, device=device)
        self.rewards = torch.zeros(shape, device=device)
        self.dones = torch.zeros(shape, device=device)
        self.values = torch.zeros(shape, device=device)


class Games:
    """Where the games stand between steps: the next observation, mask and done flag of
    every slot, each slot's running return and length, and the env steps so far."""

    def __init__(self, envs, args: argparse.Namespace, device: torch.device):
        self.device = device
        next_obs, infos = envs.reset(seed=args.seed)  # game i: jamb_env.engine.seeding.game_seed(seed, i)
        self.next_obs = torch.as_tensor(next_obs, device=device)
        self.next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool, device=device)
        self.next_done = torch.zeros(args.num_envs, device=device)
        self.ep_return = np.zeros(args.num_envs)  # running return of each slot's game (scaled rewards)
        self.ep_length = np.zeros(args.num_envs, dtype=np.int64)
        self.global_step = 0


def collect(agent: Agent, envs, games: Games, buf: Rollout, args: argparse.Namespace) -> dict[str, list]:
    """Play ``num_steps`` steps of every game into ``buf``; returns the returns (points),
    lengths and scores of the games that ended."""
    ended_games: dict[str, list] = {"returns": [], "lengths": [], "scores": []}
    device = games.device
    for step in range(args.num_steps):
        games.global_step += args.num_envs
        buf.obs[step] = games.next_obs
        buf.masks[step] = games.next_mask
        buf.dones[step] = games.next_done

        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(games.next_obs, games.next_mask)
            buf.values[step] = value.flatten()
        buf.actions[step] = action
        buf.logprobs[step] = logprob

        next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
        # Jamb never truncates (truncations is always False); a truncated game would need
        # its value bootstrapped from infos["final_obs"], which this loop does not do.
        next_done_np = np.logical_or(terminations, truncations)
        buf.rewards[step] = torch.as_tensor(reward, device=device).view(-1)
        games.next_obs = torch.as_tensor(next_obs, device=device)
        games.next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool, device=device)
        games.next_done = torch.as_tensor(next_done_np, dtype=torch.float32, device=device)

        games.ep_return += reward
        games.ep_length += 1
        if next_done_np.any():  # SAME_STEP: the ended games' keys are in final_info
            ended = np.flatnonzero(infos["_final_info"])
            ended_games["scores"] += infos["final_info"]["score"][ended].tolist()
            ended_games["returns"] += (games.ep_return[ended] / args.reward_scale).tolist()
            ended_games["lengths"] += games.ep_length[ended].tolist()
            games.ep_return[ended], games.ep_length[ended] = 0.0, 0
    return ended_games


def advantages_and_returns(agent: Agent, games: Games, buf: Rollout, args: argparse.Namespace):
    """GAE over the rollout, bootstrapped from the value of the next observation where the
    game goes on (gamma = 1 is the undiscounted case): (advantages, returns)."""
    with torch.no_grad():
        next_value = agent.get_value(games.next_obs).reshape(1, -1)
        advantages = torch.zeros_like(buf.rewards, device=games.device)
        lastgaelam = 0
        for t in reversed(range(args.num_steps)):
            if t == args.num_steps - 1:
                nextnonterminal = 1.0 - games.next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - buf.dones[t + 1]
                nextvalues = buf.values[t + 1]
            delta = buf.rewards[t] + args.gamma * nextvalues * nextnonterminal - buf.values[t]
            advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
        return advantages, advantages + buf.values


def minibatch_loss(agent: Agent, batch: dict[str, torch.Tensor], mb_inds, args: argparse.Namespace) -> dict:
    """The clipped PPO loss of one minibatch, with its parts and the KL estimates."""
    _, newlogprob, entropy, newvalue = agent.get_action_and_value(
        batch["obs"][mb_inds], batch["masks"][mb_inds], batch["actions"][mb_inds]
    )
    logratio = newlogprob - batch["logprobs"][mb_inds]
    ratio = logratio.exp()
    out = {}
    with torch.no_grad():
        # calculate approx_kl http://joschu.net/blog/kl-approx.html
        out["old_approx_kl"] = (-logratio).mean()
        out["approx_kl"] = ((ratio - 1) - logratio).mean()
        out["clipfrac"] = ((ratio - 1.0).abs() > args.clip_coef).float().mean().item()

    mb_advantages = batch["advantages"][mb_inds]
    if args.norm_adv and len(mb_inds) > 1:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

    # policy loss
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    out["pg_loss"] = torch.max(pg_loss1, pg_loss2).mean()

    # value loss
    newvalue, returns, values = newvalue.view(-1), batch["returns"][mb_inds], batch["values"][mb_inds]
    if args.clip_vloss:
        v_loss_unclipped = (newvalue - returns) ** 2
        v_clipped = values + torch.clamp(newvalue - values, -args.clip_coef, args.clip_coef)
        v_loss_clipped = (v_clipped - returns) ** 2
        out["v_loss"] = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        out["v_loss"] = 0.5 * ((newvalue - returns) ** 2).mean()

    # the entropy of the masked distribution: illegal actions have probability 0
    out["entropy_loss"] = entropy.mean()
    out["loss"] = out["pg_loss"] - args.ent_coef * out["entropy_loss"] + out["v_loss"] * args.vf_coef
    return out


def update(agent: Agent, optimizer, buf: Rollout, advantages, returns, args: argparse.Namespace) -> dict:
    """``update_epochs`` passes of minibatch updates over the flattened rollout (stopped
    early past ``target_kl``); returns the last minibatch's losses, the clip fractions and
    the explained variance."""
    batch = {
        "obs": buf.obs.reshape((args.batch_size, -1)),
        "masks": buf.masks.reshape((args.batch_size, -1)),
        "logprobs": buf.logprobs.reshape(-1),
        "actions": buf.actions.reshape(-1),
        "advantages": advantages.reshape(-1),
        "returns": returns.reshape(-1),
        "values": buf.values.reshape(-1),
    }
    b_inds = np.arange(args.batch_size)
    clipfracs = []
    for _epoch in range(args.update_epochs):
        np.random.shuffle(b_inds)
        for start in range(0, args.batch_size, args.minibatch_size):
            out = minibatch_loss(agent, batch, b_inds[start : start + args.minibatch_size], args)
            clipfracs.append(out["clipfrac"])
            optimizer.zero_grad()
            out["loss"].backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()

        if args.target_kl is not None and out["approx_kl"] > args.target_kl:
            break

    y_pred, y_true = batch["values"].cpu().numpy(), batch["returns"].cpu().numpy()
    var_y = np.var(y_true)
    out["explained_variance"] = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
    out["clipfrac"] = np.mean(clipfracs)
    return out


def log_iteration(writer, optimizer, stats: dict, ended: dict[str, list], step: int, sps: int) -> None:
    """TensorBoard scalars of one iteration (module docstring)."""
    if ended["scores"]:
        writer.add_scalar("charts/episodic_return", np.mean(ended["returns"]), step)
        writer.add_scalar("charts/episodic_length", np.mean(ended["lengths"]), step)
        writer.add_scalar("jamb/score", np.mean(ended["scores"]), step)
    writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
    for name in ("v_loss", "pg_loss", "entropy_loss", "old_approx_kl", "approx_kl"):
        tag = {"v_loss": "value_loss", "pg_loss": "policy_loss", "entropy_loss": "entropy"}.get(name, name)
        writer.add_scalar(f"losses/{tag}", stats[name].item(), step)
    writer.add_scalar("losses/clipfrac", stats["clipfrac"], step)
    writer.add_scalar("losses/explained_variance", stats["explained_variance"], step)
    writer.add_scalar("charts/SPS", sps, step)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    writer = SummaryWriter(args.run_dir)
    writer.add_text(
        "hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in vars(args).items())
    )

    # seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = True
    torch.set_num_threads(args.torch_threads)
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    # env setup
    envs = make_envs(args, args.num_envs)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete), "only discrete action space is supported"
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    num_actions = int(envs.single_action_space.n)

    agent = Agent(obs_dim, num_actions, args.hidden_size).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    buf = Rollout(args, obs_dim, num_actions, device)

    # start the game
    start_time = time.time()
    games = Games(envs, args, device)
    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate
        ended = collect(agent, envs, games, buf, args)
        advantages, returns = advantages_and_returns(agent, games, buf, args)
        stats = update(agent, optimizer, buf, advantages, returns, args)
        sps = int(games.global_step / (time.time() - start_time))
        log_iteration(writer, optimizer, stats, ended, games.global_step, sps)
        scores = ended["scores"]
        score = f"{np.mean(scores):7.1f} ({len(scores)} games)" if scores else "      - (no game ended)"
        print(
            f"iteration {iteration}/{args.num_iterations}  step {games.global_step}  training score {score}  SPS {sps}",
            flush=True,
        )

    envs.close()
    if args.save_model:
        path = os.path.join(args.run_dir, "agent.pt")
        torch.save(agent.state_dict(), path)
        print(f"model saved to {path}")

    # greedy evaluation on the canonical games
    scores = evaluate(agent, args, device)
    writer.add_scalar("eval/score", scores.mean(), games.global_step)
    writer.close()
    print(
        f"greedy evaluation: mean score {scores.mean():.1f} over {len(scores)} games "
        f"(seeds {eval_seeds(1)[0]}..{eval_seeds(len(scores))[-1]}); "
        f"{games.global_step} steps in {time.time() - start_time:.1f} s; TensorBoard: {args.run_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
