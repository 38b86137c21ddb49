"""Ruleset files as input: every bad file is refused with one RulesetError line that names
the file, the key and what is allowed (one table, :data:`BAD_FILES`), wherever a ruleset
can be given (:data:`DOORS`); the limits on size and on the ``extends:`` chain hold at
their edges; a file that extends another is called by a name of its own (issue 41), and
a preset by its file's name.

The YAML reader's own limits on every reader (nesting, size, encoding) are in
tests/test_hostile_configs.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from jamb_env import JambEnv, JambVecEnv, RulesetError, list_rulesets, load_ruleset
from jamb_env.rules import RULES_DIR, ruleset, ruleset_file

CLASSIC = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())
MAX_BYTES, MAX_EXTENDS = 1 << 20, 32  # jamb_env/utils/safe_yaml.py's and rules/ruleset_file.py's limits


def changed(**changes) -> dict:
    """classic.yaml with keys replaced (None: left out)."""
    data = dict(CLASSIC)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def derived(**keys) -> dict:
    """A file extending classic, keeping its dice and rows, with one column."""
    return {"schema_version": 1, "extends": "classic", "columns": ["down"], **keys}


def write_files(folder: Path, files: dict) -> Path:
    """Write ``files`` (name -> mapping, dumped as YAML, or text) into ``folder``; the path
    of the first one."""
    for name, content in files.items():
        (folder / name).write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    return folder / next(iter(files))


SCORING = CLASSIC["scoring"]
#: (files, the first one loaded; the key the error names; what it says)
BAD_FILES = {
    "unknown key": ({"r.yaml": changed(colour="red")}, "colour", "unknown key"),
    "no rows": ({"r.yaml": changed(rows=None)}, "rows", "missing"),
    "no columns": ({"r.yaml": changed(columns=None)}, "columns", "missing"),
    "7 dice": ({"r.yaml": changed(dice=7)}, "dice", "allowed: 5 or 6"),
    "dice as text": ({"r.yaml": changed(dice="five")}, "dice", "allowed: 5 or 6"),
    "no roll": ({"r.yaml": changed(rolls=0)}, "rolls", "out of range"),
    "unknown row": ({"r.yaml": changed(rows=["ones", "aces"])}, "rows", "unknown row 'aces'"),
    "a row twice": ({"r.yaml": changed(rows=["ones", "ones"])}, "rows", "twice"),
    "jamb6 with 5 dice": ({"r.yaml": changed(rows=CLASSIC["rows"] + ["jamb6"])}, "rows", "needs 6 dice"),
    "3x2 with 5 dice": ({"r.yaml": changed(rows=CLASSIC["rows"] + ["three_by_two"])}, "rows", "needs 6 dice"),
    "unknown column": ({"r.yaml": changed(columns=["down", "sideways"])}, "columns", "unknown column kind 'sideways'"),
    "empty columns": ({"r.yaml": changed(columns=[])}, "columns", "non-empty"),
    "only maximal": ({"r.yaml": changed(columns=["maximal"])}, "columns", "no playable column"),
    "answer alone": ({"r.yaml": changed(columns=["down", "answer"])}, "columns", "needs an 'announce'"),
    "a column twice": ({"r.yaml": changed(columns=["down", "down"])}, "columns", "twice"),
    "second with 1 roll": ({"r.yaml": changed(columns=["second"], rolls=1)}, "columns", "only after roll 2"),
    "schema 2": ({"r.yaml": changed(schema_version=2)}, "schema_version", "expected 1"),
    "threshold as text": (
        {"r.yaml": changed(scoring={**SCORING, "bonus": {"threshold": "sixty"}})},
        "scoring.bonus.threshold",
        "integer",
    ),
    "no large straight": (
        {"r.yaml": changed(scoring={**SCORING, "straight": {"small": 35}})},
        "scoring.straight.large",
        "missing",
    ),
    "four straight values": (
        {"r.yaml": changed(scoring={**SCORING, "straight": {"small": [1, 2, 3, 4], "large": 4}})},
        "scoring.straight.small",
        "1 to 3",
    ),
    "no trilling bonus": (
        {"r.yaml": changed(scoring={k: v for k, v in SCORING.items() if k != "trilling_bonus"})},
        "scoring.trilling_bonus",
        "required when 'trilling'",
    ),
    "unknown scoring key": ({"r.yaml": changed(scoring={**SCORING, "bonuss": 1})}, "scoring.bonuss", "unknown key"),
    "answer_forced as text": ({"r.yaml": changed(options={"answer_forced": "yes"})}, "options.answer_forced", "true"),
    "2 last rolls": ({"r.yaml": changed(options={"last_turn_rolls": 2})}, "options.last_turn_rolls", "out of range"),
    "jokers as text": ({"r.yaml": changed(options={"jokers": "yes"})}, "options.jokers", "true or false"),
    "a control character in the name": ({"r.yaml": changed(name="a\x1b[31m")}, "name", "control character"),
    "a name of 20,000 characters": ({"r.yaml": changed(name="x" * 20_000)}, "name", "at most 64"),  # 330 MiB frames
    "a title of 1,000 characters": ({"r.yaml": changed(title="x" * 1000)}, "title", "at most 200"),
    # extends
    "extends a preset that is not one": (
        {"r.yaml": {"schema_version": 1, "name": "x", "extends": "nothing"}},
        "extends",
        "no preset 'nothing'",
    ),
    "extends a list": ({"r.yaml": {"schema_version": 1, "name": "x", "extends": ["classic"]}}, "extends", "expected"),
    "extends in a circle": (
        {"a.yaml": {"name": "a", "extends": "b.yaml"}, "b.yaml": {"name": "b", "extends": "a.yaml"}},
        "extends",
        "circular chain",
    ),
    # issue 41: a derived ruleset was called by its base's name
    "extends without a name": (
        {"r.yaml": derived()},
        "name",
        "missing (required: a ruleset that extends 'classic' takes a name of its own)",
    ),
    "extends a file without a name": (
        {"r.yaml": derived(extends="base.yaml"), "base.yaml": changed(name="base")},
        "name",
        "a ruleset that extends 'base.yaml' takes a name of its own",
    ),
    "extends naming itself as its base": (
        {"r.yaml": derived(name="classic")},
        "name",
        "'classic' is the name of the ruleset it extends; allowed: a name of its own",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_ruleset_file_is_one_line_naming_the_file_and_the_key(case, tmp_path):
    files, key, message = BAD_FILES[case]
    path = write_files(tmp_path, files)
    with pytest.raises(RulesetError) as err:
        load_ruleset(path)
    text = str(err.value)
    assert str(path) in text and f"key '{key}'" in text and message in text and "\n" not in text, text


@pytest.mark.parametrize(
    "text, message",
    [("rows: [ones, twos\n", "not valid YAML"), ("- just a list\n", "expected a mapping of keys at the top level")],
)
def test_a_file_that_is_not_a_mapping_of_keys(text, message, tmp_path):
    with pytest.raises(RulesetError, match=message):
        load_ruleset(write_files(tmp_path, {"bad.yaml": text}))


#: Everywhere a ruleset file can be given.
DOORS = {
    "load_ruleset": load_ruleset,
    "JambEnv": lambda path: JambEnv(ruleset=str(path)),
    "gym.make": lambda path: gym.make("Jamb-v1", ruleset=str(path)),
    "JambVecEnv": lambda path: JambVecEnv(2, ruleset=str(path)),
}


@pytest.mark.parametrize("door", DOORS)
def test_a_derived_ruleset_without_a_name_is_refused_at_every_door(door, tmp_path):
    path = write_files(tmp_path, {"mine.yaml": derived()})
    with pytest.raises(RulesetError, match=r"mine\.yaml: key 'name': missing \(required: a ruleset that extends"):
        DOORS[door](path)
    named = write_files(tmp_path, {"named.yaml": derived(name="classic_mine")})
    if door == "load_ruleset":
        assert load_ruleset(named).name == "classic_mine" and load_ruleset(named).columns == ("down",)


def test_a_derived_ruleset_without_a_name_in_a_training_config_is_one_line(tmp_path, capsys):
    """A config's ``ruleset`` key: jamb-train reports the file in one line, exit status 2,
    and makes no run folder."""
    from agents.apps.cli.train import main
    from agents.training.config import CONFIGS_DIR

    path = write_files(tmp_path, {"mine.yaml": derived()})
    config = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    write_files(tmp_path, {"config.yaml": {**config, "ruleset": str(path)}})
    assert main(["--config", str(tmp_path / "config.yaml"), "--run-dir", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: key 'name': missing (required: a ruleset that extends 'classic'" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_the_preset_lists_hold_only_presets_called_by_their_file_name(tmp_path, monkeypatch):
    """The web's and the commands' lists of presets are file names (list_rulesets): a preset
    file that names itself otherwise, or extends another without a name, is left out, and
    loading it by name is refused."""
    write_files(tmp_path, {"good.yaml": changed(name="good"), "bad.yaml": derived(extends="good")})
    write_files(tmp_path, {"other.yaml": changed(name="not_other")})
    monkeypatch.setattr(ruleset, "RULES_DIR", tmp_path)
    monkeypatch.setattr(ruleset_file, "RULES_DIR", tmp_path)
    assert list_rulesets(playable=False) == ["bad", "good", "other"] and list_rulesets() == ["good"]
    with pytest.raises(RulesetError, match="other.yaml: key 'name': 'not_other' is not the preset's file name"):
        load_ruleset("other")
    with pytest.raises(RulesetError, match="bad.yaml: key 'name': missing"):
        load_ruleset("bad")


def test_every_shipped_preset_is_called_by_its_file_name():
    assert [load_ruleset(name).name for name in list_rulesets(playable=False)] == list_rulesets()


# ---------------------------------------------------------------- names, paths, limits and extends at their edges
def test_presets_are_listed_and_cached():
    assert "classic" in list_rulesets() and load_ruleset("classic") is load_ruleset("classic")
    rules = load_ruleset("classic")
    assert rules.dice == 5 and rules.num_cells == 52 and rules.columns == ("down", "up", "free", "announce")


def test_an_unknown_preset_and_a_missing_file():
    with pytest.raises(RulesetError, match="unknown ruleset 'clasic'.*classic"):
        load_ruleset("clasic")
    with pytest.raises(FileNotFoundError):
        load_ruleset("/no/such/file.yaml")


def test_load_by_path_and_extends_overrides_keys(tmp_path):
    assert load_ruleset(write_files(tmp_path, {"mine.yaml": changed(name="mine")})).name == "mine"
    rules = load_ruleset(write_files(tmp_path, {"free.yaml": derived(name="classic_free", columns=["free"])}))
    assert rules.columns == ("free",) and rules.num_cells == 13 and rules.rows == load_ruleset("classic").rows
    assert rules.title == "classic_free"  # a derived preset does not borrow its parent's title


def test_a_ruleset_of_exactly_1_mib_still_loads(tmp_path):
    path = tmp_path / "padded.yaml"
    text = yaml.safe_dump({**CLASSIC, "name": "padded"}) + "#"
    path.write_text(text + "x" * (MAX_BYTES - len(text.encode()) - 1) + "\n")
    assert path.stat().st_size == MAX_BYTES and load_ruleset(path).name == "padded"
    path.write_text(text + "x" * (MAX_BYTES - len(text.encode())) + "\n")
    with pytest.raises(RulesetError, match="more than 1,048,576 bytes"):
        load_ruleset(path)


def test_an_extends_chain_past_the_limit_is_refused(tmp_path):
    (tmp_path / "f0.yaml").write_text(yaml.safe_dump({**CLASSIC, "name": "f0"}))
    for i in range(1, 1500):
        (tmp_path / f"f{i}.yaml").write_text(yaml.safe_dump({"extends": f"f{i - 1}.yaml", "name": f"f{i}"}))
    assert load_ruleset(tmp_path / f"f{MAX_EXTENDS - 1}.yaml").name == "f31"  # 32 files: allowed
    for top in (MAX_EXTENDS, 1499):
        with pytest.raises(
            RulesetError,
            match=rf"f{top}.yaml: key 'extends': a chain of more than {MAX_EXTENDS} files "
            rf"\(.*f{top}.yaml -> .*f{top - 1}.yaml -> \.\.\. -> .*\); allowed: at most {MAX_EXTENDS} files",
        ):
            load_ruleset(tmp_path / f"f{top}.yaml")


def test_a_ruleset_extending_a_hostile_file_names_that_file(tmp_path):
    (tmp_path / "deep.yaml").write_text("a: " + "[" * 20_000 + "1" + "]" * 20_000 + "\n")
    (tmp_path / "child.yaml").write_text("extends: deep.yaml\nname: child\n")
    with pytest.raises(RulesetError, match=r"deep.yaml: nested more than 64 levels deep"):
        load_ruleset(tmp_path / "child.yaml")


def test_an_edit_of_the_file_a_ruleset_extends_is_seen_by_the_next_load(tmp_path):
    """Before: the cache was keyed on the file's own modification time, so a process kept the
    old rules of the file it extends (every new env too)."""
    base = write_files(tmp_path, {"base.yaml": changed(name="base", rolls=3)})
    child = write_files(tmp_path, {"child.yaml": {"schema_version": 1, "name": "child", "extends": str(base)}})
    assert load_ruleset(child).rolls == 3
    base.write_text(yaml.safe_dump(changed(name="base", rolls=2)))
    os.utime(base, ns=(base.stat().st_atime_ns, base.stat().st_mtime_ns + 10**9))  # a later time, however coarse
    assert load_ruleset(child).rolls == 2
    assert load_ruleset(child) is load_ruleset(child)  # unchanged: the one cached ruleset


def test_an_edit_that_keeps_the_file_s_modification_time_is_seen_by_the_next_load(tmp_path):
    """Before (H44): the cache was keyed on the modification time only, so a file edited and its
    time set back (``touch -d``, ``cp -p``) kept the old rules in this process."""
    rules = write_files(tmp_path, {"mine.yaml": changed(name="mine", rolls=3)})
    before = rules.stat()
    assert load_ruleset(rules).rolls == 3
    rules.write_text(yaml.safe_dump(changed(name="mine", rolls=2)))
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rules.stat().st_mtime_ns == before.st_mtime_ns and load_ruleset(rules).rolls == 2
