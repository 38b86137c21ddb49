"""docs/tools.md runs as written: every ```python block, in a fresh process from the
repository root (a block marked ``<!-- requires: a, b -->`` is skipped where a module is
missing, with the reason)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import slow_after

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tools.md"
BLOCK = re.compile(r"(?:<!-- requires: (?P<requires>[^>]*?) -->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def blocks() -> list[tuple[str, list[str], str]]:
    """``(heading, required modules, code)`` of every python block, in page order."""
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for m in BLOCK.finditer(text):
        heading = ([h for h in re.findall(r"^## (.+)$", text[: m.start()], re.M)] or ["(top)"])[-1]
        requires = [r.strip() for r in (m.group("requires") or "").split(",") if r.strip()]
        out.append((heading, requires, m.group("code")))
    return out


def test_the_page_has_a_snippet_per_section():
    text = PAGE.read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, re.M)
    with_code = {heading for heading, _, _ in blocks()}
    assert sections and set(sections) <= with_code, f"sections without a snippet: {sorted(set(sections) - with_code)}"


@pytest.mark.parametrize(
    "heading,requires,code",
    slow_after(blocks()) or [pytest.param("", [], "", marks=pytest.mark.skip("no blocks yet"))],  # the first fast
    ids=lambda x: x if isinstance(x, str) and len(x) < 60 and "\n" not in x else None,
)
def test_snippet_runs_as_written(heading, requires, code, tmp_path):
    missing = [r for r in requires if importlib.util.find_spec(r) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (see the page for the extra that brings it in)")
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{heading}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
