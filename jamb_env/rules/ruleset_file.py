"""Reading a ruleset file (the schema of :mod:`jamb_env.rules.ruleset`): the ``extends:``
chain merged (:func:`read_merged`) and every key checked (:func:`read_fields`), each error
naming the file, the key and what is allowed (RulesetError, one line).

The file itself is read by :func:`jamb_env.utils.safe_yaml.read_yaml_mapping` (size,
nesting, aliases, duplicate keys, encoding, FIFOs); the :class:`~jamb_env.rules.ruleset.Ruleset`
built from the fields is :mod:`jamb_env.rules.ruleset`'s.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from jamb_env.rules.columns import COLUMN_KINDS
from jamb_env.rules.tables import ROW_IDS, SIX_DICE_ROWS, UPPER_ROWS, RowScoring
from jamb_env.utils.errors import RulesetError
from jamb_env.utils.safe_yaml import read_yaml_mapping

SCHEMA_VERSION = 1

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


def preset_names() -> list[str]:
    """The stems of the preset files in :data:`RULES_DIR`, sorted (loadable or not)."""
    return sorted(p.stem for p in RULES_DIR.glob("*.yaml"))


#: Most files in an ``extends:`` chain (the file itself included).
MAX_EXTENDS = 32
#: The longest ``name`` and ``title`` of a rules file (characters).
MAX_NAME, MAX_TITLE = 64, 200


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


def read_merged(path: Path, chain: tuple[Path, ...] = (), files: list[Path] | None = None) -> dict:
    """``path``'s mapping merged over those of the files it extends (``chain``: the files
    that led here, each extending the next; ``files``: a list each file read is appended
    to). A file that extends another names itself, with a name other than its base's (a
    ruleset is called by its name in runs, records and tables).

    Raises:
        RulesetError: a file that cannot be read (:func:`read_yaml_mapping`), a bad,
            missing or circular ``extends``, a chain of more than :data:`MAX_EXTENDS`
            files, a derived file without a name of its own."""
    if path in chain:
        raise RulesetError(f"{path}: key 'extends': circular chain {' -> '.join(map(str, chain + (path,)))}")
    if len(chain) >= MAX_EXTENDS:
        raise RulesetError(
            f"{chain[0]}: key 'extends': a chain of more than {MAX_EXTENDS} files ({chain[0]} -> {chain[1]} -> ... -> "
            f"{chain[-1]} -> {path}); allowed: at most {MAX_EXTENDS} files, the file itself included"
        )
    data = _read_yaml(path)
    if files is not None:
        files.append(path)
    parent = data.get("extends")
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise RulesetError(f"{path}: key 'extends': expected a preset name or a path, got {parent!r}")
    parent_path = (
        (path.parent / parent).resolve() if parent.endswith((".yaml", ".yml")) else RULES_DIR / f"{parent}.yaml"
    )
    if not parent_path.is_file():
        raise RulesetError(f"{path}: key 'extends': no preset {parent!r}; presets are: {', '.join(preset_names())}")
    if "name" not in data:  # else it would be called by its base's name, and so would its runs and records
        raise RulesetError(
            f"{path}: key 'name': missing (required: a ruleset that extends {parent!r} takes a name of its own)"
        )
    base = read_merged(parent_path, chain + (path,), files)
    if data["name"] == base.get("name"):
        raise RulesetError(
            f"{path}: key 'name': {data['name']!r} is the name of the ruleset it extends; "
            "allowed: a name of its own (its runs, records and tables are called by it)"
        )
    merged = _deep_merge(base, data)
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
    _check_length(check, "name", name, MAX_NAME)
    return name


def _check_length(check: _Check, key: str, text: str, limit: int) -> None:
    """Refuse a text longer than ``limit`` characters: names and titles size the pictures,
    pages and file names that show them (a 20,000-character name made a 330 MiB frame)."""
    if len(text) > limit:
        raise check.fail(key, f"{len(text):,} characters; allowed: at most {limit}")


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
    _check_length(check, "title", title, MAX_TITLE)
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


def read_fields(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The fields of a :class:`~jamb_env.rules.ruleset.Ruleset` from a file's merged mapping
    ``data`` (:func:`read_merged`), every value checked.

    Raises RulesetError: the first problem, naming the file, the key and what is allowed."""
    # The readers run in this order, so a file with several errors reports the same first one.
    check = _Check(path)
    name = _read_header(data, check)
    dice, rolls = _read_dice_and_rolls(data, check)
    rows = _read_rows(data, dice, check)
    played, derived = _read_columns(data, rows, rolls, check)
    scoring, options, last_turn_rolls = _read_sections(data, rolls, check)
    row_scoring, hand, bonus = _read_scoring(scoring, options, rows, dice, check)
    title, source = _read_title_and_source(data, name, check)
    return dict(
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
        **_read_bonus(bonus, check),
        **_read_option_flags(options, check),
    )
