"""Every Python snippet of the README runs as written (each in a fresh interpreter).

The snippets are the README's ```python blocks, in order; each runs in a new process
from an empty folder (so nothing relies on the repository's working directory), with
numba single-threaded as in the rest of the suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_readme_has_snippets():
    assert len(SNIPPETS) >= 5, "the README's python blocks were not found (fence changed?)"


def _line(code: str) -> int:
    return README.read_text(encoding="utf-8")[: README.read_text(encoding="utf-8").index(code)].count("\n") + 1


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"line{_line(c)}" for c in SNIPPETS])
def test_readme_snippet_runs(code, tmp_path):
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"README snippet at line {_line(code)} failed:\n{result.stderr[-3000:]}"
