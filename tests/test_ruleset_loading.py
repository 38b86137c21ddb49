"""Loading rulesets: presets, paths, `extends`, and a clear RulesetError for bad files."""

from pathlib import Path

import pytest
import yaml

from jamb_env import RulesetError, list_rulesets, load_ruleset
from jamb_env.rules import RULES_DIR

CLASSIC = yaml.safe_load((RULES_DIR / "classic.yaml").read_text())


def write(tmp_path: Path, data: dict, name: str = "custom.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def changed(**changes) -> dict:
    data = {k: v for k, v in CLASSIC.items()}
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def test_presets_listed_and_cached():
    assert "classic" in list_rulesets()
    assert load_ruleset("classic") is load_ruleset("classic")
    rules = load_ruleset("classic")
    assert rules.dice == 5 and rules.num_cells == 52 and rules.columns == ("down", "up", "free", "announce")


def test_load_by_path(tmp_path):
    rules = load_ruleset(write(tmp_path, changed(name="mine")))
    assert rules.name == "mine" and rules.num_cells == 52


def test_unknown_preset_and_missing_file():
    with pytest.raises(RulesetError, match="unknown ruleset 'clasic'.*classic"):
        load_ruleset("clasic")
    with pytest.raises(FileNotFoundError):
        load_ruleset("/no/such/file.yaml")


@pytest.mark.parametrize(
    "data,key,message",
    [
        (changed(colour="red"), "colour", "unknown key"),
        (changed(rows=None), "rows", "missing"),
        (changed(columns=None), "columns", "missing"),
        (changed(dice=7), "dice", "allowed: 5 or 6"),
        (changed(dice="five"), "dice", "allowed: 5 or 6"),
        (changed(rolls=0), "rolls", "out of range"),
        (changed(rows=["ones", "aces"]), "rows", "unknown row 'aces'"),
        (changed(rows=["ones", "ones"]), "rows", "twice"),
        (changed(rows=CLASSIC["rows"] + ["jamb6"]), "rows", "needs 6 dice"),
        (changed(rows=CLASSIC["rows"] + ["three_by_two"]), "rows", "needs 6 dice"),
        (changed(columns=["down", "sideways"]), "columns", "unknown column kind 'sideways'"),
        (changed(columns=[]), "columns", "non-empty"),
        (changed(columns=["maximal"]), "columns", "no playable column"),
        (changed(columns=["down", "answer"]), "columns", "needs an 'announce'"),
        (changed(columns=["down", "down"]), "columns", "twice"),
        (changed(schema_version=2), "schema_version", "expected 1"),
        (
            changed(scoring={**CLASSIC["scoring"], "bonus": {"threshold": "sixty"}}),
            "scoring.bonus.threshold",
            "integer",
        ),
        (changed(scoring={**CLASSIC["scoring"], "straight": {"small": 35}}), "scoring.straight.large", "missing"),
        (
            changed(scoring={**CLASSIC["scoring"], "straight": {"small": [1, 2, 3, 4], "large": 4}}),
            "scoring.straight.small",
            "1 to 3",
        ),
        (
            changed(scoring={k: v for k, v in CLASSIC["scoring"].items() if k != "trilling_bonus"}),
            "scoring.trilling_bonus",
            "required when 'trilling'",
        ),
        (changed(scoring={**CLASSIC["scoring"], "bonuss": 1}), "scoring.bonuss", "unknown key"),
        (changed(options={"answer_forced": "yes"}), "options.answer_forced", "true or false"),
        (changed(options={"last_turn_rolls": 2}), "options.last_turn_rolls", "out of range"),
        (changed(options={"jokers": "yes"}), "options.jokers", "true or false"),
    ],
)
def test_invalid_files_name_file_and_key(tmp_path, data, key, message):
    path = write(tmp_path, data)
    with pytest.raises(RulesetError) as err:
        load_ruleset(path)
    text = str(err.value)
    assert str(path) in text and f"'{key}'" in text and message in text


def test_not_yaml_and_not_a_mapping(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rows: [ones, twos\n")
    with pytest.raises(RulesetError, match="not valid YAML"):
        load_ruleset(bad)
    bad.write_text("- just a list\n")
    with pytest.raises(RulesetError, match="mapping"):
        load_ruleset(bad)


def test_extends_overrides_keys(tmp_path):
    path = write(tmp_path, {"schema_version": 1, "name": "classic_free", "extends": "classic", "columns": ["free"]})
    rules = load_ruleset(path)
    assert rules.columns == ("free",) and rules.num_cells == 13 and rules.rows == load_ruleset("classic").rows
    with pytest.raises(RulesetError, match="'extends'"):
        load_ruleset(write(tmp_path, {"schema_version": 1, "name": "x", "extends": "nothing"}, "x.yaml"))


def test_score_api_errors(classic):
    with pytest.raises(ValueError, match="5 dice"):
        classic.score("ones", [1, 2, 3])
    with pytest.raises(ValueError, match="1..6"):
        classic.score("ones", [0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="1..6"):
        classic.score("ones", [1, 2, 3, 4, 7])
    with pytest.raises(ValueError, match="unknown row"):
        classic.score("yahtzee", [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="roll"):
        classic.score("ones", [1, 2, 3, 4, 5], roll=4)
    with pytest.raises(ValueError, match="unknown column"):
        classic.score("ones", [1, 2, 3, 4, 5], column="hand")
    with pytest.raises(ValueError, match="unknown row"):
        classic.column_score({"yahtzee": 50})
