"""Rulesets: one YAML file per preset in ``jamb_env/rules/presets/`` (RULES.md §5).

A :class:`Ruleset` is immutable. Building one validates the file (every error names
the file, the key and what is allowed) and precomputes the tables the engine, the env,
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
    extends: classic             # optional: start from another preset, override keys
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

import copy
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from jamb_env.rules import kernels
from jamb_env.rules.kernels import COLUMN_KINDS
from jamb_env.rules.tables import (
    FACES,
    ROW_IDS,
    SIX_DICE_ROWS,
    UPPER_ROWS,
    DiceTables,
    RowScoring,
    dice_tables,
    row_values,
)
from jamb_env.utils.errors import RulesetError

SCHEMA_VERSION = 1

#: Where the preset files live.
#: The preset files, package data of ``jamb_env.rules`` (found from any folder, in a wheel too).
RULES_DIR = Path(str(resources.files("jamb_env.rules").joinpath("presets")))

_TOP_KEYS = {
    "schema_version": True,
    "name": True,
    "title": False,
    "source": False,
    "description": False,
    "extends": False,
    "dice": True,
    "rolls": True,
    "rows": True,
    "columns": True,
    "scoring": True,
    "options": False,
}
_SCORING_KEYS = (
    "upper_dice",
    "bonus",
    "trilling_bonus",
    "full_bonus",
    "poker_bonus",
    "jamb_bonus",
    "three_by_two_bonus",
    "straight",
)
_BONUS_KEYS = ("threshold", "points", "per_point")
_STRAIGHT_KEYS = ("small", "large", "hand")
_OPTION_KEYS = (
    "last_turn_rolls",
    "full_allows_five_of_a_kind",
    "bonus_strict",
    "answer_forced",
    "jamb6_bonus",
    "jokers",
    "announce_pure",
    "difference_clamp",
)


def list_rulesets(playable: bool = True) -> list[str]:
    """Names of the preset files in ``jamb_env/rules/presets/``, sorted: those that load (every
    one a loop over the list can play), or with ``playable=False`` every file (a preset
    file that fails to load too; every shipped preset loads)."""
    names = sorted(p.stem for p in RULES_DIR.glob("*.yaml"))
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
            the file, the key and what is allowed).
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
                    f"unknown ruleset {text!r}; presets are: {', '.join(list_rulesets(playable=False))} "
                    "(or pass a path to a YAML file)"
                )
        stamp = path.stat().st_mtime_ns
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: expanduser of ~user, no such user
        if isinstance(exc, (FileNotFoundError, RulesetError)):
            raise
        raise RulesetError(f"cannot read ruleset {text[:80]!r}: {exc}") from exc
    return _load_path(path, stamp)


@cache
def _load_path(path: Path, stamp: int) -> Ruleset:
    """Cached per file and modification time: an edited file is read again."""
    return Ruleset._from_mapping(_read_merged(path, ()), path)


#: Limits of every YAML file read (ruleset files, training configs, a run's saved
#: ``config.yaml``): a shipped one is a few kilobytes, a few levels deep, and a preset's
#: ``extends:`` chain is at most 4 files long. Beyond these a file is refused with a
#: clear error instead of exhausting the memory or Python's recursion limit.
MAX_YAML_BYTES = 1 << 20
#: Most levels of nested mappings and lists in a YAML file.
MAX_YAML_DEPTH = 64
#: Most files in an ``extends:`` chain (the file itself included).
MAX_EXTENDS = 32


class _YamlTooDeep(yaml.YAMLError):
    """A YAML file nested more than :data:`MAX_YAML_DEPTH` levels deep."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in a mapping is an error, and so
    is nesting deeper than :data:`MAX_YAML_DEPTH` (PyYAML composes nodes recursively: a
    file nested thousands of levels deep would end in a RecursionError) and an alias
    (``*name``: ten nested aliases of nine items stand for 9**10 nodes)."""

    _depth = 0  # mappings and lists open around the node being composed

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):  # *name: a few bytes can stand for billions of nodes
            mark = self.peek_event().start_mark
            raise _YamlTooDeep(
                f"an alias (*name) at line {mark.line + 1}, column {mark.column + 1}; allowed: plain YAML "
                "without anchors and aliases (&name, *name), so a small file cannot expand to a huge one"
            )
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return super().compose_node(parent, index)  # a scalar or an alias: no deeper
        if self._depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise _YamlTooDeep(
                f"nested more than {MAX_YAML_DEPTH} levels deep (line {mark.line + 1}, column {mark.column + 1}); "
                f"allowed: at most {MAX_YAML_DEPTH} levels of mappings and lists"
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _unique_mapping(loader: yaml.SafeLoader, node, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:  # '? [a, b]: 1' (a list or a mapping as a key): not a TypeError from 'in seen'
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"a key that is a {type(key).__name__}; allowed: keys that are names or numbers",
                key_node.start_mark,
            ) from None
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def load_yaml(text: str):
    """Parse YAML safely, rejecting duplicate keys and nesting deeper than
    :data:`MAX_YAML_DEPTH` (yaml.YAMLError on bad input)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: ``<problem> (line L, column C)``, without PyYAML's quote of
    the text and its caret line."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return " ".join(f"{context + ': ' if context else ''}{problem}{where}".split())


