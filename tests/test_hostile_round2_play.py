"""Second-round hostile findings on jamb-evaluate --records and jamb-play: two agents whose
records file names collide, a multi-game file saved over by --load X --save X, and the
--html / --video of a watched game ended by Ctrl-C or a signal."""

import io
import os
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from agents.apps.cli import evaluate as evaluate_cli
from agents.apps.cli import play
from agents.evaluation import solitaire as evaluation
from jamb_env import JambEnv
from jamb_env.replay.records import GameRecord, read_records, replay

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- 1. records file names
def test_record_file_names_are_unique_in_agent_order():
    names = evaluation.record_file_names(
        ["/tmp/x/m/classic.zip", "/tmp/x/m_classic.zip", "greedy", "_tmp_x_m_classic_2.zip"]
    )
    assert names == {
        "/tmp/x/m/classic.zip": "_tmp_x_m_classic.jsonl",
        "/tmp/x/m_classic.zip": "_tmp_x_m_classic_3.jsonl",
        "greedy": "greedy.jsonl",
        "_tmp_x_m_classic_2.zip": "_tmp_x_m_classic_2.jsonl",
    }
    assert evaluation.record_file_names(["a/B.zip", "a_b"]) == {
        "a/B.zip": "a_B.jsonl",
        "a_b": "a_b_2.jsonl",
    }  # case-insensitive disks


def test_evaluate_keeps_the_records_of_agents_whose_file_names_collide(tmp_path, monkeypatch):
    one, two = tmp_path / "m" / "classic.zip", tmp_path / "m_classic.zip"
    one.parent.mkdir()
    one.write_bytes(b"")
    two.write_bytes(b"")
    real = evaluation.run_games
    stand_in = {str(one): "random", str(two): "greedy"}  # the labels of two models, played by two cheap agents

    def fake_run_games(specs, ruleset, seeds, **kw):
        return {
            label: real([stand_in[label]], ruleset, seeds, record=kw.get("record", False))[stand_in[label]]
            for label in specs
        }

    monkeypatch.setattr(evaluate_cli, "run_games", fake_run_games)
    recs = tmp_path / "recs"
    recs.mkdir()
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = evaluate_cli.main(
            [
                "--agents",
                str(one),
                str(two),
                "--games",
                "2",
                "--no-progress",
                "--out",
                str(tmp_path / "r"),
                "--records",
                str(recs),
            ]
        )
    assert code == 0, err.getvalue()
    first = recs / (str(one).replace("/", "_").removesuffix(".zip") + ".jsonl")
    second = first.with_name(first.stem + "_2.jsonl")
    assert sorted(p.name for p in recs.iterdir()) == sorted([first.name, second.name])
    assert f"records of {two}: {second}" in err.getvalue()
    assert [r.player for r in read_records(first)] == ["random"] * 2 and [r.player for r in read_records(second)] == [
        "greedy"
    ] * 2


# ---------------------------------------------------------------------- 2. --load X --save X of several games
def _two_games(path: Path) -> Path:
    text = ""
    for seed in (1, 2):
        rec = GameRecord(ruleset="classic", seed=seed, player="human")
        env = JambEnv(ruleset="classic")
        env.reset(seed=seed)
        rec.play(env, int(env.action_masks().nonzero()[0][0]))
        text += rec.text()
    path.write_text(text, encoding="utf-8")
    return path


def _main(monkeypatch, capsys, argv, lines=("quit",)):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = play.main(argv + ["--width", "120"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_saving_over_a_file_of_several_games_is_refused(monkeypatch, capsys, tmp_path, spelling):
    games = _two_games(tmp_path / "games.jsonl")
    before = games.read_bytes()
    save = {
        "same": games,
        "dot": tmp_path / "." / "x" / ".." / "games.jsonl",
        "symlink": tmp_path / "link.jsonl",
        "hardlink": tmp_path / "hard.jsonl",
    }[spelling]
    (tmp_path / "x").mkdir()
    if spelling == "symlink":
        save.symlink_to(games)
    if spelling == "hardlink":
        os.link(games, save)
    code, out, err = _main(monkeypatch, capsys, ["--load", str(games), "--game", "1", "--save", str(save)])
    assert code == 2 and err.startswith("error: ") and "holds 2 games" in err and "--save OTHER" in err, err
    assert "Traceback" not in err and games.read_bytes() == before


def test_a_multi_game_file_resumes_into_another_file(monkeypatch, capsys, tmp_path):
    games = _two_games(tmp_path / "games.jsonl")
    before = games.read_bytes()
    code, out, err = _main(
        monkeypatch, capsys, ["--load", str(games), "--game", "1", "--save", str(tmp_path / "one.jsonl")]
    )
    assert code == 0, err
    assert games.read_bytes() == before and read_records(tmp_path / "one.jsonl")[0].seed == 2


# ---------------------------------------------------------------------- 3. --html / --video of an interrupted watch
def test_ctrl_c_while_watching_writes_the_page_of_the_game_so_far(monkeypatch, capsys, tmp_path):
    real = play.show_steps

    def cut_short(console, steps, delay):  # Ctrl-C after 4 moves
        def four():
            for k, item in enumerate(steps):
                yield item
                if k == 3:
                    raise KeyboardInterrupt

        return real(console, four(), delay)

    monkeypatch.setattr(play, "show_steps", cut_short)
    rec, page = tmp_path / "r.jsonl", tmp_path / "g.html"
    code, out, err = _main(
        monkeypatch,
        capsys,
        ["--watch", "random", "--seed", "3", "--delay", "0", "--record", str(rec), "--html", str(page)],
        lines=(),
    )
    assert code == 130, err
    assert (
        f"interrupted after 4 moves; the game so far (4 moves) is in {rec}; --html {page} written (the game so far)"
        in err
    )
    assert len(read_records(rec)[0].steps) == 4 and page.read_text(encoding="utf-8").startswith("<!")


def test_ctrl_c_during_a_replay_says_the_page_is_not_written(monkeypatch, capsys, tmp_path):
    rec = _two_games(tmp_path / "r.jsonl")
    monkeypatch.setattr(play, "show_steps", lambda console, steps, delay: (_ for _ in ()).throw(KeyboardInterrupt))
    code, out, err = _main(monkeypatch, capsys, ["--replay", str(rec), "--html", str(tmp_path / "g.html")], lines=())
    assert code == 130 and f"--html {tmp_path / 'g.html'} not written (interrupted)" in err, err
    assert not (tmp_path / "g.html").exists()


def _have_pillow() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_watching_writes_record_page_and_video(tmp_path, sig):
    rec, page, video = tmp_path / "r.jsonl", tmp_path / "g.html", tmp_path / "v.gif"
    args = ["--watch", "random", "--seed", "3", "--delay", "0.05", "--record", str(rec), "--html", str(page)]
    if _have_pillow():
        args += ["--video", str(video)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "play.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = 0
        for line in proc.stdout:
            seen += "turn " in line and ", roll " in line
            if seen >= 3:
                break
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and f"--html {page}" in err and "written (the game so far)" in err, err
    record = read_records(rec)[0]
    assert 3 <= len(record.steps) < 60 and len(list(replay(record))) == len(record.steps)
    assert page.read_text(encoding="utf-8").startswith("<!")
    if _have_pillow():
        from PIL import Image

        assert f"--video {video}" in err
        with Image.open(video) as gif:
            assert gif.n_frames == len(record.steps) + 1
