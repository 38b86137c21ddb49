"""The terminal game (``jamb-play``): the sheet drawn with rich, the commands typed at a
prompt, save and load.

The game itself (players, seats, the commands and what each does, the moves and the
record) is :mod:`agents.apps.session`, which ``jamb-web`` shares; this module draws it.
:class:`PlaySession` plays a solitaire :class:`~jamb_env.JambEnv`, :class:`MatchSession`
a hot-seat multiplayer game (:mod:`jamb_env.multiplayer`) where each seat is a person
typing the commands or an agent that moves by itself. Every invalid command gets a
message that says why; the game state never changes on one.
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

from agents.apps.session import COMMANDS, HUMAN, CommandError, MatchGame, SoloGame
from jamb_env import rules as core
from jamb_env.env import JambEnv
from jamb_env.render.sheet import jokers_text, printable, sheet_view
from jamb_env.rules import match as M
from jamb_env.utils.errors import IllegalActionError
from jamb_env.utils.files import FileChangedError, check_new_file, same_file, write_unless_changed

__all__ = ["HUMAN", "CommandError", "MatchSession", "PlaySession", "sheet_table", "shown", "status_line"]


def shown(text: object) -> str:
    """``text`` for rich markup, safe on a terminal: control characters and the like as
    visible escapes (:func:`jamb_env.render.sheet.printable`), markup brackets escaped. Every
    string from a file (a ruleset's names, a record's players and step texts, a path, an
    error message) goes through this before rich prints it."""
    return escape(printable(text))


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
    rolls = core.max_rolls(env.ruleset, game)
    text = f"turn {game.turn + 1}/{env.ruleset.num_cells}   roll {game.roll}/{rolls}   dice {dice}"
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


class TerminalCommands:
    """The terminal's side of a session of :mod:`agents.apps.session`: ``console`` (where
    it draws), :meth:`draw` (each session its own), ``hint``, ``save`` and :meth:`handle`,
    which runs one command line."""

    console: Console

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

    def remember(self, path: str | Path, stamp: tuple | None) -> None:
        """Note ``path`` as this session last wrote or read it (``stamp``: its
        :func:`~jamb_env.utils.files.change_stamp`): :meth:`save` never saves over another
        program's write since (another ``jamb-play --load`` of it, a jamb-web serving it)."""
        if not hasattr(self, "_disk"):
            self._disk: dict[str, tuple | None] = {}
        self._disk[os.path.realpath(path)] = stamp

    def save(self, path: str | Path, quiet: bool = False) -> bool:
        """Write the game record to ``path``; on failure say why and keep playing. A file that
        another program changed since this session saved or loaded it is not saved over."""
        known = getattr(self, "_disk", {}).get(os.path.realpath(path))
        try:  # atomic: a failed save leaves the previous one intact
            stamp = write_unless_changed(path, known, lambda: self.record.write(path))
        except FileChangedError:
            self.console.print(
                f"[red]could not save to {shown(str(path))}: another program changed it since this session saved or "
                "loaded it; its moves are kept[/] (save FILE to keep this game elsewhere)"
            )
            return False
        except OSError as exc:
            why = str(exc) if exc.errno is None else f"{exc.strerror or exc} ({exc.filename or path})"
            self.console.print(f"[red]could not save to {shown(str(path))}: {shown(why)}[/] (save FILE to try another)")
            return False
        self.remember(path, stamp)
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
            self.console.print(COMMANDS, markup=False)
        elif cmd == "sheet":
            self.draw()
        elif cmd == "hint":
            self.hint()
        elif cmd == "save":
            words = line.strip().split(None, 1)
            # a leading ~ is the home folder, as the shell reads --save ~/x.jsonl (no shell reads this line)
            target = os.path.expanduser(words[1].strip()) if len(words) > 1 else save_path
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


class PlaySession(TerminalCommands, SoloGame):
    """One game in the terminal (:class:`agents.apps.session.SoloGame` drawn here).

    Args:
        ruleset, seed: the game (same seed, same dice).
        console: where to draw; coach: an agent (``act``, optional ``explain``) for hints.
    """

    def __init__(self, ruleset: str, seed: int, console: Console | None = None, coach=None, player: str = HUMAN):
        SoloGame.__init__(self, ruleset, seed, coach=coach, player=player)
        self.console = console or Console(emoji=False)

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


class MatchSession(TerminalCommands, MatchGame):
    """A hot-seat multiplayer game in the terminal (:class:`agents.apps.session.MatchGame`
    drawn here): each seat a person (``"human"``, typing the commands) or an agent
    (``policies[p]``), which moves by itself ``delay`` seconds apart.

    Args:
        ruleset, seed, players, scoring, policies, coach: as :class:`MatchGame`.
        console: where to draw; sleep: the pause function.

    Raises:
        ValueError / RulesetError: as :class:`MatchGame`.
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
        MatchGame.__init__(self, ruleset, seed, players, scoring=scoring, policies=policies, coach=coach)
        self.console = console or Console(emoji=False)
        self.delay, self.sleep = float(delay), sleep
        self._headed = None  # the (player, match state) whose turn header was printed

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
