"""MCTS and expectiminimax on Jamb through OpenSpiel (the ``python_jamb`` game of
:mod:`jamb_env.openspiel`; needs ``pip install open_spiel``, the ``openspiel`` extra).

    python examples/openspiel_mcts.py                                  # classic_down: 2 games, 100 simulations a move
    python examples/openspiel_mcts.py --games 5 --simulations 400 --ruleset classic_down

1. MCTS: OpenSpiel's Python ``MCTSBot`` (UCT, one random rollout per simulation) plays
   whole games, and a uniform random player plays the same games (each game's chance
   outcomes drawn from a generator seeded by the game number). The search knows nothing
   of Jamb but the game's API: the legal actions (the env's mask), the chance nodes'
   exact dice probabilities and the final score as the return. The exploration constant
   ``--uct-c`` is in points, as the returns are. (OpenSpiel's C++ ``pyspiel.MCTSBot`` does
   not run Python games: it crashes on them, so the Python bot is the one to use.)
2. Expectiminimax, on an endgame: random play up to the last re-roll of the game's last
   turn (one cell left), then OpenSpiel's ``expectiminimax`` searches what is left
   exactly (every hold, every dice outcome with its probability, the write) and prints
   the best action with its expected final score. A whole turn is too deep for it (about
   32 x 252 x 32 x 252 leaves from the turn's first roll); one re-roll is 32 x 252.
   Skipped on Joly's rulesets, whose basket restarts the turn.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

try:
    import pyspiel
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.algorithms.minimax import expectiminimax
except ImportError:  # pragma: no cover - the script's own message
    sys.exit("error: this example needs OpenSpiel: pip install open_spiel (or pip install -e '.[openspiel]')")

import jamb_env.openspiel  # noqa: F401  (registers python_jamb)
from jamb_env.rules import is_last_turn, layout, max_rolls


def chance(state, rng: np.random.Generator) -> None:
    """Apply one chance outcome drawn with its probability."""
    ids, probs = zip(*state.chance_outcomes())
    state.apply_action(int(rng.choice(ids, p=probs)))


def play(game, choose, seed: int) -> int:
    """One game: ``choose(state) -> action`` at the decisions; returns the final score."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            chance(state, rng)
        else:
            state.apply_action(choose(state))
    return int(state.returns()[0])


def endgame(game, seed: int):
    """Random play up to the last re-roll of the last turn; then expectiminimax.
    Returns (the state searched, its expected final score, the best action)."""
    rng = np.random.default_rng(seed)
    rules = game.rules
    lay = layout(rules)
    state = game.new_initial_state()
    while True:
        if state.is_chance_node():
            chance(state, rng)
            continue
        st = state.sheet
        legal = state.legal_actions()
        if is_last_turn(rules, st):
            moves = [a for a in legal if not lay.is_write(a)]  # re-rolls, announcements
            if st.roll >= max_rolls(rules, st) - 1 or not moves:
                break  # what is left: at most 3 decisions (announce, re-roll, write)
            state.apply_action(int(rng.choice(moves)))  # on to the last re-roll
        else:
            state.apply_action(int(rng.choice(legal)))
    # depth 3 reaches the end, so the value function (the score so far) is never used
    value, action = expectiminimax(state, 3, lambda s: float(s.scores()[0]), 0)
    return state, value, action


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--ruleset", default="classic_down", help="preset name or rules YAML path (default classic_down)"
    )
    parser.add_argument("--games", type=int, default=2, help="games for each player (default 2)")
    parser.add_argument("--simulations", type=int, default=100, help="MCTS simulations per move (default 100)")
    parser.add_argument("--uct-c", type=float, default=50.0, help="UCT exploration constant, in points (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.simulations < 1:
        parser.error("--simulations must be at least 1")
    if not args.uct_c > 0:
        parser.error("--uct-c must be a positive number of points")
    if args.seed < 0:
        parser.error("--seed must be a non-negative integer")
    try:
        game = pyspiel.load_game("python_jamb", {"ruleset": args.ruleset})
    except (ValueError, OSError) as exc:  # RulesetError is a ValueError
        parser.error(f"--ruleset: {exc}")

    rng = np.random.RandomState(args.seed)
    bot = mcts.MCTSBot(
        game,
        uct_c=args.uct_c,
        max_simulations=args.simulations,
        solve=False,
        random_state=rng,
        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
    )
    start = time.perf_counter()
    seeds = range(args.seed, args.seed + args.games)
    scores = {"mcts": [play(game, bot.step, s) for s in seeds]}
    mcts_seconds = time.perf_counter() - start
    pick = np.random.default_rng(args.seed)
    scores["random"] = [play(game, lambda state: int(pick.choice(state.legal_actions())), s) for s in seeds]
    for name, s in scores.items():
        print(
            f"{name:6s} mean score {np.mean(s):7.1f} over {len(s)} games on {args.ruleset} (min {min(s)}, max {max(s)})"
        )
    print(f"MCTS with {args.simulations} simulations a move: {mcts_seconds / args.games:.1f} s a game")

    if game.rules.jokers:
        print("endgame: skipped (Joly's basket restarts the turn at roll 1: too deep for an exhaustive search)")
        return 0
    start = time.perf_counter()
    state, value, action = endgame(game, args.seed)
    st = state.sheet
    print(
        f"endgame: one cell left, roll {st.roll}, dice {st.dice.tolist()}, score so far {state.scores()[0]}: "
        f"expectiminimax plays {state.action_to_string(action)!r}, expected final score {value:.2f} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
