"""Reading a YAML file safely: the one reader of every ruleset file, training config and
saved run config (:func:`read_yaml_mapping`).

PyYAML's safe loader, with a key given twice and YAML 1.1's octal (``010``) and base-60
(``1:30``) numbers refused, and a file over :data:`MAX_YAML_BYTES` bytes, nested deeper
than :data:`MAX_YAML_DEPTH` levels or using aliases refused with a clear one-line error
instead of exhausting the memory or Python's recursion limit; a FIFO or a device is
refused without blocking, and text that is not UTF-8 is named as such.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml

#: Limits of every YAML file read (ruleset files, training configs, a run's saved
#: ``config.yaml``): a shipped one is a few kilobytes and a few levels deep. Beyond these a
#: file is refused with a clear error instead of exhausting the memory or Python's
#: recursion limit.
MAX_YAML_BYTES = 1 << 20
#: Most levels of nested mappings and lists in a YAML file.
MAX_YAML_DEPTH = 64


class _YamlTooDeep(yaml.YAMLError):
    """A YAML file nested more than :data:`MAX_YAML_DEPTH` levels deep."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in a mapping is an error, and so
    is nesting deeper than :data:`MAX_YAML_DEPTH` (PyYAML composes nodes recursively: a
    file nested thousands of levels deep would end in a RecursionError) and an alias
    (``*name``: ten nested aliases of nine items stand for 9**10 nodes)."""

    _depth = 0  # mappings and lists open around the node being composed

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):  # *name: a few bytes can stand for billions of nodes
            mark = self.peek_event().start_mark
            raise _YamlTooDeep(
                f"an alias (*name) at line {mark.line + 1}, column {mark.column + 1}; allowed: plain YAML "
                "without anchors and aliases (&name, *name), so a small file cannot expand to a huge one"
            )
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return super().compose_node(parent, index)  # a scalar or an alias: no deeper
        if self._depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise _YamlTooDeep(
                f"nested more than {MAX_YAML_DEPTH} levels deep (line {mark.line + 1}, column {mark.column + 1}); "
                f"allowed: at most {MAX_YAML_DEPTH} levels of mappings and lists"
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _unique_mapping(loader: yaml.SafeLoader, node, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:  # '? [a, b]: 1' (a list or a mapping as a key): not a TypeError from 'in seen'
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"a key that is a {type(key).__name__}; allowed: keys that are names or numbers",
                key_node.start_mark,
            ) from None
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def _unambiguous_number(loader: yaml.SafeLoader, node):
    """An int or float, except the YAML 1.1 forms that YAML 1.2 (and people) read otherwise:
    ``010`` (octal 8 to PyYAML, 10 to YAML 1.2) and base 60 ``1:30`` (90 to PyYAML, a string
    to YAML 1.2): refused rather than read as PyYAML would, silently."""
    text = node.value.replace("_", "").lstrip("+-")
    kind = "base-60" if ":" in text else "octal" if len(text) > 1 and text[0] == "0" and text[1].isdigit() else None
    if kind is not None:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{node.value!r} is a YAML 1.1 {kind} number, which YAML readers read differently; "
            "allowed: a decimal number (or quote it as text)",
            node.start_mark,
        )
    if node.tag.endswith(":int"):
        return loader.construct_yaml_int(node)
    return loader.construct_yaml_float(node)


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _unambiguous_number)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _unambiguous_number)


def load_yaml(text: str):
    """Parse YAML safely, rejecting duplicate keys, YAML 1.1's octal and base-60 numbers and
    nesting deeper than :data:`MAX_YAML_DEPTH` (yaml.YAMLError on bad input)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: ``<problem> (line L, column C)``, without PyYAML's quote of
    the text and its caret line."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return " ".join(f"{context + ': ' if context else ''}{problem}{where}".split())


def read_yaml_mapping(path: Path, error_cls: type[Exception], *, empty_ok: bool = False) -> dict:
    """The top-level mapping of the YAML file ``path``: the one safe way every ruleset
    file, training config and saved run config is read. Duplicate keys are rejected, and
    so is a file over :data:`MAX_YAML_BYTES` bytes or nested deeper than
    :data:`MAX_YAML_DEPTH` levels.

    Shared by ruleset files and training configs (``agents.training.config``). With
    ``empty_ok``, an empty file reads as ``{}``.

    Raises:
        OSError: the file cannot be read.
        error_cls: too large, invalid YAML, nested too deep, not UTF-8 text, or not a
            mapping at the top level (the message names the file and what is allowed).
    """
    path = Path(path)
    # opened without blocking (a FIFO with no writer would block the open itself), then checked
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # a pipe or a device would be read forever
            raise error_cls(f"{path}: not a regular file; allowed: a YAML file")
        raw = f.read(MAX_YAML_BYTES + 1)
    if len(raw) > MAX_YAML_BYTES:
        raise error_cls(
            f"{path}: more than {MAX_YAML_BYTES:,} bytes; "
            f"allowed: a YAML file of at most {MAX_YAML_BYTES:,} bytes (1 MiB)"
        )
    try:
        data = load_yaml(raw.decode("utf-8"))
    except _YamlTooDeep as exc:
        raise error_cls(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise error_cls(f"{path}: not valid YAML: {_yaml_problem(exc)}") from exc
    except UnicodeDecodeError as exc:
        raise error_cls(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); allowed: a UTF-8 YAML file"
        ) from None
    if data is None and empty_ok:
        return {}
    if not isinstance(data, dict):
        raise error_cls(f"{path}: expected a mapping of keys at the top level, got {type(data).__name__}")
    return data
