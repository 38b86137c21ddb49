"""Output paths as input (jamb_env/utils/files.py and every command that writes): output goes
to regular files only (a device, FIFO or socket, or a path inside /dev, /proc or /sys, is
refused before anything is written; a symbolic link is written through to its target); a
file is never written over when it holds something else (another game, a search, the
source itself); a failed write keeps the old file and leaves no temporary file."""

from __future__ import annotations

import io
import os
import shutil
import socket
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from rich.console import Console

import jamb_env.utils.files as files
from agents.apps.cli import evaluate as evaluate_cli
from agents.apps.terminal import MatchSession, PlaySession
from agents.evaluation import solitaire as evaluation
from agents.shipped import MODELS_DIR
from jamb_env.replay.records import GameRecord, read_records, write_records
from tests.helpers import fake_train, run_main


def write_run(folder: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(folder))
    for step, value in ((1000, 100.0), (2000, 200.0)):
        writer.add_scalar("eval/score", value, step)
    writer.close()


def special_file(kind: str, folder: Path) -> Path:
    """A FIFO, a Unix socket or a character device (like /dev/null) in ``folder``."""
    path = folder / f"{kind}.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        if len(str(path)) > 100:
            pytest.skip("the temporary folder's path is too long for a Unix socket")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()  # the socket file stays
    else:
        try:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except (PermissionError, OSError):
            pytest.skip("no permission to create a device node here")
    return path


def is_special(path: Path) -> bool:
    mode = os.lstat(path).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class Model:
    def save(self, f):
        f.write(b"model")


def writers():
    """Every writer of jamb_env.utils.files, as ``name -> write(path)``."""

    def with_atomic_path(path):
        with files.atomic_path(path) as tmp:
            Path(tmp).write_text("x")

    return {
        "atomic_write": lambda p: files.atomic_write(p, lambda f: f.write(b"x")),
        "atomic_write_bytes": lambda p: files.atomic_write_bytes(p, b"x"),
        "atomic_write_text": lambda p: files.atomic_write_text(p, "x"),
        "atomic_save_model": lambda p: files.atomic_save_model(Model(), p),
        "atomic_path": with_atomic_path,
        "write_text_file": lambda p: files.write_text_file(p, "x"),
        "check_output_file": files.check_output_file,
    }


def evaluate(argv: list[str]) -> tuple[int, str, str]:
    """``agents.apps.cli.evaluate.main(argv)`` in this process: (exit status, stdout, stderr)."""
    from agents.apps.cli.evaluate import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


DEV_FULL = ("/dev/full.csv", "/dev/full_games.csv", "/dev/full.png")


# ---------------------------------------------------------------- every writer: special files, links, system folders
@pytest.mark.parametrize("kind, word", [("fifo", "FIFO"), ("socket", "socket"), ("device", "character device")])
@pytest.mark.parametrize("writer", list(writers()))
def test_every_writer_refuses_a_special_file_and_leaves_it(tmp_path, kind, word, writer):
    path = special_file(kind, tmp_path)
    with pytest.raises(OSError) as info:
        writers()[writer](path)
    assert str(path) in str(info.value) and word in str(info.value) and "not a regular file" in str(info.value)
    assert is_special(path)  # not replaced by a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary file left


@pytest.mark.parametrize("writer", list(writers()))
def test_every_writer_refuses_a_link_to_a_device(tmp_path, writer):
    link = tmp_path / "log.txt"
    link.symlink_to("/dev/null")
    with pytest.raises(OSError) as info:
        writers()[writer](link)
    assert str(link) in str(info.value) and "/dev/null" in str(info.value)
    assert link.is_symlink() and os.readlink(link) == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("writer", [w for w in writers() if w != "check_output_file"])
def test_a_symlink_is_written_through_to_its_target(tmp_path, writer):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "real.csv"
    target.write_text("old")
    link = tmp_path / "latest.csv"
    link.symlink_to(os.path.relpath(target, tmp_path))
    writers()[writer](link)
    assert link.is_symlink() and os.readlink(link) == "store/real.csv"  # still the link
    assert target.read_bytes() in (b"x", b"model")  # its target has the new content
    assert not [
        p for p in tmp_path.rglob("*") if files.is_temp_file(p)
    ]  # the temporary file went beside the target and is gone


def test_a_dangling_link_creates_its_target(tmp_path):
    link = tmp_path / "new.csv"
    link.symlink_to("made/later.csv")
    files.write_text_file(link, "fresh")
    assert link.is_symlink() and (tmp_path / "made" / "later.csv").read_text() == "fresh"


