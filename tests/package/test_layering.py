"""Layering: the command-line package sits on top of the library, and the library's
modules import each other without circles.

Both checks read the source (``ast``), so every import counts, the ones inside functions
too (a deferred import still ties two modules together); nothing is imported.

1. The library is layered (:data:`LAYERS`, lowest first: utils, rules, engine, render, the
   doors, replay and testing, the policies, evaluation, training, apps, the command-line
   tools): no module imports a module of a layer above its own.

2. No import cycle among the modules of ``jamb_env`` and ``agents``. The graph has an edge
   A -> B for every ``import B`` / ``from B import name`` in A (module level or inside a
   function; under ``if TYPE_CHECKING:`` excepted), resolved to the module that defines what
   is imported:

   - ``from P import name`` where ``P.name`` is a module: an edge to ``P.name``;
   - ``from P import name`` where the package ``P``'s ``__init__`` re-exports ``name`` from
     one of its submodules (``from .sub import name``, at module level or in its lazy
     ``__getattr__``): an edge to that submodule, not to ``P`` itself. So a module that
     takes ``JambEnv`` from ``jamb_env`` depends on ``jamb_env.env``, and a package
     ``__init__`` re-exporting its submodules is never a cycle by itself;
   - otherwise (a name defined in ``P/__init__.py``, or ``import P``): an edge to ``P``.

   Importing ``P.sub`` also runs ``P/__init__.py``, but that implicit step is not an edge:
   it would make every package that re-exports a submodule a cycle with that submodule.
   Every strongly connected component of more than one module is a cycle and fails the
   test, unless it is listed in ``KNOWN_CYCLES`` (cycles in files other engineers own, each
   with the reason it stays).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("jamb_env", "agents")

#: Cycles left in place, as sets of modules: each is in files outside the command-line
#: work (owned elsewhere), with why it stays. Empty: none is known.
KNOWN_CYCLES: list[frozenset[str]] = []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Module name -> file, for every module of jamb_env and agents."""
    return {module_name(p): p for pkg in LIBRARY for p in sorted((ROOT / pkg).rglob("*.py"))}


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: ast.AST):
    """Every Import / ImportFrom node of a module, at any depth, except those under
    ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module name of a (possibly relative) ``from ... import``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(path: Path) -> list[tuple[str, str | None]]:
    """``(module, name)`` for each thing a file imports: ``(M, None)`` for ``import M``,
    ``(M, n)`` for ``from M import n`` (relative imports made absolute)."""
    module = module_name(path)
    is_package = path.name == "__init__.py"
    out: list[tuple[str, str | None]] = []
    for node in imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names]
        else:
            src = absolute(module, node, is_package)
            out += [(src, alias.name) for alias in node.names]
    return out


def reexports(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """package -> {name: the submodule its ``__init__`` takes that name from}."""
    table: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        if path.name != "__init__.py":
            continue
        table[name] = {}
        for node in imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level:
                src = absolute(name, node, True)
                for alias in node.names:
                    if src != name and src in modules:
                        table[name][alias.asname or alias.name] = src
    return table


def resolve(src: str, name: str | None, modules: dict[str, Path], exported: dict[str, dict[str, str]]) -> str | None:
    """The project module an import depends on (None: outside the project)."""
    if name is not None and f"{src}.{name}" in modules:
        return f"{src}.{name}"
    seen = set()
    while name is not None and name in exported.get(src, {}) and src not in seen:
        seen.add(src)
        src = exported[src][name]
    if src in modules:
        return src
    return None


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    exported = reexports(modules)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for src, name in imported_names(path):
            target = resolve(src, name, modules, exported)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def path_through(graph: dict[str, set[str]], component: frozenset[str]) -> list[str]:
    """One cycle inside a component, for the failure message: a -> b -> ... -> a."""
    start = min(component)
    parents = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                chain = [node]
                while parents[chain[-1]] is not None:
                    chain.append(parents[chain[-1]])
                return chain[::-1] + [start]  # start, ..., node, start
            if child not in parents:
                parents[child] = node
                queue.append(child)
    return sorted(component)


#: The layers, lowest first: a module may import its own layer and the layers below it,
#: never one above (a deferred import inside a function counts too). A module belongs to the
#: layer of the longest prefix that names it; CONTRIBUTING.md draws the same map.
LAYERS: list[tuple[str, ...]] = [
    ("jamb_env.utils",),  # errors, number checks, safe file reading and atomic writes
    ("jamb_env.rules",),  # the pure rules: kernels, the state record and its transition, rulesets
    ("jamb_env.engine",),  # N games as arrays, observations, seeds, the door rules
    ("jamb_env.render",),  # the sheet as text and as a picture
    (  # the doors: Gymnasium, the vector APIs, SB3's VecEnv, PettingZoo, OpenSpiel, wrappers
        "jamb_env",
        "jamb_env.env",
        "jamb_env.vector",
        "jamb_env.gym_vector",
        "jamb_env.multiplayer",
        "jamb_env.multiplayer_vector",
        "jamb_env.openspiel",
        "jamb_env.wrappers",
    ),
    ("jamb_env.replay", "jamb_env.testing"),  # game records, the replay page, videos; the conformance suite
    ("agents",),  # the policies
    ("agents.evaluation",),  # agents on the canonical games, matches, ratings
    ("agents.training",),  # PPO, self-play, value learning, tuning, RLlib, the zoo
    ("agents.apps",),  # the terminal game, the web server, benchmarks
    ("agents.apps.cli",),  # the command-line tools (only scripts/ imports them)
]


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix naming ``module``."""
    best, length = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = i, len(prefix)
    return best


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``"a -> b"`` for every import of a module ``b`` of a higher layer than ``a``'s."""
    return [
        f"{module} (layer {layer_of(module)}) -> {target} (layer {layer_of(target)})"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]


