"""A terminal game session for people: commands, the sheet drawn with rich, save and load.

Commands (typed at the prompt; ids as RULES.md §1, unique prefixes accepted, rows 1-6 for
ones..sixes, positions 1..n are the dice as shown, sorted)::

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
    help, quit

Every invalid command gets a message that says why; the game state never changes on one.

The commands work on any env-like object with ``ruleset`` and ``game`` (the
:class:`~jamb_env.rules.GameState` of the player to move; :class:`CommandSession`):
:class:`PlaySession` plays a solitaire :class:`~jamb_env.JambEnv`, :class:`MatchSession`
a hot-seat multiplayer game (:mod:`jamb_env.multiplayer`) where each seat is a person
typing these commands or an agent that moves by itself.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from rich.columns import Columns
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from jamb_env import rules as core
from jamb_env.env import JambEnv
from jamb_env.render.sheet import jokers_text, printable, sheet_view
from jamb_env.replay.records import GameRecord, MatchRecord
from jamb_env.rules import match as M
from jamb_env.rules.tables import UPPER_ROWS
from jamb_env.utils.errors import IllegalActionError
from jamb_env.utils.files import check_new_file, same_file

ROW_ALIASES = {str(i + 1): row for i, row in enumerate(UPPER_ROWS)}


def shown(text: object) -> str:
    """``text`` for rich markup, safe on a terminal: control characters and the like as
    visible escapes (:func:`jamb_env.render.sheet.printable`), markup brackets escaped. Every
    string from a file (a ruleset's names, a record's players and step texts, a path, an
    error message) goes through this before rich prints it."""
    return escape(printable(text))


class CommandError(ValueError):
    """An invalid command; the message says what was wrong and what is allowed."""


#: the colour of each seat's marks on a shared sheet (P1..P5)
PLAYER_COLOURS = ("cyan", "magenta", "bright_red", "bright_blue", "dark_orange")


def sheet_table(
    env: JambEnv,
    *,
    title: str | None = None,
    caption: str | None = None,
    owner: np.ndarray | None = None,
    highlight: bool = False,
    awards: Sequence[tuple[int, int]] | None = None,
    fixed_width: bool = False,
) -> Table:
    """The scoresheet as a rich Table: written values, open cells (``○`` and the value a
    write gets now), announceable cells (``a``), totals (from :func:`render.sheet_view`).
    ``env``: anything with ``ruleset``, ``game``, ``legal_mask()`` and ``score``.

    For a multiplayer board: ``title`` (markup) above, ``caption`` (markup) instead of
    the score line, ``highlight`` a bold border (the player to move), ``owner`` (int
    ``(C, R)``, -1 where empty: a shared sheet) marks each written cell with its writer
    (``P1``.., each seat its colour), ``awards`` (per column: the player it goes to or
    -1, and its total) adds a ``goes to`` row. ``fixed_width``: every column as wide as
    its widest entry, measured once here (drawing several tables is much faster)."""
    rules = env.ruleset
    view = sheet_view(rules, env.game, env.legal_mask())
    table = Table(
        caption=caption if caption is not None else f"{shown(rules.title)}: {env.score} points", caption_justify="left"
    )
    if title is not None:
        table.title, table.title_justify = title, "left"
    if highlight:
        table.border_style = "bold"
    table.add_column("row")
    for col in rules.columns:
        table.add_column(shown(col), justify="right")
    style = {"open": "[bold green]○ {}[/]", "announce": "[yellow]a[/]", "closed": "[dim]·[/]", "written": "{}"}
    for r, (row, line) in enumerate(zip(rules.rows, view["cells"])):
        cells = [style[state].format(v) for state, v in line]
        if owner is not None:
            cells = [
                f"{text} {player_mark(int(owner[c, r]))}" if state == "written" and owner[c, r] >= 0 else text
                for c, (text, (state, _)) in enumerate(zip(cells, line))
            ]
        table.add_row(shown(row), *cells, end_section=row in ("sixes", "min"))
    for i, name in enumerate(("upper", "bonus", "difference", "lower")):
        table.add_row(f"[italic]{name}[/]", *(str(p[i]) for p in view["parts"]))
    table.add_row("[bold]total[/]", *(f"[bold]{view['totals'][c]}[/]" for c in rules.columns))
    if awards is not None:
        table.add_row("[italic]goes to[/]", *(player_mark(p) if p >= 0 else "-" for p, _ in awards))
    if fixed_width:
        for column, cells in zip(table.columns, [[table.columns[0].header]] + [[shown(c)] for c in rules.columns]):
            column.width = max(Text.from_markup(str(c)).cell_len for c in [*cells, *column.cells])
    return table


def player_mark(p: int) -> str:
    """``P1``.. in the seat's colour (markup)."""
    return f"[{PLAYER_COLOURS[p % len(PLAYER_COLOURS)]}]P{p + 1}[/]"


