"""Run folders of every trainer (SB3, self-play, RLlib, the value learner): where a run
writes, what it resumes from, the files written beside the logs.

This module owns: the run-folder checks (:func:`new_run_dir`, :func:`check_new_run_dir`,
:func:`prepare_run_dir`, under the folder's lock: :func:`open_run_dir`, :mod:`.run_lock`;
a ruleset's or config's name never steers the default folder outside ``runs/``:
:func:`default_run_dir`), the temporary files of killed writes
(:func:`remove_killed_writes`), atomic checkpoints (:func:`save_checkpoint` for a model
file, :func:`save_checkpoint_folder` for a checkpoint folder), the newest checkpoint that
loads (:func:`newest_valid`), the evaluation history
(:func:`load_evaluations`, :func:`append_evaluation`, :func:`save_evaluations`) and the
saved resolved config (:func:`save_config`). TensorBoard resumed at the checkpoint's step,
and the config and baselines logged at step 0: :mod:`.run_logs`.

A run folder (default ``runs/<ruleset>__<config>__<seed>__<time>/``) holds ``config.yaml``
(the resolved config), TensorBoard events, ``progress.csv``, ``checkpoints/``,
``evaluations.npz``, the best model (``best_model.zip`` with its score in
:data:`BEST_RECORD`), the final model and, for a run started from a model,
``init_from.json`` (:data:`INIT_RECORD`). While a run is written, its folder also holds
``.lock``: one process writes a run folder at a time (:mod:`.run_lock`; a second writer,
``--resume`` included, is refused naming the first one's pid).

Every file here is written atomically (:mod:`jamb_env.utils.files`): a run killed at any moment,
SIGKILL included, leaves each file either as it was or complete (TensorBoard's event files
are append-only streams whose readers skip a cut-off last record).

Resuming (``train(..., resume=True)``) is lossless: it starts from the newest checkpoint
that loads (a damaged one is skipped with a message; no usable checkpoint restarts the run
from step 0 in its folder). Whatever the killed run logged after that checkpoint's step S
is set aside so that every log is one curve without repeated steps: those events (from
step S + 1) are moved out of the events files into ``events_abandoned_<i>.tfrecord``
(:mod:`.run_logs`), ``evaluations.npz`` keeps the evaluations up to S,
``progress.csv`` keeps its rows up to S and moves the later ones to
``progress_abandoned_<i>.csv``; new rows and evaluations are appended. The best model is
kept until an evaluation beats its recorded score.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.model_files import UntrustedModelError, checkpoint_problem, load_model, model_steps
from agents.training.config import ConfigError, config_text
from agents.training.run_lock import LOCK_FILE, RunFolderBusy, hold_run_dir  # noqa: F401  (RunFolderBusy: re-exported)
from jamb_env.render.sheet import printable
from jamb_env.utils.files import (
    TEMP_MARK,
    _fsync_dir,
    atomic_save_model,
    atomic_write,
    atomic_write_text,
    check_regular_input,
    is_temp_file,
    read_regular_bytes,
    remove_temp_files,
    symlinks_in,
)

#: In a run started from a model: ``{"init_from": absolute path, "steps_before": env steps
#: behind that model}`` (``scripts/plot.py`` draws the run after those steps).
INIT_RECORD = "init_from.json"
#: the rules a run trains on (name and digest): a resume on other rules is refused
RULESET_RECORD = "ruleset.json"
#: ``{"step", "mean_reward", "mean_score"}`` of the evaluation that saved ``best_model.zip``.
BEST_RECORD = "best.json"
BEST_MODEL = "best_model.zip"
FINAL_MODEL = "final_model.zip"
EVALUATIONS = "evaluations.npz"
PROGRESS = "progress.csv"
#: The resolved config of a run, as YAML.
CONFIG = "config.yaml"
CHECKPOINTS = "checkpoints"
#: Where runs go without ``--run-dir``.
RUNS_ROOT = Path("runs")
#: What marks a folder as holding a run (a new run refuses it).
RUN_MARKERS = (CONFIG, CHECKPOINTS)
#: The other files a run writes at the top of its folder: a new run refuses a folder that
#: holds one (``agents/models/`` holds ``best.json``), rather than replace it.
RUN_FILES = (BEST_RECORD, BEST_MODEL, FINAL_MODEL, EVALUATIONS, PROGRESS, INIT_RECORD)
#: What no part of a default run-folder name may hold.
SEPARATORS = frozenset({"/", "\\", "\0", os.sep, os.altsep or "/"})


# ---------------------------------------------------------------- run folders


def run_folder_name(*parts: Any) -> str:
    """``<part>__<part>__...``, a single folder name: no part may hold a path separator
    (``/``, ``\\``) or a NUL, so a ruleset named ``../../elsewhere`` or ``/tmp/x`` cannot
    steer a run out of :data:`RUNS_ROOT`.

    Raises:
        ConfigError: a part that is not a plain name, saying which and what to do.
    """
    what = ("the ruleset's name", "the config's name", "the seed")
    for i, part in enumerate(parts):
        text = str(part)
        bad = sorted(SEPARATORS.intersection(text))
        if bad:
            label = what[i] if i < len(what) else f"part {i + 1} of the run-folder name"
            shown = ", ".join(repr(c) for c in bad)
            raise ConfigError(
                f"{label} {text!r} cannot name a run folder under {RUNS_ROOT}/ (it holds {shown}, a path "
                "separator): rename it (letters, digits, '-', '_', '.') or choose the folder with --run-dir"
            )
    return "__".join(str(p) for p in parts)


def default_run_dir(cfg: Mapping[str, Any], root: Path = RUNS_ROOT) -> Path:
    """``runs/<ruleset name>__<config name>__<seed>__<time>`` (:func:`run_folder_name`),
    always a folder directly inside ``root``.

    Raises:
        RulesetError: an unknown ruleset. ConfigError: a name that is not a plain name.
    """
    from jamb_env import load_ruleset

    ruleset_name = load_ruleset(cfg["ruleset"]).name  # RulesetError for an unknown ruleset
    name = run_folder_name(ruleset_name, cfg["config_name"], cfg["seed"], time.strftime("%Y%m%d-%H%M%S"))
    run_dir = Path(root) / name
    if run_dir.parent != Path(root):  # a last guard (a drive letter on Windows)
        raise ConfigError(
            f"the run-folder name {name!r} does not name a folder inside {root}/; choose the folder with --run-dir"
        )
    return run_dir


def check_new_run_dir(run_dir: str | Path, empty: bool = False, option: str = "--run-dir") -> Path:
    """``run_dir`` as a Path if a new run can start there: not a file, not a symbolic link,
    and holding no link (:func:`refuse_links`), no run (neither :data:`RUN_MARKERS`; with
    ``empty``, nothing at all) and none of the files a run writes (:data:`RUN_FILES`, which it
    would replace). ``option`` names the folder's command-line option in the messages.

    Raises:
        ConfigError: it is a file or a link, or holds a link, a run or a run's file (or
            anything, with ``empty``).
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"{option} {run_dir} is a file, not a folder")
    if run_dir.is_symlink():
        raise ConfigError(
            f"{option} {run_dir} is a symbolic link: a run writes only its own folder, so give the folder it "
            f"points to ({os.path.realpath(run_dir)}) or another {option}"
        )
    refuse_links(run_dir, "start a run in")
    if empty and run_dir.is_dir() and any(p.name != LOCK_FILE for p in run_dir.iterdir()):
        raise ConfigError(f"{run_dir} exists and is not empty: pass --resume to continue it, or another {option}")
    if any((run_dir / marker).exists() for marker in RUN_MARKERS):
        raise ConfigError(
            f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another {option}"
        )
    clashes = [name for name in RUN_FILES if os.path.lexists(run_dir / name)]
    if clashes:
        raise ConfigError(
            f"{run_dir} holds {', '.join(clashes)}, which a new run would replace (it holds no run: no "
            f"{CONFIG}); choose another {option}"
        )
    return run_dir


