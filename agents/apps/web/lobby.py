"""The tables of one ``jamb-web`` server and its records folder.

Bounds, so that the server holds under load (docs/web.md):

- **Tables**: at most ``max_tables`` in memory; beyond it the least recently used table
  that no request holds is dropped (its record stays on disk, and the next request
  reloads it). A request holds its table (:meth:`Lobby.hold`) from lookup to answer, so a
  table is never dropped under a request and a game is never in memory twice (two copies
  would save over each other's moves): a reload happens under a lock of its id.
- **Agents**: loaded once per (agent, ruleset) and shared by every table
  (:class:`agents.apps.web.coach.AgentPool`).
- **Records**: at most ``max_records`` games in the folder; before a new game beyond it,
  the oldest finished games are deleted (their ``.jsonl`` and ``.json``), and when every
  game there is unfinished a new game is refused (503) until some are finished or deleted.

The Saved games list shows only what the engine replays: each record is replayed
(:func:`jamb_env.replay.records.replayed`) and its steps, scores and end come from the
replay, cached until the file changes; a record that does not replay is listed with why.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from agents.apps.session import HUMAN
from agents.apps.web.checks import MAX_NAME, NotFound, WebError, check_fields, check_name, checked_name, integer, text
from agents.apps.web.coach import PLANNER, AgentPool
from agents.apps.web.table import Seat, Table
from agents.registry import AGENT_NAMES
from jamb_env import list_rulesets
from jamb_env.engine.doors import SEED_LIMIT, check_count
from jamb_env.replay.records import LIMITS, GameRecord, MatchRecord, RecordError, read_any, replayed
from jamb_env.rules import match as M
from jamb_env.utils import strict_json
from jamb_env.utils.files import change_stamp, own_file, read_regular_bytes

#: tables kept in memory (beyond it, the least recently used idle one is dropped)
MAX_TABLES = 200
#: games kept in the records folder (beyond it, the oldest finished ones are deleted)
MAX_RECORDS = 5000
#: a table id: 16 lowercase hex digits
ID_PATTERN = re.compile(r"[0-9a-f]{16}")


def mtime(path: Path) -> int:
    """``path``'s modification time (ns), or -1 for a file that is gone (deleted meanwhile)."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def finished(path: Path) -> bool:
    """Whether the record file ``path`` ends with its end line (a finished game), read
    from its last 4 KiB; False for a file that cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            last = f.read().strip().rsplit(b"\n", 1)[-1]
        return strict_json.loads(last.decode("utf-8"), LIMITS.max_depth).get("type") == "end"
    except (OSError, ValueError, AttributeError):  # UnicodeDecodeError is a ValueError
        return False


class Lobby:
    """Every table of the server, keyed by id (module docstring for its bounds).

    Args:
        records: the folder of the records (None: none saved).
        agents: agent specs a request may name beside the built-in ones.
        max_tables: tables kept in memory; max_records: games kept in ``records``.

    Raises:
        ValueError: ``max_tables`` or ``max_records`` not a positive integer.
    """

    def __init__(
        self,
        records: str | Path | None = "games",
        agents: Sequence[str] = (),
        max_tables: int = MAX_TABLES,
        max_records: int = MAX_RECORDS,
    ):
        self.records = Path(records) if records is not None else None
        self.agents = tuple(dict.fromkeys([*AGENT_NAMES, *agents]))
        self.max_tables, self.max_records = (
            check_count("max_tables", max_tables),
            check_count("max_records", max_records),
        )
        self.pool = AgentPool()
        self._tables: dict[str, Table] = {}
        self._lock = threading.Lock()
        self._reloading = [threading.Lock() for _ in range(64)]  # a table's reload: under the lock of its id
        self._records_lock = threading.Lock()
        self._summaries: dict[str, tuple[tuple, dict]] = {}
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

    # ------------------------------------------------------------------ tables held by requests
    @contextmanager
    def create(self, body) -> Iterator[Table]:
        """A new table from a ``POST /api/games`` body (agents/apps/web/server.py), saved,
        held while the block runs."""
        ruleset, seed, seats, scoring, coach = self._new_game(body)
        if coach is not None:  # loaded now, as a seat's agent: a coach that cannot play the ruleset is refused
            self.pool.get(coach, ruleset, seed, 99)
        table = Table(secrets.token_hex(8), ruleset, seed, seats, scoring=scoring, coach=coach, pool=self.pool)
        if self.records is not None:
            with self._records_lock:  # room made and the record saved at once: two new games never overshoot
                self._make_room()
                try:
                    self.records.mkdir(parents=True, exist_ok=True)
                except OSError as exc:  # the folder gone, or a file put in its place
                    raise WebError(f"the records folder cannot be used: {exc.strerror or exc}", 503) from None
                while True:
                    table.id = secrets.token_hex(8)
                    table.path = self.records / f"{table.id}.jsonl"
                    if table.id not in self._tables and not table.path.exists() and not table.path.is_symlink():
                        break
                table.save()
        id = table.id
        with self._lock:
            self._tables[id] = self._held(table)
        try:
            yield table
        finally:
            self._release(table)

    def _new_game(self, body) -> tuple:
        """(ruleset, seed, seats, scoring, coach) of a new game's body, each checked."""
        check_fields(body, ("ruleset", "seed", "seats", "scoring", "coach"), "a new game")
        ruleset = text(body.get("ruleset", "classic"), "ruleset", self.presets)
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else integer(seed, "seed", 0, SEED_LIMIT - 1)
        seats_in = body.get("seats", [{"human": HUMAN}])
        if not isinstance(seats_in, list) or not 1 <= len(seats_in) <= M.MAX_PLAYERS:
            raise WebError(f'seats is a list of 1..{M.MAX_PLAYERS} seats, each {{"human": NAME}} or {{"agent": SPEC}}')
        seats = []
        for i, s in enumerate(seats_in):
            if not isinstance(s, dict) or len(s) != 1 or next(iter(s)) not in ("human", "agent"):
                raise WebError(f'seat {i + 1} must be {{"human": NAME}} or {{"agent": SPEC}}, got {json.dumps(s)[:80]}')
            kind, name = next(iter(s.items()))
            seats.append(Seat("human", check_name(name)) if kind == "human" else Seat("agent", self.check_agent(name)))
        scoring = text(body.get("scoring", "separate"), "scoring", M.SCORING_MODES)
        if len(seats) == 1 and "scoring" in body:  # a solitaire game has no scoring mode: said, not dropped
            raise WebError("scoring is for a table of 2 or more seats; a one-seat game has its own sheet")
        coach = body.get("coach")
        return ruleset, seed, seats, scoring, None if coach is None else self.check_agent(coach)

    @contextmanager
    def hold(self, id: str) -> Iterator[Table]:
        """The table ``id``, reloaded from its record when not in memory, held while the
        block runs (never dropped meanwhile); NotFound for an id of no game."""
        table = self._acquire(id)
        try:
            yield table
        finally:
            self._release(table)

    def _held(self, table: Table) -> Table:
        """``table`` with one more holder (under the lobby's lock)."""
        table.holders += 1
        table.used = time.monotonic()
        return table

    def _acquire(self, id: str) -> Table:
        if not isinstance(id, str) or not ID_PATTERN.fullmatch(id):
            raise NotFound(f"no game {str(id)[:40]!r}: a game id is 16 hex digits")
        with self._lock:
            if id in self._tables:
                return self._held(self._tables[id])
        with self._reloading[hash(id) % len(self._reloading)]:  # one reload of a game at a time
            with self._lock:  # reloaded by another request meanwhile: that copy, the only one
                if id in self._tables:
                    return self._held(self._tables[id])
            table = self._reload(id)
            with self._lock:
                self._tables[id] = self._held(table)
        return table

    def _release(self, table: Table) -> None:
        """One holder less; then the least recently used idle tables beyond
        ``max_tables`` are dropped (a held one never)."""
        with self._lock:
            table.holders -= 1
            while len(self._tables) > self.max_tables:
                idle = [t for t in self._tables.values() if t.holders == 0]
                if not idle:
                    break
                del self._tables[min(idle, key=lambda t: t.used).id]

    # ------------------------------------------------------------------ records
    def record_path(self, id: str) -> Path:
        if not isinstance(id, str) or not ID_PATTERN.fullmatch(id) or self.records is None:
            raise NotFound(f"no game {str(id)[:40]!r}")
        path = self.records / f"{id}.jsonl"
        if not own_file(path):  # a link would serve (and save over) a file outside the folder
            raise NotFound(f"no game {id}")
        return path

    def read_record(self, id: str) -> GameRecord | MatchRecord:
        """The one game of ``<records>/<id>.jsonl``, of a preset of this server (a record
        naming a rules file is refused unread); NotFound or WebError."""
        path = self.record_path(id)
        try:
            games = read_any(path)
        except (RecordError, OSError) as exc:
            raise WebError(f"the record of game {id} does not read: {exc}") from None
        if len(games) != 1:
            raise WebError(f"the record of game {id} holds {len(games)} games, not one")
        if games[0].ruleset not in self.presets:
            raise WebError(f"game {id} plays {games[0].ruleset!r}, not a preset of this server")
        return games[0]

    def _reload(self, id: str) -> Table:
        """A table rebuilt from ``<records>/<id>.jsonl`` (and its seats file): the
        record's steps replayed, checked and recorded again. A seat the server may not load
        (an agent spec outside :attr:`agents`) is refused unless the game is over."""
        stamp = change_stamp(self.record_path(id), missing_ok=True)  # before the record is read: a later change is seen
        record = self.read_record(id)
        meta = self._meta(id)
        seats = self._seats(record, meta)
        over = record.final_scores is not None if isinstance(record, MatchRecord) else record.final_score is not None
        refused = [s.name for s in seats if s.kind == "agent" and s.name not in self.agents]
        if refused and not over:
            raise WebError(
                f"game {id} seats agent(s) {', '.join(refused)} that this server does not load "
                "(start jamb-web with --agent SPEC for each)"
            )
        live = [s if s.kind == "human" or s.name in self.agents else Seat("human", s.name) for s in seats]
        coach = meta.get("coach") if meta.get("coach") in self.agents else None
        scoring = record.scoring if isinstance(record, MatchRecord) else "separate"
        path = self.record_path(id)
        try:
            table = Table(id, record.ruleset, record.seed, live, scoring, coach, path, pool=self.pool)
            table.seats = seats
            table.load_steps(record)
            table.disk_stamp = stamp  # a save over a record changed meanwhile is refused (Table.save)
        except RecordError as exc:
            raise WebError(f"the record of game {id} does not replay: {exc}") from None
        return table

    def _meta(self, id: str) -> dict:
        """The seats file ``<id>.json`` as a dict (empty when missing, a link or unreadable)."""
        path = self.record_path(id).with_suffix(".json")
        if not own_file(path):
            return {}
        try:
            meta = strict_json.loads(read_regular_bytes(path, 64 * 1024).decode("utf-8"), LIMITS.max_depth)
        except (OSError, ValueError):  # a seats file that is not strict JSON is no seats file
            return {}
        return meta if isinstance(meta, dict) else {}

    def _seats(self, record, meta: dict) -> list[Seat]:
        """The seats of a record: a person where the record says ``human`` (named by the
        seats file when it says so and the name passes :func:`check_name`), else an agent."""
        names = list(record.players) if isinstance(record, MatchRecord) else [record.player]
        given = meta.get("seats")
        given = given if isinstance(given, list) and len(given) == len(names) else [{}] * len(names)
        seats = []
        for name, seat in zip(names, given):
            seat = seat if isinstance(seat, dict) else {}
            checked = checked_name(seat.get("name")) if seat.get("kind") == "human" else None
            if checked is not None and (name == HUMAN or len(names) == 1):
                seats.append(Seat("human", checked))
            elif name == HUMAN or (len(names) == 1 and name not in self.agents):
                seats.append(Seat("human", name))
            else:
                seats.append(Seat("agent", name))
        return seats

    def _record_files(self) -> list[Path]:
        if self.records is None or not self.records.is_dir():
            return []
        return [p for p in self.records.glob("*.jsonl") if ID_PATTERN.fullmatch(p.stem) and own_file(p)]

    def _make_room(self) -> None:
        """Keep the folder to ``max_records`` games with the new one (module docstring):
        the oldest finished games deleted; WebError 503 when none of them is finished."""
        paths = self._record_files()
        extra = len(paths) + 1 - self.max_records
        if extra <= 0:
            return
        for path in sorted(paths, key=mtime):
            if extra > 0 and finished(path):
                path.with_suffix(".json").unlink(missing_ok=True)
                path.unlink(missing_ok=True)
                extra -= 1
        if extra > 0:
            raise WebError(
                f"the records folder holds {len(paths)} unfinished games, the most this server keeps "
                "(jamb-web --max-records): finish or delete some to start a new one",
                503,
            )

    def saved(self, limit: int = 100) -> list[dict]:
        """The saved games, newest first (:meth:`summary` of each)."""
        games = []
        for path in sorted(self._record_files(), key=mtime, reverse=True)[:limit]:
            with contextlib.suppress(OSError):  # a file deleted meanwhile is not listed
                games.append(self.summary(path))
        with self._lock:  # the cache keeps the games listed
            self._summaries = {g["id"]: self._summaries[g["id"]] for g in games if g["id"] in self._summaries}
        return games

    def summary(self, path: Path) -> dict:
        """One saved game as the engine replays it: id, kind, ruleset, seed, players,
        steps, over and scores (from the replay, not from the record's lines), and its
        addresses; or ``id`` and ``error`` for a record that does not read or replay.
        Cached until the file changes."""
        key = change_stamp(path)
        cached = self._summaries.get(path.stem)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            record = self.read_record(path.stem)
            again = replayed(record)
        except (WebError, RecordError) as exc:
            summary = {"id": path.stem, "error": str(exc).replace(str(path), f"{path.stem}.jsonl")}
        else:
            match = isinstance(again, MatchRecord)
            end = again.final_scores if match else again.final_score
            last = again.steps[-1] if again.steps else {}
            scores = end if match else [end]
            if end is None:
                scores = last.get("scores", [0] * again.num_players) if match else [last.get("score", 0)]
            summary = {
                "id": path.stem,
                "kind": "match" if match else "solo",
                "ruleset": again.ruleset,
                "seed": again.seed,
                "players": list(again.players) if match else [again.player],
                "steps": len(again.steps),
                "over": end is not None,
                "scores": [int(s) for s in scores],
                "record": f"/records/{path.stem}.jsonl",
                "replay": None if match else f"/records/{path.stem}.html",
            }
        with self._lock:
            self._summaries[path.stem] = (key, summary)
        return summary
