"""One game of ``jamb-web``: a *table* of seats on one session of :mod:`agents.apps.session`
(a :class:`~agents.apps.session.SoloGame` for one seat, a
:class:`~agents.apps.session.MatchGame` for 2..5), its state as the page draws it, the
moves a request makes, the hints and the record saved after every move.

Nothing of the rules is written here: legality is :func:`jamb_env.rules.why_illegal`, what
an empty cell would score :func:`jamb_env.render.sheet.sheet_view`, the bonus's figures
the kernels' (:func:`jamb_env.rules.kernels.bonus_floor`), the record the session's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.apps.session import HUMAN, CommandError, MatchGame, SoloGame
from agents.apps.web.checks import WebError, check_fields, integer, shown, text
from agents.apps.web.coach import PLANNER, AgentPool, coach_hint
from jamb_env import rules as core
from jamb_env.render.sheet import CELL_STATES, PARTS, sheet_view
from jamb_env.replay.records import GameRecord, MatchRecord
from jamb_env.rules import kernels as rk
from jamb_env.rules import match as M
from jamb_env.utils.errors import IllegalActionError, RulesetError
from jamb_env.utils.files import FileChangedError, atomic_write_text, own_file, write_unless_changed

#: the fields of each kind of move a person sends (``POST .../move``)
MOVE_FIELDS = {
    "roll": ("move", "keep"),
    "write": ("move", "column", "row"),
    "announce": ("move", "row"),
    "action": ("move", "action"),
}


@dataclass(frozen=True)
class Seat:
    """One seat: ``kind`` "human" (``name`` the person's name) or "agent" (``name`` its spec)."""

    kind: str
    name: str

    def as_json(self) -> dict:
        return {"kind": self.kind, "name": self.name}


def bonus_at(rules) -> int:
    """The smallest upper section that earns the bonus (the kernels' one definition:
    the threshold, one more with ``bonus_strict``)."""
    return int(rk.bonus_floor(rules.arrays.P))


class Table:
    """One game in the server: the seats, the session that holds the state and the
    record, the agents of the agent seats (from ``pool``, shared with every table).

    Args:
        id: the table's id (the record's file name).
        ruleset: a preset name; seed: the game's seed.
        seats: 1 seat (a solitaire game) or 2..5 (a match).
        scoring: a match's "separate" or "shared" (ignored for one seat).
        coach: the default coach's spec for hints, or None.
        path: where the record is saved (None: not saved).
        pool: where agents come from (a new :class:`AgentPool` when None).

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
        pool: AgentPool | None = None,
    ):
        self.id, self.ruleset_name, self.seed, self.seats = id, ruleset, int(seed), list(seats)
        self.scoring = scoring if len(seats) > 1 else None
        self.default_coach, self.path = coach, path
        self.pool = pool if pool is not None else AgentPool()
        self.lock = threading.Lock()
        #: requests holding the table (its lobby never drops a held table) and when it was last used
        self.holders, self.used = 0, 0.0
        self.save_error: str | None = None
        #: the record file as this table last wrote (or read) it (jamb_env.utils.files.change_stamp); None: new
        self.disk_stamp: tuple | None = None
        agents = enumerate(seats)
        self.policies = {p: self.pool.get(s.name, ruleset, seed, p) for p, s in agents if s.kind == "agent"}
        try:
            if len(seats) == 1:
                self.session = SoloGame(ruleset, self.seed, player=seats[0].name)
            else:
                players = [HUMAN if s.kind == "human" else s.name for s in seats]
                self.session = MatchGame(ruleset, self.seed, players, scoring=scoring, policies=self.policies)
        except (ValueError, RulesetError) as exc:
            raise WebError(str(exc)) from None

    # ------------------------------------------------------------------ reading
    @property
    def match(self) -> bool:
        return isinstance(self.session, MatchGame)

    @property
    def rules(self):
        return self.session.env.ruleset

    @property
    def record(self) -> GameRecord | MatchRecord:
        return self.session.record

    @property
    def over(self) -> bool:
        return self.session.over

    def state(self) -> dict:
        """The table as JSON-ready data for the page (agents/apps/web/server.py): seats and
        scores, every sheet, the turn of the player to move, the moves a person may make
        now, the last steps and, at the end, the result."""
        rules, over, scores = self.rules, self.over, self.session.scores
        game = self.session.env.game
        mask = core.legal_mask(rules, game) if not over else np.zeros(core.layout(rules).num_actions, dtype=bool)
        human = not over and self.seats[self.session.to_move].kind == "human"
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
            "cell_states": list(CELL_STATES),
            "dice_count": rules.dice,
            "bonus_at": bonus_at(rules),
            "num_cells": rules.num_cells,
            "sheets": self._sheets(scores, mask),
            "over": over,
            "to_move": None if over else self.session.to_move,
            "human_to_move": human,
            "turn": self._turn(game, mask),
            "can_roll": bool(human and mask[: core.layout(rules).num_holds].any()),
            "other_moves": self._other_moves(mask) if human else [],
            **self._history(),
        }
        if over:
            winners = [int(i) for i in np.flatnonzero(M.result(scores).win > 0)] if self.match else [0]
            out["result"] = {"scores": [int(s) for s in scores], "winners": winners}
        return out

    def _turn(self, game, mask) -> dict:
        """The turn of the player to move: dice, roll, announcement, obligations, jokers."""
        view = sheet_view(self.rules, game, mask)
        return {
            "turn": view["turn"],
            "roll": int(game.roll),
            "max_rolls": int(core.max_rolls(self.rules, game)),
            **{key: view[key] for key in ("dice", "announced", "answer_due", "copy_row", "jokers")},
        }

    def _other_moves(self, mask) -> list[dict]:
        """Joly's jokers and the basket, when legal: ``action`` and ``text``."""
        rules, lay = self.rules, core.layout(self.rules)
        return [
            {"action": int(a), "text": core.action_to_string(rules, int(a))}
            for a in np.flatnonzero(mask)
            if a >= lay.joker_offset or (rules.jokers and a == lay.basket)
        ]

    def _history(self) -> dict:
        """The steps so far, the last of them, the coach, the record's addresses, the save."""
        steps = self.record.steps
        last = [
            {"player": int(s.get("player", 0)), "text": str(s.get("text", "")), "reward": s.get("reward")}
            for s in steps[-12:]
        ]
        return {
            "steps": len(steps),
            "last": last,
            "coach": self.default_coach,
            "record": f"/records/{self.id}.jsonl" if self.path else None,
            "replay": f"/records/{self.id}.html" if self.path and not self.match else None,
            "saved": self.save_error is None,
            "save_error": self.save_error,
        }

    def _sheets(self, scores, mask) -> list[dict]:
        rules, over = self.rules, self.over
        if not self.match:
            return [self._sheet(self.session.env.game, mask, 0, scores[0], True)]
        ms = self.session.aec.match
        if ms.owner is None:
            moving = [p == ms.to_move and not over for p in range(len(ms.sheets))]
            return [
                self._sheet(st, mask if moving[p] else core.legal_mask(rules, st), p, scores[p], moving[p])
                for p, st in enumerate(ms.sheets)
            ]
        sheet = self._sheet(ms.sheets[0], mask, None, None, not over)
        sheet["owner"] = [[int(ms.owner[c, r]) for c in range(len(rules.columns))] for r in range(rules.num_rows)]
        sheet["awards"] = [int(w) for w, _ in M.column_awards(rules, ms)]
        return [sheet]

    def _sheet(self, st, mask, player, score, in_play: bool) -> dict:
        """One sheet as data: ``cells`` (rows x columns of ``[state, value]``, the
        states of :func:`sheet_view`), ``parts`` (per column upper, bonus, difference,
        lower), ``totals``, ``in_play`` (whose turn it is)."""
        view = sheet_view(self.rules, st, mask if in_play else core.legal_mask(self.rules, st))
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
        """The env action of a move body (agents/apps/web/server.py); WebError when the
        body is malformed or the move is illegal now (the engine's reason), nothing changed."""
        if self.over:
            raise WebError("the game is over")
        p = self.session.to_move
        if self.seats[p].kind != "human":
            raise WebError(f"seat {p + 1} ({self.seats[p].name}) is an agent: ask it to move (POST .../agent)")
        kind = text(body.get("move"), "move", tuple(MOVE_FIELDS))
        check_fields(body, MOVE_FIELDS[kind], f"a {kind} move")
        rules, session = self.rules, self.session
        try:  # the session's commands: their checks, their canonical hold, the engine's reason
            if kind == "roll":
                keep = body.get("keep", [])
                if not isinstance(keep, list) or not all(type(i) is int for i in keep):
                    raise WebError(f"keep is a list of dice positions 0..{rules.dice - 1}, got {shown(keep)}")
                if any(not 0 <= i < rules.dice for i in keep):
                    raise WebError(f"dice positions are 0..{rules.dice - 1}, got {keep}")
                try:  # the session's positions are the terminal's, 1..n: its message is said again in the API's
                    return session.parse("keep " + " ".join(str(i + 1) for i in keep))
                except CommandError as exc:
                    twice = next((i for i in keep if keep.count(i) > 1), None)
                    raise WebError(f"position {twice} is named twice" if twice is not None else str(exc)) from None
            if kind == "action":
                return session.checked(integer(body.get("action"), "action", 0, core.layout(rules).num_actions - 1))
            row = text(body.get("row"), "row", list(rules.rows))
            column = text(body.get("column"), "column", list(rules.columns)) if kind == "write" else None
            return session.checked(session.cell_action(kind, column, row))
        except CommandError as exc:
            raise WebError(str(exc)) from None

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
        p = self.session.to_move
        if self.seats[p].kind != "agent":
            raise WebError(f"seat {p + 1} is a person's: they move with POST .../move")
        if self.match:
            self.session.agent_move()
        else:
            env = self.session.env
            self.session.apply(int(self.policies[0].act(env, env.observe(), env.action_masks())))
        self.save()

    def hint(self, spec: str | None) -> dict:
        """:func:`agents.apps.web.coach.coach_hint` of the coach ``spec`` (else the table's, else
        the server's default, :data:`~agents.apps.web.coach.PLANNER`, as ``/api/config`` says)
        for the player to move; WebError at the game's end or when the coach cannot advise here."""
        spec = spec or self.default_coach or PLANNER
        if self.over:
            raise WebError("the game is over")
        coach = self.pool.get(spec, self.ruleset_name, self.seed, 99)
        planner = self.pool.get(PLANNER, self.ruleset_name, self.seed, 98)
        try:
            return coach_hint(coach, self.session.view(coach), planner)
        except ValueError as exc:
            raise WebError(f"the coach {spec} cannot advise here: {exc}") from None

    # ------------------------------------------------------------------ records
    def meta(self) -> dict:
        """The seats file's content: the seats' kinds and names, the scoring and the coach."""
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
        if (self.path.exists() or self.path.is_symlink()) and not own_file(self.path):
            # a link put in the record's place since the table was made: never written through
            self.save_error = f"could not save the record: {self.path.name} is no longer a file of the records folder"
            return
        try:  # another program's write since (jamb-play --load ... --save) is never saved over
            self.disk_stamp = write_unless_changed(self.path, self.disk_stamp, self._write)
            self.save_error = None
        except FileChangedError:
            self.save_error = (
                f"could not save the record: {self.path.name} was changed by another program since this server "
                "saved it; its moves are kept, and this game's moves from now on are not saved"
            )
        except OSError as exc:
            self.save_error = f"could not save the record: {exc.strerror or exc}"

    def _write(self) -> None:
        """The seats file (once, never through a link, dangling or not) and the record."""
        meta = self.path.with_suffix(".json")
        if not meta.exists() and not meta.is_symlink():
            atomic_write_text(meta, json.dumps(self.meta()) + "\n")
        self.record.write(self.path)

    def load_steps(self, record: GameRecord | MatchRecord) -> None:
        """Replay ``record``'s steps into this fresh table (every action and dice checked,
        each step recorded again by the engine; RecordError when it does not replay)."""
        self.session.load(record)
