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

A multiplayer match (:mod:`jamb_env.multiplayer`) is recorded the same way, with a
``match`` header, the player to move on every step line and every player's score::

    {"type": "match", "format": 1, "ruleset": "classic", "seed": 7, "env": "jamb_multiplayer_v0", "players": ["human", "expectimax"], "num_players": 2, "scoring": "separate"}
    {"type": "step", "player": 1, "turn": 0, "roll": 1, "dice": [1, 3, 3, 5, 6], "action": 44, "text": "write down/ones", "reward": 1.0, "scores": [0, 1], "dice_after": [2, 2, 4, 5, 6]}
    ...
    {"type": "end", "scores": [612, 655], "steps": 270}

``players`` are the seats' names (``human`` or an agent), seat ``p`` is the env's
``player_p``; a step's ``turn``, ``roll`` and ``dice`` are those of the sheet its player
plays on (theirs, or the shared one), ``reward`` that player's score change and
``dice_after`` the dice of the next step's sheet (the next player's after a write; empty
at the end). :func:`replay_match` re-plays the actions through
:class:`jamb_env.multiplayer.raw_env` from the header's seed and checks the player, the
dice and the scores of every step and the end line. :func:`read_records` reads solitaire
games only (the format above, unchanged), :func:`read_matches` matches only, and
:func:`read_any` both, in file order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_text_file

FORMAT = 1
#: the format of match (multiplayer) records
MATCH_FORMAT = 1
MATCH_ENV = "jamb_multiplayer_v0"


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


@dataclass
class MatchRecord:
    """A multiplayer game (module docstring): the seats' names, the scoring, the steps."""

    ruleset: str
    seed: int
    players: list[str]
    scoring: str = "separate"
    steps: list[dict] = field(default_factory=list)
    final_scores: list[int] | None = None
    source: str | None = field(default=None, repr=False, compare=False)
    step_lines: list[int] = field(default_factory=list, repr=False, compare=False)
    #: the line of the end line (read from a file), for messages
    end_line: int | None = field(default=None, repr=False, compare=False)

    @property
    def num_players(self) -> int:
        return len(self.players)

    def where(self, k: int) -> str:
        """``file:line: step k`` for messages (``step k`` for a record not read from a file)."""
        if self.source is not None and k < len(self.step_lines):
            return f"{self.source}:{self.step_lines[k]}: step {k}"
        return f"step {k}"

    def play(self, env, action: int) -> None:
        """Apply ``action`` (the player to move's) to ``env`` (a
        :class:`jamb_env.multiplayer.raw_env`) and append its step line; the end scores
        are set when the game ends."""
        from .rules import match as M

        ms = env.match
        p, st = ms.to_move, M.sheet_in_play(ms)
        turn, roll, dice = int(st.turn), int(st.roll), [int(d) for d in st.dice] if st.roll else []
        agent = env.possible_agents[p]
        text = env.action_to_string(action)
        env.step(int(action))
        ms = env.match
        over = M.is_over(env.ruleset, ms)
        after = M.sheet_in_play(ms)
        scores = [int(x) for x in M.scores(env.ruleset, ms)]
        self.steps.append({"player": int(p), "turn": turn, "roll": roll, "dice": dice, "action": int(action), "text": text,
                           "reward": float(env.rewards[agent]), "scores": scores,
                           "dice_after": [] if over or not after.roll else [int(d) for d in after.dice]})
        if over:
            self.final_scores = scores

    def header(self) -> dict:
        return {"type": "match", "format": MATCH_FORMAT, "ruleset": self.ruleset, "seed": self.seed, "env": MATCH_ENV,
                "players": list(self.players), "num_players": self.num_players, "scoring": self.scoring}

    def lines(self) -> Iterator[str]:
        yield json.dumps(self.header())
        for step in self.steps:
            yield json.dumps({"type": "step", **step})
        if self.final_scores is not None:
            yield json.dumps({"type": "end", "scores": list(self.final_scores), "steps": len(self.steps)})

    text = GameRecord.text
    write = GameRecord.write


def write_records(path: str | Path, records: Iterable[GameRecord | MatchRecord]) -> Path:
    """Write several games (or matches) to one record file, atomically."""
    return write_text_file(path, "".join(r.text() for r in records))


class RecordError(ValueError):
    """A game record that cannot be read or does not replay (names the file and line)."""