def read_yaml_mapping(path: Path, error_cls: type[Exception], *, empty_ok: bool = False) -> dict:
    """The top-level mapping of the YAML file ``path``: the one safe way every ruleset
    file, training config and saved run config is read. Duplicate keys are rejected, and
    so is a file over :data:`MAX_YAML_BYTES` bytes or nested deeper than
    :data:`MAX_YAML_DEPTH` levels.

    Shared by ruleset files and training configs (``agents.training.config``). With
    ``empty_ok``, an empty file reads as ``{}``.

    Raises:
        OSError: the file cannot be read.
        error_cls: too large, invalid YAML, nested too deep, not UTF-8 text, or not a
            mapping at the top level (the message names the file and what is allowed).
    """
    path = Path(path)
    # opened without blocking (a FIFO with no writer would block the open itself), then checked
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # a pipe or a device would be read forever
            raise error_cls(f"{path}: not a regular file; allowed: a YAML file")
        raw = f.read(MAX_YAML_BYTES + 1)
    if len(raw) > MAX_YAML_BYTES:
        raise error_cls(
            f"{path}: more than {MAX_YAML_BYTES:,} bytes; allowed: a YAML file of at most {MAX_YAML_BYTES:,} bytes (1 MiB)"
        )
    try:
        data = load_yaml(raw.decode("utf-8"))
    except _YamlTooDeep as exc:
        raise error_cls(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise error_cls(f"{path}: not valid YAML: {_yaml_problem(exc)}") from exc
    except UnicodeDecodeError as exc:
        raise error_cls(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); allowed: a UTF-8 YAML file"
        ) from None
    if data is None and empty_ok:
        return {}
    if not isinstance(data, dict):
        raise error_cls(f"{path}: expected a mapping of keys at the top level, got {type(data).__name__}")
    return data


def _read_yaml(path: Path) -> dict:
    return read_yaml_mapping(path, RulesetError)


