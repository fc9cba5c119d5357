"""The layers of the package, checked on the real import graph.

- The shape algebra imports neither torch nor libcst: it must work where importing them fails.
- Imports go one way only: algebra -> semantic -> rules -> engine -> frontends; the torch-facing
  runtime imports the algebra alone; only the facades (the package itself, ``__main__``,
  ``lint`` and ``runtime``) may import anything, and nothing imports them.
- The modules of shapecheck import one another without a cycle.

The graph is grimp's, which counts every import: at module level, inside functions and under
``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

FACADES = frozenset({"shapecheck", "shapecheck.__main__", "shapecheck.lint", "shapecheck.runtime"})
#: The layers in import order: a module may import its own layer and those before it.
LAYERS = ("algebra", "semantic", "rules", "engine", "frontends")
TORCH_RUNTIME = "torch_runtime"
#: subpackages that are front ends too (the language server)
FRONT_END_PACKAGES = frozenset({"server"})

SCRIPT = textwrap.dedent(
    """
    import importlib.abc
    import sys

    BLOCKED = {"torch", "libcst", "numpy", "opt_einsum", "jaxtyping", "beartype"}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED:
            del sys.modules[name]

    import io
    from shapecheck import broadcast, einsum_parser, errors, shapes
    from shapecheck.frontends import algebra_cli

    spec = einsum_parser.parse("bij,bjk->bik")
    assert spec.output_shape((2, 3, 4), (2, 4, 5)).dims == (2, 3, 5)
    assert einsum_parser.parse("b h i d, b h j d -> b h i j").letters() == "bhid,bhjd->bhij"
    plan = einsum_parser.parse("ab,bc,cd->ad").contraction_order((2, 3), (3, 4), (4, 5))
    assert len(plan.path) == 2 and plan.flops > 0
    try:
        spec.output_shape((2, 3, 4), (2, 5, 6))
    except errors.EinsumShapeError as e:
        assert "index j is 4 in operand 0 but 5 in operand 1" in e.reason
    else:
        raise AssertionError("no error")
    try:
        einsum_parser.parse("ij->ii")
    except errors.EinsumSyntaxError as e:
        assert "^" in str(e)
    assert broadcast.broadcast_shapes((2, 1), (3,)).dims == (2, 3)
    try:
        broadcast.broadcast_shapes((2, 3), (2,))
    except errors.BroadcastError as e:
        assert e.axis == -1
    assert shapes.dims_to_shape(shapes.parse_dims("*b c")).rest_name == "b"
    out = io.StringIO()
    assert algebra_cli.einsum_command("ij,jk,kl", ["2x3", "3x4", "4x5"], out) == 0
    assert algebra_cli.broadcast_command(["2x1", "3"], out) == 0
    for name in BLOCKED:
        assert name not in sys.modules, name
    print("ok")
    """
)


def test_algebra_works_without_torch_and_libcst():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_algebra_sources_do_not_name_torch_or_libcst():
    algebra = [m for m in _graph().modules if _layer(m) == "algebra"]
    assert "shapecheck.einsum_parser" in algebra and "shapecheck.shapes" in algebra
    for module in [*algebra, "shapecheck.frontends.algebra_cli"]:
        path = REPO / (module.replace(".", "/") + ".py")
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")):
                assert "torch" not in stripped and "libcst" not in stripped, (module, line)


# ---------------------------------------------------------------------------------------------
# the import graph


@functools.lru_cache(maxsize=1)
def _graph():
    import grimp

    return grimp.build_graph("shapecheck", include_external_packages=False)


def _layer(module: str) -> str:
    """``"facade"``, ``"torch_runtime"``, one of :data:`LAYERS`, or ``"unplaced"``."""
    if module in FACADES:
        return "facade"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in FRONT_END_PACKAGES:
        return "frontends"
    if len(parts) == 2 and parts[1] not in LAYERS and parts[1] != TORCH_RUNTIME:
        return "algebra" if not _graph().find_children(module) else "unplaced"
    return parts[1] if parts[1] in LAYERS or parts[1] == TORCH_RUNTIME else "unplaced"


def _may_import(importer: str, imported: str) -> bool:
    low, high = _layer(imported), _layer(importer)
    if high == "facade":
        return True
    if low == "facade" or "unplaced" in (low, high):
        return False
    if high == TORCH_RUNTIME:
        return low in ("algebra", TORCH_RUNTIME)
    if low == TORCH_RUNTIME:
        return False
    return LAYERS.index(low) <= LAYERS.index(high)


def _where(importer: str, imported: str) -> str:
    details = _graph().get_import_details(importer=importer, imported=imported)
    lines = ", ".join(str(d["line_number"]) for d in details)
    return f"{importer} ({_layer(importer)}) imports {imported} ({_layer(imported)}) at line {lines}"


def test_layer_rule():
    allowed = [
        ("shapecheck.semantic.facts", "shapecheck.shapes"),
        ("shapecheck.frontends.cli", "shapecheck.engine.runner"),
        ("shapecheck.torch_runtime.einsum", "shapecheck.einsum_parser"),
        ("shapecheck.runtime", "shapecheck.torch_runtime.check"),
        ("shapecheck", "shapecheck.runtime"),
    ]
    refused = [
        ("shapecheck.shapes", "shapecheck.semantic.facts"),
        ("shapecheck.semantic.facts", "shapecheck.rules.base"),
        ("shapecheck.engine.cache", "shapecheck"),
        ("shapecheck.engine.runner", "shapecheck.torch_runtime.check"),
        ("shapecheck.torch_runtime.check", "shapecheck.semantic.facts"),
    ]
    assert [_may_import(a, b) for a, b in allowed] == [True] * len(allowed)
    assert [_may_import(a, b) for a, b in refused] == [False] * len(refused)


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in _graph().modules if _layer(m) == "unplaced")
    assert not unplaced, "place these in a layer of tests/test_layers.py: " + ", ".join(unplaced)


def test_imports_follow_the_layers():
    graph = _graph()
    wrong = [
        _where(importer, imported)
        for importer in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(importer))
        if not _may_import(importer, imported)
    ]
    assert not wrong, f"{len(wrong)} imports against the layers:\n" + "\n".join(wrong)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Cycles that together use every edge that lies on some cycle: for each such edge
    ``a -> b``, ``a -> b`` then the shortest way back from ``b`` to ``a``. Each cycle starts at
    its smallest module, and none is listed twice."""
    found: set[tuple[str, ...]] = set()
    for a in sorted(edges):
        for b in sorted(edges[a]):
            back = _shortest_path(edges, b, a)
            if back is None:
                continue
            cycle = [a, *back[:-1]]
            start = cycle.index(min(cycle))
            found.add(tuple(cycle[start:] + cycle[:start]))
    return [list(c) for c in sorted(found, key=lambda c: (len(c), c))]


def _shortest_path(edges: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """The modules on a shortest import path from ``start`` to ``goal``, both included."""
    previous = {start: start}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            if node == goal:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1]
            for nxt in sorted(edges.get(node, ())):
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return None


def test_cycle_finder_reports_readable_chains():
    edges = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b"], ["a", "b", "c"]]
    assert _cycles({"x": {"y"}, "y": set()}) == []


def test_import_graph_has_no_cycle():
    graph = _graph()
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    cycles = _cycles(edges)
    chains = [" -> ".join([*cycle, cycle[0]]) for cycle in cycles]
    assert not cycles, f"{len(cycles)} import cycles:\n" + "\n".join(chains)
