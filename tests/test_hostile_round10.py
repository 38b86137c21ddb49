"""Tenth hostile round: the public API and the commands given inputs of the wrong shape.

Each case failed before its fix: ``Ruleset.column_parts`` read a values array past its end
(a garbage score) or raised numba's TypingError; a ruleset path in an unknown user's home
(``~nosuchuser/r.yaml``) was a RuntimeError traceback from ``Path.expanduser``; jamb-export
wrote the copy over its own source (losing the run's optimizer state); PettingZoo's wrapped
env answered a non-integer action with an AssertionError where the raw env says ValueError;
jamb-web served with a ``--records`` folder it could not make (every new game a 500);
jamb-train-value wrote its ``config.yaml`` over another run's; ``jamb-play --save`` of a
new game replaced an existing file (a saved game, or any other); ``jamb-zoo train -f`` behind
a file was the zoo's NotADirectoryError traceback; ``write_video`` at 0 frames a second was a
ZeroDivisionError.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from jamb_env import RulesetError, load_ruleset


# ---------------------------------------------------------------------- the scoring API
@pytest.mark.parametrize(
    "values, filled",
    [
        ([], (1 << 13) - 1),  # read past the end: a garbage score
        (np.zeros((13, 2), int), 1),  # numba's TypingError
        ([1.0] * 12 + [float("nan")], 1),
        (np.zeros(13, int), 1 << 80),  # an OverflowError
        (np.zeros(13, int), -1),
    ],
)
def test_column_parts_refuses_values_and_masks_of_the_wrong_shape(values, filled):
    rules = load_ruleset("classic")
    with pytest.raises(ValueError, match="values must be 13|filled must be a mask"):
        rules.column_parts(values, filled)
    with pytest.raises(ValueError, match="values must be 13|filled must be a mask"):
        rules.column_points(values, filled)
    assert rules.column_points(np.full(13, 3), (1 << 13) - 1) == rules.column_points([3] * 13, (1 << 13) - 1)


# ---------------------------------------------------------------------- a path of an unknown user's home
def test_a_ruleset_path_in_an_unknown_users_home_is_a_ruleset_error(tmp_path, capsys):
    with pytest.raises(RulesetError, match="cannot read ruleset '~nosuchuser-jamb/r.yaml'"):
        load_ruleset("~nosuchuser-jamb/r.yaml")
    from agents.apps.cli import play as play_cli

    # before: Path.expanduser's RuntimeError traceback
    assert play_cli.main(["--ruleset", "~nosuchuser-jamb/r.yaml", "--watch", "greedy", "--delay", "0"]) == 2
    assert "cannot read ruleset" in capsys.readouterr().err


# ---------------------------------------------------------------------- jamb-export over its source
def test_jamb_export_refuses_to_write_the_copy_over_its_source(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from agents.apps.cli import export as export_cli
    from agents.export import export_model
    from agents.shipped import MODELS_DIR

    src = tmp_path / "final_model.zip"
    shutil.copyfile(MODELS_DIR / "classic.zip", src)
    before = src.read_bytes()
    (tmp_path / "link.zip").symlink_to(src)
    for dst in (src, tmp_path / "final_model", tmp_path / "link.zip"):
        with pytest.raises(SystemExit) as exc:
            export_cli.main([str(src), str(dst)])
        assert exc.value.code == 2
        assert "is the model to export itself" in capsys.readouterr().err
        with pytest.raises(ValueError, match="is the model to export itself"):
            export_model(src, dst)
    assert src.read_bytes() == before
    assert export_cli.main([str(src), str(tmp_path / "copy.zip")]) == 0


# ---------------------------------------------------------------------- the wrapped PettingZoo env
@pytest.mark.parametrize("action", ["3", 3.0, None, [3]])
def test_the_wrapped_pettingzoo_env_refuses_a_non_integer_action_with_a_value_error(action):
    pytest.importorskip("pettingzoo")
    from jamb_env import multiplayer as mp

    env = mp.env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="an action is one integer"):  # before: AssertOutOfBounds' AssertionError
        env.step(action)
    env.step(np.int64(3))  # the game is unchanged and plays on


# ---------------------------------------------------------------------- jamb-web's records folder
@pytest.mark.parametrize("where", ["file/games", "/proc/self/games", "/dev/null/games"])
def test_jamb_web_refuses_a_records_folder_it_cannot_make_before_serving(tmp_path, capsys, monkeypatch, where):
    pytest.importorskip("flask")
    from agents.apps.cli import web as web_cli

    (tmp_path / "file").write_text("x")
    monkeypatch.chdir(tmp_path)
    served = []
    monkeypatch.setattr(web_cli, "make_server", lambda *a, **k: served.append(a))
    with pytest.raises(SystemExit) as exc:  # before: it served, and every new game was a 500 with a traceback
        web_cli.main(["--port", "0", "--records", where])
    assert exc.value.code == 2 and not served
    err = capsys.readouterr().err
    assert f"--records {where}: " in err and ("is a file, not a folder" in err or "it is inside /" in err)


# ---------------------------------------------------------------------- jamb-train-value into another run's folder
def test_a_value_run_refuses_the_folder_of_another_run_and_keeps_its_config(tmp_path, capsys):
    from agents.apps.cli import train_value as value_cli
    from agents.training.config import DEFAULT_CONFIG, config_text, load_config

    run = tmp_path / "sb3_run"
    run.mkdir()
    text = config_text(load_config(DEFAULT_CONFIG))  # a jamb-train run's config.yaml
    (run / "config.yaml").write_text(text)
    for resume in ([], ["--resume"]):
        with pytest.raises(SystemExit) as exc:  # before: it wrote its own config.yaml over the run's
            value_cli.main(["--out", str(run), "--iterations", "1", "--games", "2", *resume])
        assert exc.value.code == 2
        assert "holds another run" in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == text and sorted(p.name for p in run.iterdir()) == ["config.yaml"]


# ---------------------------------------------------------------------- jamb-play --save over an existing file
@pytest.mark.parametrize("seats", [[], ["--players", "human", "human"]])
def test_a_new_game_refuses_to_save_over_an_existing_file(tmp_path, capsys, monkeypatch, seats):
    from agents.apps.cli import play as play_cli

    saved = tmp_path / "game.jsonl"
    saved.write_text(
        '{"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}\n'
    )
    notes = tmp_path / "notes.md"
    notes.write_text("my notes\n")
    before = {p: p.read_text() for p in (saved, notes)}
    monkeypatch.setattr("builtins.input", lambda *a: "quit")
    for argv in (
        ["--seed", "1", "--save", str(saved), *seats],
        ["--seed", "1", "--save", str(notes), *seats],
        ["--load", str(saved), "--save", str(notes)],
    ):
        with pytest.raises(SystemExit) as exc:  # before: the first save replaced the file with the new game
            play_cli.main(argv)
        assert exc.value.code == 2 and "the file exists, and saving would replace it" in capsys.readouterr().err
    assert {p: p.read_text() for p in (saved, notes)} == before
    assert play_cli.main(["--load", str(saved), "--save", str(saved)]) == 0  # resuming in place still saves there


# ---------------------------------------------------------------------- jamb-zoo's log folder
def test_jamb_zoo_train_refuses_a_log_folder_behind_a_file(tmp_path, capsys):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    blocker = tmp_path / "logs"
    blocker.write_text("not a folder\n")
    rc = zoo_cli.main(["train", "--algo", "ppo_mask", "--env", "Jamb-classic-v1", "-n", "10", "-f", str(blocker)])
    assert rc == 2  # before: the zoo's NotADirectoryError traceback (exit status 1)
    assert f"--log-folder {blocker}: " in capsys.readouterr().err and blocker.read_text() == "not a folder\n"


# ---------------------------------------------------------------------- write_video's frame rate
@pytest.mark.parametrize("fps", [0, -1, float("nan"), float("inf"), "2", True])
def test_write_video_refuses_a_frame_rate_that_is_not_a_positive_number(tmp_path, fps):
    pytest.importorskip("PIL")
    from jamb_env.replay.video import write_video

    frames = [np.zeros((8, 8, 3), dtype=np.uint8)] * 2
    with pytest.raises(ValueError, match="fps must be a positive finite number"):  # before: 0 a ZeroDivisionError
        write_video(tmp_path / "v.gif", frames, fps)
    assert not any(tmp_path.iterdir())
    assert write_video(tmp_path / "v.gif", frames, 2).is_file()
