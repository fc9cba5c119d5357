"""The facts of every spelling of a reduction (issue 11, item 5): shapes of the pairs, norms,
dims held in variables or parameter defaults, and the provenance SC201 reads."""

from __future__ import annotations

import pytest

from semantic_probe import facts
from shapecheck.shapes import format_shape


def _shape(expr: str, setup: str = "x = torch.randn(2, 3, 4)\n") -> str:
    (f,) = facts(setup + f"reveal({expr})\n")
    return format_shape(f.shape) if f.shape is not None else "unknown"


@pytest.mark.parametrize("expr, shape", [
    ("x.mode().values", "(2, 3)"),
    ("torch.mode(x, 1)[0]", "(2, 4)"),
    ("x.kthvalue(2).values", "(2, 3)"),
    ("x.kthvalue(2, 0, True).values", "(1, 3, 4)"),
    ("x.topk(2, dim=1).values", "(2, 2, 4)"),
    ("x.topk(2)[1]", "(2, 3, 2)"),
    ("x.sort(1)[0]", "(2, 3, 4)"),
    ("torch.aminmax(x, dim=1)[0]", "(2, 4)"),
    ("x.aminmax()[1]", "()"),
    ("torch.std_mean(x, 1)[1]", "(2, 4)"),
    ("torch.var_mean(x, 1, keepdim=True)[0]", "(2, 1, 4)"),
    ("torch.linalg.norm(x, dim=1)", "(2, 4)"),
    ("torch.linalg.norm(x, 2, -1, True)", "(2, 3, 1)"),
    ("torch.linalg.vector_norm(x, dim=(1, 2))", "(2,)"),
    ("torch.linalg.vector_norm(x)", "()"),
    ("x.norm(2, 1)", "(2, 4)"),
    ("x.sum(dim=[0, 2])", "(3,)"),
    ("x.std(1, True)", "(2, 4)"),
])
def test_shapes(expr, shape):
    assert _shape(expr) == shape


def test_a_dim_in_a_variable():
    assert _shape("x.mean(d)", "x = torch.randn(2, 3, 4)\nd = 1\n") == "(2, 4)"


def test_provenance_names_the_tensor_whose_shape_was_reduced():
    (a, b, c) = facts("def f(x, n):\n    reveal(x)\n    reveal((x ** 2).sum(1))\n    reveal((x @ n).sum(1))\n")
    assert b.reduction.source is a and b.reduction.source_name == "x" and b.reduction.axes == (1,)
    assert c.reduction.source_name is None


def test_a_parameter_default_gives_the_dim_when_the_function_never_rebinds_it():
    (a, b, c) = facts(
        "def f(x, dim=-1):\n    reveal(x.mean(dim))\n"
        "def g(x, dim=-1):\n    dim = 0\n    reveal(x.mean(dim))\n"
        "def h(x, n, dim=-1):\n    reveal(x.mean(dim))\n    if n:\n        dim = n\n"
    )
    assert a.reduction.axes == (-1,) and a.reduction.default_of == "dim"
    assert b.reduction.axes == (0,) and b.reduction.default_of is None
    assert c.reduction is None


def test_a_dim_keyword_makes_a_method_pair_readable_by_index():
    (a, b) = facts("def f(x):\n    reveal(x.max(dim=1)[0])\ndef g(x):\n    reveal(x.max(1)[0])\n")
    assert a.reduction is not None and a.reduction.axes == (1,)
    assert b.reduction is None  # numpy's `a.max(1)[0]` is the first row's maximum


def test_max_of_two_tensors_is_elementwise():
    (f,) = facts("a = torch.randn(2, 3)\nb = torch.randn(3)\nreveal(torch.max(a, b))\n")
    assert format_shape(f.shape) == "(2, 3)" and f.reduction is None
