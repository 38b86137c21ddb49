"""The README and the docs/ pages: every Python snippet runs as written (each in a fresh
interpreter), the README stays short, and every relative link points at something.

The snippets are the ```python blocks of README.md and of every docs/*.md page, in order;
each runs in a new process from an empty folder (so nothing relies on the repository's
working directory), with numba single-threaded as in the rest of the suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import slow_after

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 300

FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _snippets():
    for page in PAGES:
        if page.name == "tools.md":  # tests/package/test_tools_page.py runs it, honouring its <!-- requires: -->
            continue
        text = _text(page)
        for match in FENCE.finditer(text):
            line = text[: match.start()].count("\n") + 2  # the first line of code
            yield pytest.param(page, line, match.group(1), id=f"{_name(page)}:{line}")


SNIPPETS = list(_snippets())


def test_the_pages_have_snippets():
    per_page = {_name(p): sum(1 for s in SNIPPETS if s.values[0] == p) for p in PAGES}
    assert per_page["README.md"] >= 2, "the README's python blocks were not found (fence changed?)"
    assert len(SNIPPETS) >= 7, f"python blocks per page: {per_page} (fence changed?)"


@pytest.mark.parametrize("page, line, code", slow_after(SNIPPETS))  # a process each: the first in the fast suite
def test_snippet_runs(page, line, code, tmp_path):
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{_name(page)} snippet at line {line} failed:\n{result.stderr[-3000:]}"


def test_the_readme_is_short():
    lines = _text(README).count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): move detail to a docs/ page and link it"
    )


def test_the_readme_gives_the_two_commands():
    text = _text(README)
    assert re.search(r"^make train\b", text, flags=re.M) and re.search(r"^make test\b", text, flags=re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors: dict[str, int] = {}
    out = set()
    fence = False
    for line in _text(page).splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} (.*)$", line)
        if m:
            slug = _slug(m.group(1))
            n = anchors.get(slug, 0)
            anchors[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _links():
    for page in PAGES:
        fence = False
        for number, line in enumerate(_text(page).splitlines(), start=1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                yield pytest.param(page, number, target, id=f"{_name(page)}:{number}:{target}")


LINKS = list(_links())


def test_the_pages_have_links():
    assert len(LINKS) >= 20, "no relative links found (link syntax changed?)"


@pytest.mark.parametrize("page, number, target", LINKS)
def test_relative_link_exists(page, number, target):
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{_name(page)} line {number}: {target} points at a missing file"
    if anchor and dest.suffix == ".md":
        assert anchor in _anchors(dest), f"{_name(page)} line {number}: no heading #{anchor} in {dest.name}"
