"""Copy a trained MaskablePPO model for shipping (models/<preset>.zip), without the
optimizer's moment estimates.

    python scripts/export_model.py runs/tuned_classic_down_s0/final_model.zip models/classic_down.zip
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.export import export_model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src", help="a MaskablePPO .zip (a run's final_model.zip or a checkpoint)")
    parser.add_argument("dst", help="where to write the shipped copy")
    args = parser.parse_args(argv)
    src = Path(args.src)
    if not src.is_file():
        parser.error(f"no model file {src}")
    try:
        dst = export_model(src, args.dst)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    print(f"wrote {dst} ({dst.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