def _deep_merge(base: dict, over: Mapping) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(dict(out[key]), value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _read_merged(path: Path, chain: tuple[Path, ...]) -> dict:
    """``path``'s mapping merged over those of the files it extends (``chain``: the files
    that led here, each extending the next)."""
    if path in chain:
        raise RulesetError(f"{path}: key 'extends': circular chain {' -> '.join(map(str, chain + (path,)))}")
    if len(chain) >= MAX_EXTENDS:
        raise RulesetError(
            f"{chain[0]}: key 'extends': a chain of more than {MAX_EXTENDS} files ({chain[0]} -> {chain[1]} -> ... -> "
            f"{chain[-1]} -> {path}); allowed: at most {MAX_EXTENDS} files, the file itself included"
        )
    data = _read_yaml(path)
    parent = data.get("extends")
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise RulesetError(f"{path}: key 'extends': expected a preset name or a path, got {parent!r}")
    parent_path = (
        (path.parent / parent).resolve() if parent.endswith((".yaml", ".yml")) else RULES_DIR / f"{parent}.yaml"
    )
    if not parent_path.is_file():
        raise RulesetError(
            f"{path}: key 'extends': no preset {parent!r}; presets are: {', '.join(list_rulesets(playable=False))}"
        )
    merged = _deep_merge(_read_merged(parent_path, chain + (path,)), data)
    merged.pop("extends", None)
    if "title" not in data:  # a derived preset does not borrow its parent's title
        merged.pop("title", None)
    return merged


# ---------------------------------------------------------------------- reading a file
class _Check:
    """Typed readers of one ruleset file's values; each error names the file and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, msg: str) -> RulesetError:
        """The error for ``key`` of this file (to raise)."""
        return RulesetError(f"{self.path}: key '{key}': {msg}")

    def integer(self, key: str, value: Any, lo: int, hi: int) -> int:
        """``value`` as an integer in ``lo..hi`` (a bool is not one)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {value!r}")
        if not lo <= value <= hi:
            raise self.fail(key, f"{value} is out of range; allowed {lo}..{hi}")
        return value

    def boolean(self, key: str, value: Any) -> bool:
        """``value`` as true or false."""
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r}")
        return value

    def mapping(self, key: str, value: Any, allowed: Sequence[str]) -> Mapping:
        """``value`` as a mapping whose keys are all in ``allowed``."""
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a mapping with keys {', '.join(allowed)}, got {value!r}")
        for sub in value:
            if sub not in allowed:
                raise self.fail(f"{key}.{sub}", f"unknown key; allowed: {', '.join(allowed)}")
        return value

    def id_list(self, data: Mapping[str, Any], key: str, what: str, allowed: Sequence[str]) -> list:
        """``data[key]`` as a non-empty list of distinct ids from ``allowed``."""
        value = data[key]
        if not isinstance(value, list) or not value:
            raise self.fail(key, f"expected a non-empty list of {what}s ({', '.join(allowed)}), got {value!r}")
        for item in value:
            if item not in allowed:
                raise self.fail(key, f"unknown {what} {item!r}; allowed: {', '.join(allowed)}")
        if len(set(value)) != len(value):
            raise self.fail(key, f"a {what} appears twice in {value} (at most one of each)")
        return value

    def straight_values(self, key: str, value: Any) -> tuple[int, int, int]:
        """A straight's value after roll 1, 2, 3 from an integer or a list of 1 to 3."""
        vals = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(vals, list) or not 1 <= len(vals) <= 3:
            raise self.fail(
                key, f"expected an integer or a list of 1 to 3 integers (after roll 1, 2, 3), got {value!r}"
            )
        vals = [self.integer(key, v, 0, 1000) for v in vals]
        vals = vals + [vals[-1]] * (3 - len(vals))
        return (vals[0], vals[1], vals[2])


def _read_header(data: Mapping[str, Any], check: _Check) -> str:
    """The top-level keys (none unknown, none required missing), schema_version and the name."""
    for key in data:
        if key not in _TOP_KEYS:
            raise check.fail(key, f"unknown key; allowed: {', '.join(_TOP_KEYS)}")
    for key, required in _TOP_KEYS.items():
        if required and key not in data:
            raise check.fail(key, "missing (required)")
    if type(data["schema_version"]) is not int or data["schema_version"] != SCHEMA_VERSION:
        raise check.fail("schema_version", f"expected {SCHEMA_VERSION}, got {data['schema_version']!r}")
    name = data["name"]
    if not isinstance(name, str) or not name:
        raise check.fail("name", f"expected a non-empty string, got {name!r}")
    _check_printable(check, "name", name)
    return name


def _check_printable(check: _Check, key: str, text: str, newlines: bool = False) -> None:
    """Refuse control and format characters (an escape sequence, a bell, a bidi override)
    in a text that terminals, pages and file names show; ``newlines``: line breaks and tabs
    allowed (the source texts)."""
    bad = [ch for ch in text if not ch.isprintable() and not (newlines and ch in "\n\t")]
    if bad:
        raise check.fail(
            key,
            f"holds the control character(s) {''.join(sorted(set(bad)))!r}; allowed: printable text"
            + (" with line breaks" if newlines else ""),
        )


