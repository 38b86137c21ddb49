"""``jamb-web``: Jamb in the browser, a local Flask server over the terminal game's sessions.

One page (:mod:`agents.apps.web.page`, inline CSS and JavaScript, nothing fetched from the
network) talks JSON to the API below. Every game is a *table*: one seat (a person plays,
or an agent plays and the person watches) or 2..5 seats of people and agents (a match,
RULES.md §6, separate sheets or 003's shared one). A table holds the terminal game's
session (:class:`agents.apps.terminal.PlaySession` for one seat, :class:`agents.apps.terminal.MatchSession`
for a match), so the rules engine, legality (:func:`jamb_env.rules.why_illegal`), what an
empty cell would score (:func:`jamb_env.render.sheet.sheet_view`), the bonus and the record are
exactly those of ``jamb-play``; nothing of the rules is restated here.

API (every body and answer is JSON, every POST ``Content-Type: application/json``, even
an empty one; an error is ``{"error": "..."}`` with status 400, 404,
405, 413 or 415 and changes nothing)::

    GET  /api/config                 presets, agents, scoring modes, seat limits
    POST /api/games                  {"ruleset", "seed", "seats": [{"human": NAME} | {"agent": SPEC}], "scoring", "coach"}
    GET  /api/games/<id>             the table's state (reloads a saved game from its record)
    POST /api/games/<id>/move        a person's move: {"move": "roll", "keep": [positions]}, {"move": "write",
                                     "column", "row"}, {"move": "announce", "row"} or {"move": "action", "action": N}
    POST /api/games/<id>/agent       the agent to move plays one action
    POST /api/games/<id>/hint        {"coach": SPEC} (optional): the coach's move, its reason, the planner's values
    GET  /api/records                the saved games, newest first
    GET  /records/<id>.jsonl         a game's record (jamb_env.replay.records, ``jamb-play --replay`` reads it)
    GET  /records/<id>.html          a solitaire game's HTML replay (jamb_env.replay.html, the same page as --html)

Records: every table's record is written after every move, atomically
(:meth:`jamb_env.replay.records.GameRecord.write`), to ``<records>/<id>.jsonl`` beside a small
``<id>.json`` with the seats' kinds and names (a match record names a person ``human``, as
``jamb-play`` does). Ids are random (16 hex digits), so tables never mix; every request
names its table, and each table has its own lock.

Safe by default: :func:`serve` binds 127.0.0.1 and accepts only a loopback ``Host``
(DNS rebinding); a request may name only the built-in agents and those the command line
allowed (``--agent``: loading a model file runs the code pickled in it, so a request or a
record never chooses one); presets by name only (no rules file from a request); bodies are
strict JSON objects of known fields, at most 64 KiB. The page shows every name and record
text with ``textContent``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import secrets
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.apps.terminal import HUMAN, CommandError, MatchSession, PlaySession
from agents.registry import AGENT_NAMES
from jamb_env import list_rulesets
from jamb_env import rules as core
from jamb_env.render.sheet import PARTS, sheet_view
from jamb_env.replay.records import GameRecord, MatchRecord, RecordError, read_any, replay
from jamb_env.rules import match as M
from jamb_env.utils.errors import IllegalActionError, RulesetError
from jamb_env.utils.files import atomic_write_text, read_regular_bytes

#: the address :func:`serve` binds unless told otherwise
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: the largest request body accepted (bytes)
MAX_BODY = 64 * 1024
#: the longest seat name
MAX_NAME = 40
#: tables kept in memory; beyond it the least recently used is dropped (its record stays on disk, and opening it reloads it)
MAX_TABLES = 200
#: a table id: 16 lowercase hex digits
ID_PATTERN = re.compile(r"[0-9a-f]{16}")
#: the coach's values shown (the best choices)
TOP_CHOICES = 4
#: the planner that rates the choices of a coach that cannot rate its own (greedy, ppo, ...)
PLANNER = "expectimax"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


class WebError(ValueError):
    """A request that cannot be done: its message is the answer's ``error``, ``status``
    its HTTP status (400 a bad request, 404 an unknown game)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class NotFound(WebError):
    def __init__(self, message: str):
        super().__init__(message, 404)


@dataclass(frozen=True)
class Seat:
    """One seat: ``kind`` "human" (``name`` the person's name) or "agent" (``name`` its spec)."""

    kind: str
    name: str

    def as_json(self) -> dict:
        return {"kind": self.kind, "name": self.name}


def _quiet_console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=200, emoji=False)