def new_run_dir(cfg: Mapping[str, Any], run_dir: str | Path | None) -> Path:
    """Where a new run goes: ``run_dir``, or :func:`default_run_dir`; checked by
    :func:`check_new_run_dir`.

    Raises:
        RulesetError: an unknown ruleset. ConfigError: a bad folder or name.
    """
    if run_dir is None:
        run_dir = default_run_dir(cfg)
    return check_new_run_dir(run_dir)


def remove_killed_writes(run_dir: str | Path) -> list[Path]:
    """Remove what writes cut short by a kill left in ``run_dir`` and its checkpoints
    folder (temporary files, and the hidden temporary folders of checkpoint folders),
    saying so; return the paths removed. Only call it when nothing writes in the run."""
    run_dir = Path(run_dir)
    removed = []
    for folder in (run_dir, run_dir / CHECKPOINTS):
        for p in remove_temp_files(folder):
            print(printable(f"removed {p}: a write cut short when the run was killed"))  # a name from the disk
            removed.append(p)
    folder = run_dir / CHECKPOINTS
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        if is_temp_file(p) and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
            print(printable(f"removed {p}: a checkpoint write or delete cut short when the run was killed"))
            removed.append(p)
    return removed


def prepare_run_dir(
    cfg: Mapping[str, Any],
    run_dir: str | Path | None,
    resume: bool,
    listing: Callable[[Path], list[Path]] | None = None,
) -> tuple[Path, list[Path] | None]:
    """Check where a run goes before anything is written; return ``(run_dir, checkpoints)``:
    for ``resume``, the run's checkpoints newest first (``listing(run_dir)``, default
    :func:`checkpoints`; maybe none: the run is restarted from step 0), else None.
    Resuming first removes the temporary files of writes that a kill cut short, so call
    it holding the folder's lock: :func:`open_run_dir` does.

    Raises:
        RulesetError: an unknown ruleset.
        ConfigError: ``run_dir`` is a file, (for a new run) already holds a run, or (to
            resume) holds a symbolic link, which the run would write through, or its rules
            changed since it started (:func:`check_same_rules`).
    """
    from jamb_env import load_ruleset

    load_ruleset(cfg["ruleset"])  # RulesetError for an unknown ruleset, before anything else
    if not resume:
        return new_run_dir(cfg, run_dir), None
    run_dir = Path(run_dir) if run_dir is not None else default_run_dir(cfg)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--run-dir {run_dir} is a file, not a folder")
    refuse_links(run_dir)
    check_same_rules(run_dir, cfg["ruleset"])
    remove_killed_writes(run_dir)
    return run_dir, (listing or checkpoints)(run_dir)


