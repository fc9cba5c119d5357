"""shapecheck.engine.positions gives exactly libcst's PositionProvider spans, and falls back to it."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from conftest import REPO

from shapecheck.engine import positions

SAMPLES = [
    "import torch\r\nif x:\r\n\ty = torch.randn(3, 4).t().view(12)\r\n",
    "def f(a,\n      b=(1,\n         2)):\n    '''doc\n    string'''\n    return a @ b  # c\n\n\n"
    "class K(B, metaclass=M):\n    @d\n    def g(self): return [i for i in range(3) if i]\n",
    "x = 1; y = 2\nwith a as b, c as d:\n    pass\n"
    "try:\n    pass\nexcept (E, F) as e:\n    raise\nelse:\n    pass\nfinally:\n    pass\n",
    "s = f'{a!r:>{w}} {b}'\nlambda *a, **k: (yield)\nasync def h():\n    async for q in r:\n        await q\n",
    "\ufeffmatch p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n",
    "x = (\n    a\n    + b\n)\n\n\n",
    "",
]


def _reference(module):
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in ranges.items()}


def _all_nodes(module):
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            found.append(node)
            return True

    module.visit(Collect())
    return found


@pytest.mark.parametrize("text", SAMPLES + [
    (REPO / "shapecheck" / "lint.py").read_text(encoding="utf-8"),
    (REPO / "examples" / "sc101_view_on_non_contiguous_bad.py").read_text(encoding="utf-8"),
])
def test_same_spans_as_position_provider(text):
    module = cst.parse_module(text)
    nodes = _all_nodes(module)
    assert positions.node_positions(module, nodes) == {n: s for n, s in _reference(module).items() if n in set(nodes)}


def test_falls_back_to_the_provider(monkeypatch):
    module = cst.parse_module("a = b.c(d)\n")
    nodes = _all_nodes(module)

    def broken(module, nodes):
        raise AttributeError("libcst changed")

    monkeypatch.setattr(positions, "_fast", broken)
    assert positions.node_positions(module, nodes) == _reference(module)


def test_foreign_nodes_are_left_out():
    module = cst.parse_module("a = 1\n")
    assert positions.node_positions(module, [cst.Name("zzz")]) == {}
