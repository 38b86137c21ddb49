"""Rulesets: one YAML file per preset in ``jamb_env/rules/presets/`` (RULES.md §5).

A :class:`Ruleset` is immutable. Building one validates the file (every error names
the file, the key and what is allowed; :mod:`jamb_env.rules.ruleset_file` reads it,
through :func:`jamb_env.utils.safe_yaml.read_yaml_mapping`) and precomputes the tables the engine, the env,
the batched env and the solvers share: the value of every cell for every dice multiset
and roll. How each column opens its cells (the opening order of ``down``, ``up``,
``middle``, ...) is not restated here: it is the column kind's entry in
:data:`jamb_env.rules.kernels.COLUMN_KINDS` (its fronts, :func:`~jamb_env.rules.kernels.column_fronts`),
which :attr:`Ruleset.arrays` turns into the kernels' ``front_down`` / ``front_up`` masks.

Schema (version 1)::

    schema_version: 1            # required
    name: classic                # required, the preset name
    title: "..."                 # optional text
    source: 004_....txt          # optional: the seed file the preset follows
    extends: classic             # optional: start from another preset (or a path), override keys;
                                 # then `name` is required and not the base's (runs, records and
                                 # tables are called by it; the file's stem is not used)
    dice: 5                      # 5 or 6
    rolls: 3                     # rolls per turn (1..5)
    rows: [ones, ..., jamb]      # row ids (RULES.md §1), in sheet order
    columns: [down, up, ...]     # column kinds (RULES.md §1), in sheet order
    scoring:
      upper_dice: 5              # dice counted in the upper rows (Joly: 6)
      bonus: {threshold: 60, points: 30, per_point: 0}
      trilling_bonus: 10         # required when `trilling` is a row
      full_bonus: 30
      poker_bonus: 40
      jamb_bonus: 50
      three_by_two_bonus: 20     # required when `three_by_two` is a row
      straight:                  # required when `straight` is a row
        small: [35, 35, 35]      # after roll 1, 2, 3 (rolls 4-5 like 3); an int = every roll
        large: [45, 45, 45]
        hand: null               # fixed value in the `hand` column (null: by roll)
    options:
      last_turn_rolls: 3         # rolls in the last turn (default: rolls)
      full_allows_five_of_a_kind: false
      bonus_strict: false        # bonus only when upper > threshold
      answer_forced: true
      jamb6_bonus: 60
      jokers: false              # Joly's ten jokers and baskets (RULES.md §6)
      announce_pure: false       # a pure roll (nothing kept) may be written in an announce column unannounced
      difference_clamp: false    # difference = ones x max(max - min, 0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from jamb_env.rules import kernels
from jamb_env.rules.ruleset_file import RULES_DIR, preset_names, read_fields, read_merged
from jamb_env.rules.tables import FACES, DiceTables, RowScoring, dice_tables, row_values
from jamb_env.utils.errors import RulesetError
from jamb_env.utils.files import change_stamp
from jamb_env.utils.safe_yaml import read_yaml_mapping as read_yaml_mapping  # re-exported: the configs' reader


def list_rulesets(playable: bool = True) -> list[str]:
    """Names of the preset files in ``jamb_env/rules/presets/``, sorted: those that load (every
    one a loop over the list can play), or with ``playable=False`` every file (a preset
    file that fails to load too; every shipped preset loads)."""
    names = preset_names()
    if not playable:
        return names
    out = []
    for name in names:
        try:
            load_ruleset(name)
        except RulesetError:
            continue
        out.append(name)
    return out


def load_ruleset(name_or_path: str | Path) -> Ruleset:
    """Load a ruleset by preset name (``"classic"``) or by path to a YAML file.

    Returns the same (immutable, cached) object for the same preset or resolved path.

    Raises:
        FileNotFoundError: ``name_or_path`` looks like a path and does not exist.
        RulesetError: unknown preset name; malformed or invalid file (the message names
            the file, the key and what is allowed), a file that extends another without a
            name of its own, a preset whose name is not its file's.
    """
    if isinstance(name_or_path, Ruleset):
        return name_or_path
    text = str(name_or_path)
    looks_like_path = isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text
    if not isinstance(name_or_path, (str, Path)):
        raise RulesetError(f"a ruleset is a preset name or a YAML path, got {name_or_path!r}")
    try:
        if looks_like_path:
            path = Path(text).expanduser().resolve()
            if not path.is_file():
                raise FileNotFoundError(f"ruleset file not found: {text}")
        else:
            path = RULES_DIR / f"{text}.yaml"
            if not path.is_file():
                raise RulesetError(
                    f"unknown ruleset {text!r}; presets are: {', '.join(preset_names())} "
                    "(or pass a path to a YAML file)"
                )
        stamp = change_stamp(path)
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: expanduser of ~user, no such user
        if isinstance(exc, (FileNotFoundError, RulesetError)):
            raise
        raise RulesetError(f"cannot read ruleset {text[:80]!r}: {exc}") from exc
    rules = _load_path(path, stamp)
    if not looks_like_path and rules.name != text:  # the lists of presets show file names
        raise RulesetError(f"{path}: key 'name': {rules.name!r} is not the preset's file name; allowed: {text!r}")
    return rules


#: path -> (the files of its ``extends`` chain, their change stamps (jamb_env.utils.files.change_stamp), the ruleset)
_LOADED: dict[Path, tuple[tuple[Path, ...], tuple[tuple[int, ...], ...], Ruleset]] = {}


def _stamps(files: tuple[Path, ...]) -> tuple[tuple[int, ...], ...] | None:
    try:
        return tuple(change_stamp(p) for p in files)
    except OSError:  # a file of the chain gone: read the chain again
        return None


def _load_path(path: Path, stamp: tuple[int, ...]) -> Ruleset:
    """Cached per file while no file of its ``extends`` chain changes: an edited file, or
    an edited file it extends, is read again."""
    cached = _LOADED.get(path)
    if cached is not None and cached[1][0] == stamp and _stamps(cached[0]) == cached[1]:
        return cached[2]
    files: list[Path] = []
    rules = Ruleset._build(**read_fields(read_merged(path, files=files), path))
    stamps = _stamps(tuple(files))
    if stamps is not None:
        _LOADED[path] = (tuple(files), stamps, rules)
    return rules


@dataclass(frozen=True, eq=False)
class Ruleset:
    """A validated ruleset with its precomputed tables (RULES.md §1-5).

    Attributes (all read-only):
        name, title, source, path: identity of the preset. ``name`` is the file's own
            ``name:`` (a file that ``extends:`` another must give one, not its base's: runs,
            records and tables are called by it).
        dice: 5 or 6. rolls / last_turn_rolls: rolls per turn and in the last turn;
            max_rolls is the larger.
        rows: row ids in sheet order (R rows). columns: played column kinds in sheet
            order (C columns, each with write actions). derived_columns: ``maximal``.
        num_cells: C * R; cell ``c * R + r`` is row ``r`` of played column ``c``.
        tables: the :class:`DiceTables` for ``dice``.
        cell_values: int16 ``(max_rolls, M, num_cells)``: what each cell gets for each
            multiset when written after roll ``k + 1``.
        row_max: int16 ``(R,)``, the largest value each row can take (for scaling).
        jokers: Joly's ten jokers per game (RULES.md §6): joker and basket actions follow
            the writes in the action space.
        announce_pure: a pure roll (every die rolled: roll 1, or a re-roll keeping
            nothing) may be written in any empty cell of an announce column without
            announcing, unless only announce cells are left (RULES.md §5, ``jnn``).
        difference_clamp: the difference is ones x max(max - min, 0) (``jnn``).
    """

    name: str
    path: Path
    title: str
    source: str
    dice: int
    rolls: int
    last_turn_rolls: int
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    derived_columns: tuple[str, ...]
    row_scoring: RowScoring
    straight_hand: int | None
    bonus_threshold: int
    bonus_points: int
    bonus_per_point: int
    bonus_strict: bool
    answer_forced: bool
    jokers: bool
    announce_pure: bool
    difference_clamp: bool
    tables: DiceTables = field(repr=False)
    cell_values: np.ndarray = field(repr=False)
    row_max: np.ndarray = field(repr=False)
    row_bits: np.ndarray = field(repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def _build(cls, **kw: Any) -> Ruleset:
        rows: tuple[str, ...] = kw["rows"]
        columns: tuple[str, ...] = kw["columns"]
        n, R = kw["dice"], len(rows)
        max_rolls = max(kw["rolls"], kw["last_turn_rolls"])
        tables = dice_tables(n)
        scoring: RowScoring = kw["row_scoring"]
        by_roll = [row_values(n, rows, scoring, min(k, 2)) for k in range(3)]
        cell_values = np.zeros((max_rolls, tables.num_multisets, len(columns) * R), dtype=np.int16)
        for k in range(max_rolls):
            for c, kind in enumerate(columns):
                vals = by_roll[min(k, 2)].copy()
                if kind == "hand" and kw["straight_hand"] is not None and "straight" in rows:
                    s = rows.index("straight")
                    vals[:, s] = np.where(vals[:, s] > 0, kw["straight_hand"], 0)
                cell_values[k, :, c * R : (c + 1) * R] = vals
        row_max = np.maximum(cell_values.reshape(max_rolls, -1, len(columns), R).max(axis=(0, 1, 2)), 1)
        row_bits = ((np.arange(1 << R)[:, None] >> np.arange(R)) & 1).astype(bool)
        return cls(
            tables=tables,
            cell_values=cell_values,
            row_max=row_max.astype(np.int16),
            row_bits=row_bits,
            **kw,
        )

    # ------------------------------------------------------------------ identity
    @cached_property
    def digest(self) -> str:
        """16 hex digits that change with any rule of the set and with nothing else: a hash
        of every field but the name, title, source, path and the tables built from them.
        Runs and model files keep it, so a model or a resumed run on other rules is told."""
        import dataclasses
        import hashlib
        import json

        skip = {"name", "title", "source", "path", "tables", "cell_values", "row_max", "row_bits"}
        rules = {
            f.name: dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v
            for f in dataclasses.fields(self)
            if f.name not in skip
            for v in [getattr(self, f.name)]
        }
        return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]

    def same_rules(self, other: Ruleset) -> bool:
        """Whether ``other`` is this ruleset: the same name and the same rules (:attr:`digest`);
        a rules file edited since, or another file of the same name, is not."""
        return self.name == other.name and self.digest == other.digest

    # ------------------------------------------------------------------ sizes
    @property
    def max_rolls(self) -> int:
        return max(self.rolls, self.last_turn_rolls)

    @property
    def num_rows(self) -> int:
        return len(self.rows)

    @cached_property
    def num_cells(self) -> int:
        return len(self.columns) * len(self.rows)

    @property
    def num_turns(self) -> int:
        """Turns in a game = playable cells (RULES.md §1)."""
        return self.num_cells

    def cell(self, column: str, row: str) -> int:
        """Cell index ``c * R + r`` of (column, row); ValueError if unknown."""
        if column not in self.columns:
            raise ValueError(f"unknown column {column!r}; {self.name} plays {', '.join(self.columns)}")
        if row not in self.rows:
            raise ValueError(f"unknown row {row!r}; {self.name} has rows {', '.join(self.rows)}")
        return self.columns.index(column) * len(self.rows) + self.rows.index(row)

    def cell_name(self, cell: int) -> tuple[str, str]:
        """(column, row) of cell index ``cell`` (ValueError outside 0..num_cells - 1)."""
        if isinstance(cell, bool) or not isinstance(cell, (int, np.integer)) or not 0 <= cell < self.num_cells:
            raise ValueError(f"a cell index is an integer in 0..{self.num_cells - 1}, got {cell!r}")
        c, r = divmod(int(cell), len(self.rows))
        return self.columns[c], self.rows[r]

    # ------------------------------------------------------------------ scoring API
    def score(self, row: str, dice: Sequence[int], roll: int = 3, column: str | None = None) -> int:
        """Points written in ``row`` for final ``dice`` after roll ``roll`` (RULES.md §1, §3).

        Args:
            row: row id (RULES.md §1) of this ruleset.
            dice: ``dice`` faces 1..6, any order.
            roll: the roll after which the cell is written, 1..max_rolls (straight values
                depend on it; rolls 4-5 score like roll 3).
            column: a column kind of this ruleset where the column changes the value
                (``hand``: fixed straight value); None for the plain value.

        Raises:
            ValueError: wrong dice count, a face outside 1-6, an unknown row or column,
                or a roll outside 1..max_rolls.
        """
        if row not in self.rows:
            raise ValueError(f"unknown row {row!r}; {self.name} has rows {', '.join(self.rows)}")
        m = self.dice_index(dice)
        if isinstance(roll, bool) or not isinstance(roll, (int, np.integer)) or not 1 <= roll <= self.max_rolls:
            raise ValueError(f"roll must be an integer in 1..{self.max_rolls} for {self.name}, got {roll!r}")
        if column is None:
            column = next((c for c in self.columns if c != "hand"), self.columns[0])
            if column == "hand":
                raise ValueError("this ruleset only has a hand column; pass column='hand'")
        return int(self.cell_values[roll - 1, m, self.cell(column, row)])

    def dice_index(self, dice: Sequence[int]) -> int:
        """Multiset index of ``dice``; ValueError on a wrong count or a face outside 1-6."""
        try:
            arr = np.asarray(dice)
        except Exception as exc:  # pragma: no cover - defensive
            raise ValueError(f"dice must be a sequence of integers, got {dice!r}") from exc
        if arr.ndim != 1 or len(arr) != self.dice:
            raise ValueError(
                f"{self.name} plays {self.dice} dice, got {len(arr) if arr.ndim == 1 else arr.shape} dice: {dice!r}"
            )
        if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 1 or arr.max() > FACES:
            raise ValueError(f"die faces must be integers 1..6, got {list(dice)!r}")
        return self.tables.index(arr)

    def column_score(self, cells: Mapping[str, int]) -> int:
        """One column's score from the values written in it (RULES.md §2).

        Args:
            cells: row id -> written value (points); absent rows are not written yet.

        Returns:
            Points credited so far: every written cell, the bonus once the last upper
            cell is written, the difference once ones, max and min are all written.

        Raises:
            ValueError: an unknown row id or a non-integer value.
        """
        if not isinstance(cells, Mapping):
            raise ValueError(f"cells must be a mapping row id -> written value, got {type(cells).__name__}")
        values = np.zeros(len(self.rows), dtype=np.int64)
        filled = 0
        for row, value in cells.items():
            if row not in self.rows:
                raise ValueError(f"unknown row {row!r}; {self.name} has rows {', '.join(self.rows)}")
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"value of {row!r} must be an integer, got {value!r}")
            r = self.rows.index(row)
            possible = self._possible_values[r]
            if int(value) not in possible:
                raise ValueError(
                    f"{value} cannot be written in {row!r} of {self.name}; possible values are "
                    f"{', '.join(map(str, sorted(possible)))}"
                )
            values[r] = value
            filled |= 1 << r
        return self.column_points(values, filled)

    @cached_property
    def arrays(self) -> kernels.RuleArrays:
        """The ruleset as the rule kernels read it (read-only arrays, built once)."""
        return kernels.rule_arrays(self)

    def column_points(self, values: np.ndarray, filled: int) -> int:
        """Score of a column from its row values (length R) and its filled-row bitmask."""
        return sum(self.column_parts(values, filled))

    def column_parts(self, values, filled: int) -> tuple[int, int, int, int]:
        """(upper, bonus, difference, lower) credited so far, as RULES.md §2
        (:func:`jamb_env.rules.kernels.column_parts`).

        Raises:
            ValueError: ``values`` is not R finite numbers, or ``filled`` is not a mask of R bits
                (the kernel reads ``values[r]`` unchecked: a shorter array would be read
                past its end).
        """
        R = len(self.rows)
        arr = np.asarray(values)
        numbers = (
            np.issubdtype(arr.dtype, np.integer)
            or np.issubdtype(arr.dtype, np.floating)
            and bool(np.isfinite(arr).all())
        )
        if arr.shape != (R,) or not numbers:
            raise ValueError(
                f"values must be {R} finite numbers (one per row of {self.name}), got an array of shape "
                f"{arr.shape} and dtype {arr.dtype}{'' if numbers else ' (or not finite)'}"
            )
        if isinstance(filled, bool) or not isinstance(filled, (int, np.integer)) or not 0 <= filled < 1 << R:
            raise ValueError(f"filled must be a mask of the {R} rows, an integer in 0..{(1 << R) - 1}, got {filled!r}")
        out = np.zeros(4, dtype=np.int64)
        kernels.column_parts(arr.astype(np.int64), int(filled), self.arrays, out)
        return int(out[0]), int(out[1]), int(out[2]), int(out[3])

    @cached_property
    def _possible_values(self) -> list[set[int]]:
        """Per row, every value a write can record (any roll, any played column)."""
        R = self.num_rows
        cv = self.cell_values.reshape(self.max_rolls, -1, len(self.columns), R)
        return [set(np.unique(cv[..., r]).tolist()) for r in range(R)]
