"""Train MaskablePPO by self-play on multiplayer Jamb (agents/training/selfplay.py).

    python scripts/train_selfplay.py --ruleset standard --players 2 --reward win
        [--scoring separate] [--total-timesteps N] [--n-envs 64] [--n-steps 64] [--snapshot-freq 50000]
        [--eval-freq 50000] [--eval-games 50] [--baselines random greedy] [--seed 0]
        [--run-dir runs/selfplay_standard] [--resume]

The learner plays a random seat against opponents drawn every game from a pool: its own
past snapshots (with probability --self-play once one exists) and the baselines.
TensorBoard (``tensorboard --logdir runs``): ``selfplay/win_rate_vs_<baseline>`` and
``selfplay/margin_vs_<baseline>`` on the validation seeds, and SB3's training curves.
``--resume`` continues a run from its newest valid checkpoint. Bad arguments exit with
status 2 and a message.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agents.cli import interruptible
from jamb_env import RulesetError
from jamb_env.rules import load_ruleset
from jamb_env.rules import match as M


def run(argv: list[str] | None) -> int:
    from agents.registry import AGENT_NAMES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="standard", help="preset name or rules YAML (default standard)")
    parser.add_argument("--players", type=int, default=2, help="players at the table, 2..5 (default 2)")
    parser.add_argument("--scoring", choices=M.SCORING_MODES, default="separate")
    parser.add_argument("--reward", choices=("score", "win", "margin"), default="win")
    parser.add_argument("--total-timesteps", type=int, default=1_000_000)
    parser.add_argument("--n-envs", type=int, default=64, help="games stepped together (default 64)")
    parser.add_argument("--n-steps", type=int, default=64, help="steps per game per rollout (rollout: n-envs x n-steps)")
    parser.add_argument("--snapshot-freq", type=int, default=50_000, help="steps between snapshots joining the pool")
    parser.add_argument("--eval-freq", type=int, default=50_000, help="steps between win-rate evaluations")
    parser.add_argument("--eval-games", type=int, default=50, help="games per baseline per evaluation")
    parser.add_argument("--self-play", type=float, default=0.8, help="probability that an opponent is a snapshot (default 0.8)")
    parser.add_argument("--baselines", nargs="+", default=["random", "greedy"], help="baseline opponents (agents.load names)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-dir", help="default runs/selfplay_<ruleset>_<players>p_<scoring>_<reward>_s<seed>")
    parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its newest checkpoint")
    args = parser.parse_args(argv)
    for name in ("total_timesteps", "n_envs", "n_steps", "snapshot_freq", "eval_freq", "eval_games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0.0 <= args.self_play <= 1.0:
        parser.error(f"--self-play must be a probability in 0..1, got {args.self_play}")
    if not 0 <= args.seed < 2**31:
        parser.error(f"--seed must be in 0..2**31-1, got {args.seed}")
    unknown = [b for b in args.baselines if b not in AGENT_NAMES]
    if unknown:
        parser.error(f"--baselines: unknown agent(s) {', '.join(unknown)}; known: {', '.join(AGENT_NAMES)}")
    try:
        M.check_match(load_ruleset(args.ruleset), args.players, args.scoring)
    except (RulesetError, ValueError) as exc:
        parser.error(str(exc))
    if args.resume and not args.run_dir:
        parser.error("--resume needs --run-dir (the run to continue)")
    run_dir = Path(args.run_dir or f"runs/selfplay_{Path(args.ruleset).stem}_{args.players}p_{args.scoring}_{args.reward}_s{args.seed}")
    if run_dir.exists() and any(run_dir.iterdir()) and not args.resume:
        parser.error(f"{run_dir} exists and is not empty: pass --resume to continue it, or another --run-dir")

    from agents.training.selfplay import SelfPlaySettings, train_selfplay

    settings = SelfPlaySettings(args.ruleset, args.players, args.scoring, args.reward, 0.01 if args.reward == "score" else 1.0)
    start = time.time()
    model = train_selfplay(settings, run_dir, args.total_timesteps, n_envs=args.n_envs, n_steps=args.n_steps, baselines=tuple(args.baselines),
                           self_play=args.self_play, snapshot_freq=args.snapshot_freq, eval_freq=args.eval_freq,
                           eval_games=args.eval_games, seed=args.seed, resume=args.resume)
    print(f"{model.num_timesteps} steps in {time.time() - start:.0f} s; final model {run_dir / 'final_model.zip'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(run, argv, "interrupted: resume with --resume --run-dir (from the newest checkpoint)")


if __name__ == "__main__":
    raise SystemExit(main())
