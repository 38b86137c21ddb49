"""SB3 model files (``.zip``) read as data: loading one runs no code from it.

An SB3 model file is a zip of ``data`` (JSON: the algorithm's settings), ``policy.pth``,
``policy.optimizer.pth`` and ``pytorch_variables.pth`` (torch tensors). Some ``data``
entries are pickles (``{":serialized:": <base64 cloudpickle>}``: the observation and
action spaces, the schedules, the policy class, ...), and SB3 unpickles them on load, so a
file can run any code it carries (a ``__reduce__`` naming ``os.system``): whoever hands you
a model file could run anything on your machine.

So every loader of this project (:func:`load_model`: ``agents.load``, ``jamb-evaluate
--agents``, ``jamb-play --watch``, ``jamb-export``, ``--init-from``, resumed checkpoints,
self-play snapshots) reads ``data`` itself first and unpickles each ``:serialized:`` entry
with an unpickler that builds only the types this project's own models hold
(:data:`ALLOWED_GLOBALS`: numpy arrays and generators, Gymnasium spaces, SB3's schedule
classes and the zoo's linear schedule, sb3-contrib's maskable policy and buffer classes, a deque, a few torch
activation and optimizer classes); anything else (a function pickled by value, any other
module's global) refuses the file with :class:`UntrustedModelError` before anything is
built. The entries are then handed to SB3 as ``custom_objects``, so SB3 unpickles nothing
itself. The tensors are read by SB3 with ``torch.load(weights_only=True)`` (SB3 >= 2.3;
this project needs >= 2.9), torch's own restricted unpickler.

``trusted=True`` (the commands' ``--trust-model``) skips the check: SB3 loads the file
as it always does, running what it holds. Use it only for files whose source you trust,
e.g. a model of your own whose learning rate is a Python function.

Also here: :func:`model_steps` and :func:`checkpoint_problem`, the checks of a model
file that load nothing, and the VecNormalize statistics a model may need
(:func:`normalization_file`, :func:`normalizes_observations`).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import pickle
import stat
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from jamb_env.utils.files import SMALL_FILE_BYTES, ZIP_ERRORS, InputFileError, check_regular_input

#: The globals a model file's pickled ``data`` entries may name (module, name): what the
#: models this project trains and ships hold, each harmless to build from any arguments.
ALLOWED_GLOBALS = frozenset(
    [
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "complex"),
        ("collections", "deque"),
        ("collections", "OrderedDict"),
        *((f"numpy{core}.multiarray", n) for core in ("._core", ".core") for n in ("_reconstruct", "scalar")),
        *((f"numpy{core}.numeric", "_frombuffer") for core in ("._core", ".core")),
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        *(("numpy.random._pickle", n) for n in ("__generator_ctor", "__bit_generator_ctor", "__randomstate_ctor")),
        ("numpy.random._pcg64", "PCG64"),
        ("numpy.random._pcg64", "PCG64DXSM"),
        ("numpy.random._mt19937", "MT19937"),
        ("numpy.random._philox", "Philox"),
        ("numpy.random._sfc64", "SFC64"),
        ("numpy.random.bit_generator", "SeedSequence"),
        ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
        ("gymnasium.spaces.box", "Box"),
        ("gymnasium.spaces.discrete", "Discrete"),
        ("gymnasium.spaces.multi_discrete", "MultiDiscrete"),
        ("gymnasium.spaces.multi_binary", "MultiBinary"),
        ("gymnasium.spaces.dict", "Dict"),
        *(("stable_baselines3.common.utils", n) for n in ("FloatSchedule", "ConstantSchedule", "LinearSchedule")),
        ("rl_zoo3.utils", "SimpleLinearSchedule"),  # the zoo's lin_<rate> (jamb-zoo's models)
        ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
        ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"),
        ("sb3_contrib.common.maskable.buffers", "MaskableRolloutBuffer"),
        ("sb3_contrib.common.maskable.buffers", "MaskableDictRolloutBuffer"),
        *(
            ("torch.nn.modules.activation", n)
            for n in ("ReLU", "Tanh", "ELU", "LeakyReLU", "SiLU", "GELU", "Sigmoid", "Mish")
        ),
        ("torch.optim.adam", "Adam"),
        ("torch.optim.adamw", "AdamW"),
        ("torch.optim.rmsprop", "RMSprop"),
        ("torch.optim.sgd", "SGD"),
    ]
)
#: How the refusal tells a user to load a file anyway.
TRUST_HINT = "--trust-model, or agents.load(..., trusted=True)"
#: The VecNormalize statistics SB3 and RL Baselines3 Zoo save beside a run's models.
NORMALIZATION_FILE = "vecnormalize.pkl"


class UntrustedModelError(ValueError):
    """A model file (or a file loaded with it) holds pickled code that loading would run: a
    ValueError, on which the commands exit with status 2. ``path``: that file."""

    def __init__(self, path: str | Path, why: str):
        self.path = Path(path)
        super().__init__(
            f"{path}: {why}: loading it could run any code it carries. Load it only if you trust where it came "
            f"from ({TRUST_HINT})"
        )


#: What a VecNormalize statistics file holds beside :data:`ALLOWED_GLOBALS`.
NORMALIZATION_GLOBALS = frozenset(
    [
        ("stable_baselines3.common.vec_env.vec_normalize", "VecNormalize"),
        ("stable_baselines3.common.running_mean_std", "RunningMeanStd"),
    ]
)


class _DataUnpickler(pickle.Unpickler):
    """Builds only :data:`ALLOWED_GLOBALS` and ``also`` (any other global: :class:`UntrustedModelError`)."""

    def __init__(self, data: bytes, path: Path, entry: str, also: frozenset = frozenset()):
        super().__init__(io.BytesIO(data))
        self.path, self.entry, self.also = path, entry, also

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS and (module, name) not in self.also:
            self.refuse(f"{module}.{name}"[:120])
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        self.refuse("a persistent id")

    def refuse(self, what: str):
        raise UntrustedModelError(
            self.path,
            f"its {self.entry!r} entry is a pickle naming {what}, none of the types a model of this project holds",
        )


def open_model_file(path: str | Path) -> BinaryIO:
    """The regular file ``path`` opened for reading (binary), never blocking on a FIFO.

    Raises:
        InputFileError: a FIFO, device or socket. OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        check_regular_input(path)  # the error naming what it is
        raise InputFileError(f"{path}: not a regular file")
    return os.fdopen(fd, "rb")


