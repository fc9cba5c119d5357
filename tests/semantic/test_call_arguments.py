"""passed_argument: the expression a call passes to a parameter, by position or keyword."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.call_arguments import passed_argument
from shapecheck.semantic.summaries import Callee

MODULE = cst.parse_module(
    "def f(a, b, c=1):\n    pass\n"
    "class M:\n    def forward(self, x, y=None):\n        pass\n    @staticmethod\n    def s(x):\n        pass\n")
F = Callee(MODULE.body[0])
FORWARD = Callee(MODULE.body[1].body.body[0], "M")
STATIC = Callee(MODULE.body[1].body.body[1], "M")


def _call(text: str) -> cst.Call:
    call = cst.parse_expression(text)
    assert isinstance(call, cst.Call)
    return call


def _text(expr) -> str:
    return cst.Module([]).code_for_node(expr) if expr is not None else "-"


def test_positional_keyword_and_default():
    call = _call("f(x[:, None], c=y)")
    assert [_text(passed_argument(F, call, n)) for n in ("a", "b", "c")] == ["x[:, None]", "-", "y"]


def test_methods_skip_self_unless_static():
    assert _text(passed_argument(FORWARD, _call("m(t)"), "x")) == "t"
    assert _text(passed_argument(STATIC, _call("M.s(t)"), "x")) == "t"


def test_unpacked_arguments_say_nothing():
    assert passed_argument(F, _call("f(*xs)"), "a") is None
    assert passed_argument(F, _call("f(1, **kw)"), "a") is None
