"""``critic``: the exact rest-of-turn expectation with a PPO model's critic at the leaves.

The turn is planned exactly as by ``expectimax`` and ``search`` (:class:`agents.search.LeafSearch`:
every hold, roll outcome, writable cell and announcement); writing value ``v`` in cell
``x`` is worth

    leaf(x, v) = points credited by the write + V(next turn's roll 1) / reward_scale,

averaged over ``rolls`` first rolls of the next turn. ``V`` is the critic (value head) of
a MaskablePPO model trained on this ruleset's solitaire observation, in the reward units
it was trained in (``reward_scale``, 0.01 in every shipped config: hundreds of points).
The states at the leaves are made by the engine itself: a batch of games
(:class:`jamb_env.engine.batch.Engine`) holding the current state, each slot one candidate write
and one first roll, stepped once, so the critic reads exactly the observation the env would
give after that write and roll (the write kernel's points, bonus and obligations included).

The first rolls are the same for every candidate (common random numbers: the comparison
between two writes carries no sampling noise of its own): ``rolls`` multisets taken at the
quantiles ``(k + 0.5) / rolls`` of the first-roll distribution, each weighed ``1 / rolls``,
so the agent is deterministic. On the last turn the leaf is the write's points alone.

Limits: ``V`` is the critic of a discounted return (``gamma`` of its training, 0.995 in the
shipped configs), so it values points many steps ahead below points now; an argmax over
hundreds of leaves favours the ones the critic overestimates. Measured in docs/results.md
"Search on the learned critic". Solitaire sheets only (a model of a multiplayer seat is
refused); Joly's jokers are weighed with expectimax's option costs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.search import LeafSearch, write_candidates
from jamb_env import Ruleset, load_ruleset
from jamb_env.engine.batch import Engine
from jamb_env.engine.observation import encoder
from jamb_env.rules import GameState, is_last_turn, layout
from jamb_env.rules.planner import first_roll_distribution
from jamb_env.rules.transition import write_state

#: First rolls of the next turn each leaf's critic value is averaged over (the default).
DEFAULT_ROLLS = 16


def quantile_rolls(rules: Ruleset, rolls: int) -> np.ndarray:
    """int64 ``(rolls,)``: dice multiset indices at the quantiles ``(k + 0.5) / rolls`` of
    the first-roll distribution (:func:`jamb_env.rules.planner.first_roll_distribution`)."""
    cdf = np.cumsum(first_roll_distribution(rules.tables))
    q = (np.arange(rolls) + 0.5) / rolls
    return np.minimum(np.searchsorted(cdf, q), len(cdf) - 1).astype(np.int64)


class CriticSearchAgent(LeafSearch):
    """Exact rest-of-turn plan with a MaskablePPO critic at the leaves (module docstring).

    Args:
        path: a MaskablePPO ``.zip`` trained on ``ruleset``'s solitaire observation
            (``Jamb-v1``, or ``Jamb-v0`` without the turn features).
        ruleset: the ruleset it plays.
        rolls: first rolls of the next turn per leaf (positive int).
        reward_scale: the reward scale the model was trained with (positive).
        trusted: load the model file as SB3 does (:class:`~agents.ppo_agent.PPOAgent`).

    Raises:
        FileNotFoundError: no such file; ValueError: not a MaskablePPO file, a model of
            another observation or action space (another ruleset, a multiplayer seat), or
            ``rolls`` / ``reward_scale`` out of range.
    """

    name = "critic"
    explain_unit = "expected points of the rest of the game (this turn's writes plus the critic's value after them)"

    def __init__(
        self,
        path: str | Path,
        ruleset: str | Ruleset = "classic",
        rolls: int = DEFAULT_ROLLS,
        reward_scale: float = 0.01,
        trusted: bool = False,
    ):
        from agents.ppo_agent import PPOAgent

        super().__init__(load_ruleset(ruleset))
        if isinstance(rolls, bool) or not isinstance(rolls, (int, np.integer)) or rolls < 1:
            raise ValueError(f"rolls must be a positive integer, got {rolls!r}")
        if (
            isinstance(reward_scale, bool)
            or not isinstance(reward_scale, (int, float))
            or not 0 < reward_scale < float("inf")
        ):
            raise ValueError(f"reward_scale must be a positive number, got {reward_scale!r}")
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no model file {path}")
        agent = PPOAgent(path, ruleset=self.rules, trusted=trusted)
        model, self._normalized = agent.model, agent.normalized
        size = int(model.observation_space.shape[0])
        sizes = {encoder(self.rules, turn_features=t).size: t for t in (True, False)}
        if size not in sizes:
            raise ValueError(
                f"model {path} reads observations of size {size}; the {self.rules.name} solitaire env gives "
                f"{' or '.join(map(str, sorted(sizes)))} (a model of a multiplayer seat or of another ruleset?)"
            )
        self.turn_features = sizes[size]
        self.policy = model.policy
        self.rolls = int(rolls)
        self.reward_scale = float(reward_scale)
        multisets = quantile_rolls(self.rules, self.rolls)
        self._faces = self.rules.tables.sorted_dice[multisets].astype(np.int8)  # (rolls, n)
        self._engine: Engine | None = None

    def critic(self, observations: np.ndarray) -> np.ndarray:
        """float64 ``(N,)``: the model's critic of observations ``(N, D)``, in points."""
        import torch

        with torch.no_grad():
            v = self.policy.predict_values(
                torch.as_tensor(self._normalized(np.asarray(observations, dtype=np.float32)))
            )
        return v[:, 0].double().numpy() / self.reward_scale

    def leaf_tables(self, st: GameState, cells) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per cell of ``cells`` (empty cells of ``st``): (its distinct values sorted,
        float64 leaf value of writing each: points + the critic after it, averaged over
        the next turn's first rolls), from one engine step and one critic call."""
        rules = self.rules
        if not cells:
            return {}
        cells, at_cell, rolls, dice = write_candidates(rules, cells)
        N, K = len(at_cell), self.rolls
        if is_last_turn(rules, st):  # the last write: nothing follows
            points, _ = encoder(rules, turn_features=False).afterstates(st, at_cell, rolls, dice)
            return self._split(rules, cells, points.astype(np.float64))
        if self._engine is None or self._engine.num_games < N * K:
            self._engine = Engine(rules, max(N * K, 256), turn_features=self.turn_features)
        eng = self._engine
        g = eng.games
        slot = np.minimum(np.arange(eng.num_games) // K, N - 1)  # slot j: candidate j // K, first roll j % K
        write_state(g, slice(None), st)
        g.roll[:], g.dice_index[:] = rolls[slot], dice[slot]
        g.sheet[:] = eng.encoder.sheet_features(st)
        g.stream[:, : rules.dice] = np.tile(self._faces, (eng.num_games // K + 1, 1))[: eng.num_games]
        g.pos[:], g.score[:] = 0, 0
        res = eng.step((at_cell[slot] + layout(rules).write_offset).astype(np.int64))
        points = res.points[: N * K : K].astype(np.float64)
        value = self.critic(g.obs[: N * K]).reshape(N, K).mean(axis=1)
        return self._split(rules, cells, points + value)