def _read_dice_and_rolls(data: Mapping[str, Any], check: _Check) -> tuple[int, int]:
    """The number of dice (5 or 6; 2-4 for toy sheets) and of rolls per turn (1..5)."""
    if not isinstance(data["dice"], int) or isinstance(data["dice"], bool) or data["dice"] not in (2, 3, 4, 5, 6):
        raise check.fail(
            "dice", f"{data['dice']!r} dice are not supported; allowed: 5 or 6 (2-4 only for toy sheets of upper rows)"
        )
    return data["dice"], check.integer("rolls", data["rolls"], 1, 5)


def _read_rows(data: Mapping[str, Any], dice: int, check: _Check) -> list:
    """The row ids in sheet order: at most 30, each one playable with ``dice`` dice."""
    rows = check.id_list(data, "rows", "row", ROW_IDS)
    if len(rows) > 30:
        raise check.fail("rows", "at most 30 rows")
    if dice < 5:
        for row in rows:
            if row not in UPPER_ROWS:
                raise check.fail(
                    "rows", f"row {row!r} needs 5 dice; with {dice} dice (a toy sheet) only ones..sixes are allowed"
                )
    for row in SIX_DICE_ROWS:
        if row in rows and dice != 6:
            raise check.fail("rows", f"row {row!r} needs 6 dice but the preset has {dice}")
    return rows


