"""Game records: JSON lines that replay a game exactly.

A record is one header line, one line per step, and an end line::

    {"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}
    {"type": "step", "turn": 0, "roll": 1, "dice": [1, 3, 3, 5, 6], "action": 44, "text": "write down/ones", "reward": 1.0, "score": 1, "dice_after": [2, 2, 4, 5, 6]}
    ...
    {"type": "end", "score": 612, "steps": 131}

``dice`` are the sorted dice the action was chosen on, ``dice_after`` those after it (the
next roll). A file may hold several games one after another (evaluation writes one file
per agent). Since the env's dice depend on the seed alone, replaying the actions from
the seed reproduces the game; :func:`replay` checks the dice on the way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_text_file

FORMAT = 1


@dataclass
class GameRecord:
    ruleset: str
    seed: int
    player: str = "human"
    steps: list[dict] = field(default_factory=list)
    final_score: int | None = None
    #: where the record was read from (file name, and each step's line), for messages
    source: str | None = field(default=None, repr=False, compare=False)
    step_lines: list[int] = field(default_factory=list, repr=False, compare=False)

    def where(self, k: int) -> str:
        """``file:line: step k`` for messages (``step k`` for a record not read from a file)."""
        if self.source is not None and k < len(self.step_lines):
            return f"{self.source}:{self.step_lines[k]}: step {k}"
        return f"step {k}"

    def play(self, env, action: int):
        """Apply ``action`` to ``env``, append its step line, and return ``env.step``'s
        result; the end score is set when the game ends."""
        game = env.game
        turn, roll, dice = game.turn, game.roll, game.dice.tolist()
        text = env.action_to_string(action)
        result = env.step(action)
        _, reward, done, _, info = result
        self.steps.append({"turn": turn, "roll": roll, "dice": dice, "action": int(action), "text": text,
                           "reward": float(reward), "score": int(info["score"]), "dice_after": list(info["dice"])})
        if done:
            self.final_score = int(info["score"])
        return result

    def header(self) -> dict:
        return {"type": "game", "format": FORMAT, "ruleset": self.ruleset, "seed": self.seed, "env": "Jamb-v1", "player": self.player}

    def lines(self) -> Iterator[str]:
        yield json.dumps(self.header())
        for step in self.steps:
            yield json.dumps({"type": "step", **step})
        if self.final_score is not None:
            yield json.dumps({"type": "end", "score": self.final_score, "steps": len(self.steps)})

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines())

    def write(self, path: str | Path, append: bool = False) -> None:
        """Write the record to ``path`` (after the games already there with ``append``),
        atomically: a failed write leaves the previous file intact."""
        path = Path(path)
        old = ""
        if append and path.is_file():
            old = path.read_text(encoding="utf-8")
            if old and not old.endswith("\n"):
                old += "\n"
        write_text_file(path, old + self.text())


def write_records(path: str | Path, records: Iterable[GameRecord]) -> Path:
    """Write several games to one record file, atomically."""
    return write_text_file(path, "".join(r.text() for r in records))


class RecordError(ValueError):
    """A game record that cannot be read or does not replay (names the file and line)."""


def read_records(path: str | Path) -> list[GameRecord]:
    """All games in a JSON-lines record file."""
    path = Path(path)
    if path.is_dir():
        raise RecordError(f"{path} is a folder, not a game record file")
    if not path.is_file():
        raise FileNotFoundError(f"no game record {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text") from exc
    games: list[GameRecord] = []
    header_line, end_line = 0, None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}:{n}: not JSON: {exc}") from exc
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "game":
            if item.get("format") != FORMAT:
                raise RecordError(f"{path}:{n}: record format {item.get('format')!r}; this version reads {FORMAT}")
            seed, ruleset = item.get("seed"), item.get("ruleset")
            if type(seed) is not int or seed < 0 or not isinstance(ruleset, str):
                raise RecordError(f"{path}:{n}: a game header needs a ruleset name and a non-negative integer seed")
            games.append(GameRecord(ruleset=ruleset, seed=seed, player=str(item.get("player", "?")), source=str(path)))
            header_line, end_line = n, None
        elif kind in ("step", "end"):
            if not games:
                raise RecordError(f"{path}:{n}: a {kind} line before any game header")
            if end_line is not None:
                raise RecordError(f"{path}:{n}: a {kind} line after the end of the game (the game of line {header_line} ended on line {end_line}); "
                                  "a new game starts with a game header line")
            if kind == "step":
                if type(item.get("action")) is not int:
                    raise RecordError(f"{path}:{n}: a step needs an integer action")
                games[-1].steps.append({k: v for k, v in item.items() if k != "type"})
                games[-1].step_lines.append(n)
            else:
                score, count = item.get("score"), item.get("steps", len(games[-1].steps))
                if type(score) is not int:
                    raise RecordError(f"{path}:{n}: an end line needs an integer score, got {score!r}")
                if count != len(games[-1].steps):
                    raise RecordError(f"{path}:{n}: the end line says {count!r} steps, the game of line {header_line} has {len(games[-1].steps)}")
                games[-1].final_score = score
                end_line = n
        else:
            raise RecordError(f"{path}:{n}: unknown line type {kind!r}; expected game, step or end")
    if not games:
        raise RecordError(f"{path}: no game in the file")
    return games


def replay(record: GameRecord, env=None):
    """Yield ``(env, step)`` after each recorded action, replayed on a fresh env.

    Raises:
        RecordError: a step after the game's end, an illegal action, or dice that differ
            from the record (the message names the file and line when read from a file).
    """
    from .env import JambEnv
    from .errors import IllegalActionError
    from .rules import is_over

    env = env or JambEnv(record.ruleset, illegal_action="raise")
    env.reset(seed=record.seed)
    for k, step in enumerate(record.steps):
        if is_over(env.ruleset, env.game):
            raise RecordError(f"{record.where(k)}: a step after the game's end (every cell was written by step {k - 1}, score {env.score})")
        dice = list(env.game.dice.tolist()) if env.game.roll else []
        if "dice" in step and step["dice"] != dice:
            raise RecordError(f"{record.where(k)}: the record has dice {step['dice']}, the env rolled {dice} (another env version?)")
        try:
            env.step(step["action"])
        except IllegalActionError as exc:
            raise RecordError(f"{record.where(k)}: {exc}") from exc
        yield env, step
