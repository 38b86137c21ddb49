"""Game records: JSON lines that replay a game exactly.

A record is one header line, one line per step, and an end line::

    {"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}
    {"type": "step", "turn": 0, "roll": 1, "dice": [1, 3, 3, 5, 6], "action": 44, "text": "write down/ones",
     "reward": 1.0, "score": 1, "dice_after": [2, 2, 4, 5, 6]}
    ...
    {"type": "end", "score": 612, "steps": 131}

``dice`` are the sorted dice the action was chosen on, ``dice_after`` those after it (the
next roll). A file may hold several games one after another (evaluation writes one file
per agent). Since the env's dice depend on the seed alone, replaying the actions from
the seed reproduces the game; :func:`replay` checks the dice on the way.

A multiplayer match (:mod:`jamb_env.multiplayer`) is recorded the same way, with a
``match`` header, the player to move on every step line and every player's score::

    {"type": "match", "format": 1, "ruleset": "classic", "seed": 7, "env": "jamb_multiplayer_v0",
     "players": ["human", "expectimax"], "num_players": 2, "scoring": "separate"}
    {"type": "step", "player": 1, "turn": 0, "roll": 1, "dice": [1, 3, 3, 5, 6], "action": 44,
     "text": "write down/ones", "reward": 1.0, "scores": [0, 1], "dice_after": [2, 2, 4, 5, 6]}
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

import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from jamb_env.utils import strict_json
from jamb_env.utils.files import write_text_file

FORMAT = 1
#: the format of match (multiplayer) records
MATCH_FORMAT = 1
MATCH_ENV = "jamb_multiplayer_v0"
#: the player name of a person (a game's ``player``, a match's seat); every other name is an agent's
HUMAN = "human"


class _RecordLines:
    """What a game and a match record share: their messages' places and their JSON lines."""

    def where(self, k: int) -> str:
        """``file:line: step k`` for messages (``step k`` for a record not read from a file)."""
        if self.source is not None and k < len(self.step_lines):
            return f"{self.source}:{self.step_lines[k]}: step {k}"
        return f"step {k}"

    def lines(self) -> Iterator[str]:
        """The record's JSON lines: the header, a line a step, and the end line once the game is over."""
        yield json.dumps(self.header())
        for step in self.steps:
            yield json.dumps({"type": "step", **step})
        end = self.end()
        if end is not None:
            yield json.dumps({"type": "end", **end, "steps": len(self.steps)})

    def text(self) -> str:
        """The record as its file holds it. RecordError when its own reader would refuse it (a
        negative or non-integer seed, a step without an integer action, a NaN): what is written
        reads back."""
        lines = list(self.lines())
        _parse(Path(f"<{type(self).__name__}>"), enumerate(lines, 1), ("game", "match"), LIMITS)
        return "".join(line + "\n" for line in lines)

    def write(self, path: str | Path, append: bool = False) -> None:
        """Write the record to ``path`` (after the games already there with ``append``),
        atomically: a failed write leaves the previous file intact. RecordError (nothing
        written) for a record its reader would refuse (:meth:`text`)."""
        path = Path(path)
        old = ""
        if append and path.is_file():
            old = path.read_text(encoding="utf-8")
            if old and not old.endswith("\n"):
                old += "\n"
        write_text_file(path, old + self.text())


@dataclass
class GameRecord(_RecordLines):
    ruleset: str
    seed: int
    player: str = HUMAN
    steps: list[dict] = field(default_factory=list)
    final_score: int | None = None
    #: where the record was read from (file name, and each step's line), for messages
    source: str | None = field(default=None, repr=False, compare=False)
    step_lines: list[int] = field(default_factory=list, repr=False, compare=False)

    def play(self, env, action: int):
        """Apply ``action`` to ``env``, append its step line, and return ``env.step``'s
        result; the end score is set when the game ends."""
        game = env.game
        turn, roll, dice = game.turn, game.roll, game.dice.tolist()
        text = env.action_to_string(action)
        result = env.step(action)
        _, reward, done, _, info = result
        self.steps.append(
            {
                "turn": turn,
                "roll": roll,
                "dice": dice,
                "action": int(action),
                "text": text,
                "reward": float(reward),
                "score": int(info["score"]),
                "dice_after": info["dice"].tolist() if info["roll"] else [],
            }
        )
        if done:
            self.final_score = int(info["score"])
        return result

    def header(self) -> dict:
        return {
            "type": "game",
            "format": FORMAT,
            "ruleset": self.ruleset,
            "seed": self.seed,
            "env": "Jamb-v1",
            "player": self.player,
        }

    def end(self) -> dict | None:
        return None if self.final_score is None else {"score": self.final_score}