def _read_columns(
    data: Mapping[str, Any], rows: list, rolls: int, check: _Check
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The played and the derived column kinds in sheet order, each one's needs met."""
    columns = check.id_list(data, "columns", "column kind", tuple(COLUMN_KINDS))
    played = tuple(c for c in columns if not COLUMN_KINDS[c].derived)
    derived = tuple(c for c in columns if COLUMN_KINDS[c].derived)
    if not played:
        raise check.fail("columns", "no playable column (maximal is derived from the played ones)")
    for kind in columns:
        need = COLUMN_KINDS[kind].requires
        problem = need(rows, columns) if need is not None else None
        if problem:
            raise check.fail("columns", problem)
        if COLUMN_KINDS[kind].first_write_roll > rolls:
            raise check.fail(
                "columns",
                f"{kind!r} is written only after roll {COLUMN_KINDS[kind].first_write_roll}, "
                f"but the preset has {rolls} roll(s) per turn",
            )
    return played, derived


def _read_sections(data: Mapping[str, Any], rolls: int, check: _Check) -> tuple[Mapping, Mapping, int]:
    """The scoring and options mappings (their keys) and options.last_turn_rolls."""
    scoring = check.mapping("scoring", data["scoring"], _SCORING_KEYS)
    options = check.mapping("options", {} if data.get("options") is None else data["options"], _OPTION_KEYS)
    last_turn_rolls = check.integer("options.last_turn_rolls", options.get("last_turn_rolls", rolls), rolls, 5)
    return scoring, options, last_turn_rolls


def _read_straight(scoring: Mapping, check: _Check) -> tuple[Mapping, int | None]:
    """scoring.straight (small and large required) and its fixed ``hand`` value, if any."""
    straight = check.mapping("scoring.straight", scoring.get("straight", {"small": 0, "large": 0}), _STRAIGHT_KEYS)
    for key in ("small", "large"):
        if key not in straight:
            raise check.fail(f"scoring.straight.{key}", "missing (required)")
    hand = straight.get("hand")
    if hand is not None:
        hand = check.integer("scoring.straight.hand", hand, 0, 1000)
    return straight, hand


def _read_scoring(
    scoring: Mapping, options: Mapping, rows: list, dice: int, check: _Check
) -> tuple[RowScoring, int | None, Mapping]:
    """The row values (with the options they read), the straight's hand value and scoring.bonus."""
    bonus = check.mapping("scoring.bonus", scoring.get("bonus", {}), _BONUS_KEYS)
    for row, key in (("trilling", "trilling_bonus"), ("three_by_two", "three_by_two_bonus"), ("straight", "straight")):
        if row in rows and key not in scoring:
            raise check.fail(f"scoring.{key}", f"missing (required when {row!r} is a row)")
    straight, hand = _read_straight(scoring, check)
    row_scoring = RowScoring(
        upper_dice=check.integer("scoring.upper_dice", scoring.get("upper_dice", min(5, dice)), 1, dice),
        trilling_bonus=check.integer("scoring.trilling_bonus", scoring.get("trilling_bonus", 0), 0, 1000),
        full_bonus=check.integer("scoring.full_bonus", scoring.get("full_bonus", 30), 0, 1000),
        poker_bonus=check.integer("scoring.poker_bonus", scoring.get("poker_bonus", 40), 0, 1000),
        jamb_bonus=check.integer("scoring.jamb_bonus", scoring.get("jamb_bonus", 50), 0, 1000),
        three_by_two_bonus=check.integer("scoring.three_by_two_bonus", scoring.get("three_by_two_bonus", 0), 0, 1000),
        jamb6_bonus=check.integer("options.jamb6_bonus", options.get("jamb6_bonus", 60), 0, 1000),
        full_allows_five_of_a_kind=check.boolean(
            "options.full_allows_five_of_a_kind", options.get("full_allows_five_of_a_kind", False)
        ),
        straight_small=check.straight_values("scoring.straight.small", straight["small"]),
        straight_large=check.straight_values("scoring.straight.large", straight["large"]),
    )
    return row_scoring, hand, bonus


def _read_title_and_source(data: Mapping[str, Any], name: str, check: _Check) -> tuple[str, str]:
    """The optional title (default: the name) and source texts."""
    title = data.get("title", name)
    source = data.get("source", "")
    if not isinstance(title, str) or not isinstance(source, str):
        raise check.fail("title" if not isinstance(title, str) else "source", "expected a string")
    _check_printable(check, "title", title)
    _check_printable(check, "source", source, newlines=True)
    return title, source


def _read_bonus(bonus: Mapping, check: _Check) -> dict[str, int]:
    """The upper-section bonus: threshold, points and per_point (Ruleset's bonus_* fields)."""
    return {
        "bonus_threshold": check.integer("scoring.bonus.threshold", bonus.get("threshold", 60), 0, 1000),
        "bonus_points": check.integer("scoring.bonus.points", bonus.get("points", 30), 0, 1000),
        "bonus_per_point": check.integer("scoring.bonus.per_point", bonus.get("per_point", 0), 0, 100),
    }


def _read_option_flags(options: Mapping, check: _Check) -> dict[str, bool]:
    """The true/false options the Ruleset keeps as fields (the row scoring reads the others)."""
    return {
        "bonus_strict": check.boolean("options.bonus_strict", options.get("bonus_strict", False)),
        "answer_forced": check.boolean("options.answer_forced", options.get("answer_forced", True)),
        "jokers": check.boolean("options.jokers", options.get("jokers", False)),
        "announce_pure": check.boolean("options.announce_pure", options.get("announce_pure", False)),
        "difference_clamp": check.boolean("options.difference_clamp", options.get("difference_clamp", False)),
    }


@dataclass(frozen=True, eq=False)
class Ruleset:
    """A validated ruleset with its precomputed tables (RULES.md §1-5).

    Attributes (all read-only):
        name, title, source, path: identity of the preset.
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
    def _from_mapping(cls, data: Mapping[str, Any], path: Path) -> Ruleset:
        # The readers run in this order, so a file with several errors reports the same first one.
        check = _Check(path)
        name = _read_header(data, check)
        dice, rolls = _read_dice_and_rolls(data, check)
        rows = _read_rows(data, dice, check)
        played, derived = _read_columns(data, rows, rolls, check)
        scoring, options, last_turn_rolls = _read_sections(data, rolls, check)
        row_scoring, hand, bonus = _read_scoring(scoring, options, rows, dice, check)
        title, source = _read_title_and_source(data, name, check)
        bonus_values = _read_bonus(bonus, check)
        flags = _read_option_flags(options, check)
        return cls._build(
            name=name,
            path=path,
            title=title,
            source=source,
            dice=dice,
            rolls=rolls,
            last_turn_rolls=last_turn_rolls,
            rows=tuple(rows),
            columns=played,
            derived_columns=derived,
            row_scoring=row_scoring,
            straight_hand=hand,
            **bonus_values,
            **flags,
        )

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
