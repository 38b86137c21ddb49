"""Strict JSON for text from elsewhere (record lines, the web server's request bodies): one
reading of what JSON is, whoever reads it.

:func:`loads` refuses, with a ValueError saying which: text that is not JSON; ``NaN``,
``Infinity`` and numbers beyond a float's range; a key given twice in one object (which one
counts would be the parser's choice); arrays and objects nested deeper than ``max_depth``
(tested before parsing, so deep text cannot exhaust the stack); a string holding a lone
surrogate (a ``\\ud800`` escape), which no UTF-8 text can carry on.
"""

from __future__ import annotations

import json
import re

#: a JSON string (for the depth test: brackets inside strings do not nest)
_STRINGS = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_BRACKETS = re.compile(r"[\[\]{}]")


def _constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is beyond a float's range")
    return value


def _unique(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r:.60} is given twice")
        out[key] = value
    return out


def loads(text: str, max_depth: int) -> object:
    """``text`` as strict JSON (module docstring).

    Raises:
        ValueError: ``JSON nested more than <max_depth> levels deep``, ``not JSON: <why>``
            (the parser's reason, a NaN, a float beyond range, a key given twice), or ``a
            string with an invalid \\u escape (a lone surrogate)``.
    """
    if text.count("[") + text.count("{") > max_depth:  # cheap test first: most texts have a few
        depth = 0
        for ch in _BRACKETS.findall(_STRINGS.sub("", text)):
            depth += 1 if ch in "[{" else -1
            if depth > max_depth:
                raise ValueError(f"JSON nested more than {max_depth} levels deep")
    try:
        item = json.loads(text, parse_constant=_constant, parse_float=_finite, object_pairs_hook=_unique)
    except RecursionError:  # defensive: the depth test above comes first
        raise ValueError("JSON nested too deep") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, a key twice, an integer of too many digits
        raise ValueError(f"not JSON: {exc}") from None
    if "\\u" in text:
        try:
            json.dumps(item, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a string with an invalid \\u escape (a lone surrogate)") from None
    return item