@dataclass
class MatchRecord(_RecordLines):
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

    def play(self, env, action: int) -> None:
        """Apply ``action`` (the player to move's) to ``env`` (a
        :class:`jamb_env.multiplayer.raw_env`) and append its step line; the end scores
        are set when the game ends."""
        from jamb_env.rules import match as M

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
        self.steps.append(
            {
                "player": int(p),
                "turn": turn,
                "roll": roll,
                "dice": dice,
                "action": int(action),
                "text": text,
                "reward": float(env.rewards[agent]),
                "scores": scores,
                "dice_after": [] if over or not after.roll else [int(d) for d in after.dice],
            }
        )
        if over:
            self.final_scores = scores

    def header(self) -> dict:
        return {
            "type": "match",
            "format": MATCH_FORMAT,
            "ruleset": self.ruleset,
            "seed": self.seed,
            "env": MATCH_ENV,
            "players": list(self.players),
            "num_players": self.num_players,
            "scoring": self.scoring,
        }

    def end(self) -> dict | None:
        return None if self.final_scores is None else {"scores": list(self.final_scores)}


def write_records(path: str | Path, records: Iterable[GameRecord | MatchRecord]) -> Path:
    """Write several games (or matches) to one record file, atomically."""
    return write_text_file(path, "".join(r.text() for r in records))


class RecordError(ValueError):
    """A game record that cannot be read or does not replay (names the file and line)."""


@dataclass(frozen=True)
class RecordLimits:
    """What a record reader accepts; beyond it, :class:`RecordError`. The defaults
    (:data:`LIMITS`) hold every record the tools write with room to spare (a step line is
    about 200 bytes, a game a few hundred steps, evaluation files thousands of games)."""

    #: bytes in the whole file
    max_file_bytes: int = 256 * 2**20
    #: bytes in one line (a header naming 5 players, or one step)
    max_line_bytes: int = 64 * 2**10
    #: arrays and objects nested in one line (records nest 2 deep)
    max_depth: int = 16
    #: games and matches in one file
    max_games: int = 1_000_000
    #: steps in one game (the longest game of any ruleset has well under 1,000)
    max_steps: int = 10_000


LIMITS = RecordLimits()


def read_records(path: str | Path, limits: RecordLimits | None = None) -> list[GameRecord]:
    """All games in a JSON-lines record file (solitaire games; a match in it is refused:
    :func:`read_any` reads both).

    Raises:
        FileNotFoundError: no file at ``path``.
        RecordError: anything else: a folder, an unreadable file, a file or line beyond
            ``limits`` (:data:`LIMITS`: size, line length, nesting, games, steps), a line
            that is not strict JSON or not valid UTF-8, or a line that is not what a
            record holds there (the message names the file and line).
    """
    return _read(path, ("game",), limits)


def read_matches(path: str | Path, limits: RecordLimits | None = None) -> list[MatchRecord]:
    """All multiplayer matches in a JSON-lines record file (a solitaire game is refused).
    Raises as :func:`read_records`."""
    return _read(path, ("match",), limits)


def read_any(path: str | Path, limits: RecordLimits | None = None) -> list[GameRecord | MatchRecord]:
    """Every game and match in a JSON-lines record file, in file order (tell them apart
    with ``isinstance``). Raises as :func:`read_records`."""
    return _read(path, ("game", "match"), limits)