@contextlib.contextmanager
def open_run_dir(
    cfg: Mapping[str, Any],
    run_dir: str | Path | None,
    resume: bool,
    listing: Callable[[Path], list[Path]] | None = None,
) -> Iterator[tuple[Path, list[Path] | None]]:
    """:func:`prepare_run_dir` holding the folder's lock (:func:`.run_lock.hold_run_dir`)
    from before its checks until the block ends: the one writer of the run. Yields
    ``(run_dir, checkpoints)``.

    Raises:
        RunFolderBusy: another process writes a run there (a ConfigError).
        RulesetError, ConfigError: as :func:`prepare_run_dir`.
    """
    from jamb_env import load_ruleset

    load_ruleset(cfg["ruleset"])  # an unknown ruleset: refused before the folder is made
    if run_dir is None:
        run_dir = default_run_dir(cfg)
    with hold_run_dir(run_dir):
        yield prepare_run_dir(cfg, run_dir, resume, listing)


def checkpoint_steps(path: Path) -> int | None:
    """The steps in a checkpoint's name ``model_<steps>_steps.zip`` (None for other names)."""
    parts = path.name.split("_")
    digits = len(parts) == 3 and parts[1].isascii() and parts[1].isdigit()  # not '²': int() refuses it
    if digits and parts[0] == "model" and parts[2] == "steps.zip":
        return int(parts[1])
    return None


