"""A game session for people, without any presentation: the players and seats, the
commands a person types, the moves and the record. The terminal game
(:mod:`agents.apps.terminal`, drawn with rich) and ``jamb-web`` (:mod:`agents.apps.web`)
both sit on it, so both play one engine and write one record format.

The commands (:data:`COMMANDS`; ids as RULES.md §1, unique prefixes accepted, rows 1-6 for
ones..sixes, positions 1..n are the dice as shown, sorted) become env actions through
:meth:`Commands.parse`; every invalid command raises :class:`CommandError` saying why, and
the game never changes on one.

:class:`SoloGame` plays a solitaire :class:`~jamb_env.JambEnv`; :class:`MatchGame` a
multiplayer game (:mod:`jamb_env.multiplayer`) where each seat is a person (``human``)
or an agent that moves when asked (:meth:`MatchGame.agent_move`). Both keep their
record (:mod:`jamb_env.replay.records`) and go on from a saved one with ``load``, which
replays it: every step the session then holds is the engine's, not the file's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jamb_env import rules as core
from jamb_env.env import JambEnv
from jamb_env.replay.records import HUMAN, GameRecord, MatchRecord, replay, replay_match
from jamb_env.rules import match as M
from jamb_env.rules.tables import UPPER_ROWS

#: the commands a person types, as ``help`` shows them
COMMANDS = """\
    keep 1 3 4        re-roll every die except positions 1, 3, 4   (keep = re-roll all)
    reroll 2 5        re-roll positions 2 and 5                    (reroll = all dice)
    announce full     announce a cell of the announce column (right after roll 1)
    write free full   write a cell (column row); "write full" when only one column can take that row
    joker 6 2         Joly: the fixed joker 6 sets die 2 to 6 (each joker once per game)
    joker J 5 1       Joly: a free joker J sets die 1 to 5 (two per game)
    basket            Joly: cancel the turn's rolls and roll all dice again as roll 1 (two per game)
    hint              the coach's advice (with --coach)
    sheet             draw the sheet again
    save [FILE]       save the game (a replayable record; FILE new or empty, or this game's own)
    help, quit"""

ROW_ALIASES = {str(i + 1): row for i, row in enumerate(UPPER_ROWS)}
#: the words of the commands that are not moves, and the name each stands for
META = {"help": "help", "?": "help", "sheet": "sheet", "hint": "hint", "save": "save"}
META.update(quit="quit", exit="quit", q="quit")


class CommandError(ValueError):
    """An invalid command; the message says what was wrong and what is allowed."""


def record_name(ruleset, rules) -> str:
    """The ruleset as a record names it: the preset's name, or the rules file's path."""
    return str(ruleset) if str(ruleset).endswith((".yaml", ".yml")) else rules.name


class Commands:
    """The commands (module docstring) on ``self.env``: anything with ``ruleset`` and
    ``game`` (the :class:`~jamb_env.rules.GameState` the player to move plays on); the
    legal actions come from the rules of that state."""

    env = None

    @property
    def over(self) -> bool:
        return core.is_over(self.env.ruleset, self.env.game)

    def parse(self, line: str) -> int | str | None:
        """The env action of a command line, or a meta command's name (``help``, ``sheet``,
        ``hint``, ``save``, ``quit``), or None for an empty line; CommandError if invalid."""
        words = line.strip().lower().split()
        if not words:
            return None
        cmd, args = words[0], words[1:]
        if cmd in META:
            return META[cmd]
        if self.over:
            raise CommandError("the game is over; type quit (or save)")
        rules = self.env.ruleset
        if cmd in ("keep", "k", "reroll", "r", "roll"):
            positions = self._positions(args)
            if cmd in ("keep", "k"):
                keep = positions
            else:
                keep = [i for i in range(rules.dice) if i not in positions] if args else []
            return self.checked(self._hold_action(keep))
        if cmd in ("announce", "a"):
            if len(args) != 1:
                raise CommandError("usage: announce ROW (e.g. announce full)")
            return self.checked(self.cell_action("announce", None, self._row(args[0])))
        if cmd in ("write", "w"):
            return self.checked(self._write_action(args))
        if cmd in ("joker", "j"):
            return self.checked(self._joker_action(args))
        if cmd == "basket":
            self._need_jokers("basket")
            if args:
                raise CommandError("usage: basket (no arguments: all dice are rolled again as the turn's roll 1)")
            return self.checked(core.encode(rules, core.Action("basket")))
        extra = ", joker, basket" if rules.jokers else ""
        raise CommandError(
            f"unknown command {_shown(cmd)!r}; commands: keep, reroll, announce, write{extra}, hint, sheet, save, "
            "help, quit"
        )

    def cell_action(self, kind: str, column: str | None, row: str) -> int:
        """The action that writes (``kind`` "write") or announces ``row`` (the announce
        column's: ``column`` is not needed); CommandError when there is no announce column."""
        rules = self.env.ruleset
        if kind == "announce":
            cols = core.layout(rules).announce_columns
            if not len(cols):
                raise CommandError(f"{rules.name} has no announce column")
            column = rules.columns[cols[0]]
        return core.encode(rules, core.Action(kind, column=column, row=row))

    def _write_action(self, args: list[str]) -> int:
        rules = self.env.ruleset
        if len(args) == 2:
            return self.cell_action("write", self._column(args[0]), self._row(args[1]))
        if len(args) != 1:
            raise CommandError("usage: write COLUMN ROW (e.g. write down ones)")
        row = self._row(args[0])
        mask = core.legal_mask(rules, self.env.game)
        options = [c for c in rules.columns if mask[self.cell_action("write", c, row)]]
        if len(options) != 1:
            raise CommandError(f"say which column: {row} is open in {', '.join(options) or 'no column'} now")
        return self.cell_action("write", options[0], row)

    def _need_jokers(self, what: str) -> None:
        rules = self.env.ruleset
        if not rules.jokers:
            raise CommandError(
                f"{rules.name} has no jokers, so no {what} (Joly's jokers, RULES.md §6: e.g. --ruleset joly)"
            )

    def _joker_action(self, args: list[str]) -> int:
        """The joker action of ``joker V DIE`` (fixed joker ``V``) or ``joker J V DIE`` (a
        free joker set to ``V``); DIE is a position as shown, and among equal dice the
        joker goes to the leftmost (the same effect)."""
        self._need_jokers("joker")
        usage = "usage: joker V DIE (the fixed joker V on die DIE, e.g. joker 6 2)"
        usage += " or joker J V DIE (a free joker J set to V)"
        free = bool(args) and args[0] == "j"
        if len(args) != (3 if free else 2):
            raise CommandError(usage)
        value, die = args[-2], args[-1]
        if not (value.isascii() and value.isdigit()) or len(value) > 1 or not 1 <= int(value) <= 6:
            raise CommandError(f"a joker's value is a face 1..6, got {_shown(value)!r}; {usage}")
        i = self._positions([die])[0]
        dice = self.env.game.dice
        i = int(np.flatnonzero(dice == dice[i])[0]) if self.env.game.roll > 0 else i
        rules = self.env.ruleset
        return core.encode(rules, core.Action("joker", joker="J" if free else value, die=i, value=int(value)))

    def checked(self, action: int) -> int:
        """``action`` if it is legal now; CommandError with the engine's reason otherwise."""
        rules = self.env.ruleset
        reason = core.why_illegal(rules, self.env.game, action)
        if reason is not None:
            raise CommandError(f"{core.action_to_string(rules, action)} is not allowed: {reason}")
        return action

    def _positions(self, args: list[str]) -> list[int]:
        n = self.env.ruleset.dice
        out = []
        for a in args:
            if not (a.isascii() and a.isdigit()) or len(a) > 4 or not 1 <= int(a) <= n:
                raise CommandError(f"dice positions are 1..{n} (as shown), got {_shown(a)!r}")
            if int(a) - 1 in out:
                raise CommandError(f"position {a} is named twice")
            out.append(int(a) - 1)
        return out

    def _hold_action(self, keep: list[int]) -> int:
        """The canonical re-roll action that keeps the dice at positions ``keep``."""
        rules, game = self.env.ruleset, self.env.game
        if len(keep) == rules.dice:
            raise CommandError("keeping every die is not a re-roll; write or announce instead")
        tables = rules.tables
        kept = sorted(int(game.dice[i]) for i in keep)
        sub = tables.sub_index(kept) if kept else tables.sub_index([])
        masks = np.flatnonzero(tables.hold_canonical[game.dice_index] & (tables.hold_sub[game.dice_index] == sub))
        return int(masks[0])

    def _row(self, word: str) -> str:
        rows = self.env.ruleset.rows
        if word in ROW_ALIASES and ROW_ALIASES[word] in rows:
            return ROW_ALIASES[word]
        hits = [r for r in rows if r.startswith(word)]
        if word in rows:
            return word
        if len(hits) != 1:
            raise CommandError(
                f"unknown or ambiguous row {_shown(word)!r}; rows: {', '.join(rows)} (1-6 for ones..sixes)"
            )
        return hits[0]

    def _column(self, word: str) -> str:
        cols = self.env.ruleset.columns
        if word in cols:
            return word
        hits = [c for c in cols if c.startswith(word)]
        if len(hits) != 1:
            raise CommandError(f"unknown or ambiguous column {_shown(word)!r}; columns: {', '.join(cols)}")
        return hits[0]

    def command_for(self, action: int) -> str:
        """The command a person types for ``action`` (holds as dice positions)."""
        act = core.decode(self.env.ruleset, action)
        if act.kind == "reroll":
            kept = [str(i + 1) for i, k in enumerate(act.keep) if k]
            return f"keep {' '.join(kept)}" if kept else "reroll"
        if act.kind == "announce":
            return f"announce {act.row}"
        if act.kind == "joker":
            return f"joker {'J ' if act.joker == 'J' else ''}{act.value} {act.die + 1}"
        if act.kind == "basket":
            return "basket"
        return f"write {act.column} {act.row}"


class SoloGame(Commands):
    """One solitaire game: the env (``illegal_action="raise"``), its record and a coach.

    Args:
        ruleset: a preset name or a rules YAML path; seed: the game's seed (same seed,
            same dice).
        coach: an agent (``act``, optional ``explain``) for hints, or None.
        player: the record's player name.

    Raises:
        RulesetError / OSError: as :class:`~jamb_env.JambEnv`.
    """

    to_move = 0

    def __init__(self, ruleset, seed: int, coach=None, player: str = HUMAN):
        self.env = JambEnv(ruleset, illegal_action="raise")
        self.env.reset(seed=seed)
        self.record = GameRecord(ruleset=record_name(ruleset, self.env.ruleset), seed=seed, player=player)
        self.coach = coach

    @property
    def scores(self) -> list[int]:
        return [int(self.env.score)]

    def view(self, reader=None):
        """The env-like view of the player to move (the env itself)."""
        return self.env

    def apply(self, action: int) -> None:
        """Apply a legal action and record it (IllegalActionError for an illegal one)."""
        self.record.play(self.env, action)

    def load(self, record: GameRecord) -> None:
        """Go on from ``record``: its actions replayed and checked
        (:func:`jamb_env.replay.records.replay`; RecordError when it does not replay),
        each recorded again from the engine."""
        for _ in replay(record, self.env, into=self.record):
            pass


class MatchGame(Commands):
    """A multiplayer game: each seat a person (``"human"``) or an agent (``policies[p]``,
    ``act(view, observation, mask)``, moving when :meth:`agent_move` is called). Keeps a
    :class:`~jamb_env.replay.records.MatchRecord`.

    Args:
        ruleset, seed: the game (same seed, same seating and dice).
        players: the seats' names, 2..5, in seat order (``player_0`` first).
        scoring: "separate" or "shared" (:mod:`jamb_env.rules.match`).
        policies: seat -> agent, for every seat that is not ``"human"``.
        coach: an agent for hints, or None.

    Raises:
        ValueError / RulesetError: as :class:`jamb_env.multiplayer.raw_env`, or a seat
            without a policy.
    """

    def __init__(
        self, ruleset, seed: int, players: Sequence[str], scoring: str = "separate", policies=None, coach=None
    ):
        from jamb_env.engine.observation import encoder
        from jamb_env.multiplayer import raw_env

        self.aec = raw_env(ruleset=ruleset, num_players=len(players), scoring=scoring, reward="score")
        self.aec.reset(seed=seed)
        self.players = [str(p) for p in players]
        self.policies = dict(policies or {})
        missing = [p + 1 for p, name in enumerate(self.players) if name != HUMAN and p not in self.policies]
        if missing:
            raise ValueError(f"no agent for seat(s) {missing}")
        self.record = MatchRecord(
            ruleset=record_name(ruleset, self.aec.ruleset), seed=seed, players=list(self.players), scoring=scoring
        )
        self.coach = coach
        self._solo = encoder(self.aec.ruleset).size
        self._view, self._view_of = None, None

    @property
    def over(self) -> bool:
        return M.is_over(self.aec.ruleset, self.aec.match)

    @property
    def to_move(self) -> int:
        return self.aec.match.to_move

    @property
    def turn_key(self) -> tuple[int, int]:
        """(player to move, cells written on the sheet in play): changes with every turn."""
        ms = self.aec.match
        return ms.to_move, int(M.sheet_in_play(ms).turn)

    @property
    def scores(self) -> list[int]:
        return [int(s) for s in M.scores(self.aec.ruleset, self.aec.match)]

    def _seen(self, policy, full: np.ndarray) -> np.ndarray:
        """What ``policy`` reads: the whole multiplayer observation for a model trained on
        a seat, else its solitaire part (as :func:`agents.evaluation.matches.play_match`)."""
        return full if getattr(policy, "observation_size", None) == len(full) else full[: self._solo]

    def view(self, reader=None):
        """The player to move's view (:meth:`jamb_env.multiplayer.raw_env.seat_view`:
        ``ruleset``, ``game``, ``score``, ``action_masks()``) with ``observe()`` giving
        what ``reader`` (an agent, or None) reads."""
        agent = self.aec.possible_agents[self.aec.match.to_move]
        view = self.aec.seat_view(agent)
        seen = self._seen(reader, self.aec.observe(agent)["observation"])
        view.observe = lambda: seen.copy()
        return view

    @property
    def env(self):
        """:meth:`view` for the coach, rebuilt when the game moves on."""
        if self._view_of is not self.aec.match:
            self._view, self._view_of = self.view(self.coach), self.aec.match
        return self._view

    def apply(self, action: int) -> None:
        """Apply the player to move's legal action and record it."""
        self.record.play(self.aec, action)

    def agent_move(self) -> None:
        """The agent of the seat to move plays one action."""
        policy = self.policies[self.to_move]
        agent = self.aec.possible_agents[self.to_move]
        obs = self.aec.observe(agent)
        view = self.aec.seat_view(agent)
        self.apply(int(policy.act(view, self._seen(policy, obs["observation"]), obs["action_mask"].astype(bool))))

    def load(self, record: MatchRecord) -> None:
        """Go on from ``record``: replayed and checked
        (:func:`jamb_env.replay.records.replay_match`), each step recorded again."""
        for _ in replay_match(record, self.aec, into=self.record):
            pass


def _shown(word: str, most: int = 40) -> str:
    """A typed word as a refusal shows it: at most ``most`` characters (a pasted page is not echoed back whole)."""
    return word if len(word) <= most else word[:most] + "..."
