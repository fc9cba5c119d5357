"""Reduced dims held in a local or an attribute set only from int literals
(:mod:`shapecheck.semantic.eval.dim_choices`): one value reads as written, several are listed in
the reduction's provenance, anything else stays unknown."""

from __future__ import annotations

import pytest

from semantic_probe import HEAD, one
from shapecheck.shapes import format_shape

CLASS = ("class M(nn.Module):\n    def __init__(self, cl, d=1):\n        super().__init__()\n        self.cl = cl\n"
         "        self.d = d\n        self.sd = (1, 2)\n        self.pick = (1, 2) if cl else (2, 3)\n"
         "    def forward(self, x):\n        x = torch.zeros(2, 3, 4, 5)\n")


def _reveal(line: str):
    return one(HEAD + CLASS + "        " + line + "\n")


def test_one_literal_value_reads_as_written():
    f = _reveal("reveal(x.mean(dim=self.sd))")
    assert format_shape(f.shape) == "(2, 5)"
    assert f.reduction is not None and f.reduction.axes == (1, 2) and f.reduction.alternatives == ()


@pytest.mark.parametrize("line", [
    "reveal(x.mean(dim=self.pick))",
    "dim = (1, 2) if self.cl else (2, 3)\n        reveal(x.mean(dim=dim))",
])
def test_several_values_are_each_listed(line):
    f = _reveal(line)
    assert f.shape is None
    assert f.reduction is not None and f.reduction.alternatives == ((1, 2), (2, 3))


@pytest.mark.parametrize("line", [
    "reveal(x.mean(dim=self.d))",
    "dim = self.d if self.cl else 1\n        reveal(x.mean(dim=dim))",
    "dim = (1, 2) if self.cl else (2, 3)\n        reveal(x.mean(dim=dim, keepdim=True))",
    # bound again by a `with`
    "dim = (1, 2) if self.cl else (2, 3)\n        with self.cl as dim:\n            reveal(x.mean(dim=dim))",
])
def test_anything_else_gives_no_provenance(line):
    assert _reveal(line).reduction is None