def checkpoints(run_dir: Path) -> list[Path]:
    """The checkpoints in ``run_dir/checkpoints``, the most steps first."""
    found = [p for p in (Path(run_dir) / CHECKPOINTS).glob("model_*_steps.zip") if checkpoint_steps(p) is not None]
    return sorted(found, key=checkpoint_steps, reverse=True)


def newest_valid(
    candidates: Sequence[Path],
    problem: Callable[[Path], str | None],
    load: Callable[[Path], Any],
    step: Callable[[Any], int],
) -> tuple[Any, Path | None]:
    """``(loaded, checkpoint)``: ``load(path)`` of the first path of ``candidates`` (newest
    first) that ``problem`` finds nothing wrong with and that loads; each one skipped is
    named with why (``skipping checkpoint <path>: <why>``), the one resumed from with its
    ``step``. ``(None, None)`` when none loads. A :class:`ConfigError` from ``load`` (the
    checkpoint does not fit the run) propagates; any other exception skips the file."""
    for path in candidates:
        why = problem(path)
        if why is None:
            try:
                loaded = load(path)
            except ConfigError:
                raise
            except Exception as exc:  # torch, pickle, SB3 and RLlib raise assorted errors for damaged files
                why = f"cannot be loaded: {type(exc).__name__}: {str(exc)[:200]}"
            else:
                print(f"resuming from {path} (step {step(loaded)})")
                return loaded, path
        print(f"skipping checkpoint {path}: {why}")
    return None, None


def resume_model(candidates: list[Path], env, cfg: Mapping[str, Any], trusted: bool = False):
    """``(model, checkpoint)``: the model (the config's ``trainer`` class) of the newest checkpoint in
    ``candidates`` that loads on ``env`` (:func:`newest_valid`), read as data
    (:func:`agents.model_files.load_model`; ``trusted``: as SB3 does); ``(None, None)``
    when none does.

    Raises:
        ConfigError: a checkpoint does not fit ``env`` (another observation or action space),
            or holds pickled code (not ``trusted``).
    """
    from agents.training.lean_ppo import model_class

    def load(path: Path):
        cls = model_class(cfg.get("trainer", "sb3"))  # self-play: sb3
        try:
            return load_model(path, cls, trusted=trusted, env=env, device=cfg["device"])
        except UntrustedModelError as exc:
            raise ConfigError(f"cannot resume from {exc}") from exc
        except ValueError as exc:
            if "spaces do not match" in str(exc):
                raise ConfigError(f"cannot resume {path} with this run's env: {str(exc)[:200]}") from exc
            raise

    return newest_valid(candidates, checkpoint_problem, load, lambda model: model.num_timesteps)


def save_checkpoint(model, run_dir: Path) -> Path:
    """Save ``model`` atomically as ``run_dir/checkpoints/model_<steps>_steps.zip``."""
    path = Path(run_dir) / CHECKPOINTS / f"model_{model.num_timesteps}_steps.zip"
    return atomic_save_model(model, path)


def save_final(model, run_dir: Path) -> tuple[Path, Path]:
    """``(checkpoint, final model)``: how every SB3 run ends, the model saved (atomically)
    as a checkpoint of its step and as ``run_dir/final_model.zip``."""
    checkpoint = save_checkpoint(model, run_dir)
    return checkpoint, atomic_save_model(model, Path(run_dir) / FINAL_MODEL)


