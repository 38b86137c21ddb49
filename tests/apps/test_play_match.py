"""jamb-play matches (agents/apps/cli/play.py --players / --watch-players, agents.apps.terminal.MatchSession)
and match records (jamb_env/replay/records.py: MatchRecord, read_matches, read_any, replay_match)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agents.apps.cli import play
from jamb_env import Action, load_ruleset, multiplayer
from jamb_env.replay.records import (
    GameRecord,
    MatchRecord,
    RecordError,
    read_any,
    read_matches,
    read_records,
    replay,
    replay_match,
)
from jamb_env.rules import encode
from jamb_env.rules import match as M

ROWS = load_ruleset("classic").rows


def turn_commands() -> list[list[str]]:
    """52 turns (their command lines) that are legal whatever the dice: free, down, up, announce."""
    turns = [[f"write free {r}"] for r in ROWS]
    turns += [[f"w d {r}"] for r in ROWS]  # prefixes work
    turns += [[f"write up {r}"] for r in reversed(ROWS)]
    turns += [[f"announce {r}", f"write announce {r}"] for r in ROWS]
    return turns


def to_action(rules, cmd: str) -> int:
    words = cmd.split()
    if words[0] == "announce":
        return encode(rules, Action("announce", column="announce", row=words[1]))
    return encode(rules, Action("write", column={"d": "down"}.get(words[1], words[1]), row=words[2]))


def expected_scores(seed: int, players: int, turns: list[list[str]], scoring: str = "separate") -> list[int]:
    """Every seat plays ``turns`` (the same script) straight on the AEC env."""
    env = multiplayer.raw_env(ruleset="classic", num_players=players, scoring=scoring)
    env.reset(seed=seed)
    done = [0] * players
    while not M.is_over(env.ruleset, env.match):
        p = env.match.to_move
        for cmd in turns[done[p]]:
            env.step(to_action(env.ruleset, cmd))
        done[p] += 1
    return M.scores(env.ruleset, env.match)


def hot_seat_lines(players: int, turns: list[list[str]]) -> list[str]:
    """The command lines of ``players`` people who each play ``turns``, turn about."""
    return [cmd for turn in turns for _ in range(players) for cmd in turn]


def run_play(monkeypatch, capsys, argv, lines):
    """play.main with ``lines`` typed at the prompt: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    try:
        code = play.main(argv + ["--width", "120"])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def final_line(scores: list[int], names: list[str]) -> str:
    return "Final scores: " + "   ".join(f"P{p + 1} {n} {s}" for p, (n, s) in enumerate(zip(names, scores)))


def winner_line(scores: list[int], names: list[str]) -> str:
    top = max(scores)
    winners = [p for p, s in enumerate(scores) if s == top]
    if len(winners) > 1:
        return f"Winners (tied at {top}): " + ", ".join(f"P{p + 1} {names[p]}" for p in winners)
    return f"Winner: P{winners[0] + 1} {names[winners[0]]} (by {top - sorted(scores)[-2]} points)"


# ---------------------------------------------------------------- hot seat
@pytest.mark.slow  # a whole two-player match typed in; the coach match below keeps one fast
def test_hot_seat_game_to_the_end(monkeypatch, capsys, tmp_path):
    turns = turn_commands()
    lines = hot_seat_lines(2, turns)
    # invalid commands and meta commands on the way change nothing
    lines = ["dance", "keep 0", "write sideways ones", "help", "sheet", "hint", ""] + lines
    save = tmp_path / "match.jsonl"
    code, out, err = run_play(
        monkeypatch, capsys, ["--players", "human", "human", "--seed", "11", "--save", str(save)], lines
    )
    assert code == 0, err
    scores = expected_scores(11, 2, turns)
    names = ["human", "human"]
    assert final_line(scores, names) in out and winner_line(scores, names) in out
    for message in (
        "unknown command 'dance'",
        "dice positions are 1..5",
        "unknown or ambiguous column 'sideways'",
        "keep 1 3 4",
        "no coach",
    ):
        assert message in out, message
    assert "to move" in out and "your turn" in out and "P1 human >" in out and "P2 human >" in out
    record = read_matches(save)[0]
    assert record.players == names and record.scoring == "separate" and record.seed == 11
    assert record.final_scores == scores and len(record.steps) == 2 * 65
    assert {s["player"] for s in record.steps} == {0, 1}
    env = None
    for env, _ in replay_match(record):  # noqa: B007 (the env after the last step)
        pass
    assert M.scores(env.ruleset, env.match) == scores and M.is_over(env.ruleset, env.match)


