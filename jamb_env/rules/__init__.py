"""The pure rules engine: rulesets, dice tables, game state and transitions.

Nothing here imports Gymnasium or torch (RULES.md is the reference).
"""

from .game import (
    Action,
    GameState,
    Layout,
    action_to_string,
    apply_action,
    column_totals,
    decode,
    encode,
    is_over,
    layout,
    legal_mask,
    max_rolls,
    maximal_column,
    new_game,
    reroll_count,
    score,
    score_parts,
    start_turn,
    target_cells,
    validate_state,
    why_illegal,
    writable_bits,
)
from .ruleset import COLUMN_KINDS, RULES_DIR, Ruleset, list_rulesets, load_ruleset
from .tables import ROW_IDS, DiceTables, dice_tables

__all__ = [
    "Action",
    "COLUMN_KINDS",
    "DiceTables",
    "GameState",
    "Layout",
    "ROW_IDS",
    "RULES_DIR",
    "Ruleset",
    "action_to_string",
    "apply_action",
    "column_totals",
    "decode",
    "dice_tables",
    "encode",
    "is_over",
    "layout",
    "legal_mask",
    "list_rulesets",
    "load_ruleset",
    "max_rolls",
    "maximal_column",
    "new_game",
    "reroll_count",
    "score",
    "score_parts",
    "start_turn",
    "target_cells",
    "validate_state",
    "why_illegal",
    "writable_bits",
]