def test_a_link_loop_is_a_clear_error(tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to("loop.csv")
    with pytest.raises(OSError, match="symbolic links loop") as info:
        files.write_text_file(loop, "x")
    assert str(loop) in str(info.value) and loop.is_symlink()


@pytest.mark.parametrize(
    "path, top",
    [
        ("/dev/jamb-test-nothing/x.csv", "/dev"),
        ("/dev/full.csv", "/dev"),
        ("/dev/stdout", "/dev"),
        ("/proc/self/jamb.csv", "/proc"),
        ("/sys/jamb.csv", "/sys"),
    ],
)
def test_paths_inside_system_folders_are_refused(path, top):
    with pytest.raises(OSError) as info:
        files.check_output_file(path)
    assert path in str(info.value) and f"inside {top}" in str(info.value)
    assert not os.path.lexists(path) or path == "/dev/stdout"


@pytest.mark.parametrize("folder", ["/dev", "/dev/jamb-test-nothing", "/proc/self", "/sys/kernel"])
def test_folders_inside_system_folders_are_refused(folder):
    with pytest.raises(OSError, match=f"inside /{folder.split('/')[1]}") as info:
        files.check_output_folder(folder)
    assert folder in str(info.value)


def test_a_link_into_dev_is_refused_where_it_leads(tmp_path):
    (tmp_path / "out").symlink_to("/dev")
    with pytest.raises(OSError, match="inside /dev"):
        files.check_output_file(tmp_path / "out" / "jamb-test-nothing.csv")
    with pytest.raises(OSError, match="inside /dev"):
        files.check_output_folder(tmp_path / "out")
    if os.path.isdir("/dev/shm"):  # the exception: a RAM file system for ordinary files
        assert files.check_output_file("/dev/shm/jamb-test-nothing.csv") == Path("/dev/shm/jamb-test-nothing.csv")


# ---------------------------------------------------------------- the commands' outputs, checked before any game
def test_evaluate_out_is_a_folder_or_a_file_name(capsys, tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(folder)], capsys
    )
    assert code == 0, err
    assert sorted(p.name for p in folder.iterdir()) == [
        "classic.csv",
        "classic.png",
        "classic_games.csv",
    ]  # inside, named after the ruleset
    assert not (tmp_path / "results.csv").exists()
    code, err = run_main(
        "evaluate",
        ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "new") + "/"],
        capsys,
    )
    assert code == 0 and (tmp_path / "new" / "classic.csv").is_file()
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "x.csv")], capsys
    )
    assert (
        code == 0
        and (tmp_path / "x.csv").is_file()
        and (tmp_path / "x_games.csv").is_file()
        and not (tmp_path / "x.csv.csv").exists()
    )


def test_evaluate_out_dev_full_is_an_error_before_any_game():
    try:
        code, out, err = evaluate(["--agents", "random", "--games", "2", "--no-progress", "--out", "/dev/full"])
        assert code == 2 and err.startswith("error: ") and "/dev/full.csv" in err and "inside /dev" in err, err
        assert "| agent |" not in out and "Traceback" not in err  # nothing played
        assert not any(os.path.lexists(p) for p in DEV_FULL)
    finally:  # code without the check (as root) wrote these: remove them, never a device
        for p in DEV_FULL:
            if os.path.isfile(p) and not os.path.islink(p):
                os.unlink(p)


@pytest.mark.parametrize("players", [None, 2])
def test_evaluate_refuses_a_fifo_output_before_any_game(tmp_path, players):
    name = "r_matches.csv" if players else "r_games.csv"
    fifo = tmp_path / name
    os.mkfifo(fifo)
    argv = ["--agents", "random", "greedy", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")] + (
        ["--players", "2"] if players else []
    )
    code, out, err = evaluate(argv)
    assert code == 2 and err.startswith("error: ") and str(fifo) in err and "FIFO" in err and "Traceback" not in err, (
        err
    )
    assert "| agent |" not in out and "| A |" not in out  # no table: nothing was played
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == [name]


def test_evaluate_refuses_a_fifo_records_file_before_any_game(tmp_path):
    recs = tmp_path / "recs"
    recs.mkdir()
    os.mkfifo(recs / "random.jsonl")
    code, out, err = evaluate(
        ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r"), "--records", str(recs)]
    )
    assert code == 2 and str(recs / "random.jsonl") in err and "FIFO" in err, err
    assert "| agent |" not in out and stat.S_ISFIFO(os.lstat(recs / "random.jsonl").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recs"]


def test_evaluate_writes_through_a_linked_output(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "real.csv").write_text("old")
    (tmp_path / "r.csv").symlink_to(store / "real.csv")
    code, out, err = evaluate(["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")])
    assert code == 0, err
    assert (tmp_path / "r.csv").is_symlink() and (store / "real.csv").read_text().startswith("agent,games,mean")


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