@pytest.mark.slow  # a whole match typed in against an agent; the shared-sheet match keeps a typed match fast
def test_a_person_against_an_agent_with_a_coach(monkeypatch, capsys, tmp_path):
    turns = turn_commands()
    lines = ["hint"] + [cmd for turn in turns for cmd in turn]
    rec = tmp_path / "m.jsonl"
    code, out, err = run_play(
        monkeypatch,
        capsys,
        ["--players", "human", "greedy", "--seed", "3", "--delay", "0", "--coach", "greedy", "--record", str(rec)],
        lines,
    )
    assert code == 0, err
    record = read_matches(rec)[0]
    assert "coach (greedy):" in out and "P2 greedy: agent's turn" in out and "P1 human: your turn" in out
    assert record.players == ["human", "greedy"] and record.final_scores is not None
    rules = load_ruleset("classic")
    human = [s for s in record.steps if s["player"] == 0]
    assert [s["action"] for s in human] == [to_action(rules, c) for t in turns for c in t]  # every command, as typed
    assert final_line(record.final_scores, record.players) in out


def test_shared_sheet_marks_each_cell_with_its_writer(monkeypatch, capsys, tmp_path):
    turns = turn_commands()
    per_player = 26  # 52 cells on one sheet, two people: 26 turns each
    lines = [cmd for t in range(per_player) for p in range(2) for cmd in turns[2 * t + p]]
    save = tmp_path / "s.jsonl"
    code, out, err = run_play(
        monkeypatch,
        capsys,
        ["--players", "human", "human", "--scoring", "shared", "--seed", "2", "--save", str(save)],
        lines,
    )
    assert code == 0, err
    record = read_matches(save)[0]
    assert record.scoring == "shared" and len(record.final_scores) == 2
    assert "shared sheet" in out and "goes to" in out
    assert " P1 " in out and " P2 " in out  # owner marks on written cells
    env = None
    for env, _ in replay(record):  # replay() dispatches a match record  # noqa: B007 (the env after the last step)
        pass
    assert M.scores(env.ruleset, env.match) == record.final_scores
    assert final_line(record.final_scores, ["human", "human"]) in out


@pytest.mark.slow  # a whole two-player match typed in, saved and resumed
def test_quit_save_and_resume_reaches_the_same_end(monkeypatch, capsys, tmp_path):
    turns = turn_commands()
    lines = hot_seat_lines(2, turns)
    save = tmp_path / "half.jsonl"
    code, out, err = run_play(
        monkeypatch, capsys, ["--players", "human", "human", "--seed", "8", "--save", str(save)], lines[:41] + ["quit"]
    )
    assert code == 0 and "the match stops after 41 moves" in out
    assert len(read_matches(save)[0].steps) == 41 and read_matches(save)[0].final_scores is None
    code, out, err = run_play(monkeypatch, capsys, ["--load", str(save)], lines[41:])
    assert code == 0, err
    assert f"resumed {save}: 41 moves" in out
    scores = expected_scores(8, 2, turns)
    assert final_line(scores, ["human", "human"]) in out
    assert read_matches(save)[0].final_scores == scores  # the save follows the match


