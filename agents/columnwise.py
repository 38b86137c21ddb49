"""Columnwise: every column played as if filled in a fixed order, each one optimally.

Down and up columns follow their own order; free and announce columns are filled
top-down (announcing the target right after roll 1). Before each turn's first roll is
seen, the agent picks the column with the most empty cells (the first such in sheet
order) and plays that column's next cell with the exact single-column solver
(:mod:`agents.optimal`), every turn using the ruleset's regular number of rolls.

Because the column is chosen before the dice are seen, each column's turns are
independent fresh turns, so the expected score is exactly the sum of the columns'
single-column optima: an exact floor for any serious agent (``expected_score``).
"""

from __future__ import annotations

from agents.optimal import check_env, play_column_turn, solver_for
from jamb_env import JambEnv, Ruleset, load_ruleset

SUPPORTED = ("down", "up", "free", "announce")


class ColumnwiseAgent:
    name = "columnwise"

    def __init__(self, ruleset: str | Ruleset):
        rules = load_ruleset(ruleset)
        self.check_ruleset(rules)
        self.rules = rules
        self.solvers = [solver_for(rules, c, rules.rolls) for c in range(len(rules.columns))]
        self._cache = None

    @staticmethod
    def check_ruleset(rules: Ruleset) -> None:
        """Raises ValueError unless every column of ``rules`` is one of :data:`SUPPORTED` (and
        none is derived); solves nothing."""
        unsupported = [k for k in rules.columns if k not in SUPPORTED] + list(rules.derived_columns)
        if unsupported:
            raise ValueError(
                f"columnwise plays columns {', '.join(SUPPORTED)}; {rules.name} also has {', '.join(unsupported)}"
            )

    @property
    def expected_score(self) -> float:
        """Exact expected score: the sum of the single-column optima."""
        return sum(s.expected_score for s in self.solvers)

    def target_column(self, game) -> int:
        """The column with the most empty cells (first in sheet order on ties).

        It depends on the sheet only, so it is fixed before the turn's dice are seen."""
        full = (1 << self.rules.num_rows) - 1
        empty = [bin(full & ~int(f)).count("1") for f in game.filled]
        return max(range(len(empty)), key=lambda c: (empty[c], -c))

    def act(self, env: JambEnv, observation, mask) -> int:
        check_env(self, env)
        c = self.target_column(env.game)
        return play_column_turn(env, self.solvers[c], c, self)