def remove_folder(path: Path) -> None:
    """Rename ``path`` to a hidden temporary name, then delete it: an interrupted delete
    leaves a folder no reader takes for a checkpoint (:func:`remove_killed_writes` clears it)."""
    trash = path.with_name(f".{path.name}{TEMP_MARK}del-{secrets.token_hex(4)}")
    os.replace(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


@contextlib.contextmanager
def atomic_folder(final: Path) -> Iterator[Path]:
    """Yield a hidden temporary folder path beside ``final``; when the block succeeds, it
    replaces ``final`` (an old one is removed first); when it raises, it is deleted and
    ``final`` left as it was."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}{TEMP_MARK}{secrets.token_hex(4)}")
    try:
        yield tmp
        if final.exists():
            remove_folder(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(final.parent)


def save_checkpoint_folder(
    run_dir: Path,
    name: str,
    write: Callable[[Path], Any],
    keep: int | None = None,
    listing: Callable[[Path], list[Path]] | None = None,
) -> Path:
    """Write the checkpoint folder ``run_dir/checkpoints/<name>`` atomically: ``write(tmp)``
    fills a hidden temporary folder (its last file marks it complete), which is then
    renamed into place; afterwards only the newest ``keep`` of ``listing(run_dir)`` (newest
    first) are kept. Returns the folder."""
    final = Path(run_dir) / CHECKPOINTS / name
    with atomic_folder(final) as tmp:
        write(tmp)
    if keep is not None and listing is not None:
        for old in listing(run_dir)[keep:]:
            remove_folder(old)
    return final


def save_config(run_dir: Path, text: str) -> Path:
    """Write the run's resolved config ``run_dir/config.yaml`` (atomically; the folder is
    created if missing)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(run_dir / CONFIG, text)