def status_line(env: JambEnv) -> str:
    game = env.game
    if core.is_over(env.ruleset, game):
        return f"[bold]Game over: {env.score} points.[/]"
    dice = "  ".join(f"{i + 1}:[bold]\\[{d}][/]" for i, d in enumerate(game.dice.tolist()))
    text = f"turn {game.turn + 1}/{env.ruleset.num_cells}   roll {game.roll}/{core.max_rolls(env.ruleset, game)}   dice {dice}"
    if game.announced >= 0:
        text += f"   announced [yellow]{shown('/'.join(env.ruleset.cell_name(game.announced)))}[/]"
    if game.answer_due >= 0:
        text += f"   answer due: [yellow]{shown(env.ruleset.rows[game.answer_due])}[/]"
    if game.copy_row >= 0:
        text += f"   copy offers: [yellow]{shown(env.ruleset.rows[game.copy_row])}[/]"
    jokers = jokers_text(env.ruleset, game)
    if jokers is not None:
        text += f"   jokers left: {jokers}"
    return text


class CommandSession:
    """The commands of a terminal game (module docstring) on ``self.env``: any env-like
    object with ``ruleset`` and ``game`` (the :class:`~jamb_env.rules.GameState` the
    player to move plays on); the legal actions come from the rules of that state.

    A subclass sets ``env``, ``console``, ``coach`` (or None) and ``record`` (with
    ``write(path)`` and ``steps``), and provides :meth:`apply` and :meth:`draw`;
    :meth:`handle` runs one command line.
    """

    env = None
    console: Console
    coach = None

    # ------------------------------------------------------------------ actions
    @property
    def over(self) -> bool:
        return core.is_over(self.env.ruleset, self.env.game)

    def apply(self, action: int) -> None:  # pragma: no cover - every session has its own
        raise NotImplementedError

    def parse(self, line: str) -> int | str | None:
        """The env action of a command line, or a meta command name; CommandError if invalid."""
        words = line.strip().lower().split()
        if not words:
            return None
        cmd, args = words[0], words[1:]
        meta = {
            "help": "help",
            "?": "help",
            "sheet": "sheet",
            "hint": "hint",
            "quit": "quit",
            "exit": "quit",
            "q": "quit",
            "save": "save",
        }
        if cmd in meta:
            return meta[cmd]
        if self.over:
            raise CommandError("the game is over; type quit (or save)")
        rules = self.env.ruleset
        if cmd in ("keep", "k", "reroll", "r", "roll"):
            positions = self._positions(args)
            if cmd in ("keep", "k"):
                keep = positions
            else:
                keep = [i for i in range(rules.dice) if i not in positions] if args else []
            return self._checked(self._hold_action(keep))
        if cmd in ("announce", "a"):
            if len(args) != 1:
                raise CommandError("usage: announce ROW (e.g. announce full)")
            cols = core.layout(rules).announce_columns
            if not cols:
                raise CommandError(f"{rules.name} has no announce column")
            row = self._row(args[0])
            return self._checked(core.encode(rules, core.Action("announce", column=rules.columns[cols[0]], row=row)))
        if cmd in ("write", "w"):
            if len(args) == 2:
                column, row = self._column(args[0]), self._row(args[1])
            elif len(args) == 1:
                row = self._row(args[0])
                mask = core.legal_mask(rules, self.env.game)
                options = [
                    c for c in rules.columns if mask[core.encode(rules, core.Action("write", column=c, row=row))]
                ]
                if len(options) != 1:
                    raise CommandError(f"say which column: {row} is open in {', '.join(options) or 'no column'} now")
                column = options[0]
            else:
                raise CommandError("usage: write COLUMN ROW (e.g. write down ones)")
            return self._checked(core.encode(rules, core.Action("write", column=column, row=row)))
        if cmd in ("joker", "j"):
            return self._checked(self._joker_action(args))
        if cmd == "basket":
            self._need_jokers("basket")
            if args:
                raise CommandError("usage: basket (no arguments: all dice are rolled again as the turn's roll 1)")
            return self._checked(core.encode(rules, core.Action("basket")))
        extra = ", joker, basket" if rules.jokers else ""
        raise CommandError(
            f"unknown command {cmd!r}; commands: keep, reroll, announce, write{extra}, hint, sheet, save, help, quit"
        )

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
        usage = "usage: joker V DIE (the fixed joker V on die DIE, e.g. joker 6 2) or joker J V DIE (a free joker J set to V)"
        free = bool(args) and args[0] == "j"
        if len(args) != (3 if free else 2):
            raise CommandError(usage)
        value, die = args[-2], args[-1]
        if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= 6:
            raise CommandError(f"a joker's value is a face 1..6, got {value!r}; {usage}")
        i = self._positions([die])[0]
        dice = self.env.game.dice
        i = int(np.flatnonzero(dice == dice[i])[0]) if self.env.game.roll > 0 else i
        rules = self.env.ruleset
        return core.encode(rules, core.Action("joker", joker="J" if free else value, die=i, value=int(value)))

    def _checked(self, action: int) -> int:
        rules = self.env.ruleset
        reason = core.why_illegal(rules, self.env.game, action)
        if reason is not None:
            raise CommandError(f"{core.action_to_string(rules, action)} is not allowed: {reason}")
        return action

    def _positions(self, args: list[str]) -> list[int]:
        n = self.env.ruleset.dice
        out = []
        for a in args:
            if not (a.isascii() and a.isdigit()) or not 1 <= int(a) <= n:
                raise CommandError(f"dice positions are 1..{n} (as shown), got {a!r}")
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
            raise CommandError(f"unknown or ambiguous row {word!r}; rows: {', '.join(rows)} (1-6 for ones..sixes)")
        return hits[0]

    def _column(self, word: str) -> str:
        cols = self.env.ruleset.columns
        if word in cols:
            return word
        hits = [c for c in cols if c.startswith(word)]
        if len(hits) != 1:
            raise CommandError(f"unknown or ambiguous column {word!r}; columns: {', '.join(cols)}")
        return hits[0]

    # ------------------------------------------------------------------ drawing and coaching
    def draw(self) -> None:  # pragma: no cover - every session has its own
        raise NotImplementedError

    def hint(self) -> None:
        if self.coach is None:
            self.console.print("no coach: start with --coach greedy|expectimax|optimal|columnwise|ppo|hybrid|MODEL.zip")
            return
        env = self.env
        try:
            action = self.coach.act(env, env.observe(), env.action_masks())
            options = getattr(self.coach, "explain", lambda e: [])(env)[:4]
        except ValueError as exc:
            self.console.print(f"[red]the coach cannot advise here: {shown(str(exc))}[/]")
            return
        self.console.print(f"coach ({shown(str(self.coach.name))}): [bold]{shown(self.command_for(action))}[/]")
        for a, value in options:
            self.console.print(f"   {printable(self.command_for(a)):32s} {value:9.2f}", markup=False)
        if options:
            self.console.print(f"   ({self.coach.explain_unit})", markup=False)

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

    def save(self, path: str | Path, quiet: bool = False) -> bool:
        """Write the game record to ``path``; on failure say why and keep playing."""
        try:
            self.record.write(path)  # atomic: a failed save leaves the previous one intact
        except OSError as exc:
            why = str(exc) if exc.errno is None else f"{exc.strerror or exc} ({exc.filename or path})"
            self.console.print(f"[red]could not save to {shown(str(path))}: {shown(why)}[/] (save FILE to try another)")
            return False
        if not quiet:
            self.console.print(f"saved to {shown(str(path))} (resume with --load {shown(str(path))})")
        return True

    def _may_replace(self, target: str, save_path: str | Path | None) -> bool:
        """Whether ``save FILE`` may write ``target``: the session's own save file, one
        this session saved to before, or a new or empty file (:func:`check_new_file`: never
        another game or any other file); else it says why and returns False."""
        if (save_path and same_file(target, save_path)) or os.path.realpath(target) in getattr(self, "_saved_to", ()):
            return True
        try:
            check_new_file(target, f"save {target}")
        except OSError as exc:
            self.console.print(f"[red]{shown(str(exc))}[/] (save FILE to try another)")
            return False
        return True

    def handle(self, line: str, save_path: str | Path | None = None) -> str | None:
        """Run one command line: a move (applied, shown, saved to ``save_path``), or a meta
        command; an invalid one gets its message. Returns ``"quit"``, ``"move"`` or None."""
        try:
            cmd = self.parse(line)
        except CommandError as exc:
            self.console.print(f"[red]{shown(str(exc))}[/]")
            return None
        if cmd is None:
            return None
        if cmd == "help":
            self.console.print(__doc__.split("::", 1)[1].split("Every invalid")[0].rstrip(), markup=False)
        elif cmd == "sheet":
            self.draw()
        elif cmd == "hint":
            self.hint()
        elif cmd == "save":
            words = line.strip().split(None, 1)
            target = words[1].strip() if len(words) > 1 else save_path
            if not target:
                self.console.print("[red]save where? save FILE (or start with --save FILE)[/]")
            elif self._may_replace(target, save_path) and self.save(target):
                self._saved_to = {*getattr(self, "_saved_to", ()), os.path.realpath(target)}
        elif cmd == "quit":
            return "quit"
        else:
            try:
                self.apply(cmd)
            except IllegalActionError as exc:  # defensive: parse already checked
                self.console.print(f"[red]{shown(str(exc))}[/]")
                return None
            self.console.print(f"> {shown(self.record.steps[-1]['text'])}  (+{self.record.steps[-1]['reward']:g})")
            if save_path:
                self.save(save_path, quiet=True)
            self.draw()
            return "move"
        return None


