"""What ``jamb-zoo`` lets RL Baselines3 Zoo read: its files as data, never as code.

rl_zoo3 (2.9) treats its files as code: the strings of a hyper-parameter file's
``normalize``, ``policy_kwargs``, ``replay_buffer_class``, ``replay_buffer_kwargs`` and
``monitor_kwargs`` go through Python's ``eval``; ``policy``, ``env_wrapper``,
``vec_env_wrapper`` and ``callback`` name classes it imports and calls; ``enjoy`` reads a
log folder's ``config.yml`` and ``args.yml`` with PyYAML's unsafe loader and unpickles
``vecnormalize.pkl`` and the models. Before the zoo sees them, ``jamb-zoo`` checks each
(:func:`check_hyperparams`, :func:`check_log_folder`):

- an evaluated string is a literal: ``dict(...)``, lists, tuples, numbers, strings, booleans,
  None and ``nn.<activation>`` (:data:`ACTIVATIONS`), nothing else (no call but ``dict``,
  no other name, no attribute);
- an imported name lies in :data:`IMPORT_PREFIXES` (this package, SB3, sb3-contrib, the
  zoo, Gymnasium), is a class of the key's kind (:data:`IMPORT_BASES`), and its settings name
  no place on disk (:func:`names_a_place`: a ``CheckpointCallback``'s ``save_path`` would
  write outside the log folder the zoo was given);
- YAML holds plain data (PyYAML's safe loader, plus the ``OrderedDict`` and tuple tags the
  zoo writes itself);
- a pickle builds only what SB3 saves (:mod:`agents.model_files`' allow-list).

``--trust-files`` skips the checks, for files whose source you trust.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Keys whose string values rl_zoo3 runs through ``eval``.
EVAL_KEYS = ("normalize", "policy_kwargs", "replay_buffer_class", "replay_buffer_kwargs", "monitor_kwargs")
#: Keys whose values name classes rl_zoo3 imports (a name, a list of names, or ``{name: kwargs}`` mappings).
IMPORT_KEYS = ("policy", "env_wrapper", "vec_env_wrapper", "callback")
#: The modules an imported name may come from.
IMPORT_PREFIXES = ("jamb_env.", "agents.", "stable_baselines3.", "sb3_contrib.", "rl_zoo3.", "gymnasium.")
#: The ``nn.<name>`` an evaluated string may name (torch's activation modules).
ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "SiLU", "GELU", "Sigmoid", "Mish")
#: How a refusal says to go on anyway.
TRUST_HINT = "give jamb-zoo --trust-files to run it as the zoo would, only for files you trust"


def _literal(node: ast.AST) -> bool:
    """Whether ``node`` is one of the literal forms of the module docstring."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Call):
        return (
            isinstance(node.func, ast.Name)
            and node.func.id == "dict"
            and not node.args
            and all(k.arg is not None and _literal(k.value) for k in node.keywords)
        )
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "nn" and node.attr in ACTIVATIONS
    return False


def _check_eval(key: str, text: str, where: str) -> None:
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        raise ValueError(f"{where}: {key}: {text[:80]!r} is not Python the zoo can read") from None
    if not _literal(tree.body):
        raise ValueError(
            f"{where}: {key}: {text[:80]!r} is code, which the zoo would run (eval); only literal settings such "
            f"as dict(net_arch=[256, 256]) are read as data: {TRUST_HINT}"
        )


def _imported_names(value: Any) -> list:
    """The names of an import key's value: a name, a list of names or ``{name: kwargs}``."""
    if isinstance(value, Mapping):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in _imported_names(item)]
    return [value]


#: What each import key's names must be: (module, class) of the base class, and what it is called.
IMPORT_BASES = {
    "policy": (("stable_baselines3.common.policies", "BasePolicy"), "policy"),
    "env_wrapper": (("gymnasium", "Wrapper"), "Gymnasium wrapper"),
    "vec_env_wrapper": (("stable_baselines3.common.vec_env", "VecEnvWrapper"), "VecEnv wrapper"),
    "callback": (("stable_baselines3.common.callbacks", "BaseCallback"), "callback"),
}


def _is_class_of(key: str, name: str) -> bool:
    """Whether ``name`` (``module.attribute``, of :data:`IMPORT_PREFIXES`) is a subclass of the
    base class of ``key`` (:data:`IMPORT_BASES`); False for anything that does not import."""
    import importlib
    import inspect

    module, _, attribute = name.rpartition(".")
    (base_module, base_name), _ = IMPORT_BASES[key]
    try:
        found = getattr(importlib.import_module(module), attribute)
        base = getattr(importlib.import_module(base_module), base_name)
    except Exception:  # noqa: BLE001  (a module that fails to import, e.g. gymnasium's DependencyNotInstalled)
        return False
    return inspect.isclass(found) and issubclass(found, base)


#: The words of a setting's name (split at ``_``) that make it a place on disk.
PLACE_WORDS = frozenset({"path", "dir", "directory", "folder", "file", "filename", "log"})


def names_a_place(setting: Any) -> bool:
    """Whether a setting (a keyword of a class the zoo builds, or a top-level
    hyper-parameter) names a place on disk: a ``str`` name one of whose ``_``-separated words
    is in :data:`PLACE_WORDS` (``save_path``, ``best_model_save_path``, ``video_folder``,
    ``tensorboard_log``)."""
    return isinstance(setting, str) and not PLACE_WORDS.isdisjoint(setting.lower().split("_"))