def test_plot_bad_input_and_atomic_write(monkeypatch, capsys, tmp_path):
    import jamb_env.utils.files as files

    run = tmp_path / "classic__ppo__0__x"
    write_run(run)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for argv, message in (
        ([str(run), "--out", str(blocker / "c.png")], f"{blocker} is a file, not a folder"),
        ([str(run), "--out", str(tmp_path)], "give a .png, .pdf or .svg file name"),
        ([str(run), "--out", str(tmp_path / "c.txt")], "give a .png, .pdf or .svg"),
        ([str(tmp_path / "none*"), "--out", str(tmp_path / "c.png")], "matched nothing"),
        ([str(blocker), "--out", str(tmp_path / "c.png")], "it is a file"),
        ([str(run), "--tag", "nope", "--out", str(tmp_path / "c.png")], "has no scalar 'nope'"),
    ):
        code, err = run_main("plot", argv, capsys)
        assert code == 2 and message in err, (argv, err)
    out = tmp_path / "c.svg"
    out.write_text("old")
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    code, err = run_main("plot", [str(run), "--out", str(out)], capsys)
    assert code == 2 and "No space left" in err and out.read_text() == "old"
    monkeypatch.undo()
    code, err = run_main("plot", [str(run), "--out", str(out)], capsys)
    assert code == 0 and out.read_text().startswith("<?xml")