def _match_header(path, n: int, item: dict) -> MatchRecord:
    from jamb_env.rules.match import MAX_PLAYERS, MIN_PLAYERS, SCORING_MODES

    if type(item.get("format")) is not int or item["format"] != MATCH_FORMAT:
        raise RecordError(
            f"{path}:{n}: match record format {_short(item.get('format'))}; this version reads {MATCH_FORMAT}"
        )
    seed, ruleset, players = item.get("seed"), item.get("ruleset"), item.get("players")
    if type(seed) is not int or seed < 0 or not isinstance(ruleset, str):
        raise RecordError(f"{path}:{n}: a match header needs a ruleset name and a non-negative integer seed")
    if (
        not isinstance(players, list)
        or not all(isinstance(x, str) and x for x in players)
        or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS
    ):
        raise RecordError(
            f'{path}:{n}: a match header needs "players": a list of {MIN_PLAYERS}..{MAX_PLAYERS} '
            f"seat names, got {_short(players)}"
        )
    count = item.get("num_players", len(players))
    if type(count) is not int or count != len(players):
        raise RecordError(f"{path}:{n}: num_players is {_short(count)} but {len(players)} players are named")
    scoring = item.get("scoring", "separate")
    if scoring not in SCORING_MODES:
        raise RecordError(f"{path}:{n}: scoring must be one of {', '.join(SCORING_MODES)}, got {_short(scoring)}")
    return MatchRecord(ruleset=ruleset, seed=seed, players=list(players), scoring=scoring, source=str(path))


def _read(path: str | Path, kinds: tuple[str, ...], limits: RecordLimits | None) -> list:
    path = Path(path)
    if path.is_dir():
        raise RecordError(f"{path} is a folder, not a game record file")
    if not path.is_file():
        raise FileNotFoundError(f"no game record {path}")
    limits = limits or LIMITS
    try:
        with open(path, "rb") as f:
            return _parse(path, _lines(path, f, limits), kinds, limits)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise RecordError(f"{path}: cannot read the record: {exc.strerror or exc}") from exc


