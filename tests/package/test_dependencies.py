"""The dependency floor matches what is shipped: every model in agents/models/ loads on every
NumPy version pyproject.toml allows."""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

from agents.shipped import MODELS_DIR

ROOT = Path(__file__).resolve().parents[2]


def test_numpy_floor_covers_the_shipped_models():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"numpy\b", d))
    floor = re.search(r">=\s*(\d+)", spec)
    assert floor, f"numpy needs a floor, got {spec!r}"
    models = sorted((MODELS_DIR).glob("*.zip"))
    assert models
    for model in models:
        info = zipfile.ZipFile(model).read("system_info.txt").decode()
        saved_major = int(re.search(r"Numpy: (\d+)\.", info).group(1))
        # NumPy 2 pickles reference numpy._core, which NumPy 1.x cannot import
        assert int(floor.group(1)) >= saved_major, (
            f"{model.name} was saved with NumPy {saved_major}; pyproject allows {spec}"
        )