def read_model_data(path: str | Path, file: BinaryIO | None = None) -> dict[str, Any]:
    """The ``data`` JSON of the SB3 model file ``path`` (read from ``file``, that file
    opened, when given), loading nothing of it.

    Raises:
        ValueError: not a zip, no ``data``, a ``data`` over
            :data:`~jamb_env.utils.files.SMALL_FILE_BYTES` or that is no JSON object.
        OSError: unreadable (InputFileError: a FIFO, device or socket).
    """
    path = Path(path)
    if file is None:
        with open_model_file(path) as f:
            return read_model_data(path, f)
    try:
        with zipfile.ZipFile(file) as zf:
            info = zf.getinfo("data")
            if info.file_size > SMALL_FILE_BYTES:
                raise ValueError(f"{path}: its data entry is larger than {SMALL_FILE_BYTES:,} bytes")
            data = json.loads(zf.read(info).decode("utf-8"))
    except KeyError:
        raise ValueError(f"{path} is not an SB3 model file (no data entry in the zip)") from None
    except (*ZIP_ERRORS, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{path} is not an SB3 model file ({type(exc).__name__}: {str(exc)[:200]})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not an SB3 model file (its data is no JSON object)")
    return data


def data_objects(path: str | Path, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every pickled (``:serialized:``) entry of the model file's ``data`` (``data``: as
    read by :func:`read_model_data`, read here if None), built by an unpickler that knows
    only :data:`ALLOWED_GLOBALS`: SB3's ``custom_objects`` for loading the file with no
    unpickling of its own.

    Raises:
        UntrustedModelError: an entry names another global (nothing of it was built).
        ValueError: a damaged entry, or not a model file. OSError: unreadable.
    """
    path = Path(path)
    data = read_model_data(path) if data is None else data
    objects = {}
    for key, item in data.items():
        if not (isinstance(item, dict) and ":serialized:" in item):
            continue
        try:
            raw = base64.b64decode(str(item[":serialized:"]).encode("ascii"), validate=True)
            objects[key] = _DataUnpickler(raw, path, key).load()
        except UntrustedModelError:
            raise
        except (pickle.UnpicklingError, binascii.Error, UnicodeError, EOFError, ValueError, TypeError) as exc:
            raise ValueError(f"{path}: its {key!r} entry is damaged ({type(exc).__name__}: {str(exc)[:200]})") from exc
        except (AttributeError, ImportError, IndexError, KeyError, MemoryError, RecursionError) as exc:
            raise ValueError(f"{path}: its {key!r} entry cannot be read ({type(exc).__name__})") from exc
    return objects


def load_model(path: str | Path, model_class=None, *, trusted: bool = False, **kwargs):
    """``model_class.load(path, **kwargs)`` (default sb3-contrib's ``MaskablePPO``) with
    every pickled ``data`` entry built by :func:`data_objects` and given as
    ``custom_objects``: nothing in the file runs. ``trusted``: SB3's own load, which runs
    what the file's pickles say (module docstring).

    Raises:
        UntrustedModelError: (not ``trusted``) the file holds pickled code.
        ValueError: damaged, or not an SB3 model file; ``trusted`` not a bool (a string such
            as "no" would be true: the file's code would run). OSError: unreadable.
        Whatever SB3's ``load`` raises for the tensors or the settings.
    """
    from jamb_env.engine.doors import check_flag

    trusted = check_flag("trusted", trusted, " (True runs the code a model file's pickles hold)")
    if model_class is None:
        from sb3_contrib import MaskablePPO as model_class
    if trusted:
        return model_class.load(path, **kwargs)
    with open_model_file(path) as f:  # one open file: SB3 loads what was checked
        objects = {**data_objects(path, read_model_data(path, f)), **kwargs.pop("custom_objects", {})}
        f.seek(0)
        return model_class.load(f, custom_objects=objects, **kwargs)


#: the attribute (saved in a model file's ``data``) naming the ruleset a model was trained on
RULESET_ATTRIBUTE = "jamb_ruleset"


class RulesetMismatchWarning(UserWarning):
    """A model file plays a ruleset other than the one it was trained on (same shapes)."""


def stamp_ruleset(model, rules) -> None:
    """Keep the ruleset ``rules`` a model trains on in the model (``{"name", "digest"}``, a
    plain attribute SB3 saves in the file's ``data``), so :func:`check_ruleset` can tell a
    model of other rules with the same observation and action shapes."""
    setattr(model, RULESET_ATTRIBUTE, {"name": rules.name, "digest": rules.digest})


def check_ruleset(model, rules, path) -> None:
    """Warn (:class:`RulesetMismatchWarning`) when ``model`` (a model, or a model file's ``data``
    dict: :func:`read_model_data`) says it was trained on rules other than ``rules``
    (:func:`stamp_ruleset`); a model without the stamp (older files) is not judged."""
    import warnings

    stamp = model.get(RULESET_ATTRIBUTE) if isinstance(model, dict) else getattr(model, RULESET_ATTRIBUTE, None)
    if isinstance(stamp, dict) and stamp.get("digest") != rules.digest:
        trained = str(stamp.get("name"))[:64]
        other = "other rules of that name" if trained == rules.name else f"{rules.name!r}"
        warnings.warn(
            f"model {path} was trained on ruleset {trained!r} and plays {other} here, whose rules differ (the "
            "same observation and action shapes)",
            RulesetMismatchWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------- checks that load nothing


def model_steps(path: Path) -> int | None:
    """``num_timesteps`` saved in an SB3 model zip (None when unreadable, not a regular
    file, or with a ``data`` entry over :data:`jamb_env.utils.files.SMALL_FILE_BYTES`), without loading it."""
    try:
        steps = read_model_data(path).get("num_timesteps")
    except (OSError, ValueError):
        return None
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else None


def checkpoint_problem(path: Path) -> str | None:
    """Why the model file ``path`` cannot be a checkpoint (truncated, damaged, not a model),
    or None when it looks complete (a quick check of the zip, before loading it)."""
    cut_short = "not a complete zip file (cut short while being written?)"
    try:
        check_regular_input(path)  # zipfile would block on a FIFO and read a device such as /dev/zero for ever
        if not zipfile.is_zipfile(path):
            return cut_short
        with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
            # a complete zip ends with its end record (+ comment); a cut-off model file may
            # still hold the end record of a zip inside it (torch's .pth files are zips)
            f.seek(-22 - len(zf.comment), 2)
            if not f.read(4) == b"PK\x05\x06":
                return cut_short
            bad = zf.testzip()
            if bad is not None:
                return f"damaged zip file (member {bad} fails its checksum)"
            missing = {"data", "policy.pth"} - set(zf.namelist())
            if missing:
                return f"not a model file (no {', '.join(sorted(missing))} in the zip)"
    except (OSError, ValueError, *ZIP_ERRORS) as exc:
        return f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"
    return None


# ---------------------------------------------------------------- observation statistics


def normalization_file(path: str | Path) -> Path | None:
    """The VecNormalize statistics saved with the model file ``path``:
    ``vecnormalize.pkl`` beside it, or in one folder beside it (RL Baselines3 Zoo saves
    ``<run>/<env id>/vecnormalize.pkl`` beside ``<run>/<env id>.zip`` and
    ``<run>/best_model.zip``); None when there is none (or several)."""
    folder = Path(path).parent
    if (folder / NORMALIZATION_FILE).is_file():
        return folder / NORMALIZATION_FILE
    found = [p for p in folder.glob(f"*/{NORMALIZATION_FILE}") if p.is_file()]
    return found[0] if len(found) == 1 else None


def normalizes_observations(model) -> bool:
    """Whether ``model`` (a loaded SB3 model) was trained under ``VecNormalize(norm_obs=True)``,
    as its saved state tells: SB3 keeps unnormalised observations (``_last_original_obs``)
    only under VecNormalize, and the last observations the policy read (``_last_obs``) lie
    outside the observation space's bounds only when they were normalised (shifted by
    their mean: Jamb's lie in [0, 1]). False when the file does not tell (an exported
    model keeps neither); True under VecNormalize when it cannot tell which."""
    if getattr(model, "_last_original_obs", None) is None:
        return False
    seen, space = getattr(model, "_last_obs", None), getattr(model, "observation_space", None)
    if seen is None:
        return True
    parts = (
        [(seen.get(k), space[k]) for k in space.spaces]
        if isinstance(seen, dict) and hasattr(space, "spaces")
        else [(seen, space)]
    )
    for values, box in parts:
        low, high = getattr(box, "low", None), getattr(box, "high", None)
        if values is None or low is None or high is None:
            return True
        try:
            values = np.asarray(values, dtype=np.float64)
            if np.any(values < low) or np.any(values > high) or not np.all(np.isfinite(values)):
                return True
        except (TypeError, ValueError):  # shapes that do not fit the space
            return True
    return False


def check_normalization_file(path: str | Path) -> None:
    """Read the VecNormalize statistics file ``path`` as data: an unpickler that builds only
    :data:`ALLOWED_GLOBALS` and :data:`NORMALIZATION_GLOBALS` (what SB3 saves there).

    Raises:
        UntrustedModelError: it names another global (nothing of it was built).
        ValueError: damaged. OSError: unreadable (InputFileError: not a regular file).
    """
    path = Path(path)
    with open_model_file(path) as f:
        raw = f.read(SMALL_FILE_BYTES + 1)
    if len(raw) > SMALL_FILE_BYTES:
        raise ValueError(f"{path}: larger than {SMALL_FILE_BYTES:,} bytes, not VecNormalize statistics")
    try:
        _DataUnpickler(raw, path, "pickle", NORMALIZATION_GLOBALS).load()
    except UntrustedModelError:
        raise
    except Exception as exc:  # pickle raises assorted errors for damaged files
        raise ValueError(f"{path} is not a VecNormalize file ({type(exc).__name__}: {str(exc)[:200]})") from exc


def load_normalization(path: Path):
    """The ``VecNormalize`` saved in ``path`` (a pickle: this runs what it holds; only for a
    trusted file), without its env.

    Raises:
        ValueError: not a VecNormalize pickle. OSError: unreadable.
    """
    from stable_baselines3.common.vec_env import VecNormalize

    check_regular_input(path)
    with open(path, "rb") as f:
        try:
            stats = pickle.load(f)  # noqa: S301  (trusted: the caller checked)
        except Exception as exc:  # pickle raises assorted errors for damaged files
            raise ValueError(f"{path} is not a VecNormalize file ({type(exc).__name__}: {str(exc)[:200]})") from exc
    if not isinstance(stats, VecNormalize):
        raise ValueError(f"{path} holds a {type(stats).__name__}, not SB3's VecNormalize statistics")
    stats.training = False
    return stats
