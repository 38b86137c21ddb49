"""Twelfth hostile round: files a user hands to jamb-play and jamb-plot.

Each case failed before its fix: the in-game ``save FILE`` command of ``jamb-play`` (a
solitaire game or a match) wrote over any existing file, another saved game or not,
where ``--save FILE`` refuses it (round 10);
"""

from __future__ import annotations

import io

from rich.console import Console

from jamb_env.play import MatchSession, PlaySession


# ---------------------------------------------------------------------- the in-game save FILE over an existing file
def test_the_in_game_save_command_refuses_to_replace_an_existing_file(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"type": "game", "format": 1, "ruleset": "classic", "seed": 7, "env": "Jamb-v1", "player": "human"}\n')
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n")
    before = {p: p.read_text() for p in (other, notes)}
    out = io.StringIO()
    console = Console(file=out, width=200)
    own, fresh = tmp_path / "own.jsonl", tmp_path / "fresh.jsonl"
    for session in (PlaySession("classic", 1, console=console),
                    MatchSession("classic", 1, ["human", "human"], console=console)):
        for path in (other, notes):  # before: "saved to ..." and the file replaced by this game
            session.handle(f"save {path}", save_path=own)
        assert {p: p.read_text() for p in (other, notes)} == before
        assert out.getvalue().count("the file exists") == 2
        out.truncate(0), out.seek(0)
        session.handle(f"save {fresh}", save_path=own)  # a new file, then the same one again: saved
        session.handle(f"save {fresh}", save_path=own)
        session.handle(f"save {own}", save_path=own)   # the session's own file
        assert out.getvalue().count("saved to") == 3 and "exists" not in out.getvalue()
        out.truncate(0), out.seek(0)
        fresh.unlink(), own.unlink()