def test_ctrl_c_in_a_match_saves(monkeypatch, capsys, tmp_path):
    from rich.console import Console

    feed = iter(["write free ones", "write free twos", "write free threes"])

    def fake_input(self, prompt=""):
        try:
            return next(feed)
        except StopIteration:
            raise KeyboardInterrupt from None

    monkeypatch.setattr(Console, "input", fake_input)
    save, rec = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
    try:
        code = play.main(
            ["--players", "human", "human", "--seed", "1", "--save", str(save), "--record", str(rec), "--width", "120"]
        )
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err
    assert f"interrupted after 3 moves; the match is saved in {save}" in err and f"the match so far is in {rec}" in err
    assert len(read_matches(save)[0].steps) == 3 and read_matches(rec)[0].steps == read_matches(save)[0].steps


# ---------------------------------------------------------------- agents only, records, replay
@pytest.mark.slow  # a whole match played and replayed
def test_agents_only_match_records_and_replays(monkeypatch, capsys, tmp_path):
    rec, log, rlog = tmp_path / "m.jsonl", tmp_path / "m.txt", tmp_path / "r.txt"
    code, out, err = run_play(
        monkeypatch,
        capsys,
        ["--watch-players", "greedy", "random", "--seed", "5", "--record", str(rec), "--log", str(log)],
        [],
    )
    assert code == 0, err
    record = read_matches(rec)[0]
    assert record.players == ["greedy", "random"] and record.num_players == 2 and record.final_scores is not None
    header = json.loads(rec.read_text().splitlines()[0])
    assert header == {
        "type": "match",
        "format": 1,
        "ruleset": "classic",
        "seed": 5,
        "env": "jamb_multiplayer_v0",
        "players": ["greedy", "random"],
        "num_players": 2,
        "scoring": "separate",
    }
    end = json.loads(rec.read_text().splitlines()[-1])
    assert end == {"type": "end", "scores": record.final_scores, "steps": len(record.steps)}
    text = log.read_text()
    assert (
        final_line(record.final_scores, record.players) in text
        and winner_line(record.final_scores, record.players) in text
    )
    code, out, err = run_play(monkeypatch, capsys, ["--replay", str(rec), "--log", str(rlog)], [])
    assert code == 0, err
    assert final_line(record.final_scores, record.players) in rlog.read_text()
    assert "replaying the match P1 greedy vs P2 random" in rlog.read_text()
    # the same seed plays the same match (the random agent is seeded from it)
    again = tmp_path / "again.jsonl"
    run_play(
        monkeypatch,
        capsys,
        ["--players", "greedy", "random", "--seed", "5", "--delay", "0", "--record", str(again)],
        [],
    )
    assert again.read_text() == rec.read_text()


def test_expectimax_against_greedy_on_a_shared_sheet_with_a_video(monkeypatch, capsys, tmp_path):
    rec, gif = tmp_path / "x.jsonl", tmp_path / "x.gif"
    code, out, err = run_play(
        monkeypatch,
        capsys,
        [
            "--players",
            "greedy",
            "expectimax",
            "--scoring",
            "shared",
            "--ruleset",
            "classic_down",
            "--seed",
            "7",
            "--delay",
            "0",
            "--record",
            str(rec),
            "--video",
            str(gif),
        ],
        [],
    )
    assert code == 0, err
    record = read_matches(rec)[0]
    assert record.scoring == "shared" and record.ruleset == "classic_down"
    assert final_line(record.final_scores, record.players) in out
    assert f"wrote the video {gif} ({len(record.steps) + 1} frames" in out
    code, out, err = run_play(monkeypatch, capsys, ["--replay", str(rec), "--delay", "0"], [])
    assert code == 0 and final_line(record.final_scores, record.players) in out


def tampered(rec: Path, line: int, change) -> Path:
    lines = rec.read_text().splitlines()
    item = json.loads(lines[line - 1])
    change(item)
    lines[line - 1] = json.dumps(item)
    bad = rec.with_name(f"bad{line}.jsonl")
    bad.write_text("\n".join(lines) + "\n")
    return bad