def _lines(path: Path, f, limits: RecordLimits) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of ``f``, checked against ``limits`` (bytes
    read, line length, UTF-8) before any of it is parsed."""
    total = 0
    for n in itertools.count(1):
        raw = f.readline(limits.max_line_bytes + 1)
        if not raw:
            return
        total += len(raw)
        if total > limits.max_file_bytes:
            raise RecordError(
                f"{path}: more than {limits.max_file_bytes:,} bytes; a record file is at most that big "
                "(split it, or read it with a larger RecordLimits.max_file_bytes)"
            )
        if len(raw.rstrip(b"\r\n")) > limits.max_line_bytes:
            raise RecordError(
                f"{path}:{n}: a line longer than {limits.max_line_bytes:,} bytes; record lines are short "
                "(a header or one step)"
            )
        try:
            yield n, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"{path}:{n}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _json_line(path: Path, n: int, line: str, limits: RecordLimits):
    """One line as strict JSON (:func:`jamb_env.utils.strict_json.loads`: no NaN, Infinity, float
    beyond range or key given twice, at most ``limits.max_depth`` arrays/objects deep, valid Unicode)."""
    try:
        return strict_json.loads(line, limits.max_depth)
    except ValueError as exc:
        flat = "; record lines are flat objects" if "deep" in str(exc) else ""
        raise RecordError(f"{path}:{n}: {exc}{flat}") from exc


def _is_int(x) -> bool:
    return type(x) is int


def _is_ints(x) -> bool:
    return isinstance(x, list) and all(type(v) is int for v in x)


#: the fields a step may hold, with the test a value passes and what it must be (a field
#: not named here is kept as it is, for tools that add their own)
_STEP_FIELDS = {
    "turn": (_is_int, "an integer"),
    "roll": (_is_int, "an integer"),
    "score": (_is_int, "an integer"),
    "dice": (_is_ints, "a list of integers"),
    "dice_after": (_is_ints, "a list of integers"),
    "scores": (_is_ints, "a list of integers"),
    "text": (lambda x: isinstance(x, str), "a string"),
    "reward": (lambda x: type(x) in (int, float) and abs(x) <= 1e12, "a number (|x| <= 1e12)"),
}


def _check_step(path: Path, n: int, item: dict) -> None:
    for key, (ok, what) in _STEP_FIELDS.items():
        if key in item and not ok(item[key]):
            raise RecordError(f"{path}:{n}: a step's {key} must be {what}, got {_short(item[key])}")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _parse(path: Path, lines: Iterable[tuple[int, str]], kinds: tuple[str, ...], limits: RecordLimits) -> list:
    games: list = []
    header_line, end_line = 0, None
    for n, line in lines:
        if not line.strip():
            continue
        item = _json_line(path, n, line, limits)
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in ("game", "match"):
            games.append(_header(path, n, item, kind, kinds, len(games), limits))
            header_line, end_line = n, None
        elif kind in ("step", "end"):
            if not games:
                raise RecordError(f"{path}:{n}: a {kind} line before any game header")
            if end_line is not None:
                raise RecordError(
                    f"{path}:{n}: a {kind} line after the end of the game (the game of line {header_line} "
                    f"ended on line {end_line}); a new game starts with a game header line"
                )
            if kind == "step":
                _step_line(path, n, item, games[-1], header_line, limits)
            else:
                _end_line(path, n, item, games[-1], header_line)
                end_line = n
        else:
            expected = f"{kinds[0]}, step or end" if len(kinds) == 1 else "game, match, step or end"
            raise RecordError(f"{path}:{n}: unknown line type {_short(kind)}; expected {expected}")
    if not games:
        what = "game" if kinds == ("game",) else "match" if kinds == ("match",) else "game or match"
        raise RecordError(f"{path}: no {what} in the file")
    return games


def _header(path: Path, n: int, item: dict, kind: str, kinds: tuple[str, ...], count: int, limits: RecordLimits):
    """The record a ``game`` or ``match`` header line starts (``count`` games read so far)."""
    if kind not in kinds:
        if kind == "match":
            raise RecordError(
                f'{path}:{n}: a multiplayer match record (type "match"), not a solitaire game; '
                "read it with read_matches or read_any, replay it with jamb-play --replay"
            )
        raise RecordError(f'{path}:{n}: a solitaire game record (type "game"), not a multiplayer match')
    if count >= limits.max_games:
        raise RecordError(f"{path}:{n}: more than {limits.max_games:,} games in one file")
    if kind == "match":
        return _match_header(path, n, item)
    if type(item.get("format")) is not int or item["format"] != FORMAT:
        raise RecordError(f"{path}:{n}: record format {_short(item.get('format'))}; this version reads {FORMAT}")
    seed, ruleset = item.get("seed"), item.get("ruleset")
    if type(seed) is not int or seed < 0 or not isinstance(ruleset, str):
        raise RecordError(f"{path}:{n}: a game header needs a ruleset name and a non-negative integer seed")
    player = item.get("player", "?")
    if not isinstance(player, str):
        raise RecordError(f"{path}:{n}: a game header's player is a name (a string), got {player!r}")
    return GameRecord(ruleset=ruleset, seed=seed, player=player, source=str(path))


def _step_line(path: Path, n: int, item: dict, game, header_line: int, limits: RecordLimits) -> None:
    """A step line, checked and appended to ``game``."""
    if type(item.get("action")) is not int:
        raise RecordError(f"{path}:{n}: a step needs an integer action")
    if len(game.steps) >= limits.max_steps:
        raise RecordError(f"{path}:{n}: more than {limits.max_steps:,} steps in the game of line {header_line}")
    _check_step(path, n, item)
    player = item.get("player")
    if isinstance(game, MatchRecord) and not (type(player) is int and 0 <= player < game.num_players):
        raise RecordError(
            f"{path}:{n}: a match step needs the player who moved, 0..{game.num_players - 1}, got {_short(player)}"
        )
    game.steps.append({k: v for k, v in item.items() if k != "type"})
    game.step_lines.append(n)


def _end_line(path: Path, n: int, item: dict, game, header_line: int) -> None:
    """An end line, checked and set as ``game``'s end score(s)."""
    count = item.get("steps", len(game.steps))
    if isinstance(game, MatchRecord):
        scores = item.get("scores")
        if not isinstance(scores, list) or len(scores) != game.num_players or not all(type(x) is int for x in scores):
            raise RecordError(
                f'{path}:{n}: a match\'s end line needs "scores": {game.num_players} integers, got {_short(scores)}'
            )
    else:
        score = item.get("score")
        if type(score) is not int:
            raise RecordError(f"{path}:{n}: an end line needs an integer score, got {_short(score)}")
    if count != len(game.steps):
        raise RecordError(
            f"{path}:{n}: the end line says {_short(count)} steps, the game of line {header_line} has {len(game.steps)}"
        )
    if isinstance(game, MatchRecord):
        game.final_scores, game.end_line = list(scores), n
    else:
        game.final_score = score