def write_run_files(run_dir: Path, cfg: Mapping[str, Any], started_from: dict | None) -> None:
    """Create ``run_dir`` with ``config.yaml`` and, for a run started from a model, its
    :data:`INIT_RECORD` (both written atomically)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if started_from is not None:
        atomic_write_text(run_dir / INIT_RECORD, json.dumps(started_from, indent=1))
    save_ruleset_record(run_dir, cfg["ruleset"])
    save_config(run_dir, config_text(cfg))


def save_ruleset_record(run_dir: Path, ruleset: str) -> None:
    """Write :data:`RULESET_RECORD`: the name and digest of the rules ``ruleset`` names now,
    which :func:`check_same_rules` compares on every resume."""
    from jamb_env import load_ruleset

    rules = load_ruleset(ruleset)
    save_record(Path(run_dir) / RULESET_RECORD, {"name": rules.name, "digest": rules.digest, "given": str(ruleset)})


def refuse_links(run_dir: Path, doing: str = "resume the run in") -> None:
    """A run folder to write in holds no symbolic link: the run writes its files, and through a
    link it would write a file outside the run. Every trainer's resume and every new run (and
    a search's ``--out``) calls it; ``doing`` says which in the message.

    Raises:
        ConfigError: the links found (five named).
    """
    links = symlinks_in(run_dir)
    if links:
        named = ", ".join(str(p.relative_to(run_dir)) for p in links[:5]) + (" ..." if len(links) > 5 else "")
        raise ConfigError(
            printable(
                f"cannot {doing} {run_dir}: it holds symbolic links ({named}); a run writes only its own files, so "
                "put the files themselves there (or copy the run), or choose another folder"
            )
        )


def check_same_rules(run_dir: Path, ruleset: str) -> None:
    """A resumed run trains on the rules it started on.

    Raises:
        ConfigError: ``ruleset`` (a rules file edited since, or another file at that path)
            gives rules other than :data:`RULESET_RECORD` says; a record that cannot be read.
            Without the record (removed, or a run saved before it existed) the run's models and
            networks are judged by the rules they name (:func:`stamped_digests`).
    """
    from jamb_env import load_ruleset

    path = Path(run_dir) / RULESET_RECORD
    record = read_record(path, "the run's ruleset record")
    now = load_ruleset(ruleset).digest
    if record is None and not os.path.lexists(path):
        other = sorted(stamped_digests(Path(run_dir)) - {now})
        if other:
            raise ConfigError(
                f"cannot resume the run in {run_dir}: its models were trained on other rules (digest {other[0]}) than "
                f"its ruleset {str(ruleset)[:200]!r} now gives ({now}), and it has no {RULESET_RECORD}; put the rules "
                "file back as it was, or start a new run"
            )
        return
    if not isinstance(record, dict) or not isinstance(record.get("digest"), str):
        raise ConfigError(f"cannot resume the run in {run_dir}: {path.name} is not the record a run writes")
    if record.get("digest") != now:
        raise ConfigError(
            f"cannot resume the run in {run_dir}: its ruleset {str(ruleset)[:200]!r} now gives other rules than the "
            f"run started on (digest {str(record.get('digest'))[:16]}, now {now}); put the rules file back as it was, "
            "or start a new run"
        )


def stamped_digests(run_dir: Path) -> set[str]:
    """The rules digests the run's models (``*.zip`` in the folder and in its checkpoints,
    :func:`agents.model_files.stamp_ruleset`) and value networks (``*.npz``: their
    ``ruleset_digest``) name; files that do not read, or name none, are left out."""
    from agents.model_files import RULESET_ATTRIBUTE, read_model_data
    from agents.search import ValueNet

    found = set()
    for path in [*sorted(run_dir.glob("*.zip")), *sorted((run_dir / CHECKPOINTS).glob("*.zip"))]:
        with contextlib.suppress(OSError, ValueError):
            stamp = read_model_data(path).get(RULESET_ATTRIBUTE)
            if isinstance(stamp, dict) and isinstance(stamp.get("digest"), str):
                found.add(stamp["digest"])
    for path in sorted(run_dir.glob("*.npz")):
        with contextlib.suppress(OSError, ValueError):
            digest = ValueNet.load(path).meta.get("ruleset_digest")
            if isinstance(digest, str):
                found.add(digest)
    return found


def save_record(path: Path, record: Mapping[str, Any]) -> Path:
    """Write the JSON record ``path`` of a run (its settings, its starts) atomically."""
    return atomic_write_text(path, json.dumps(dict(record), indent=1) + "\n")


def read_record(path: Path, what: str = "the run's record") -> Any:
    """The JSON record at ``path``; None when there is no such file.

    Raises:
        ConfigError: the file is unreadable (``what`` names it in the message).
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        return json.loads(read_regular_bytes(path).decode("utf-8"))  # a FIFO or /dev/zero: an error, not a hang
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        raise ConfigError(f"cannot read {what} {path}: {exc}") from exc


def init_record(run_dir: Path) -> dict:
    """``run_dir/init_from.json`` (written by a run started from a model), else ``{}``."""
    try:
        record = read_record(run_dir / INIT_RECORD)
    except ConfigError:
        return {}
    return record if isinstance(record, dict) else {}


def free_name(run_dir: Path, stem: str, suffix: str) -> Path:
    """``run_dir/<stem>_<i><suffix>`` with the smallest ``i`` >= 1 not taken."""
    i = 1
    while (run_dir / f"{stem}_{i}{suffix}").exists():
        i += 1
    return run_dir / f"{stem}_{i}{suffix}"


# ---------------------------------------------------------------- evaluation history