@pytest.fixture(scope="module")
def match_file(tmp_path_factory) -> Path:
    """A whole random-vs-greedy match of classic_down in a record file."""
    from agents import load

    env = multiplayer.raw_env(ruleset="classic_down", num_players=2)
    env.reset(seed=4)
    record = MatchRecord(ruleset="classic_down", seed=4, players=["random", "greedy"])
    policies = [load("random", ruleset="classic_down"), load("greedy", ruleset="classic_down")]
    while not M.is_over(env.ruleset, env.match):
        agent = env.agent_selection
        obs = env.observe(agent)
        record.play(
            env,
            int(
                policies[env.match.to_move].act(
                    env.seat_view(agent), obs["observation"], obs["action_mask"].astype(bool)
                )
            ),
        )
    path = tmp_path_factory.mktemp("match") / "m.jsonl"
    record.write(path)
    return path


@pytest.mark.parametrize(
    "line, change, message",
    [
        (
            3,
            lambda s: s.update(dice=[6, 6, 6, 6, 6] if s["dice"] != [6, 6, 6, 6, 6] else [1, 1, 1, 1, 1]),
            "the record has dice",
        ),
        (4, lambda s: s.update(scores=[s["scores"][0] + 1, s["scores"][1]]), "the record has scores"),
        (5, lambda s: s.update(player=1 - s["player"]), "the record has player"),
        (6, lambda s: s.update(action=10_000), "outside the action space"),
        (7, lambda s: s.update(action=0), "illegal action 0"),
    ],
)
def test_a_tampered_record_fails_naming_the_line(match_file, monkeypatch, capsys, line, change, message):
    bad = tampered(match_file, line, change)
    with pytest.raises(RecordError, match=rf"{bad.name}:{line}: step {line - 2}: .*{message}"):
        list(replay_match(read_matches(bad)[0]))
    code, out, err = run_play(monkeypatch, capsys, ["--replay", str(bad), "--delay", "0"], [])
    assert code == 2 and f"error: {bad}:{line}: step {line - 2}:" in err and message in err and "Traceback" not in err


def test_a_tampered_end_line_fails(match_file, monkeypatch, capsys):
    n = len(match_file.read_text().splitlines())
    bad = tampered(match_file, n, lambda e: e.update(scores=[e["scores"][0], e["scores"][1] + 5]))
    with pytest.raises(RecordError, match=rf"{bad.name}:{n}: the replay scored"):
        list(replay_match(read_matches(bad)[0]))
    code, out, err = run_play(monkeypatch, capsys, ["--replay", str(bad), "--delay", "0"], [])
    assert code == 2 and f"{bad}:{n}: the replay scored" in err
    lines = match_file.read_text().splitlines()
    short = match_file.with_name("short.jsonl")  # steps cut, the end line kept (its count fixed)
    end = json.loads(lines[-1])
    end["steps"] = len(lines) - 4
    short.write_text("\n".join(lines[:-3] + [json.dumps(end)]) + "\n")
    with pytest.raises(RecordError, match="stop before the game's end"):
        list(replay_match(read_matches(short)[0]))


def test_bad_match_headers_and_lines(tmp_path):
    bad = tmp_path / "h.jsonl"
    head = {
        "type": "match",
        "format": 1,
        "ruleset": "classic",
        "seed": 1,
        "players": ["human", "greedy"],
        "num_players": 2,
        "scoring": "separate",
    }
    for change, message in (
        ({"players": ["human"]}, "2..5 seat names"),
        ({"num_players": 3}, "num_players is 3"),
        ({"scoring": "both"}, "scoring must be one of"),
        ({"seed": -1}, "non-negative integer seed"),
        ({"format": 2}, "match record format 2"),
    ):
        bad.write_text(json.dumps({**head, **change}) + "\n")
        with pytest.raises(RecordError, match=message):
            read_matches(bad)
    bad.write_text(json.dumps(head) + "\n" + json.dumps({"type": "step", "action": 3}) + "\n")
    with pytest.raises(RecordError, match="h.jsonl:2: a match step needs the player"):
        read_any(bad)
    bad.write_text(json.dumps(head) + "\n" + json.dumps({"type": "end", "score": 3, "steps": 0}) + "\n")
    with pytest.raises(RecordError, match='h.jsonl:2: a match\'s end line needs "scores"'):
        read_any(bad)
    bad.write_text(json.dumps({**head, "ruleset": "nokaut", "scoring": "shared"}) + "\n")
    with pytest.raises(RecordError, match="h.jsonl: .*derived column"):
        list(replay_match(read_matches(bad)[0]))