def read_records(path: str | Path) -> list[GameRecord]:
    """All games in a JSON-lines record file (solitaire games; a match in it is refused:
    :func:`read_any` reads both)."""
    return _read(path, ("game",))


def read_matches(path: str | Path) -> list[MatchRecord]:
    """All multiplayer matches in a JSON-lines record file (a solitaire game is refused)."""
    return _read(path, ("match",))


def read_any(path: str | Path) -> list[GameRecord | MatchRecord]:
    """Every game and match in a JSON-lines record file, in file order (tell them apart
    with ``isinstance``)."""
    return _read(path, ("game", "match"))


def _match_header(path, n: int, item: dict) -> MatchRecord:
    from .rules.match import MAX_PLAYERS, MIN_PLAYERS, SCORING_MODES

    if item.get("format") != MATCH_FORMAT:
        raise RecordError(f"{path}:{n}: match record format {item.get('format')!r}; this version reads {MATCH_FORMAT}")
    seed, ruleset, players = item.get("seed"), item.get("ruleset"), item.get("players")
    if type(seed) is not int or seed < 0 or not isinstance(ruleset, str):
        raise RecordError(f"{path}:{n}: a match header needs a ruleset name and a non-negative integer seed")
    if not isinstance(players, list) or not all(isinstance(x, str) and x for x in players) \
            or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise RecordError(f"{path}:{n}: a match header needs \"players\": a list of {MIN_PLAYERS}..{MAX_PLAYERS} "
                          f"seat names, got {players!r}")
    count = item.get("num_players", len(players))
    if type(count) is not int or count != len(players):
        raise RecordError(f"{path}:{n}: num_players is {count!r} but {len(players)} players are named")
    scoring = item.get("scoring", "separate")
    if scoring not in SCORING_MODES:
        raise RecordError(f"{path}:{n}: scoring must be one of {', '.join(SCORING_MODES)}, got {scoring!r}")
    return MatchRecord(ruleset=ruleset, seed=seed, players=list(players), scoring=scoring, source=str(path))


def _read(path: str | Path, kinds: tuple[str, ...]) -> list:
    path = Path(path)
    if path.is_dir():
        raise RecordError(f"{path} is a folder, not a game record file")
    if not path.is_file():
        raise FileNotFoundError(f"no game record {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text") from exc
    games: list = []
    header_line, end_line = 0, None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}:{n}: not JSON: {exc}") from exc
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in ("game", "match") and kind not in kinds:
            if kind == "match":
                raise RecordError(f"{path}:{n}: a multiplayer match record (type \"match\"), not a solitaire game; "
                                  "read it with read_matches or read_any, replay it with jamb-play --replay")
            raise RecordError(f"{path}:{n}: a solitaire game record (type \"game\"), not a multiplayer match")
        if kind == "game":
            if item.get("format") != FORMAT:
                raise RecordError(f"{path}:{n}: record format {item.get('format')!r}; this version reads {FORMAT}")
            seed, ruleset = item.get("seed"), item.get("ruleset")
            if type(seed) is not int or seed < 0 or not isinstance(ruleset, str):
                raise RecordError(f"{path}:{n}: a game header needs a ruleset name and a non-negative integer seed")
            games.append(GameRecord(ruleset=ruleset, seed=seed, player=str(item.get("player", "?")), source=str(path)))
            header_line, end_line = n, None
        elif kind == "match":
            games.append(_match_header(path, n, item))
            header_line, end_line = n, None
        elif kind in ("step", "end"):
            if not games:
                raise RecordError(f"{path}:{n}: a {kind} line before any game header")
            if end_line is not None:
                raise RecordError(f"{path}:{n}: a {kind} line after the end of the game (the game of line {header_line} ended on line {end_line}); "
                                  "a new game starts with a game header line")
            game = games[-1]
            if kind == "step":
                if type(item.get("action")) is not int:
                    raise RecordError(f"{path}:{n}: a step needs an integer action")
                if isinstance(game, MatchRecord) and not (type(item.get("player")) is int and 0 <= item["player"] < game.num_players):
                    raise RecordError(f"{path}:{n}: a match step needs the player who moved, 0..{game.num_players - 1}, "
                                      f"got {item.get('player')!r}")
                game.steps.append({k: v for k, v in item.items() if k != "type"})
                game.step_lines.append(n)
            else:
                count = item.get("steps", len(game.steps))
                if isinstance(game, MatchRecord):
                    scores = item.get("scores")
                    if not isinstance(scores, list) or len(scores) != game.num_players or not all(type(x) is int for x in scores):
                        raise RecordError(f"{path}:{n}: a match's end line needs \"scores\": {game.num_players} integers, got {scores!r}")
                else:
                    score = item.get("score")
                    if type(score) is not int:
                        raise RecordError(f"{path}:{n}: an end line needs an integer score, got {score!r}")
                if count != len(game.steps):
                    raise RecordError(f"{path}:{n}: the end line says {count!r} steps, the game of line {header_line} has {len(game.steps)}")
                if isinstance(game, MatchRecord):
                    game.final_scores, game.end_line = list(scores), n
                else:
                    game.final_score = score
                end_line = n
        else:
            expected = f"{kinds[0]}, step or end" if len(kinds) == 1 else "game, match, step or end"
            raise RecordError(f"{path}:{n}: unknown line type {kind!r}; expected {expected}")
    if not games:
        raise RecordError(f"{path}: no {'game' if kinds == ('game',) else 'match' if kinds == ('match',) else 'game or match'} in the file")
    return games