def test_export_bad_paths(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    (tmp_path / "notes.zip").write_text("the user's own notes")
    for argv, message in (
        ([str(tmp_path / "none.zip"), str(tmp_path / "o.zip")], "no model file"),
        ([str(tmp_path), str(tmp_path / "o.zip")], "is a folder, not a model file"),
        ([str(blocker), str(tmp_path)], "is a folder; give the file name of the copy"),
        ([str(blocker), str(blocker / "o.zip")], f"{blocker} is a file, not a folder"),
        ([str(blocker), str(tmp_path / "o.zip")], "not a MaskablePPO model file"),
        ([str(MODELS_DIR / "classic.zip"), str(tmp_path / "notes")], "notes.zip exists and is not a model file"),
    ):
        code, err = run_main("export", argv, capsys)
        assert code == 2 and message in err, (argv, err)
    assert (tmp_path / "notes.zip").read_text() == "the user's own notes"  # .zip added: never another file replaced
    assert not (tmp_path / "o.zip").exists() and not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_export_model_to_a_folder_is_refused_not_written_beside_it(tmp_path):

    from agents.export import export_model

    folder = tmp_path / "shipped"
    folder.mkdir()
    src = MODELS_DIR / "classic.zip"
    with pytest.raises(IsADirectoryError, match="is a folder; give the file name"):
        export_model(src, folder)  # before: wrote tmp_path/shipped.zip, outside the folder named
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shipped"]


def test_jamb_zoo_train_refuses_a_log_folder_behind_a_file(tmp_path, capsys):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    blocker = tmp_path / "logs"
    blocker.write_text("not a folder\n")
    rc = zoo_cli.main(["train", "--algo", "ppo_mask", "--env", "Jamb-classic-v1", "-n", "10", "-f", str(blocker)])
    assert rc == 2  # before: the zoo's NotADirectoryError traceback (exit status 1)
    assert f"--log-folder {blocker}: " in capsys.readouterr().err and blocker.read_text() == "not a folder\n"


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


# ---------------------------------------------------------- a file that holds something else is never written over
def test_evaluate_records_replace_only_an_earlier_evaluations_records(tmp_path):
    """Before: ``--records DIR`` replaced whatever ``<agent>.jsonl`` held (a saved game, any
    file) and wrote through a link to a file outside the folder."""
    recs, outside = tmp_path / "recs", tmp_path / "outside.txt"
    recs.mkdir()
    outside.write_text("keep me")
    argv = ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r"), "--records", str(recs)]
    saved = {"person": GameRecord(ruleset="classic", seed=3), "agent": GameRecord("classic", 777, "expectimax")}
    rows = [("link", "a symbolic link"), ("text", "not a record"), ("person", "a person's games")]
    for content, why in [*rows, ("agent", "not one agent's games on the evaluation seeds from 20000000")]:
        target = recs / "random.jsonl"
        if content == "link":
            target.symlink_to(outside)
        elif content == "text":
            target.write_text("notes\n")
        else:
            saved[content].write(target)  # a saved game (jamb-play --record) of a person or of an agent
        before = target.read_bytes()
        code, out, err = evaluate(argv)
        assert code == 2 and why in err and "--records replaces only" in err and "| agent |" not in out, err
        assert target.read_bytes() == before and outside.read_text() == "keep me"
        target.unlink()
    assert evaluate(argv)[0] == 0 and evaluate(argv)[0] == 0  # an earlier evaluation's records are replaced
    assert [g.player for g in read_records(recs / "random.jsonl")] == ["random"] * 2
    # another agent's evaluation records under this agent's file name: found once the games name their agent
    other = [GameRecord("classic", 20_000_000 + k, "greedy") for k in range(2)]
    write_records(recs / "random.jsonl", other)
    before = (recs / "random.jsonl").read_bytes()
    code, out, err = evaluate(argv)
    assert code == 2 and "the records of another agent (greedy, not random)" in err, err
    assert (recs / "random.jsonl").read_bytes() == before


@pytest.mark.parametrize("into", ["best_model.zip", "checkpoints/model_64_steps.zip", "copy.zip"])
def test_jamb_export_never_writes_into_a_run_folder(tmp_path, capsys, into):
    """Before (I24): ``jamb-export run/final_model.zip run/best_model.zip`` replaced the run's best
    model by a stripped copy of the final one, and best.json no longer told the truth."""
    pytest.importorskip("sb3_contrib")
    from agents.apps.cli import export as export_cli
    from agents.shipped import MODELS_DIR

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("seed: 0\n")
    for name in ("final_model.zip", "best_model.zip", "checkpoints/model_64_steps.zip"):
        shutil.copyfile(MODELS_DIR / "classic.zip", run / name)
    zoo = tmp_path / "logs" / "ppo_mask" / "Jamb-classic-v1_1"  # an RL Zoo run: no config.yaml, a run's files
    zoo.mkdir(parents=True)
    (zoo / "evaluations.npz").write_bytes(b"npz")
    shutil.copyfile(MODELS_DIR / "classic.zip", zoo / "best_model.zip")
    before_zoo = (zoo / "best_model.zip").read_bytes()
    with pytest.raises(SystemExit) as exc:  # before (J56): replaced the zoo run's best model
        export_cli.main([str(run / "final_model.zip"), str(zoo / "best_model.zip")])
    assert exc.value.code == 2 and (zoo / "best_model.zip").read_bytes() == before_zoo
    before = {p: p.read_bytes() for p in run.rglob("*.zip")}
    with pytest.raises(SystemExit) as exc:
        export_cli.main([str(run / "final_model.zip"), str(run / into)])
    assert exc.value.code == 2 and "whose files are the run's" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in run.rglob("*.zip")} == before
    assert export_cli.main([str(run / "final_model.zip"), str(tmp_path / "copy.zip")]) == 0  # outside: written


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