class PlaySession(CommandSession):
    """One game: parses commands into env actions and keeps the record.

    Args:
        ruleset, seed: the game (same seed, same dice).
        console: where to draw; coach: an agent (``act``, optional ``explain``) for hints.
    """

    def __init__(self, ruleset: str, seed: int, console: Console | None = None, coach=None, player: str = "human"):
        self.env = JambEnv(ruleset, illegal_action="raise")
        self.env.reset(seed=seed)
        self.record = GameRecord(
            ruleset=self.env.ruleset.name if not str(ruleset).endswith((".yaml", ".yml")) else str(ruleset),
            seed=seed,
            player=player,
        )
        self.console = console or Console(emoji=False)
        self.coach = coach

    def apply(self, action: int) -> None:
        """Apply a legal action and record it."""
        self.record.play(self.env, action)

    def draw(self) -> None:
        self.console.print(sheet_table(self.env))
        self.console.print(status_line(self.env))

    # ------------------------------------------------------------------ loop
    def run(self, read: Callable[[], str], save_path: str | Path | None = None) -> int:
        """Play until the game ends, ``quit`` or end of input; return the score."""
        self.draw()
        try:
            self._loop(read, save_path)
        finally:  # game over, quit, end of input or an interrupt (a signal too): one save path, saved first
            saved = self.save(save_path, quiet=True) if save_path else False
            if self.over:
                self.console.print(f"[bold]Game over: {self.env.score} points.[/]")
            if saved:
                self.console.print(f"saved to {shown(str(save_path))} (resume with --load {shown(str(save_path))})")
        return self.env.score

    def _loop(self, read: Callable[[], str], save_path: str | Path | None) -> None:
        while not self.over:
            try:
                line = read()
            except EOFError:
                self.console.print("end of input")
                return
            if self.handle(line, save_path) == "quit":
                return


