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
