"""``hybrid``: a MaskablePPO policy chooses cells, announcements and when to stop rolling;
the exact per-cell turn planner chooses the holds.

At a decision where re-rolling is legal the candidates are the legal writes and
announcements plus, for every cell that is a legal target now, the keep-mask of that
cell's exact turn plan (:func:`jamb_env.rules.planner.cell_plans`: the holds that maximise
that cell's expected value this turn; RULES.md §3). The agent plays the candidate the
policy gives the highest probability, so re-rolling means "re-roll for the cell whose
planned hold the policy likes best". Elsewhere it plays the policy's own choice.
Pure PPO (:class:`~agents.ppo_agent.PPOAgent`) stays the headline agent; this one
measures how much of the gap to the optimum is hold play.
"""

from __future__ import annotations

import numpy as np

from agents.base import checked_mask
from agents.ppo_agent import PPOAgent
from jamb_env.rules import is_last_turn, layout, target_cells
from jamb_env.rules.planner import cell_plans


class HybridAgent(PPOAgent):
    """PPO for cells and announcements, the exact turn planner for holds (module docstring).

    Args: as :class:`PPOAgent` (``path`` of a MaskablePPO .zip, ``ruleset``, ``trusted``).
    """

    def __init__(self, path, ruleset=None, device: str = "cpu", trusted: bool = False):
        super().__init__(path, ruleset=ruleset, device=device, trusted=trusted)
        self.name = f"hybrid_{self.name}"

    def act(self, env, observation: np.ndarray, mask: np.ndarray) -> int:
        rules, st = env.ruleset, env.game
        lay = layout(rules)
        mask = checked_mask(env, mask)
        holds_legal = mask[: lay.num_holds]
        if not holds_legal.any():
            return super().act(env, observation, mask)
        target = target_cells(rules, mask)
        plans = cell_plans(rules)[1][int(is_last_turn(rules, st)), st.roll - 1, st.dice_index]
        candidates = mask.copy()
        candidates[: lay.num_holds] = False
        planned = plans[target & (plans >= 0)]
        candidates[planned[holds_legal[planned]]] = True
        probs = self.action_probs(observation, mask)
        return int(np.flatnonzero(candidates)[np.argmax(probs[candidates])])