# ---------------------------------------------------------------------- multiplayer
#: the seat name of a person in a match (every other name is an agent)
HUMAN = "human"


def _seat(p: int, players: Sequence[str]) -> str:
    """``P1 name`` (markup, the name escaped)."""
    return f"{player_mark(p)} {shown(players[p])}"


def match_board(env, players: Sequence[str]) -> Columns | Table:
    """Every sheet of a match (``env``: a :class:`jamb_env.multiplayer.raw_env`) as rich
    tables: separate sheets side by side (wrapped to the width), the player to move's
    titled ``▶ ... to move`` with a bold border; or the shared sheet with each written
    cell's writer (``P1``..) and the player each column goes to now."""
    from jamb_env.multiplayer import SeatView

    rules, ms = env.ruleset, env.match
    over = M.is_over(rules, ms)
    scores = M.scores(rules, ms)
    if ms.owner is None:
        tables = []
        for p, st in enumerate(ms.sheets):
            moving = p == ms.to_move and not over
            title = f"[bold]▶ {_seat(p, players)} (to move)[/]" if moving else _seat(p, players)
            tables.append(
                sheet_table(
                    SeatView(rules, st, scores[p], core.legal_mask(rules, st)),
                    title=title,
                    caption=f"{scores[p]} points",
                    highlight=moving,
                    fixed_width=True,
                )
            )
        return Columns(tables)
    st = ms.sheets[0]
    who = "" if over else f": {_seat(ms.to_move, players)} to move"
    return sheet_table(
        SeatView(rules, st, scores[ms.to_move], core.legal_mask(rules, st)),
        title=f"[bold]shared sheet{who}[/]",
        caption="goes to: most non-zero cells",
        owner=ms.owner,
        awards=M.column_awards(rules, ms),
        highlight=not over,
        fixed_width=True,
    )


