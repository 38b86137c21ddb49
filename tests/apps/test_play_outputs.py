"""scripts/play.py --video (jamb_env/replay/video.py: GIF with Pillow, MP4 with moviepy) and --html, their argument
checks and atomic writes; Gymnasium's own RecordVideo on the env."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.apps.cli import play
from jamb_env import JambEnv
from jamb_env.render.sheet import sheet_image
from jamb_env.replay import video
from jamb_env.replay.records import GameRecord, read_records
from jamb_env.utils.files import is_temp_file


def greedy_record(ruleset: str, seed: int, steps: int | None = None) -> GameRecord:
    """A greedy game (its first ``steps`` steps only, without an end line, when given)."""
    env = JambEnv(ruleset, illegal_action="raise")
    env.reset(seed=seed)
    agent = agents.load("greedy", ruleset=ruleset)
    record = GameRecord(ruleset=ruleset, seed=seed, player="greedy")
    done = False
    while not done and (steps is None or len(record.steps) < steps):
        done = record.play(env, agent.act(env, env.observe(), env.action_masks()))[2]
    return record


@pytest.fixture(scope="module")
def short_game(tmp_path_factory) -> tuple[GameRecord, Path]:
    """A whole greedy game of classic_down (13 turns) in a record file."""
    record = greedy_record("classic_down", 5)
    path = tmp_path_factory.mktemp("rec") / "down.jsonl"
    record.write(path)
    return record, path


def play_exit(argv, capsys):
    """play.main(argv): (exit status, stdout, stderr), argparse errors included."""
    try:
        code = play.main(argv + ["--width", "120"])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def gif_frames(path: Path) -> tuple[list[np.ndarray], list[int]]:
    from PIL import Image, ImageSequence

    with Image.open(path) as im:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)]
        im.seek(0)
        durations = []
        for k in range(im.n_frames):
            im.seek(k)
            durations.append(im.info["duration"])
    return frames, durations


def start_picture(record: GameRecord) -> np.ndarray:
    env = JambEnv(record.ruleset)
    env.reset(seed=record.seed)
    return sheet_image(env.ruleset, env.game, env.legal_mask())


def test_watch_writes_a_gif_one_frame_per_step(capsys, tmp_path):
    gif, rec = tmp_path / "out" / "game.gif", tmp_path / "game.jsonl"
    code, out, err = play_exit(
        [
            "--watch",
            "greedy",
            "--ruleset",
            "classic_down",
            "--seed",
            "5",
            "--delay",
            "0",
            "--record",
            str(rec),
            "--video",
            str(gif),
            "--fps",
            "4",
        ],
        capsys,
    )
    assert code == 0, err
    record = read_records(rec)[0]
    frames, durations = gif_frames(gif)
    assert len(frames) == len(record.steps) + 1 and f"wrote the video {gif} ({len(frames)} frames" in out
    start = start_picture(record)
    assert all(f.shape == start.shape for f in frames)
    assert np.abs(frames[0].astype(int) - start).mean() < 2  # the start, up to the GIF palette
    assert set(durations) == {250}
    assert [p.name for p in gif.parent.iterdir()] == ["game.gif"]  # no temporary file left


def test_replay_writes_an_mp4_and_a_page(short_game, capsys, tmp_path):
    pytest.importorskip("moviepy", reason="moviepy is missing: pip install -e '.[video]'")
    from moviepy import VideoFileClip

    record, path = short_game
    mp4, page = tmp_path / "game.mp4", tmp_path / "game.html"
    code, out, err = play_exit(
        ["--replay", str(path), "--delay", "0", "--video", str(mp4), "--html", str(page)], capsys
    )
    assert code == 0, err
    assert f"final score {record.final_score}" in out
    clip = VideoFileClip(str(mp4))
    try:
        start = start_picture(record)
        assert clip.fps == 2 and tuple(clip.size) == (start.shape[1], start.shape[0])
        assert clip.n_frames == len(record.steps) + 1
        assert np.abs(clip.get_frame(0).astype(int) - start).mean() < 6  # H.264 is lossy
    finally:
        clip.close()
    assert f'"final_score":{record.final_score}' in page.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.html", "game.mp4"]


def test_mp4_without_moviepy_says_how_to_get_it(short_game, capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "moviepy", None)  # import moviepy now raises ImportError
    code, out, err = play_exit(
        ["--replay", str(short_game[1]), "--delay", "0", "--video", str(tmp_path / "g.mp4")], capsys
    )
    assert code == 2 and "pip install -e '.[video]' or use a .gif" in err and "Traceback" not in err
    assert out == "" and list(tmp_path.iterdir()) == []  # refused before the replay
    with pytest.raises(video.MissingDependency, match="use a .gif"):
        video.write_video(tmp_path / "g.mp4", [start_picture(short_game[0])], 2)
    code, out, err = play_exit(
        ["--replay", str(short_game[1]), "--delay", "0", "--video", str(tmp_path / "g.gif")], capsys
    )
    assert code == 0 and (tmp_path / "g.gif").is_file()  # a GIF needs Pillow only


def test_a_failed_video_write_keeps_the_old_file(short_game, capsys, tmp_path, monkeypatch):
    gif = tmp_path / "g.gif"
    gif.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    code, out, err = play_exit(["--replay", str(short_game[1]), "--delay", "0", "--video", str(gif)], capsys)
    assert code == 2 and "error: [Errno 28] No space left on device" in err
    assert gif.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["g.gif"]
    assert not any(is_temp_file(p) for p in tmp_path.iterdir())


def test_a_record_that_does_not_replay_writes_nothing(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    record = greedy_record("classic", 2, steps=3)
    record.steps[1]["dice"] = [9, 9, 9, 9, 9]
    record.write(bad)
    page, gif = tmp_path / "g.html", tmp_path / "g.gif"
    code, out, err = play_exit(["--replay", str(bad), "--delay", "0", "--html", str(page), "--video", str(gif)], capsys)
    assert code == 2 and f"error: {bad}:3: step 1" in err
    assert not page.exists() and not gif.exists()


def test_a_partial_record_makes_a_short_video(capsys, tmp_path):
    path = tmp_path / "part.jsonl"
    record = greedy_record("classic", 4, steps=6)
    record.write(path)
    gif = tmp_path / "p.gif"
    code, out, err = play_exit(["--replay", str(path), "--delay", "0", "--video", str(gif), "--fps", "0.1"], capsys)
    assert code == 0, err
    frames, durations = gif_frames(gif)
    assert len(frames) == 7 and set(durations) == {10_000}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--html", "x.html"], "--html cannot be used with an interactive game (--html is for --watch and --replay)"),
        (["--video", "x.gif"], "--video cannot be used with an interactive game (--video is for --watch and --replay)"),
        (["--load", "x.jsonl", "--html", "x.html"], "--html cannot be used with a resumed game"),
        (["--watch", "random", "--video", "x.txt"], "--video x.txt: the name must end in .mp4 or .gif"),
        (["--watch", "random", "--video", "video"], "the name must end in .mp4 or .gif"),
        (["--watch", "random", "--video", "x.gif", "--fps", "0"], "--fps must be 0.1..60"),
        (["--watch", "random", "--video", "x.gif", "--fps", "61"], "--fps must be 0.1..60"),
        (["--watch", "random", "--video", "x.gif", "--fps", "nan"], "--fps must be 0.1..60"),
        (["--watch", "random", "--video", "x.gif", "--fps", "fast"], "invalid float value"),
        (["--watch", "random", "--fps", "2"], "--fps goes with --video"),
        (["--watch", "random", "--html", ""], "argument --html: an empty path"),
        (["--watch", "random", "--html", "."], "--html: . is a folder; give a file name"),
        (["--watch", "random", "--video", "/"], "the name must end in .mp4 or .gif"),
        (["--watch", "random", "--html", "g.out", "--log", "g.out"], "--log and --html name the same file"),
    ],
)
def test_play_refuses_bad_output_options(capsys, argv, message):
    code, out, err = play_exit(argv, capsys)
    assert code == 2 and message in err, err


def test_unwritable_output_paths_are_refused_before_the_game(short_game, capsys, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    folder = tmp_path / "f.gif"
    folder.mkdir()
    for argv, message in (
        (
            ["--html", str(blocker / "g.html")],
            f"--html: cannot write {blocker / 'g.html'}: {blocker} is a file, not a folder",
        ),
        (
            ["--video", str(blocker / "g.gif")],
            f"--video: cannot write {blocker / 'g.gif'}: {blocker} is a file, not a folder",
        ),
        (["--video", str(folder)], f"--video: {folder} is a folder; give a file name"),
        (["--html", str(short_game[1])], "--html and --replay name the same file"),  # would overwrite the record
    ):
        code, out, err = play_exit(["--replay", str(short_game[1]), "--delay", "0", *argv], capsys)
        assert code == 2 and message in err and out == "", err


def test_gymnasium_record_video(tmp_path):
    """Gymnasium's own RecordVideo wrapper records the env's rgb_array frames."""
    pytest.importorskip(
        "moviepy", reason="moviepy is missing (Gymnasium's RecordVideo needs it): pip install -e '.[video]'"
    )
    import gymnasium

    import jamb_env  # noqa: F401  (registers Jamb-v1)

    env = gymnasium.make("Jamb-v1", render_mode="rgb_array", max_episode_steps=8)
    folder = tmp_path / "videos"  # a new folder: RecordVideo warns when it writes into one that exists
    env = gymnasium.wrappers.RecordVideo(env, str(folder), episode_trigger=lambda episode: True, name_prefix="jamb")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=3)
    steps, done = 0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        steps, done = steps + 1, terminated or truncated
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert steps == 8 and [v.name for v in videos] == ["jamb-episode-0.mp4"] and videos[0].stat().st_size > 0
    from moviepy import VideoFileClip

    clip = VideoFileClip(str(videos[0]))
    try:
        assert clip.n_frames == steps + 1 and tuple(clip.size) == (384, 480)
    finally:
        clip.close()
