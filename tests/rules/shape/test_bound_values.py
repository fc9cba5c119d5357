"""The value a name holds at a place of a function (rules/shape/bound_values.py), read through its
per-function index: straight-line code, nested blocks, ``elif`` chains and module-level names."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.shape.bound_values import (
    branch_values, call_bound_names, declared_globals, module_value, value_before,
)
from shapecheck.semantic.node_memo import forget_node_memos
from shapecheck.semantic.walk import walk


class _Ctx:
    """The two questions bound_values asks of a rule context."""

    def __init__(self, module: cst.Module, function: cst.FunctionDef | None) -> None:
        self.module = module
        self.function = function

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


def _at(code: str, marker: str) -> tuple[_Ctx, cst.Name]:
    """The context of the function holding the call ``use(<marker>)`` and the name passed to it."""
    forget_node_memos()
    module = cst.parse_module(code)
    for function in walk(module, into_defs=True):
        if type(function) is not cst.FunctionDef:
            continue
        for node in walk(function, into_defs=True):
            if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "use" \
                    and module.code_for_node(node.args[0].value) == marker:
                return _Ctx(module, function), node.args[0].value  # type: ignore[return-value]
    raise AssertionError(marker)


def _value(code: str, marker: str = "a") -> str | None:
    ctx, name = _at(code, marker)
    found = value_before(ctx, name.value, name)
    return None if found is None else ctx.source(found)


def test_latest_plain_assignment_before_the_use() -> None:
    code = "def f(x):\n    a = x.sum(1)\n    b = 2\n    a = x.mean(1)\n    use(a)\n    a = 0\n"
    assert _value(code) == "x.mean(1)"


def test_enclosing_blocks_are_read_outwards() -> None:
    code = ("def f(x, c):\n    a = x.sum(1)\n    if c:\n        b = 1\n        while c:\n            use(a)\n"
            "    a = 3\n")
    assert _value(code) == "x.sum(1)"


def test_a_loop_around_the_use_that_binds_the_name_says_nothing() -> None:
    code = "def f(x, n):\n    a = x.sum(1)\n    for i in range(n):\n        use(a)\n        a = a * 2\n"
    assert _value(code) is None


def test_a_binding_that_is_not_a_plain_line_says_nothing() -> None:
    assert _value("def f(x):\n    a, b = x.sum(1), 2\n    use(a)\n") is None
    assert _value("def f(x):\n    a = x.sum(1)\n    with g() as a:\n        pass\n    use(a)\n") is None
    assert _value("def f(x):\n    a = 1\n    def a():\n        pass\n    use(a)\n") is None


def test_elif_chains_and_handlers_are_indexed() -> None:
    code = ("def f(x, c):\n    a = x.sum(1)\n    if c:\n        pass\n    elif c > 1:\n        b = 2\n"
            "    else:\n        try:\n            pass\n        except E:\n            use(a)\n")
    assert _value(code) == "x.sum(1)"
    code = "def f(x, c):\n    if c:\n        pass\n    elif c > 1:\n        a = x.max(0)\n        use(a)\n"
    assert _value(code) == "x.max(0)"


def test_a_name_inside_a_lambda_has_no_place() -> None:
    code = "def f(x):\n    a = x.sum(1)\n    g = lambda: use(a)\n"
    ctx, name = _at(code, "a")
    assert value_before(ctx, "a", name) is None


def test_both_sides_of_an_if_that_bind_the_name() -> None:
    code = "def f(x, c):\n    if c:\n        a = x.sum(1)\n    else:\n        a = x.sum(0)\n    use(a)\n"
    ctx, name = _at(code, "a")
    assert value_before(ctx, "a", name) is None
    found = [(ctx.source(v), side) for v, side in branch_values(ctx, "a", name)]
    assert found == [("x.sum(1)", "`c` is true"), ("x.sum(0)", "`c` is false")]


def test_module_value_of_a_name_bound_once_and_never_declared_global() -> None:
    code = "SCALE = 2.0\ndef f(x):\n    use(SCALE)\n"
    ctx, _name = _at(code, "SCALE")
    assert ctx.source(module_value(ctx, "SCALE")) == "2.0"  # type: ignore[arg-type]
    code = "SCALE = 2.0\ndef f(x):\n    use(SCALE)\ndef g():\n    global SCALE\n    SCALE = 3.0\n"
    ctx, _name = _at(code, "SCALE")
    assert module_value(ctx, "SCALE") is None
    code = "SCALE = 2.0\nSCALE = 3.0\ndef f(x):\n    use(SCALE)\n"
    ctx, _name = _at(code, "SCALE")
    assert module_value(ctx, "SCALE") is None


def test_declared_globals_reads_every_global_statement_below_a_node():
    module = cst.parse_module("def f():\n    global a, b\n    def g():\n        global c\nclass K:\n"
                              "    def m(self):\n        global d\nx = 1\n")
    assert declared_globals(module) == frozenset({"a", "b", "c", "d"})
    assert declared_globals(module.body[0]) == frozenset({"a", "b", "c"})
    assert declared_globals(module.body[2]) == frozenset()


def test_call_bound_names_are_the_names_a_call_result_is_assigned_to() -> None:
    code = ("import torch\nW = torch.zeros(3)\nK = 2\ndef f(x, c):\n    a = torch.ones(3)\n    b = x\n"
            "    if c:\n        d = g(x)\n    e, h = g(x)\n    def inner():\n        k = g(1)\n    use(a)\n"
            "def other():\n    z = g(2)\n")
    ctx, _ = _at(code, "a")
    # the function's own (nested blocks and definitions too) and the module-level statements'
    assert call_bound_names(ctx) == {"a", "d", "k", "W"}
    module_ctx = _Ctx(ctx.module, None)
    assert call_bound_names(module_ctx) == {"W", "a", "d", "k", "z"}


def test_every_call_value_before_gives_is_bound_to_a_call_bound_name() -> None:
    code = ("import torch\nW = torch.zeros(3)\ndef f(x, c):\n    a = torch.ones(3)\n    if c:\n"
            "        use(a)\n        use(W)\n        use(x)\n")
    for marker, bound in (("a", "torch.ones(3)"), ("W", "torch.zeros(3)"), ("x", None)):
        ctx, name = _at(code, marker)
        found = value_before(ctx, name.value, name, at_module=True)
        assert (None if found is None else ctx.source(found)) == bound
        assert (name.value in call_bound_names(ctx)) == (bound is not None)