def test_solitaire_records_are_unchanged_and_kept_apart(match_file, tmp_path):
    solo = tmp_path / "solo.jsonl"  # a FORMAT 1 file as it has always been written
    solo.write_text(
        json.dumps({"type": "game", "format": 1, "ruleset": "classic", "seed": 1, "env": "Jamb-v1", "player": "human"})
        + "\n"
    )
    assert read_records(solo) == [GameRecord("classic", 1)] and read_any(solo) == [GameRecord("classic", 1)]
    with pytest.raises(RecordError, match="m.jsonl:1: a multiplayer match record"):
        read_records(match_file)
    with pytest.raises(RecordError, match="solo.jsonl:1: a solitaire game record"):
        read_matches(solo)
    both = tmp_path / "both.jsonl"
    both.write_text(solo.read_text() + match_file.read_text())
    kinds = [type(r) for r in read_any(both)]
    assert kinds == [GameRecord, MatchRecord]
    assert GameRecord("classic", 1).header() == {
        "type": "game",
        "format": 1,
        "ruleset": "classic",
        "seed": 1,
        "env": "Jamb-v1",
        "player": "human",
    }


def test_html_of_a_match_is_refused_clearly(match_file, monkeypatch, capsys, tmp_path):
    page = tmp_path / "m.html"
    code, out, err = run_play(monkeypatch, capsys, ["--replay", str(match_file), "--html", str(page)], [])
    assert code == 2 and "a page of a solitaire game only, not of a multiplayer match" in err and out == ""
    assert not page.exists()


# ---------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "human"], "--players: a match needs 2..5 seats (each human or an agent), got 1"),
        (["--players"] + ["greedy"] * 6, "a match needs 2..5 seats"),
        (
            ["--watch-players", "greedy", "random", "--load", "x.jsonl"],
            "--watch-players cannot be used with a resumed game",
        ),
        (["--watch-players", "human", "greedy"], "--watch-players: agents only"),
        (
            ["--players", "human", "greedy", "--watch-players", "greedy", "random"],
            "--players and --watch-players: give one",
        ),
        (["--scoring", "shared"], "--scoring cannot be used with an interactive game"),
        (["--watch", "greedy", "--scoring", "shared"], "--scoring cannot be used with watching"),
        (["--players", "human", "greedy", "--scoring", "both"], "invalid choice: 'both'"),
        (["--players", "human", "greedy", "--html", "x.html"], "--html cannot be used with a match"),
        (["--watch-players", "greedy", "random", "--html", "x.html"], "a web page is made of a solitaire game only"),
        (["--players", "human", "greedy", "--log", "x.txt"], "--log cannot be used with a match with a person playing"),
        (
            ["--watch-players", "greedy", "random", "--save", "x.jsonl"],
            "--save cannot be used with watching a match (use --record",
        ),
        (["--players", "human", "human", "--delay", "1"], "--delay paces the agents' moves, and every seat is human"),
        (["--players", "human", "greedy", "--game", "1"], "--game cannot be used with a match"),
        (["--players", "human", ""], "--players: an empty seat name"),
        (
            ["--players", "human", "human", "--scoring", "shared", "--ruleset", "nokaut"],
            "has the derived column(s) maximal",
        ),
        (["--players", "human", "nosuch"], "unknown agent 'nosuch'"),
        (["--players", "human", "greedy", "--ruleset", "nope"], "unknown ruleset 'nope'"),
        (["--players", "human", "optimal"], "the exact solver needs a sheet of one down or up column"),
    ],
)
def test_bad_match_arguments(monkeypatch, capsys, argv, message):
    code, out, err = run_play(monkeypatch, capsys, argv, [])
    assert code == 2 and message in err and "Traceback" not in err, err
    assert out == ""  # refused before the match starts
