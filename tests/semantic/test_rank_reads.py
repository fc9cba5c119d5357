"""Reads of a tensor's rank (``shapecheck.semantic.rank_reads``) and what a test on them does to
the rank that other uses give (``shapecheck.semantic.evidence``): a function that tests
``x.ndim`` takes several ranks, so no single use bounds it."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from shapecheck.semantic.evidence import PARAMETERS, Evidence, scan_function
from shapecheck.semantic.rank_reads import rank_read


@pytest.mark.parametrize("text, name", [
    ("x.ndim", "x"), ("x.dim()", "x"), ("x.ndimension()", "x"), ("len(x.shape)", "x"), ("len(x.size())", "x"),
    ("x.shape", None), ("x.dim(0)", None), ("len(x)", None), ("len(x.size(0))", None), ("self.x.ndim", None),
])
def test_rank_read(text: str, name) -> None:
    assert rank_read(cst.parse_expression(text)) == name


def _evidence(code: str, name: str) -> Evidence:
    fn = cst.parse_module(textwrap.dedent(code)).body[0]
    assert isinstance(fn, cst.FunctionDef)
    return scan_function(fn, lambda e: None).at(PARAMETERS).get(name, Evidence())


def test_a_rank_test_drops_the_rank_of_uses_but_keeps_tensorness() -> None:
    code = """
    def f(x, w):
        if x.ndim == 2:
            return x.unsqueeze(1) @ w
        return x.permute(0, 2, 1) @ w
    """
    ev = _evidence(code, "x")
    assert ev.tensor and ev.shape() is None


def test_without_a_rank_test_the_use_bounds_the_rank() -> None:
    ev = _evidence("def f(x):\n    return x.permute(0, 2, 1)\n", "x")
    assert ev.tensor and ev.shape() is not None and ev.shape().rank == 3