def load_evaluations(run_dir: Path, keep_before: int | None) -> tuple[dict[str, list], dict[int, float]]:
    """``(history, all_means)``: the evaluations of ``run_dir/evaluations.npz`` with fewer
    than ``keep_before`` steps (``{"timesteps", "results", "ep_lengths"}`` lists; empty for
    a new run, ``keep_before`` None) and the mean result of every evaluation in the file
    (step -> mean, later ones included: they may have saved the best model). An unreadable
    file is moved aside to ``evaluations_unreadable_<i>.npz`` with a message."""
    import numpy as np

    history: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": []}
    path = run_dir / EVALUATIONS
    if keep_before is None or not path.exists():
        return history, {}
    try:
        check_regular_input(path)  # np.load would block on a FIFO
        with np.load(path) as data:
            steps = [int(s) for s in data["timesteps"]]
            results = [list(map(float, r)) for r in data["results"]]
            lengths = [list(map(int, r)) for r in data["ep_lengths"]]
        if not len(steps) == len(results) == len(lengths):
            raise ValueError("timesteps, results and ep_lengths differ in length")
    except Exception as exc:  # np.load raises assorted errors for damaged files
        aside = free_name(run_dir, "evaluations_unreadable", ".npz")
        path.replace(aside)
        print(
            f"{path} is unreadable ({type(exc).__name__}: {str(exc)[:200]}); moved to {aside.name}, starting a new "
            "evaluation history"
        )
        return history, {}
    all_means = {s: float(np.mean(r)) for s, r in zip(steps, results) if r}
    last = -1
    for s, r, n in zip(steps, results, lengths):
        if s < keep_before and s > last:  # strictly increasing steps
            history["timesteps"].append(s)
            history["results"].append(r)
            history["ep_lengths"].append(n)
            last = s
    return history, all_means


def append_evaluation(history: dict[str, list], step: int, results: Sequence[float], lengths: Sequence[int]) -> None:
    """Add the evaluation at ``step`` to ``history`` (in place), first dropping any at
    ``step`` or later: never two evaluations at one step, the steps increasing."""
    if history["timesteps"] and step <= history["timesteps"][-1]:
        keep = [s < step for s in history["timesteps"]]
        for key in history:
            history[key] = [v for k, v in zip(keep, history[key]) if k]
    history["timesteps"].append(int(step))
    history["results"].append([float(r) for r in results])
    history["ep_lengths"].append([int(n) for n in lengths])


def save_evaluations(run_dir: Path, history: Mapping[str, list]) -> None:
    """Write ``evaluations.npz`` (SB3's ``EvalCallback`` layout) atomically."""
    import numpy as np

    arrays = {k: np.asarray(v) for k, v in history.items()}
    atomic_write(run_dir / EVALUATIONS, lambda f: np.savez(f, **arrays))


def best_so_far(run_dir: Path, all_means: Mapping[int, float]) -> float:
    """The evaluation score (mean result) behind ``run_dir/best_model.zip``, which a new
    evaluation must beat to replace it; ``-inf`` when there is no best model.

    The score is :data:`BEST_RECORD`'s when that names the model's step (a finite number), else the
    evaluation at that step in ``all_means``, else (unknown) the best of ``all_means``.
    """
    best = run_dir / BEST_MODEL
    if not best.exists():
        return -math.inf
    step = model_steps(best)
    if step is None:
        print(f"{best} is unreadable; the next evaluation replaces it")
        return -math.inf
    try:
        record = read_record(run_dir / BEST_RECORD)
        reward = record.get("mean_reward")
        if (
            record.get("step") == step
            and isinstance(reward, (int, float))
            and not isinstance(reward, bool)
            and math.isfinite(float(reward))
        ):
            return float(reward)
    except (
        ConfigError,
        AttributeError,
        OverflowError,
    ):  # unreadable, missing (None), not a mapping, an int no float holds
        pass
    if step in all_means:
        return all_means[step]
    return max(all_means.values(), default=-math.inf)


def save_best(model, run_dir: Path, mean_reward: float, mean_score: float | None) -> None:
    """Save ``model`` as the best model, then its :data:`BEST_RECORD` (both atomically)."""
    atomic_save_model(model, run_dir / BEST_MODEL)
    record = {"step": int(model.num_timesteps), "mean_reward": float(mean_reward), "mean_score": mean_score}
    atomic_write_text(run_dir / BEST_RECORD, json.dumps(record, indent=1))