def replay(record: GameRecord | MatchRecord, env=None):
    """Yield ``(env, step)`` after each recorded action, replayed on a fresh env (a match:
    :func:`replay_match`).

    Raises:
        RecordError: a step after the game's end, an illegal action, or dice that differ
            from the record (the message names the file and line when read from a file).
    """
    if isinstance(record, MatchRecord):
        yield from replay_match(record, env)
        return
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


def match_env(record: MatchRecord, render_mode: str | None = None):
    """A fresh :class:`jamb_env.multiplayer.raw_env` for ``record`` (its ruleset, players
    and scoring), not reset. Raises RecordError naming the file when it cannot be made
    (an unknown ruleset, or shared scoring with a derived column)."""
    from .multiplayer import raw_env

    try:
        return raw_env(ruleset=record.ruleset, num_players=record.num_players, scoring=record.scoring, reward="score",
                       render_mode=render_mode)
    except ValueError as exc:  # RulesetError included
        raise RecordError(f"{record.source or 'the record'}: {exc}") from exc


def replay_match(record: MatchRecord, env=None):
    """Yield ``(env, step)`` after each recorded action of a match, replayed through a
    :class:`jamb_env.multiplayer.raw_env` reset with the header's seed (``env``: one of the
    record's ruleset, players and scoring to use; the same env is yielded each time).

    Raises:
        RecordError: the env cannot be made, a step of another player than the one to
            move, a step after the game's end, an illegal action, dice or scores that differ
            from the record, or an end line whose scores differ or whose game is not over
            (the message names the file and line when read from a file).
    """
    from .rules import match as M

    env = env if env is not None else match_env(record)
    env.reset(seed=record.seed)
    rules = env.ruleset
    for k, step in enumerate(record.steps):
        ms = env.match
        if M.is_over(rules, ms):
            raise RecordError(f"{record.where(k)}: a step after the game's end (every sheet was full by step {k - 1}, "
                              f"scores {M.scores(rules, ms)})")
        if step.get("player", ms.to_move) != ms.to_move:
            raise RecordError(f"{record.where(k)}: the record has player {step.get('player')!r} moving, the env has "
                              f"player {ms.to_move} to move (another env version?)")
        st = M.sheet_in_play(ms)
        dice = [int(d) for d in st.dice] if st.roll else []
        if "dice" in step and step["dice"] != dice:
            raise RecordError(f"{record.where(k)}: the record has dice {step['dice']}, the env rolled {dice} (another env version?)")
        try:
            env.step(step["action"])
        except ValueError as exc:  # IllegalActionError, or an action outside the action space
            raise RecordError(f"{record.where(k)}: {exc}") from exc
        scores = [int(x) for x in M.scores(rules, env.match)]
        if "scores" in step and step["scores"] != scores:
            raise RecordError(f"{record.where(k)}: the record has scores {step['scores']} after this step, the replay {scores}")
        yield env, step
    if record.final_scores is not None:
        where = f"{record.source}:{record.end_line}" if record.source is not None and record.end_line else "the end line"
        if not M.is_over(rules, env.match):
            raise RecordError(f"{where}: the record has an end line but its steps stop before the game's end")
        scores = [int(x) for x in M.scores(rules, env.match)]
        if scores != list(record.final_scores):
            raise RecordError(f"{where}: the replay scored {scores}, the record's end line says {list(record.final_scores)}")