def _check_places(settings: Any, where: str, key: str | None = None) -> None:
    """ValueError if a mapping of settings (the hyper-parameters, or ``key``'s class's
    keywords) has a setting naming a place on disk (:func:`names_a_place`)."""
    places = [s for s in settings if names_a_place(s)] if isinstance(settings, Mapping) else []
    if places:
        named = f"{key}: {places[0][:80]!r}" if key else places[0][:80]
        raise ValueError(
            f"{where}: {named}: a place on disk the zoo would write to, outside the log folder jamb-zoo gives "
            f"it (-f): {TRUST_HINT}"
        )


def _import_settings(value: Any) -> list:
    """The settings mappings of an import key's value (the ``kwargs`` of ``{name: kwargs}``)."""
    if isinstance(value, Mapping):
        return [v for v in value.values() if v is not None]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in _import_settings(item)]
    return []


def check_hyperparams(params: Mapping[str, Any], where: str, places: bool = True) -> None:
    """ValueError unless every evaluated string of ``params`` (one env's hyper-parameters)
    is a literal, every imported name lies in :data:`IMPORT_PREFIXES` and is a class of its
    key's kind, and (with ``places``) no setting names a place on disk (module docstring).
    A log folder's ``args.yml`` (the command line, read by ``enjoy``, whose folders it names)
    is checked without ``places``."""
    if places:
        _check_places(params, where)
    for key in EVAL_KEYS:
        if isinstance(params.get(key), str):
            _check_eval(key, params[key], where)
    for key in IMPORT_KEYS:
        if key not in params or params[key] is None:
            continue
        for name in _imported_names(params[key]):
            if key == "policy" and isinstance(name, str) and "." not in name:
                continue  # a policy of the algorithm itself (MlpPolicy), not imported
            if not isinstance(name, str) or not name.startswith(IMPORT_PREFIXES):
                raise ValueError(
                    f"{where}: {key}: {str(name)[:80]!r} would be imported and called by the zoo; names from "
                    f"{', '.join(p.rstrip('.') for p in IMPORT_PREFIXES)} only: {TRUST_HINT}"
                )
            if not _is_class_of(key, name):  # a function of those packages (a pickle loader) would run too
                raise ValueError(
                    f"{where}: {key}: {name[:80]!r} is not a {IMPORT_BASES[key][1]} class, and the zoo would call "
                    f"it: {TRUST_HINT}"
                )
        for settings in _import_settings(params[key]):
            _check_places(settings, where, key)


def read_zoo_yaml(path: str | Path) -> Any:
    """A zoo YAML file (a hyper-parameter file, or a log folder's ``config.yml`` / ``args.yml``)
    as plain data: PyYAML's safe loader with the two tags the zoo writes (``OrderedDict``,
    tuple) read as a dict and a tuple.

    Raises:
        ValueError: malformed, or any other tag (a Python object the zoo would build).
        OSError: unreadable (InputFileError: not a regular file).
    """
    import yaml

    from jamb_env.utils.files import check_regular_input

    class Loader(yaml.SafeLoader):
        pass

    def ordered(loader, node):
        pairs = loader.construct_sequence(node.value[0], deep=True) if node.value else []
        return {k: v for k, v in pairs}

    Loader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", ordered)
    Loader.add_constructor(
        "tag:yaml.org,2002:python/tuple", lambda loader, node: tuple(loader.construct_sequence(node))
    )
    try:
        with open(check_regular_input(path), encoding="utf-8") as f:
            return yaml.load(f, Loader=Loader)  # noqa: S506  (a SafeLoader with two data tags)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        why = " ".join(str(exc).split())[:300]
        raise ValueError(f"{path}: {why} (only plain data is read: {TRUST_HINT})") from None


def files_followed(folder: str | Path) -> list[Path]:
    """The files the zoo may open under ``folder`` (or ``folder`` itself, a file), links
    followed as the zoo follows them: linked files and linked folders included, each
    folder once (a link loop ends), sorted per folder."""
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    found, seen = [], set()
    for root, dirs, names in os.walk(folder, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        found += [Path(root, n) for n in sorted(names) if os.path.isfile(os.path.join(root, n))]
    return found


def check_log_folder(folder: str | Path) -> int:
    """Check what ``enjoy`` (or ``train --trained-agent``) would load from a log folder (or one
    model file): every ``config.yml`` and ``args.yml`` as data (their hyper-parameters as
    :func:`check_hyperparams`), every ``vecnormalize.pkl`` and every model ``.zip`` by the
    allow-listed unpickler. Returns the number of files checked.

    Raises:
        ValueError: a file the zoo would run code from (the message names it and the way on).
    """
    from agents.model_files import UntrustedModelError, check_normalization_file, data_objects

    checked = 0
    for path in files_followed(folder):
        try:
            if path.name in ("config.yml", "args.yml"):
                data = read_zoo_yaml(path)
                if isinstance(data, Mapping):
                    check_hyperparams(data, str(path), places=path.name == "config.yml")
            elif path.name.endswith(".pkl"):
                check_normalization_file(path)
            elif path.suffix == ".zip":
                data_objects(path)
            else:
                continue
        except UntrustedModelError as exc:
            raise ValueError(f"{path}: a pickle naming code the zoo would run: {TRUST_HINT}") from exc
        checked += 1
    return checked