def test_every_module_has_a_layer():
    assert [m for m in project_modules() if layer_of(m) < 0] == []


def test_no_module_imports_a_layer_above_it():
    offenders = upward_imports(import_graph())
    assert not offenders, "imports of a higher layer:\n" + "\n".join(offenders)


def test_the_layer_check_can_fail():
    assert upward_imports({"jamb_env.rules.game": {"jamb_env.env"}, "jamb_env.env": {"jamb_env.rules.game"}}) == [
        "jamb_env.rules.game (layer 1) -> jamb_env.env (layer 4)"
    ]


def test_no_import_cycle_in_the_library():
    graph = import_graph()
    found = [c for c in cycles(graph) if c not in KNOWN_CYCLES]
    message = "\n".join(" -> ".join(path_through(graph, c)) + f"  (component: {', '.join(sorted(c))})" for c in found)
    assert not found, "import cycles:\n" + message


def test_the_known_cycles_are_still_there():
    """A known exception that no longer exists is taken off the list."""
    present = set(cycles(import_graph()))
    assert [c for c in KNOWN_CYCLES if c not in present] == []


@pytest.mark.parametrize(
    "source, expect",
    [
        ({"a": "from . import b\n", "a.b": "from a import c\n", "a.c": "from a.b import x\n"}, [{"a.b", "a.c"}]),
        ({"a": "from .b import x\n", "a.b": "def f():\n    from a import x\n"}, []),  # a re-export, not a cycle
        (
            {"a": "", "a.b": "def f():\n    from a.c import y\n", "a.c": "import a.b\n"},
            [{"a.b", "a.c"}],
        ),  # inside a function too
        (
            {
                "a": "",
                "a.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.c import y\n",
                "a.c": "import a.b\n",
            },
            [],
        ),
    ],
)
def test_the_cycle_finder_finds_cycles(tmp_path, monkeypatch, source, expect):
    """The checks can fail: a tiny package with and without a cycle."""
    for module, text in source.items():
        parts = module.split(".")
        path = (
            tmp_path.joinpath(*parts, "__init__.py")
            if len(parts) == 1
            else tmp_path.joinpath(*parts[:-1], parts[-1] + ".py")
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "LIBRARY", ("a",))
    assert sorted(map(set, cycles(import_graph())), key=sorted) == expect