def replay(record: GameRecord | MatchRecord, env=None, into: GameRecord | MatchRecord | None = None):
    """Yield ``(env, step)`` after each recorded action, replayed on a fresh env (a match:
    :func:`replay_match`). ``into``: an empty record of the same kind that records each
    replayed action with its ``play`` on ``env``, so that its steps hold what the engine
    says (text, reward, score, dice) and not what the record's lines claim.

    Raises:
        RecordError: the record's ruleset cannot be loaded or is not ``env``'s, a step after the game's end,
            an illegal action, dice that differ from the record, or an end line whose score
            differs or whose game is not over (raised after the last step is yielded; the
            message names the file and line when read from a file).
    """
    if isinstance(record, MatchRecord):
        yield from replay_match(record, env, into)
        return
    from jamb_env.engine.doors import describe_illegal
    from jamb_env.env import JambEnv
    from jamb_env.rules import is_over

    if env is None:
        try:
            env = JambEnv(record.ruleset, illegal_action="raise")
        except (ValueError, OSError) as exc:  # RulesetError, a missing ruleset file
            raise RecordError(f"{record.source or 'the record'}: {exc}") from exc
    else:
        _check_env_ruleset(record, env.ruleset)
    env.reset(seed=record.seed)
    for k, step in enumerate(record.steps):
        if is_over(env.ruleset, env.game):
            raise RecordError(
                f"{record.where(k)}: a step after the game's end (every cell was written by step {k - 1}, "
                f"score {env.score})"
            )
        dice = list(env.game.dice.tolist()) if env.game.roll else []
        if "dice" in step and step["dice"] != dice:
            raise RecordError(
                f"{record.where(k)}: the record has dice {step['dice']}, the env rolled {dice} (another env version?)"
            )
        what = describe_illegal(env.ruleset, env.game, step["action"])  # whatever the env's illegal_action
        if what is not None:
            raise RecordError(f"{record.where(k)}: {what}")
        try:
            into.play(env, step["action"]) if into is not None else env.step(step["action"])
        except ValueError as exc:  # an action the env refuses otherwise
            raise RecordError(f"{record.where(k)}: {exc}") from exc
        yield env, step
    if record.final_score is not None:  # the end line must be what the steps replay to
        where = record.source or "the record"
        if not is_over(env.ruleset, env.game):
            raise RecordError(f"{where}: the record has an end line but its steps stop before the game's end")
        if env.score != record.final_score:
            raise RecordError(
                f"{where}: the replay scored {env.score}, the record's end line says {record.final_score}"
            )


def _check_env_ruleset(record: GameRecord | MatchRecord, rules) -> None:
    """RecordError unless ``rules`` (the ruleset of an env given to a replay) is the record's."""
    from jamb_env.rules import load_ruleset

    try:
        own = load_ruleset(record.ruleset)
    except (ValueError, OSError) as exc:  # RulesetError, a missing ruleset file
        raise RecordError(f"{record.source or 'the record'}: {exc}") from exc
    if not own.same_rules(rules):
        other = "" if own.name != rules.name else " (other rules of that name)"
        raise RecordError(
            f"{record.source or 'the record'}: a game of {own.name}; the env given plays {rules.name}{other} "
            "(give an env of the record's ruleset, or none)"
        )


