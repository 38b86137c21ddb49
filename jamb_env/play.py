"""A terminal game session for people: commands, the sheet drawn with rich, save and load.

Commands (typed at the prompt; ids as RULES.md §1, unique prefixes accepted, rows 1-6 for
ones..sixes, positions 1..n are the dice as shown, sorted)::

    keep 1 3 4        re-roll every die except positions 1, 3, 4   (keep = re-roll all)
    reroll 2 5        re-roll positions 2 and 5                    (reroll = all dice)
    announce full     announce a cell of the announce column (right after roll 1)
    write free full   write a cell (column row); "write full" when only one column can take that row
    hint              the coach's advice (with --coach)
    sheet             draw the sheet again
    save [FILE]       save the game (a replayable record)
    help, quit

Every invalid command gets a message that says why; the game state never changes on one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import rules as core
from .env import JambEnv
from .errors import IllegalActionError
from .records import GameRecord
from .render import sheet_view
from .rules.tables import UPPER_ROWS

ROW_ALIASES = {str(i + 1): row for i, row in enumerate(UPPER_ROWS)}


class CommandError(ValueError):
    """An invalid command; the message says what was wrong and what is allowed."""


def sheet_table(env: JambEnv) -> Table:
    """The scoresheet as a rich Table: written values, open cells (``○`` and the value a
    write gets now), announceable cells (``a``), totals (from :func:`render.sheet_view`)."""
    rules = env.ruleset
    view = sheet_view(rules, env.game, env.legal_mask())
    table = Table(caption=f"{escape(rules.title)}: {env.score} points", caption_justify="left")
    table.add_column("row")
    for col in rules.columns:
        table.add_column(escape(col), justify="right")
    style = {"open": "[bold green]○ {}[/]", "announce": "[yellow]a[/]", "closed": "[dim]·[/]", "written": "{}"}
    for row, line in zip(rules.rows, view["cells"]):
        table.add_row(escape(row), *(style[state].format(v) for state, v in line), end_section=row in ("sixes", "min"))
    for i, name in enumerate(("upper", "bonus", "difference", "lower")):
        table.add_row(f"[italic]{name}[/]", *(str(p[i]) for p in view["parts"]))
    table.add_row("[bold]total[/]", *(f"[bold]{view['totals'][c]}[/]" for c in rules.columns))
    return table


def status_line(env: JambEnv) -> str:
    game = env.game
    if core.is_over(env.ruleset, game):
        return f"[bold]Game over: {env.score} points.[/]"
    dice = "  ".join(f"{i + 1}:[bold]\\[{d}][/]" for i, d in enumerate(game.dice.tolist()))
    text = f"turn {game.turn + 1}/{env.ruleset.num_cells}   roll {game.roll}/{core.max_rolls(env.ruleset, game)}   dice {dice}"
    if game.announced >= 0:
        text += f"   announced [yellow]{escape('/'.join(env.ruleset.cell_name(game.announced)))}[/]"
    if game.answer_due >= 0:
        text += f"   answer due: [yellow]{escape(env.ruleset.rows[game.answer_due])}[/]"
    return text


class PlaySession:
    """One game: parses commands into env actions and keeps the record.

    Args:
        ruleset, seed: the game (same seed, same dice).
        console: where to draw; coach: an agent (``act``, optional ``explain``) for hints.
    """

    def __init__(self, ruleset: str, seed: int, console: Console | None = None, coach=None, player: str = "human"):
        self.env = JambEnv(ruleset, illegal_action="raise")
        self.env.reset(seed=seed)
        self.record = GameRecord(ruleset=self.env.ruleset.name if not str(ruleset).endswith((".yaml", ".yml")) else str(ruleset), seed=seed, player=player)
        self.console = console or Console()
        self.coach = coach

    # ------------------------------------------------------------------ actions
    @property
    def over(self) -> bool:
        return core.is_over(self.env.ruleset, self.env.game)

    def apply(self, action: int) -> None:
        """Apply a legal action and record it."""
        self.record.play(self.env, action)

    def parse(self, line: str) -> int | str | None:
        """The env action of a command line, or a meta command name; CommandError if invalid."""
        words = line.strip().lower().split()
        if not words:
            return None
        cmd, args = words[0], words[1:]
        meta = {"help": "help", "?": "help", "sheet": "sheet", "hint": "hint", "quit": "quit", "exit": "quit", "q": "quit", "save": "save"}
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
            cols = [c for c in rules.columns if c == "announce"]
            if not cols:
                raise CommandError(f"{rules.name} has no announce column")
            row = self._row(args[0])
            return self._checked(self.env.encode_action(core.Action("announce", column="announce", row=row)))
        if cmd in ("write", "w"):
            if len(args) == 2:
                column, row = self._column(args[0]), self._row(args[1])
            elif len(args) == 1:
                row = self._row(args[0])
                options = [c for c in rules.columns if self.env.action_masks()[self.env.encode_action(core.Action("write", column=c, row=row))]]
                if len(options) != 1:
                    raise CommandError(f"say which column: {row} is open in {', '.join(options) or 'no column'} now")
                column = options[0]
            else:
                raise CommandError("usage: write COLUMN ROW (e.g. write down ones)")
            return self._checked(self.env.encode_action(core.Action("write", column=column, row=row)))
        raise CommandError(f"unknown command {cmd!r}; commands: keep, reroll, announce, write, hint, sheet, save, help, quit")

    def _checked(self, action: int) -> int:
        reason = core.why_illegal(self.env.ruleset, self.env.game, action)
        if reason is not None:
            raise CommandError(f"{self.env.action_to_string(action)} is not allowed: {reason}")
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
    def draw(self) -> None:
        self.console.print(sheet_table(self.env))
        self.console.print(status_line(self.env))

    def hint(self) -> None:
        if self.coach is None:
            self.console.print("no coach: start with --coach greedy|expectimax|optimal|columnwise|ppo|hybrid|MODEL.zip")
            return
        env = self.env
        try:
            action = self.coach.act(env, env.observe(), env.action_masks())
            options = getattr(self.coach, "explain", lambda e: [])(env)[:4]
        except ValueError as exc:
            self.console.print(f"[red]the coach cannot advise here: {escape(str(exc))}[/]")
            return
        self.console.print(f"coach ({escape(str(self.coach.name))}): [bold]{escape(self.command_for(action))}[/]")
        for a, value in options:
            self.console.print(f"   {self.command_for(a):32s} {value:9.2f}", markup=False)
        if options:
            self.console.print(f"   ({self.coach.explain_unit})", markup=False)

    def command_for(self, action: int) -> str:
        """The command a person types for ``action`` (holds as dice positions)."""
        act = self.env.decode_action(action)
        if act.kind == "reroll":
            kept = [str(i + 1) for i, k in enumerate(act.keep) if k]
            return f"keep {' '.join(kept)}" if kept else "reroll"
        if act.kind == "announce":
            return f"announce {act.row}"
        return f"write {act.column} {act.row}"

    def save(self, path: str | Path, quiet: bool = False) -> bool:
        """Write the game record to ``path``; on failure say why and keep playing."""
        try:
            self.record.write(path)  # atomic: a failed save leaves the previous one intact
        except OSError as exc:
            why = str(exc) if exc.errno is None else f"{exc.strerror or exc} ({exc.filename or path})"
            self.console.print(f"[red]could not save to {escape(str(path))}: {escape(why)}[/] (save FILE to try another)")
            return False
        if not quiet:
            self.console.print(f"saved to {escape(str(path))} (resume with --load {escape(str(path))})")
        return True

    # ------------------------------------------------------------------ loop
    def run(self, read: Callable[[], str], save_path: str | Path | None = None) -> int:
        """Play until the game ends, ``quit`` or end of input; return the score."""
        self.draw()
        try:
            self._loop(read, save_path)
        finally:  # game over, quit, end of input or an interrupt: one save path
            if self.over:
                self.console.print(f"[bold]Game over: {self.env.score} points.[/]")
            if save_path:
                self.save(save_path)
        return self.env.score

    def _loop(self, read: Callable[[], str], save_path: str | Path | None) -> None:
        while not self.over:
            try:
                line = read()
            except EOFError:
                self.console.print("end of input")
                return
            try:
                cmd = self.parse(line)
            except CommandError as exc:
                self.console.print(f"[red]{escape(str(exc))}[/]")
                continue
            if cmd is None:
                continue
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
                else:
                    self.save(target)
            elif cmd == "quit":
                return
            else:
                try:
                    self.apply(cmd)
                except IllegalActionError as exc:  # defensive: parse already checked
                    self.console.print(f"[red]{escape(str(exc))}[/]")
                    continue
                self.console.print(f"> {escape(self.record.steps[-1]['text'])}  (+{self.record.steps[-1]['reward']:g})")
                if save_path:
                    self.save(save_path, quiet=True)
                self.draw()
