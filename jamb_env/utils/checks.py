"""Checks of numbers given by users or read from files (YAML and JSON read integers of any size)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (Python's or numpy's; not a bool) whose float is
    finite; an integer too large for a float is not one."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def integer_items(values: Any) -> bool:
    """Whether ``values`` (a sequence or an array) holds integers only: Python's or NumPy's,
    never a bool or a float (``np.asarray([True, 2])`` is an integer array: a bool given as
    a die must not become face 1)."""
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iu"
    try:
        items = list(values)
    except TypeError:
        return False
    return all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in items)
