"""What a function returns, read from its statements (shapecheck.rules.autograd.returns)."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.returns import return_values


def _returns(code: str):
    fn = cst.parse_module(code).body[0]
    assert isinstance(fn, cst.FunctionDef)
    found = return_values(fn)
    return None if found is None else [cst.Module([]).code_for_node(e) for e in found]


def test_every_return_of_the_function_and_none_of_its_nested_functions():
    assert _returns("def f(a):\n    def g():\n        return 0\n    if a:\n        return 1\n"
                    "    for x in a:\n        return x\n    return 2\n") == ["1", "x", "2"]


def test_unknown_when_a_path_returns_nothing():
    assert _returns("def f(a):\n    if a:\n        return 1\n") is None
    assert _returns("def f(a):\n    if a:\n        return\n    return 1\n") is None
    assert _returns("def f(a):\n    yield a\n    return 1\n") is None
    assert _returns("def f(a):\n    if a:\n        return 1\n    raise ValueError(a)\n") == ["1"]
