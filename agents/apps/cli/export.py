"""Copy a trained MaskablePPO model for shipping (agents/models/<preset>.zip in the
repository), without the optimizer's moment estimates.

    jamb-export runs/tuned_classic_down_s0/final_model.zip classic_down.zip

The model is read as data: a file holding pickled code (which SB3 would run on loading it)
is refused unless --trust-model.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agents.apps.cli import add_trust_model, add_version, path_arg
from agents.export import check_not_source, export_model
from jamb_env.utils.files import atomic_path, check_output_file


def _is_model_file(path: Path) -> bool:
    """Whether ``path`` reads as an SB3 model file (its ``data`` entry, read as data)."""
    from agents.model_files import read_model_data

    try:
        read_model_data(path)
    except (OSError, ValueError):
        return False
    return True


def run_folder_of(path: Path) -> Path | None:
    """The run folder ``path`` lies in (its folder, or the run of its ``checkpoints`` folder),
    or None: a folder holding a run's marker (``config.yaml``, ``checkpoints/``, the writer's
    ``.lock``) or a record only a run writes (``evaluations.npz``, ``best.json``,
    ``progress.csv``, ``init_from.json``: an RL Zoo run too). A model file alone
    (``final_model.zip`` downloaded into a folder) makes no run."""
    from agents.training.run_lock import LOCK_FILE
    from agents.training.runs import BEST_MODEL, CHECKPOINTS, FINAL_MODEL, RUN_FILES, RUN_MARKERS

    folder = path.parent
    records = [n for n in RUN_FILES if n not in (BEST_MODEL, FINAL_MODEL)]
    for candidate in (folder, folder.parent) if folder.name == CHECKPOINTS else (folder,):
        if any(os.path.lexists(candidate / name) for name in (*RUN_MARKERS, LOCK_FILE, *records)):
            return candidate
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("src", type=path_arg, help="a MaskablePPO .zip (a run's final_model.zip or a checkpoint)")
    parser.add_argument(
        "dst",
        type=path_arg,
        help="where to write the shipped copy (a file name; .zip is added if missing; written atomically; "
        "it replaces an earlier model file there, never another file, and never writes into a run folder)",
    )
    add_trust_model(parser)
    args = parser.parse_args(argv)
    src = Path(args.src)
    if not src.is_file():
        parser.error(f"{src} is a folder, not a model file" if src.is_dir() else f"no model file {src}")
    dst = Path(args.dst)
    if dst.is_dir() or args.dst.endswith(("/", os.sep)):
        parser.error(f"{dst} is a folder; give the file name of the copy, e.g. {dst / 'classic.zip'}")
    if dst.suffix != ".zip":
        dst = dst.with_name(dst.name + ".zip")  # as export_model and SB3 do: say where it goes
    try:
        check_output_file(dst)
        check_not_source(src, dst)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    run = run_folder_of(dst)
    if run is not None:  # a run's best model or checkpoint is the run's, never replaced by a copy
        parser.error(f"{dst} would go into the run folder {run}, whose files are the run's: give a name outside it")
    if dst.exists() and not _is_model_file(dst):  # an earlier copy is replaced; another file never
        parser.error(f"{dst} exists and is not a model file: give another name (or move it away)")
    try:
        with atomic_path(dst) as tmp:  # a failed export leaves a previous copy at dst intact
            tmp_zip = tmp.with_name(tmp.name + ".zip")
            try:
                written = export_model(src, tmp_zip, trusted=args.trust_model)
                os.replace(written, tmp)
            finally:
                tmp_zip.unlink(missing_ok=True)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ninterrupted; {dst} not written", file=sys.stderr)
        return 130
    print(f"wrote {dst} ({dst.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
