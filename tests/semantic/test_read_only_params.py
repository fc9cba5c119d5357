"""Which parameters a function only reads (semantic/read_only_params.py)."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.semantic.read_only_params import read_only_parameters

RESOLVE = {"torch.topk": "torch.topk", "torch.cat": "torch.cat", "F.softmax": "torch.nn.functional.softmax"}


def _resolve(expr: cst.BaseExpression):
    from shapecheck.semantic.syntax import dotted_name

    return RESOLVE.get(dotted_name(expr) or "")


def _read_only(code: str) -> set[str]:
    fn = cst.parse_module(code).body[0]
    assert isinstance(fn, cst.FunctionDef)
    return set(read_only_parameters(fn, _resolve))


@pytest.mark.parametrize("code, expected", [
    # reads: operands, methods that are not in place, torch functions
    ("def f(out, y):\n    _, p = out.topk(5, 1)\n    return p.t().eq(y.view(1, -1))\n", {"out", "y"}),
    ("def f(a, b):\n    return torch.cat([a, b]) * 2 + a[0]\n", {"a", "b"}),
    ("def f(x):\n    return F.softmax(x, dim=-1).sum()\n", {"x"}),
    # in place, through `.data` writes, subscript and augmented assignment
    ("def f(t):\n    t.mul_(2)\n    return t\n", set()),
    ("def f(t, v):\n    t[0] = v\n", {"v"}),
    ("def f(t):\n    t += 1\n    return t\n", set()),
    ("def f(t):\n    t.data = t.data * 2\n", set()),
    # handed on to an unknown function, rebound, or `out=`
    ("def f(t):\n    helper(t)\n", set()),
    ("def f(t):\n    t = t * 2\n    t.add_(1)\n", set()),
    ("def f(t, o):\n    torch.cat([t], out=o)\n", {"t"}),
    ("def f(t):\n    for t in range(3):\n        pass\n", set()),
    ("def f(t, c):\n    with c as t:\n        pass\n", {"c"}),
])
def test_read_only_parameters(code, expected):
    assert _read_only(code) == expected