def match_scores(env, players: Sequence[str]) -> str:
    """``scores: P1 human 120  P2 greedy 98`` (markup)."""
    scores = M.scores(env.ruleset, env.match)
    return "scores: " + "   ".join(f"{_seat(p, players)} [bold]{s}[/]" for p, s in enumerate(scores))


def match_status(env, players: Sequence[str]) -> str:
    """Every score, then who is to move with their turn, roll and dice (markup)."""
    rules, ms = env.ruleset, env.match
    line = match_scores(env, players)
    if M.is_over(rules, ms):
        return f"{line}\n[bold]Game over.[/]"
    from jamb_env.multiplayer import SeatView

    p = ms.to_move
    view = SeatView(rules, M.sheet_in_play(ms), 0, core.legal_mask(rules, M.sheet_in_play(ms)))
    return f"{line}\n[bold]{_seat(p, players)} to move[/]   {status_line(view)}"


def match_step_line(step: dict, players: Sequence[str]) -> str:
    """One recorded match step in words (markup): who, turn and roll, the dice it was
    chosen on, the action and, for a write, the points."""
    p = int(step["player"])
    where = (
        f", turn {step['turn'] + 1} roll {step['roll']}"
        if isinstance(step.get("turn"), int) and isinstance(step.get("roll"), int)
        else ""
    )
    dice = f": dice {' '.join(str(d) for d in step['dice'])}" if step.get("dice") else ""
    text = str(step.get("text", step["action"]))
    points = (
        f"  ({step['reward']:+g})" if text.startswith("write") and isinstance(step.get("reward"), (int, float)) else ""
    )
    return f"{_seat(p, players)}{where}{dice} → [bold]{shown(text)}[/]{points}"


def match_result(scores: Sequence[int], players: Sequence[str]) -> str:
    """The final scores and the winner(s) (markup)."""
    outcome = M.result(scores)  # the one definition of who won by how much
    winners = [int(p) for p in np.flatnonzero(outcome.win > 0)]
    final = "   ".join(f"{_seat(p, players)} {s}" for p, s in enumerate(scores))
    if len(winners) == 1:
        who = f"Winner: {_seat(winners[0], players)} (by {int(outcome.margin[winners[0]])} points)"
    else:
        who = f"Winners (tied at {max(scores)}): " + ", ".join(_seat(p, players) for p in winners)
    return f"[bold]Final scores:[/] {final}\n[bold]{who}[/]"