def replayed(record: GameRecord | MatchRecord) -> GameRecord | MatchRecord:
    """``record`` as the engine replays it: a new record of the same game (header as the
    record's) whose every step (text, reward, score or scores, dice) and end come from the
    replay, not from the record's lines. What a tool shows of a record it did not write
    comes from here. Raises RecordError as :func:`replay`."""
    if isinstance(record, MatchRecord):
        again = MatchRecord(record.ruleset, record.seed, list(record.players), record.scoring, source=record.source)
    else:
        again = GameRecord(record.ruleset, record.seed, record.player, source=record.source)
    for _ in replay(record, into=again):
        pass
    return again


def match_env(record: MatchRecord, render_mode: str | None = None):
    """A fresh :class:`jamb_env.multiplayer.raw_env` for ``record`` (its ruleset, players
    and scoring), not reset. Raises RecordError naming the file when it cannot be made
    (an unknown ruleset, or shared scoring with a derived column)."""
    from jamb_env.multiplayer import raw_env

    try:
        return raw_env(
            ruleset=record.ruleset,
            num_players=record.num_players,
            scoring=record.scoring,
            reward="score",
            render_mode=render_mode,
        )
    except (ValueError, OSError) as exc:  # RulesetError included, and a missing ruleset file
        raise RecordError(f"{record.source or 'the record'}: {exc}") from exc


def replay_match(record: MatchRecord, env=None, into: MatchRecord | None = None):
    """Yield ``(env, step)`` after each recorded action of a match, replayed through a
    :class:`jamb_env.multiplayer.raw_env` reset with the header's seed (``env``: one of the
    record's ruleset, players and scoring to use; the same env is yielded each time;
    ``into``: as :func:`replay`).

    Raises:
        RecordError: the env cannot be made or plays another ruleset, a step of another player than the one to
            move, a step after the game's end, an illegal action, dice or scores that differ
            from the record, or an end line whose scores differ or whose game is not over
            (the message names the file and line when read from a file).
    """
    from jamb_env.engine.doors import describe_illegal
    from jamb_env.rules import match as M

    if env is None:
        env = match_env(record)
    else:
        _check_env_ruleset(record, env.ruleset)
    env.reset(seed=record.seed)
    rules = env.ruleset
    for k, step in enumerate(record.steps):
        ms = env.match
        if M.is_over(rules, ms):
            raise RecordError(
                f"{record.where(k)}: a step after the game's end (every sheet was full by step {k - 1}, "
                f"scores {M.scores(rules, ms)})"
            )
        if step.get("player", ms.to_move) != ms.to_move:
            raise RecordError(
                f"{record.where(k)}: the record has player {step.get('player')!r} moving, the env has "
                f"player {ms.to_move} to move (another env version?)"
            )
        st = M.sheet_in_play(ms)
        dice = [int(d) for d in st.dice] if st.roll else []
        if "dice" in step and step["dice"] != dice:
            raise RecordError(
                f"{record.where(k)}: the record has dice {step['dice']}, the env rolled {dice} (another env version?)"
            )
        what = describe_illegal(rules, st, step["action"])  # whatever the env's illegal_action
        if what is not None:
            raise RecordError(f"{record.where(k)}: {what}")
        try:
            into.play(env, step["action"]) if into is not None else env.step(step["action"])
        except ValueError as exc:  # an action the env refuses otherwise
            raise RecordError(f"{record.where(k)}: {exc}") from exc
        scores = [int(x) for x in M.scores(rules, env.match)]
        if "scores" in step and step["scores"] != scores:
            raise RecordError(
                f"{record.where(k)}: the record has scores {step['scores']} after this step, the replay {scores}"
            )
        yield env, step
    if record.final_scores is not None:
        where = (
            f"{record.source}:{record.end_line}" if record.source is not None and record.end_line else "the end line"
        )
        if not M.is_over(rules, env.match):
            raise RecordError(f"{where}: the record has an end line but its steps stop before the game's end")
        scores = [int(x) for x in M.scores(rules, env.match)]
        if scores != list(record.final_scores):
            raise RecordError(
                f"{where}: the replay scored {scores}, the record's end line says {list(record.final_scores)}"
            )