def test_the_in_game_save_command_refuses_to_replace_an_existing_file(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(
        '{"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}\n'
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n")
    before = {p: p.read_text() for p in (other, notes)}
    out = io.StringIO()
    console = Console(file=out, width=200)
    own, fresh = tmp_path / "own.jsonl", tmp_path / "fresh.jsonl"
    for session in (
        PlaySession("classic", 1, console=console),
        MatchSession("classic", 1, ["human", "human"], console=console),
    ):
        for path in (other, notes):  # before: "saved to ..." and the file replaced by this game
            session.handle(f"save {path}", save_path=own)
        assert {p: p.read_text() for p in (other, notes)} == before
        assert out.getvalue().count("the file exists") == 2
        out.truncate(0), out.seek(0)
        session.handle(f"save {fresh}", save_path=own)  # a new file, then the same one again: saved
        session.handle(f"save {fresh}", save_path=own)
        session.handle(f"save {own}", save_path=own)  # the session's own file
        assert out.getvalue().count("saved to") == 3 and "exists" not in out.getvalue()
        out.truncate(0), out.seek(0)
        fresh.unlink(), own.unlink()


def test_the_in_game_save_command_reads_a_tilde_as_the_shell_does(tmp_path, monkeypatch):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(), cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    out = io.StringIO()
    session = PlaySession("classic", 1, console=Console(file=out, width=200))
    session.handle("save ~/game.jsonl")  # before: saved to ./~/game.jsonl, which --load ~/game.jsonl cannot find
    assert (home / "game.jsonl").is_file() and not (cwd / "~").exists()
    assert f"--load {home / 'game.jsonl'}" in " ".join(out.getvalue().split())


@pytest.mark.parametrize("name", ["trials.csv", "best_config.yaml"])
def test_jamb_tune_refuses_an_out_folder_holding_a_file_a_search_writes(tmp_path, capsys, name):
    pytest.importorskip("optuna")
    from agents.apps.cli import tune as tune_cli

    config = tmp_path / "tiny.yaml"  # before the fix the search ran: keep its one trial short
    config.write_text(
        "ruleset: classic\ntotal_timesteps: 64\nenv: {n_envs: 2, vec_env: batched}\n"
        "eval: {freq: 100000, episodes: 2, n_envs: 2}\n"
    )
    out = tmp_path / "search"
    out.mkdir()
    (out / name).write_text("results of an earlier search, its trial runs deleted\n")
    with pytest.raises(SystemExit) as exc:
        tune_cli.main(["--config", str(config), "--trials", "1", "--steps", "64", "--out", str(out)])
    assert exc.value.code == 2 and f"already holds a search ({name})" in capsys.readouterr().err
    # before: the search ran and replaced the file
    assert (out / name).read_text() == "results of an earlier search, its trial runs deleted\n"
    assert sorted(p.name for p in out.iterdir()) == [name]


# ---------------------------------------------------------------- a failed write keeps the old file
def test_record_write_is_atomic(monkeypatch, tmp_path):
    import jamb_env.utils.files as files

    path = tmp_path / "g.jsonl"
    path.write_text("old game\n")
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    with pytest.raises(OSError, match="No space left"):
        GameRecord("classic", 1).write(path)
    assert path.read_text() == "old game\n" and [p.name for p in tmp_path.iterdir()] == ["g.jsonl"]
    with pytest.raises(IsADirectoryError, match="is a folder; give a file name"):
        GameRecord("classic", 1).write(tmp_path)
    with pytest.raises(NotADirectoryError, match="g.jsonl is a file, not a folder"):
        GameRecord("classic", 1).write(path / "x.jsonl")


def test_evaluate_failed_write_keeps_the_old_files(monkeypatch, capsys, tmp_path):
    import jamb_env.utils.files as files

    for name in ("r.csv", "r_games.csv", "r.png"):
        (tmp_path / name).write_text("old")
    real_replace = files.os.replace

    def failing_replace(src, dst):
        if str(dst).endswith(".png"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing_replace)
    code, err = run_main(
        "evaluate", ["--agents", "random", "--games", "2", "--no-progress", "--out", str(tmp_path / "r")], capsys
    )
    assert code == 2 and "cannot write the outputs" in err and "No space left" in err
    assert (tmp_path / "r.png").read_text() == "old" and (tmp_path / "r.csv").read_text() != "old"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    monkeypatch.setattr(
        files.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    (tmp_path / "recs").mkdir()
    (tmp_path / "recs" / "random.jsonl").write_text("old")
    code, err = run_main(
        "evaluate",
        [
            "--agents",
            "random",
            "--games",
            "2",
            "--no-progress",
            "--out",
            str(tmp_path / "r"),
            "--records",
            str(tmp_path / "recs"),
        ],
        capsys,
    )
    assert code == 2 and (tmp_path / "recs" / "random.jsonl").read_text() == "old"


def test_tune_failed_write_keeps_the_old_outputs(monkeypatch, capsys, tmp_path):
    import agents.training.train as training
    import jamb_env.utils.files as files

    out = tmp_path / "t"  # a folder holding a search is refused: the old outputs are the first trial's
    monkeypatch.setattr(training, "train", fake_train([]))
    real_replace, old = files.os.replace, {}

    def failing_replace(src, dst):  # the writes after the first trial's fail
        if Path(dst).name == "trials.csv" and Path(dst).exists():
            old.update(
                {
                    p.name: p.read_text()
                    for p in out.iterdir()
                    if p.is_file() and ".tmp-" not in p.name and p.name != ".lock"
                }
            )
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing_replace)
    code, err = run_main("tune", ["--trials", "2", "--steps", "1000", "--out", str(out)], capsys)
    assert code == 2 and "No space left on device" in err
    assert old and all((out / name).read_text() == text for name, text in old.items())
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]  # no temporary file left behind
