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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = 1


@dataclass
class GameRecord:
    ruleset: str
    seed: int
    player: str = "human"
    steps: list[dict] = field(default_factory=list)
    final_score: int | None = None

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

    def write(self, path: str | Path, append: bool = False) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a" if append else "w", encoding="utf-8") as fh:
            for line in self.lines():
                fh.write(line + "\n")


class RecordError(ValueError):
    """A game record that cannot be read or does not replay (names the file and line)."""


def read_records(path: str | Path) -> list[GameRecord]:
    """All games in a JSON-lines record file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no game record {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text") from exc
    games: list[GameRecord] = []
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
            games.append(GameRecord(ruleset=ruleset, seed=seed, player=str(item.get("player", "?"))))
        elif kind in ("step", "end"):
            if not games:
                raise RecordError(f"{path}:{n}: a {kind} line before any game header")
            if kind == "step":
                if type(item.get("action")) is not int:
                    raise RecordError(f"{path}:{n}: a step needs an integer action")
                games[-1].steps.append({k: v for k, v in item.items() if k != "type"})
            else:
                games[-1].final_score = item.get("score")
        else:
            raise RecordError(f"{path}:{n}: unknown line type {kind!r}; expected game, step or end")
    if not games:
        raise RecordError(f"{path}: no game in the file")
    return games


def replay(record: GameRecord, env=None):
    """Yield ``(env, step)`` after each recorded action, replayed on a fresh env.

    Raises:
        RecordError: an action is illegal or the dice differ from the record.
    """
    from .env import JambEnv
    from .errors import IllegalActionError

    env = env or JambEnv(record.ruleset, illegal_action="raise")
    env.reset(seed=record.seed)
    for k, step in enumerate(record.steps):
        dice = list(env.game.dice.tolist()) if env.game.roll else []
        if "dice" in step and step["dice"] != dice:
            raise RecordError(f"step {k}: the record has dice {step['dice']}, the env rolled {dice} (another env version?)")
        try:
            env.step(step["action"])
        except IllegalActionError as exc:
            raise RecordError(f"step {k}: {exc}") from exc
        yield env, step
