"""ember's packages are layers: a module imports only from its own layer and the ones below,
and no modules import each other in a cycle when they are loaded.

Read from the source, not by importing it: an AST walk over every module of ember/ collects
its imports, at module level and inside functions (a lazy import is still a dependency on
the layer it names); ``from ember import x`` counts as an import of ``ember.x`` when ``x`` is
a submodule. The oracle is the layer table below (docs/design.md describes it).
"""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

pytestmark = pytest.mark.fast

ROOT = pathlib.Path(__file__).resolve().parent.parent / "ember"

# Lowest first. A module belongs to the layer of the longest prefix naming it.
LAYERS = (
    ("core", ("ember._mlir", "ember._quiet", "ember._traceback", "ember.config", "ember.core",
              "ember.dtypes", "ember.errors", "ember.tree", "ember.tree_util")),
    ("rules", ("ember.rules",)),
    ("dialects", ("ember.dialects",)),
    ("passes", ("ember.passes",)),
    ("backends", ("ember.backends",)),
    ("frontend", ("ember.frontend", "ember.exported")),
    ("lax", ("ember.lax",)),
    ("numpy", ("ember.numpy", "ember.scipy", "ember.nn", "ember.random")),
    ("tools", ("ember.tools", "ember.demo", "ember")),
)

def _layer(module: str):
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or
                                                                 len(p) > best[1]):
                best = (i, len(p))
    return None if best is None else best[0]


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _targets(node, module: str, is_package: bool, known) -> list[str]:
    """The ember modules an import statement names (``from P import x``: ``P.x`` when that
    is a module, else ``P``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def _imports(tree: ast.Module):
    """(import node, whether it runs when the module is loaded) for every import in it:
    module level means outside any function (top-level ``if``/``try`` blocks and class
    bodies run at load; ``if TYPE_CHECKING:`` blocks never do)."""
    def walk(node, at_load):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, at_load
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, False)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from walk(child, False)
            else:
                yield from walk(child, at_load)
    return walk(tree, True)


@functools.cache
def _graph():
    """(upward imports as 'file:line: a imports b (layer x above y)', the module-level import
    edges {module: {module: first line}})."""
    modules = _modules()
    upward, edges = [], {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        mine = _layer(name)
        assert mine is not None, f"{path}: module {name} is in no layer of LAYERS"
        for node, at_load in _imports(tree):
            for target in _targets(node, name, path.name == "__init__.py", modules):
                if target != "ember" and not target.startswith("ember."):
                    continue
                theirs = _layer(target)
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                if theirs is not None and theirs > mine:
                    upward.append(f"{where}: {name} ({LAYERS[mine][0]}) imports {target} "
                                  f"({LAYERS[theirs][0]}, a layer above)")
                if at_load and target != name and target in modules:
                    edges.setdefault(name, {}).setdefault(target, where)
    return upward, edges


def _cycles(edges):
    """Each module-level import cycle, as its modules in order (a breadth-first search for
    the shortest way back to each edge's start)."""
    found = set()
    for a, out in edges.items():
        for b in out:
            path = _path(edges, b, a)
            if path is not None:
                cycle = [a, *path]
                i = cycle.index(min(cycle))          # one rotation per cycle
                found.add(tuple(cycle[i:] + cycle[:i]))
    return sorted(found)


def _path(edges, start, goal):
    """The shortest list of modules from ``start`` to ``goal`` (inclusive of ``start``, not
    of ``goal``), or None."""
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            if node == goal:
                path = []
                while node is not None:
                    path.append(node)
                    node = prev[node]
                return path[::-1][:-1]
            for nxt in edges.get(node, {}):
                if nxt not in prev:
                    prev[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def test_no_module_imports_from_a_layer_above_its_own():
    upward, _ = _graph()
    assert not upward, "upward imports (a lazy import inside a function counts too):\n" + \
        "\n".join(upward)


def test_no_module_level_import_cycles():
    _, edges = _graph()
    cycles = _cycles(edges)
    assert not cycles, "module-level import cycles:\n" + "\n".join(
        " -> ".join(c + (c[0],)) + f"  ({edges[c[0]][c[1]]})" for c in cycles)


def test_the_check_sees_upward_lazy_and_aliased_imports():
    # The walk itself: a function-level import, ``from ember import x as y`` of a submodule,
    # and a module-level import each register (a check that could never fail would pass).
    src = ("import ember.lax\n"
           "from ember import numpy as enp\n"
           "def f():\n"
           "    from ember.frontend import api\n"
           "if TYPE_CHECKING:\n"
           "    import ember.nn\n")
    tree = ast.parse(src)
    known = {"ember", "ember.lax", "ember.numpy", "ember.frontend", "ember.frontend.api",
             "ember.nn"}
    found = [(t, at_load) for node, at_load in _imports(tree)
             for t in _targets(node, "ember.passes.x", False, known)]
    assert found == [("ember.lax", True), ("ember.numpy", True),
                     ("ember.frontend.api", False), ("ember.nn", False)]
    assert [_layer(t) for t, _ in found] == [6, 7, 5, 7] and _layer("ember.passes.x") == 3
    edges = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:1"}, "c": {"a": "c.py:1"}}
    assert _cycles(edges) == [("a", "b", "c")]
    assert _cycles({"a": {"b": "a.py:1"}, "b": {"c": "b.py:1"}}) == []
    # And on ember itself: ember.numpy._core loads ember.lax; lax/_linalg.py's lazy import of
    # the frontend's vmap is not a load-time edge.
    _, real = _graph()
    assert "ember.lax" in real["ember.numpy._core"] and "ember.frontend.vmap" not in real.get(
        "ember.lax._linalg", {})
