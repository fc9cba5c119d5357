"""Calls that return Python bools (``torch.equal``, ``x.is_contiguous()``) and the elementwise
comparisons that stay tensors; the tables checked against torch."""

from __future__ import annotations

import pytest

from semantic_probe import facts
from semantic_probe import one_with_head as one

from shapecheck.semantic.facts import BOOL, TENSOR


@pytest.mark.parametrize(
    "expr",
    ["torch.equal(x, y)", "torch.allclose(x, y)", "torch.is_tensor(x)", "x.is_contiguous()",
     "x.is_floating_point()", "torch.is_nonzero(x[0, 0])", "x.equal(y)", "x.allclose(y, atol=1e-6)",
     "torch.is_floating_point(x)", "torch.is_complex(x)", "x.is_same_size(y)", "torch.cuda.is_available()",
     "torch.is_grad_enabled()", "x.is_sparse", "x.is_cuda", "torch.equal(a, b)"],
)
def test_python_bool_results(expr):
    f = one(f"x = torch.randn(2, 3)\ny = torch.randn(2, 3)\nreveal({expr})")
    assert (f.kind, f.shape, f.grad) == (BOOL, None, None)


def test_elementwise_comparisons_stay_tensors_and_unknown_receivers_stay_unknown():
    seen = facts("x = torch.randn(2, 3)\nreveal(torch.eq(x, x))\nreveal(x.ne(x))\nreveal(a.is_contiguous())\n")
    assert [(f.kind, f.dtype_kind) for f in seen] == [(TENSOR, "bool"), (TENSOR, "bool"), (None, None)]
    assert [str(f.shape.dims) for f in seen[:2]] == ["(2, 3)", "(2, 3)"]