class MatchSession(CommandSession):
    """A hot-seat multiplayer game in the terminal: each seat a person (``"human"``,
    typing the module's commands) or an agent (``policies[p]``, ``act(view, observation,
    mask)``, moving by itself, ``delay`` seconds apart). Keeps a
    :class:`~jamb_env.replay.records.MatchRecord`.

    Args:
        ruleset, seed: the game (same seed, same seating and dice).
        players: the seats' names, 2..5, in seat order (``player_0`` first).
        scoring: "separate" or "shared" (:mod:`jamb_env.rules.match`).
        policies: seat -> agent, for every seat that is not ``"human"``.
        console: where to draw; coach: an agent for ``hint``; sleep: the pause function.

    Raises:
        ValueError / RulesetError: as :class:`jamb_env.multiplayer.raw_env`, or a seat
            without a policy.
    """

    def __init__(
        self,
        ruleset,
        seed: int,
        players: Sequence[str],
        scoring: str = "separate",
        policies: dict | None = None,
        console: Console | None = None,
        coach=None,
        delay: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
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
        name = self.aec.ruleset.name if not str(ruleset).endswith((".yaml", ".yml")) else str(ruleset)
        self.record = MatchRecord(ruleset=name, seed=seed, players=list(self.players), scoring=scoring)
        self.console = console or Console(emoji=False)
        self.coach, self.delay, self.sleep = coach, float(delay), sleep
        self._solo = encoder(self.aec.ruleset).size
        self._view, self._view_of = None, None
        self._headed = None  # the (player, match state) whose turn header was printed

    # ------------------------------------------------------------------ state
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

    @property
    def env(self):
        """The player to move's view (:meth:`jamb_env.multiplayer.raw_env.seat_view`:
        ``ruleset``, ``game``, ``score``, ``action_masks()``), with ``observe()`` for the
        coach; rebuilt when the game moves on."""
        ms = self.aec.match
        if self._view_of is not ms:
            agent = self.aec.possible_agents[ms.to_move]
            view = self.aec.seat_view(agent)
            full = self.aec.observe(agent)["observation"]
            seen = self._seen(self.coach, full)
            view.observe = lambda: seen.copy()
            self._view, self._view_of = view, ms
        return self._view

    # ------------------------------------------------------------------ moves
    def apply(self, action: int) -> None:
        """Apply the player to move's legal action and record it."""
        self.record.play(self.aec, action)

    def agent_move(self) -> None:
        """The agent of the seat to move plays one action."""
        ms = self.aec.match
        policy = self.policies[ms.to_move]
        agent = self.aec.possible_agents[ms.to_move]
        obs = self.aec.observe(agent)
        mask = obs["action_mask"].astype(bool)
        view = self.aec.seat_view(agent)
        self.apply(int(policy.act(view, self._seen(policy, obs["observation"]), mask)))

    def load(self, record: MatchRecord) -> None:
        """Replay ``record``'s steps (checked, :func:`jamb_env.replay.records.replay_match`) into
        this session, to go on from there."""
        from jamb_env.replay.records import replay_match

        for _, step in replay_match(record, self.aec):
            self.record.steps.append(dict(step))
        if self.over:
            self.record.final_scores = self.scores

    # ------------------------------------------------------------------ drawing
    def draw(self) -> None:
        """A header when a new turn has begun, every sheet and every score."""
        if not self.over and self._headed != self.turn_key:
            p = self.to_move
            kind = "your" if self.players[p] == HUMAN else "agent's"
            self.console.rule(f"{_seat(p, self.players)}: {kind} turn", align="left")
        self._headed = self.turn_key
        self.console.print(match_board(self.aec, self.players))
        self.console.print(match_status(self.aec, self.players))

    def prompt(self) -> str:
        return f"[bold]{_seat(self.to_move, self.players)} > [/]"

    # ------------------------------------------------------------------ loop
    def run(self, read: Callable[[str], str] | None = None, save_path: str | Path | None = None) -> list[int]:
        """Play until the game ends, ``quit`` or end of input (``read(prompt)`` gives a
        person's next command line); return the scores. Saves to ``save_path`` after
        every move and on the way out (an interrupt included)."""
        self.draw()
        try:
            self._loop(read, save_path)
        finally:  # saved first: an interrupt (a signal too) or a terminal that is gone cannot lose it
            saved = self.save(save_path, quiet=True) if save_path else False
            if self.over:
                self.console.print(match_result(self.scores, self.players))
            else:
                self.console.print(
                    f"the match stops after {len(self.record.steps)} moves; {match_scores(self.aec, self.players)}"
                )
            if saved:
                self.console.print(f"saved to {shown(str(save_path))} (resume with --load {shown(str(save_path))})")
        return self.scores

    def _loop(self, read, save_path) -> None:
        while not self.over:
            if self.to_move in self.policies:
                before = self.turn_key
                self.agent_move()
                self.console.print(match_step_line(self.record.steps[-1], self.players))
                if save_path:
                    self.save(save_path, quiet=True)
                if self.over or self.turn_key != before:
                    self.draw()  # a turn ended: the board, and whose turn it is now
                if self.delay > 0:
                    self.sleep(self.delay)
                continue
            if read is None:
                raise ValueError("a person's seat needs an input function")
            try:
                line = read(self.prompt())
            except EOFError:
                self.console.print("end of input")
                return
            if self.handle(line, save_path) == "quit":
                return