# ---------------------------------------------------------------------- checking requests
def check_fields(data, allowed: Iterable[str], what: str) -> dict:
    """``data`` if it is a JSON object whose keys are all in ``allowed``; WebError naming
    the unknown ones."""
    allowed = tuple(allowed)
    if not isinstance(data, dict):
        raise WebError(f"{what} must be a JSON object, got {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise WebError(f"{what}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    return data


def _integer(value, what: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise WebError(f"{what} must be an integer in {lo}..{hi}, got {json.dumps(value)[:60]}")
    return value


def _text(value, what: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise WebError(f"{what} must be a non-empty string, got {json.dumps(value)[:60]}")
    if choices is not None and value not in choices:
        raise WebError(f"{what} {json.dumps(value)[:60]} is not one of {', '.join(choices)}")
    return value


def check_name(value) -> str:
    """A person's seat name: 1..MAX_NAME characters after trimming, no control characters
    (names are data: the page shows them as text)."""
    if not isinstance(value, str) or not value.strip():
        raise WebError(f"a person's name is a non-empty string, got {json.dumps(value)[:60]}")
    name = value.strip()
    if len(name) > MAX_NAME:
        raise WebError(f"a person's name has at most {MAX_NAME} characters, got {len(name)}")
    if any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in name):
        raise WebError("a person's name may not hold control characters")
    if any(0xD800 <= ord(ch) < 0xE000 for ch in name):  # a lone surrogate: the record would not read back
        raise WebError("a person's name must be valid Unicode (no lone surrogates such as \\ud800)")
    if name.lower() == HUMAN and name != HUMAN:
        name = HUMAN
    return name


def _checked_name(value) -> str | None:
    """:func:`check_name` of ``value``, or None where it refuses it (a seats file's name is
    checked as a request's)."""
    try:
        return check_name(value)
    except WebError:
        return None


def _own_file(path: Path) -> bool:
    """Whether ``path`` is a regular file of its folder itself: a symbolic link (to a file
    outside the records folder) is not, so it is never served, read or saved through."""
    return path.is_file() and not path.is_symlink()


def parse_body(raw: bytes) -> object:
    """A request body as strict JSON (no NaN or Infinity); WebError when it is not."""

    def constant(name):
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(raw.decode("utf-8"), parse_constant=constant)
    except UnicodeDecodeError as exc:
        raise WebError(f"malformed JSON: the body is not UTF-8 ({exc.reason})") from None
    except (ValueError, RecursionError) as exc:
        raise WebError(f"malformed JSON: {exc}") from None


# ---------------------------------------------------------------------- coach hints
def move_of(rules, action: int) -> dict:
    """The API move (what ``POST .../move`` takes) of an env action: ``roll`` with the
    kept positions (0-based, over the sorted dice as shown), ``write`` / ``announce`` with
    the cell, else ``action`` with the id (jokers, basket)."""
    act = core.decode(rules, action)
    if act.kind == "reroll":
        return {"move": "roll", "keep": [i for i, k in enumerate(act.keep) if k]}
    if act.kind == "write":
        return {"move": "write", "column": act.column, "row": act.row}
    if act.kind == "announce":
        return {"move": "announce", "row": act.row}
    return {"move": "action", "action": int(action)}


def move_text(rules, game, action: int) -> str:
    """An action in words for a person: ``keep 6 6 6, re-roll 2 dice``, ``write down/ones``,
    ``announce full`` (jokers and basket as :func:`jamb_env.rules.action_to_string`)."""
    act = core.decode(rules, action)
    if act.kind == "reroll":
        kept = [int(d) for d, k in zip(game.dice, act.keep) if k]
        rolled = rules.dice - len(kept)
        if not kept:
            return f"re-roll all {rolled} dice"
        return f"keep {' '.join(map(str, kept))}, re-roll {rolled} {'die' if rolled == 1 else 'dice'}"
    if act.kind == "write":
        return f"write {act.column}/{act.row}"
    if act.kind == "announce":
        return f"announce {act.row}"
    return core.action_to_string(rules, action)


def write_points(rules, game, action: int) -> int:
    """The points a write action records now (the engine's cell value for this roll and dice)."""
    cell = action - core.layout(rules).write_offset
    return int(rules.cell_values[game.roll - 1, game.dice_index, cell])


def best_write_now(rules, game, mask: np.ndarray) -> tuple[int, int] | None:
    """(action, points) of the legal write that records the most points now, or None."""
    lay = core.layout(rules)
    writes = [
        int(a) for a in np.flatnonzero(mask[lay.write_offset : lay.write_offset + rules.num_cells]) + lay.write_offset
    ]
    if not writes or not game.roll:
        return None
    return max(((a, write_points(rules, game, a)) for a in writes), key=lambda x: x[1])


def _rated(agent, env) -> list[tuple[int, float]]:
    explain = getattr(agent, "explain", None)
    if explain is None:
        return []
    try:
        return [(int(a), float(v)) for a, v in explain(env)]
    except ValueError:  # e.g. the optimal solver on a sheet it cannot solve
        return []


def coach_hint(coach, env, planner=None) -> dict:
    """The coach's advice for the player to move of ``env`` (anything with ``ruleset``,
    ``game``, ``observe()``, ``action_masks()``): its move, that move in words, the reason
    in words, and the expected values of the top choices from the coach's own
    ``explain`` (expectimax, optimal, search) or, for a coach that cannot rate (greedy,
    ppo, a model), from ``planner`` (an expectimax agent).

    Returns a dict: ``coach`` (name), ``action`` (int), ``move`` (:func:`move_of`),
    ``text``, ``reason``, ``rated_by`` (the agent whose values these are, or None),
    ``unit`` (what a value means), ``options`` (up to :data:`TOP_CHOICES` of
    ``{"action", "text", "value", "chosen"}``, best first, the coach's move always among
    them when rated). Raises ValueError when the coach cannot play this state.
    """
    rules, game = env.ruleset, env.game
    mask = np.asarray(env.action_masks(), dtype=bool)
    action = int(coach.act(env, env.observe(), mask))
    rater, options = coach, _rated(coach, env)
    if not options and planner is not None:
        rater, options = planner, _rated(planner, env)
    unit = getattr(rater, "explain_unit", None) if options else None
    values = dict(options)
    top = options[:TOP_CHOICES]
    if options and action not in dict(top):
        top = top[: TOP_CHOICES - 1] + [(action, values.get(action, float("nan")))]
    shown = [
        {
            "action": a,
            "text": move_text(rules, game, a),
            "value": round(v, 2) if v == v else None,
            "chosen": a == action,
        }
        for a, v in top
    ]
    return {
        "coach": str(getattr(coach, "name", "coach")),
        "action": action,
        "move": move_of(rules, action),
        "text": move_text(rules, game, action),
        "reason": hint_reason(rules, game, mask, action, options, rater, coach),
        "rated_by": str(getattr(rater, "name", "")) if options else None,
        "unit": unit,
        "options": shown,
    }


def hint_reason(rules, game, mask, action: int, options: list[tuple[int, float]], rater, coach) -> str:
    """Why, in words: what the move does now (the points a write records, the dice a
    re-roll keeps and the best write it passes up) and how the rater's expected values
    compare it with the next choice."""
    act = core.decode(rules, action)
    words = []
    if act.kind == "write":
        points = write_points(rules, game, action)
        words.append(f"Writing {act.column}/{act.row} records {points} points now.")
        best = best_write_now(rules, game, mask)
        if best is not None and best[1] > points:
            words.append(
                f"A bigger write is open ({move_text(rules, game, best[0])}, {best[1]} points), "
                "but it would spend a cell worth more later."
            )
    elif act.kind == "reroll":
        words.append(
            f"{move_text(rules, game, action).capitalize()} (roll {game.roll} of {core.max_rolls(rules, game)})."
        )
        best = best_write_now(rules, game, mask)
        if best is not None:
            words.append(f"Writing now would record at most {best[1]} points ({move_text(rules, game, best[0])}).")
    elif act.kind == "announce":
        words.append(f"Announce {act.row} on the first roll: the turn then ends in that cell.")
    else:
        words.append(f"{move_text(rules, game, action).capitalize()}.")
    if options:
        values = dict(options)
        who = "its" if rater is coach else f"the {getattr(rater, 'name', 'planner')} planner's"
        mine = values.get(action)
        best_a, best_v = options[0]
        if mine is None:
            words.append(f"It is not among {who} choices.")
        elif best_a == action:
            nxt = next(((a, v) for a, v in options if a != action), None)
            if nxt is None:
                words.append(f"It is the only legal move ({who} value {mine:.2f}).")
            else:
                words.append(
                    f"By {who} expected values it is the best choice ({mine:.2f}), "
                    f"{mine - nxt[1]:.2f} ahead of {move_text(rules, game, nxt[0])} ({nxt[1]:.2f})."
                )
        else:
            words.append(
                f"By {who} expected values {move_text(rules, game, best_a)} rates higher ({best_v:.2f} "
                f"against {mine:.2f})."
            )
    return " ".join(words)


# ---------------------------------------------------------------------- a table
def load_agent(spec: str, ruleset: str, seed: int, seat: int):
    """``agents.load(spec)`` with a ``random`` agent seeded from the game's seed and seat
    (so the same seed replays the same game). Raises WebError for an agent that cannot
    play ``ruleset``."""
    from agents import load

    try:
        agent = load(spec, ruleset=ruleset)
    except (ValueError, OSError) as exc:  # RulesetError, FileNotFoundError included
        raise WebError(f"agent {spec}: {exc}") from None
    if isinstance(getattr(agent, "rng", None), np.random.Generator):
        agent.rng = np.random.default_rng([int(seed), int(seat)])
    return agent


class Table:
    """One game in the server: the seats, the session of the terminal game that holds the
    state and the record, the agents of the agent seats and the coaches asked so far.

    Args:
        id: the table's id (the record's file name).
        ruleset: a preset name; seed: the game's seed.
        seats: 1 seat (a solitaire game) or 2..5 (a match).
        scoring: a match's "separate" or "shared" (ignored for one seat).
        coach: the default coach's spec for hints, or None.
        path: where the record is saved (None: not saved).

    Raises:
        WebError: an agent that cannot play the ruleset, a ruleset the match cannot play
            (shared scoring with jokers or a derived column).
    """

    def __init__(
        self,
        id: str,
        ruleset: str,
        seed: int,
        seats: Sequence[Seat],
        scoring: str = "separate",
        coach: str | None = None,
        path: Path | None = None,
    ):
        self.id, self.ruleset_name, self.seed, self.seats = id, ruleset, int(seed), list(seats)
        self.scoring = scoring if len(seats) > 1 else None
        self.default_coach, self.path = coach, path
        self.lock = threading.Lock()
        self.used = time.monotonic()
        self.save_error: str | None = None
        self._coaches: dict[str, object] = {}
        self._planner = None
        policies = {p: load_agent(s.name, ruleset, seed, p) for p, s in enumerate(seats) if s.kind == "agent"}
        try:
            if len(seats) == 1:
                self.session = PlaySession(ruleset, self.seed, console=_quiet_console(), player=seats[0].name)
            else:
                players = [HUMAN if s.kind == "human" else s.name for s in seats]
                self.session = MatchSession(
                    ruleset, self.seed, players, scoring=scoring, policies=policies, console=_quiet_console()
                )
        except (ValueError, RulesetError) as exc:
            raise WebError(str(exc)) from None
        self.policies = policies

    # ------------------------------------------------------------------ reading
    @property
    def match(self) -> bool:
        return isinstance(self.session, MatchSession)

    @property
    def rules(self):
        return self.session.env.ruleset

    @property
    def record(self) -> GameRecord | MatchRecord:
        return self.session.record

    @property
    def over(self) -> bool:
        return self.session.over

    @property
    def to_move(self) -> int:
        return self.session.to_move if self.match else 0

    def player_view(self, coach=None):
        """The env-like view of the player to move (``ruleset``, ``game``, ``observe()``,
        ``action_masks()``); for a match the observation is what ``coach`` reads."""
        if not self.match:
            return self.session.env
        aec = self.session.aec
        agent = aec.possible_agents[aec.match.to_move]
        view = aec.seat_view(agent)
        full = aec.observe(agent)["observation"]
        from jamb_env.engine.observation import encoder

        seen = full if getattr(coach, "observation_size", None) == len(full) else full[: encoder(aec.ruleset).size]
        view.observe = lambda: seen.copy()
        return view

    def state(self) -> dict:
        """The table as JSON-ready data for the page (module docstring): seats and scores,
        every sheet (cells with their state and value, parts, totals, the bonus progress),
        the turn of the player to move (dice, roll, announcement, obligations, jokers), the
        moves a person may make now, the last steps and, at the end, the result."""
        rules = self.rules
        over = self.over
        scores = self.session.scores if self.match else [int(self.session.env.score)]
        p = self.to_move
        game = self.session.env.game
        mask = core.legal_mask(rules, game) if not over else np.zeros(core.layout(rules).num_actions, dtype=bool)
        human = not over and self.seats[p].kind == "human"
        sheets = self._sheets(scores, mask)
        lay = core.layout(rules)
        view = sheet_view(rules, game, mask)
        other = (
            [
                {"action": int(a), "text": core.action_to_string(rules, int(a))}
                for a in np.flatnonzero(mask)
                if a >= lay.joker_offset or (rules.jokers and a == lay.basket)
            ]
            if human
            else []
        )
        steps = self.record.steps
        last = [
            {"player": int(s.get("player", 0)), "text": str(s.get("text", "")), "reward": s.get("reward")}
            for s in steps[-12:]
        ]
        out = {
            "id": self.id,
            "ruleset": self.ruleset_name,
            "title": rules.title,
            "seed": self.seed,
            "kind": "match" if self.match else "solo",
            "scoring": self.scoring,
            "seats": [{**s.as_json(), "score": int(scores[i])} for i, s in enumerate(self.seats)],
            "columns": list(rules.columns),
            "rows": list(rules.rows),
            "parts": list(PARTS),
            "dice_count": rules.dice,
            "bonus_threshold": int(rules.bonus_threshold),
            "num_cells": rules.num_cells,
            "sheets": sheets,
            "over": over,
            "to_move": None if over else p,
            "human_to_move": human,
            "turn": {
                "turn": view["turn"],
                "roll": int(game.roll),
                "max_rolls": int(core.max_rolls(rules, game)),
                "dice": view["dice"],
                "announced": view["announced"],
                "answer_due": view["answer_due"],
                "copy_row": view["copy_row"],
                "jokers": view["jokers"],
            },
            "can_roll": bool(human and mask[: lay.num_holds].any()),
            "other_moves": other,
            "steps": len(steps),
            "last": last,
            "coach": self.default_coach,
            "record": f"/records/{self.id}.jsonl" if self.path else None,
            "replay": f"/records/{self.id}.html" if self.path and not self.match else None,
            "saved": self.save_error is None,
            "save_error": self.save_error,
        }
        if over:
            winners = [int(i) for i in np.flatnonzero(M.result(scores).win > 0)] if self.match else [0]
            out["result"] = {"scores": [int(s) for s in scores], "winners": winners}
        return out

    def _sheets(self, scores, mask) -> list[dict]:
        rules = self.rules
        if not self.match:
            return [self._sheet(self.session.env.game, mask, 0, scores[0], True)]
        ms = self.session.aec.match
        over = self.over
        if ms.owner is None:
            return [
                self._sheet(
                    st,
                    mask if p == ms.to_move and not over else core.legal_mask(rules, st),
                    p,
                    scores[p],
                    p == ms.to_move and not over,
                )
                for p, st in enumerate(ms.sheets)
            ]
        sheet = self._sheet(ms.sheets[0], mask, None, None, not over)
        sheet["owner"] = [[int(ms.owner[c, r]) for c in range(len(rules.columns))] for r in range(rules.num_rows)]
        sheet["awards"] = [int(w) for w, _ in M.column_awards(rules, ms)]
        return [sheet]

    def _sheet(self, st, mask, player, score, in_play: bool) -> dict:
        """One sheet as data: ``cells`` (rows x columns of ``[state, value]``, the
        states of :func:`sheet_view`), ``parts`` (per column upper, bonus, difference,
        lower), ``totals``, ``upper`` (per column the upper section so far, for the bonus
        progress), ``in_play`` (whose turn it is)."""
        rules = self.rules
        view = sheet_view(rules, st, mask if in_play else core.legal_mask(rules, st))
        cells = [[[state, value] for state, value in line] for line in view["cells"]]
        if not in_play:  # another player's sheet: nothing on it can be chosen now
            cells = [[["closed", None] if s in ("open", "announce") else [s, v] for s, v in line] for line in cells]
        return {
            "player": player,
            "score": int(view["score"]) if score is None else int(score),
            "cells": cells,
            "parts": [[int(x) for x in part] for part in view["parts"]],
            "totals": {c: int(v) for c, v in view["totals"].items()},
            "in_play": in_play,
        }

    # ------------------------------------------------------------------ moves
    def action_of(self, body: dict) -> int:
        """The env action of a move body (module docstring); WebError when the body is
        malformed or the move is illegal now (the engine's reason), nothing changed."""
        if self.over:
            raise WebError("the game is over")
        if self.seats[self.to_move].kind != "human":
            raise WebError(
                f"seat {self.to_move + 1} ({self.seats[self.to_move].name}) is an agent: ask it to move (POST .../agent)"
            )
        kind = _text(body.get("move"), "move", ("roll", "write", "announce", "action"))
        fields = {
            "roll": ("move", "keep"),
            "write": ("move", "column", "row"),
            "announce": ("move", "row"),
            "action": ("move", "action"),
        }[kind]
        check_fields(body, fields, f"a {kind} move")
        rules, session = self.rules, self.session
        if kind == "roll":
            keep = body.get("keep", [])
            if not isinstance(keep, list) or not all(type(i) is int for i in keep):
                raise WebError(f"keep is a list of dice positions 0..{rules.dice - 1}, got {json.dumps(keep)[:60]}")
            if any(not 0 <= i < rules.dice for i in keep):
                raise WebError(f"dice positions are 0..{rules.dice - 1}, got {keep}")
            try:  # the terminal game's command: its checks and its canonical hold
                return session.parse("keep " + " ".join(str(i + 1) for i in keep))
            except CommandError as exc:
                raise WebError(str(exc)) from None
        if kind == "action":
            action = _integer(body.get("action"), "action", 0, core.layout(rules).num_actions - 1)
        else:
            row = _text(body.get("row"), "row", list(rules.rows))
            if kind == "write":
                column = _text(body.get("column"), "column", list(rules.columns))
            else:
                cols = core.layout(rules).announce_columns
                if not len(cols):
                    raise WebError(f"{rules.name} has no announce column")
                column = rules.columns[cols[0]]
            action = core.encode(rules, core.Action(kind, column=column, row=row))
        reason = core.why_illegal(rules, session.env.game, action)
        if reason is not None:
            raise WebError(f"{core.action_to_string(rules, action)} is not allowed: {reason}")
        return action

    def move(self, body: dict) -> None:
        """A person's move (checked first: an illegal one raises WebError, nothing changed), then saved."""
        action = self.action_of(body)
        try:
            self.session.apply(action)
        except IllegalActionError as exc:  # defensive: checked above
            raise WebError(str(exc)) from None
        self.save()

    def agent_move(self) -> None:
        """The agent of the seat to move plays one action, then saved; WebError when the
        game is over or a person is to move."""
        if self.over:
            raise WebError("the game is over")
        p = self.to_move
        if self.seats[p].kind != "agent":
            raise WebError(f"seat {p + 1} is a person's: they move with POST .../move")
        if self.match:
            self.session.agent_move()
        else:
            env = self.session.env
            self.session.apply(int(self.policies[0].act(env, env.observe(), env.action_masks())))
        self.save()

    def hint(self, spec: str | None) -> dict:
        """:func:`coach_hint` of the coach ``spec`` (or the table's default) for the
        player to move; WebError without a coach, at the game's end, or when the coach
        cannot advise here."""
        spec = spec or self.default_coach
        if spec is None:
            raise WebError('no coach: name one ("coach": "expectimax", ...)')
        if self.over:
            raise WebError("the game is over")
        if spec not in self._coaches:
            self._coaches[spec] = load_agent(spec, self.ruleset_name, self.seed, 99)
        coach = self._coaches[spec]
        if self._planner is None:
            self._planner = load_agent(PLANNER, self.ruleset_name, self.seed, 98)
        try:
            return coach_hint(coach, self.player_view(coach), self._planner)
        except ValueError as exc:
            raise WebError(f"the coach {spec} cannot advise here: {exc}") from None

    # ------------------------------------------------------------------ records
    def meta(self) -> dict:
        return {
            "table": 1,
            "ruleset": self.ruleset_name,
            "seed": self.seed,
            "seats": [s.as_json() for s in self.seats],
            "scoring": self.scoring,
            "coach": self.default_coach,
        }

    def save(self) -> None:
        """Write the record (and the seats beside it) atomically; a failure is kept in
        ``save_error`` (the page shows it) and the game goes on."""
        if self.path is None:
            return
        try:
            meta = self.path.with_suffix(".json")
            if not meta.exists() and not meta.is_symlink():  # never written through a link (dangling or not)
                atomic_write_text(meta, json.dumps(self.meta()) + "\n")
            self.record.write(self.path)
            self.save_error = None
        except OSError as exc:
            self.save_error = f"could not save the record: {exc.strerror or exc}"

    def load_steps(self, record: GameRecord | MatchRecord) -> None:
        """Replay ``record``'s steps into this fresh table (every action and dice checked)."""
        if self.match:
            self.session.load(record)
            return
        session = self.session
        for _, step in replay(record, session.env):
            session.record.steps.append(dict(step))
        if session.over:
            session.record.final_score = int(session.env.score)


# ---------------------------------------------------------------------- the tables
class Lobby:
    """Every table of the server, keyed by id, behind one lock (each table has its own
    lock for its moves). ``records``: the folder of the records (None: none saved);
    ``agents``: agent specs a request may name beside the built-in ones."""

    def __init__(self, records: str | Path | None = "games", agents: Sequence[str] = (), max_tables: int = MAX_TABLES):
        self.records = Path(records) if records is not None else None
        self.agents = tuple(dict.fromkeys([*AGENT_NAMES, *agents]))
        self.max_tables = int(max_tables)
        self._tables: dict[str, Table] = {}
        self._lock = threading.Lock()
        self._presets: list[str] | None = None

    @property
    def presets(self) -> list[str]:
        """The preset names a game may play (:func:`jamb_env.list_rulesets`, read once)."""
        if self._presets is None:
            self._presets = list_rulesets()
        return self._presets

    def config(self) -> dict:
        return {
            "presets": self.presets,
            "agents": list(self.agents),
            "scoring": list(M.SCORING_MODES),
            "max_seats": M.MAX_PLAYERS,
            "max_name": MAX_NAME,
            "default_coach": PLANNER,
        }

    def check_agent(self, spec) -> str:
        """``spec`` if a request may name it: a built-in agent or one the server was
        started with; WebError otherwise."""
        if not isinstance(spec, str) or spec not in self.agents:
            raise WebError(
                f"agent {json.dumps(spec)[:80]} is not one of this server's agents: {', '.join(self.agents)} "
                "(start jamb-web with --agent SPEC to add a model)"
            )
        return spec

    def create(self, body) -> Table:
        """A new table from a ``POST /api/games`` body (module docstring)."""
        check_fields(body, ("ruleset", "seed", "seats", "scoring", "coach"), "a new game")
        ruleset = _text(body.get("ruleset", "classic"), "ruleset", self.presets)
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _integer(seed, "seed", 0, 2**32 - 1)
        seats_in = body.get("seats", [{"human": HUMAN}])
        if not isinstance(seats_in, list) or not 1 <= len(seats_in) <= M.MAX_PLAYERS:
            raise WebError(f'seats is a list of 1..{M.MAX_PLAYERS} seats, each {{"human": NAME}} or {{"agent": SPEC}}')
        seats = []
        for i, s in enumerate(seats_in):
            if not isinstance(s, dict) or len(s) != 1 or next(iter(s)) not in ("human", "agent"):
                raise WebError(f'seat {i + 1} must be {{"human": NAME}} or {{"agent": SPEC}}, got {json.dumps(s)[:80]}')
            kind, name = next(iter(s.items()))
            seats.append(Seat("human", check_name(name)) if kind == "human" else Seat("agent", self.check_agent(name)))
        scoring = _text(body.get("scoring", "separate"), "scoring", M.SCORING_MODES)
        coach = body.get("coach")
        coach = None if coach is None else self.check_agent(coach)
        while True:
            id = secrets.token_hex(8)
            if id not in self._tables and not (self.records and (self.records / f"{id}.jsonl").exists()):
                break
        path = None
        if self.records is not None:
            self.records.mkdir(parents=True, exist_ok=True)
            path = self.records / f"{id}.jsonl"
        table = Table(id, ruleset, seed, seats, scoring=scoring, coach=coach, path=path)
        table.save()
        self._keep(table)
        return table

    def _keep(self, table: Table) -> None:
        with self._lock:
            self._tables[table.id] = table
            while len(self._tables) > self.max_tables:
                idle = [t for t in self._tables.values() if t is not table and not t.lock.locked()]  # never one at work
                if not idle:
                    break
                del self._tables[min(idle, key=lambda t: t.used).id]

    def get(self, id: str) -> Table:
        """The table ``id``, reloaded from its record when not in memory; NotFound for an
        id of no game (or not an id at all)."""
        if not isinstance(id, str) or not ID_PATTERN.fullmatch(id):
            raise NotFound(f"no game {id[:40]!r}: a game id is 16 hex digits")
        with self._lock:
            table = self._tables.get(id)
        if table is None:
            table = self._reload(id)
            with self._lock:
                table = self._tables.setdefault(id, table)
            self._keep(table)
        table.used = time.monotonic()
        return table

    def record_path(self, id: str) -> Path:
        if not isinstance(id, str) or not ID_PATTERN.fullmatch(id) or self.records is None:
            raise NotFound(f"no game {str(id)[:40]!r}")
        path = self.records / f"{id}.jsonl"
        if not _own_file(path):  # a link would serve (and save over) a file outside the folder
            raise NotFound(f"no game {id}")
        return path

    def read_record(self, id: str) -> GameRecord | MatchRecord:
        path = self.record_path(id)
        try:
            games = read_any(path)
        except (RecordError, OSError) as exc:
            raise WebError(f"the record of game {id} does not read: {exc}") from None
        if len(games) != 1:
            raise WebError(f"the record of game {id} holds {len(games)} games, not one")
        return games[0]

    def _reload(self, id: str) -> Table:
        """A table rebuilt from ``<records>/<id>.jsonl`` (and its seats file): the
        record's steps replayed, checked. A seat the server may not load (an agent spec
        outside :attr:`agents`) is refused unless the game is over."""
        record = self.read_record(id)
        path = self.record_path(id)
        meta = {}
        with_meta = path.with_suffix(".json")
        if _own_file(with_meta):
            try:
                meta = json.loads(read_regular_bytes(with_meta, 64 * 1024).decode("utf-8"))
            except (OSError, ValueError):
                meta = {}
        if isinstance(record, MatchRecord):
            names = list(record.players)
        else:
            names = [record.player]
        seats_meta = meta.get("seats") if isinstance(meta, dict) else None
        seats = []
        for i, name in enumerate(names):
            given = (
                seats_meta[i]
                if isinstance(seats_meta, list) and len(seats_meta) == len(names) and isinstance(seats_meta[i], dict)
                else {}
            )
            checked = _checked_name(given.get("name")) if given.get("kind") == "human" else None
            if checked is not None and (name == HUMAN or len(names) == 1):
                seats.append(Seat("human", checked))
            elif name == HUMAN or (len(names) == 1 and name not in self.agents):
                seats.append(Seat("human", name))
            else:
                seats.append(Seat("agent", name))
        over = record.final_scores is not None if isinstance(record, MatchRecord) else record.final_score is not None
        refused = [s.name for s in seats if s.kind == "agent" and s.name not in self.agents]
        if refused and not over:
            raise WebError(
                f"game {id} seats agent(s) {', '.join(refused)} that this server does not load "
                "(start jamb-web with --agent SPEC for each)"
            )
        live = [s if s.kind == "human" or s.name in self.agents else Seat("human", s.name) for s in seats]
        coach = meta.get("coach") if isinstance(meta, dict) and meta.get("coach") in self.agents else None
        scoring = record.scoring if isinstance(record, MatchRecord) else "separate"
        if record.ruleset not in self.presets:
            raise WebError(f"game {id} plays {record.ruleset!r}, not a preset of this server")
        try:
            table = Table(id, record.ruleset, record.seed, live, scoring=scoring, coach=coach, path=path)
            table.seats = seats
            table.load_steps(record)
        except RecordError as exc:
            raise WebError(f"the record of game {id} does not replay: {exc}") from None
        return table

    def saved(self, limit: int = 100) -> list[dict]:
        """The saved games, newest first: id, kind, ruleset, seed, seats, steps, over and scores."""
        if self.records is None or not self.records.is_dir():
            return []
        paths = [p for p in self.records.glob("*.jsonl") if ID_PATTERN.fullmatch(p.stem) and _own_file(p)]
        paths.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        out = []
        for path in paths[:limit]:
            try:
                record = read_any(path)[0]
            except (RecordError, OSError):
                continue
            if isinstance(record, MatchRecord):
                players, scores = (
                    list(record.players),
                    record.final_scores or (record.steps[-1].get("scores") if record.steps else None),
                )
                over = record.final_scores is not None
            else:
                players = [record.player]
                scores = [
                    record.final_score
                    if record.final_score is not None
                    else (record.steps[-1].get("score", 0) if record.steps else 0)
                ]
                over = record.final_score is not None
            out.append(
                {
                    "id": path.stem,
                    "kind": "match" if isinstance(record, MatchRecord) else "solo",
                    "ruleset": record.ruleset,
                    "seed": record.seed,
                    "players": players,
                    "steps": len(record.steps),
                    "over": over,
                    "scores": scores,
                    "record": f"/records/{path.stem}.jsonl",
                    "replay": None if isinstance(record, MatchRecord) else f"/records/{path.stem}.html",
                }
            )
        return out


# ---------------------------------------------------------------------- the Flask app
def create_app(lobby: Lobby | None = None, trusted_hosts: Sequence[str] | None = LOOPBACK_HOSTS):
    """The Flask app of ``lobby`` (a new :class:`Lobby` saving to ``games/`` when None).
    ``trusted_hosts``: the ``Host`` names accepted (the loopback names by default;
    None: any, for a server bound to another address on purpose)."""
    from flask import Flask, Response, jsonify, request
    from werkzeug.exceptions import HTTPException

    from agents.apps.web.page import PAGE

    lobby = lobby if lobby is not None else Lobby()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    if trusted_hosts is not None:
        app.config["TRUSTED_HOSTS"] = list(trusted_hosts)
    app.config["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False
    app.extensions["jamb_lobby"] = lobby

    def error(message: str, status: int):
        response = jsonify({"error": message})
        response.status_code = status
        return response

    @app.errorhandler(WebError)
    def web_error(exc: WebError):
        return error(str(exc), exc.status)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return error(f"{exc.name}: {exc.description}", exc.code or 500)

    @app.after_request
    def headers(response):
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
            "base-uri 'none'; form-action 'none'"
        )
        return response

    def body(optional: bool = False) -> dict:
        """The request's JSON body. Every POST says ``Content-Type: application/json``
        (another site's form or simple request cannot, so it cannot make a move here);
        ``optional``: an empty body is ``{}``."""
        if request.mimetype != "application/json":
            raise WebError("send the body as JSON (Content-Type: application/json)", 415)
        raw = request.get_data(cache=False)
        if optional and not raw.strip():
            return {}
        return parse_body(raw)

    def state_of(table: Table):
        return jsonify(table.state())

    @app.get("/")
    def page():
        return Response(PAGE, mimetype="text/html")

    @app.get("/favicon.ico")
    def favicon():
        return Response(status=204)

    @app.get("/api/config")
    def config():
        return jsonify(lobby.config())

    @app.post("/api/games")
    def new_game():
        table = lobby.create(body())
        with table.lock:
            response = state_of(table)
        response.status_code = 201
        return response

    @app.get("/api/games/<id>")
    def game(id):
        table = lobby.get(id)
        with table.lock:
            return state_of(table)

    @app.post("/api/games/<id>/move")
    def move(id):
        data = body()
        table = lobby.get(id)
        with table.lock:
            table.move(check_fields(data, ("move", "keep", "column", "row", "action"), "a move"))
            return state_of(table)

    @app.post("/api/games/<id>/agent")
    def agent(id):
        check_fields(body(optional=True), (), "an agent's move")
        table = lobby.get(id)
        with table.lock:
            table.agent_move()
            return state_of(table)

    @app.post("/api/games/<id>/hint")
    def hint(id):
        data = check_fields(body(optional=True), ("coach",), "a hint request")
        spec = data.get("coach")
        spec = None if spec is None else lobby.check_agent(spec)
        table = lobby.get(id)
        with table.lock:
            return jsonify(table.hint(spec))

    @app.get("/api/records")
    def records():
        return jsonify({"games": lobby.saved()})

    @app.get("/records/<id>.jsonl")
    def record_file(id):
        path = lobby.record_path(id)
        text = read_regular_bytes(path, 256 * 2**20)
        return Response(
            text,
            mimetype="application/x-ndjson",
            headers={"Content-Disposition": f"attachment; filename=jamb-{id}.jsonl"},
        )

    @app.get("/records/<id>.html")
    def record_page(id):
        from jamb_env.replay.html import replay_html

        record = lobby.read_record(id)
        if isinstance(record, MatchRecord):
            raise WebError(
                "the HTML replay is of a solitaire game; replay a match with jamb-play --replay "
                f"(download /records/{id}.jsonl)"
            )
        try:
            return Response(replay_html(record), mimetype="text/html")
        except RecordError as exc:
            raise WebError(f"the record of game {id} does not replay: {exc}") from None

    return app


def make_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, lobby: Lobby | None = None):
    """A threaded WSGI server (werkzeug's) of :func:`create_app` bound to ``host:port``
    (port 0: a free one; ``server.server_port`` says which), not yet serving: call
    ``serve_forever()`` (``shutdown()`` from another thread stops it). A host other than
    loopback accepts any ``Host`` header. Raises OSError when the address is taken."""
    from werkzeug.serving import make_server as werkzeug_server

    loopback = host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
    trusted = tuple(dict.fromkeys([*LOOPBACK_HOSTS, host])) if loopback else None
    app = create_app(lobby, trusted_hosts=trusted)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            return werkzeug_server(host, port, app, threaded=True)
    except SystemExit:  # werkzeug prints why it cannot bind (an unknown host, a taken port) and exits 1
        why = " ".join(said.getvalue().split()) or "the address cannot be bound"
        raise OSError(why) from None
