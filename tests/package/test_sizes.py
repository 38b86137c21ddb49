"""Sizes a reader follows in one pass (the guide's style): no module of the library over 650
lines, no function or method over 80 (from ``def`` to its last line, decorators left out).

Read with ``ast``; nothing is imported. A module that grows past the limit is split by what it
does (as ``agents/training/run_logs.py`` was from ``runs.py``), a function by its steps.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 650
MAX_FUNCTION_LINES = 80


def _library_files() -> list[Path]:
    return sorted(p for package in ("jamb_env", "agents") for p in (ROOT / package).rglob("*.py"))


def test_no_module_is_over_650_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in _library_files()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_80_lines():
    long = {}
    for path in _library_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
