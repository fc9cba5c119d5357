"""The elements of a list comprehension over a range of known length:
``[x ** i for i in range(1, POLY_DEGREE + 1)]`` with ``POLY_DEGREE = 4`` is a list of four
elements, each with the fact of the element expression (its loop variable an int)."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import INT, Fact

#: longer ranges are not spelled out element by element
_MAX_ELEMENTS = 64


def comprehension_elements(ev: Eval, expr: cst.BaseExpression) -> Optional[list[Fact]]:
    """The facts of the elements of ``[elt for i in range(...)]`` (one ``for``, no ``if``, the
    range's bounds known ints), each the fact of ``elt`` with ``i`` an int; ``None`` for any
    other expression, or when the element's shape names the loop variable (its size changes
    from one element to the next)."""
    if type(expr) is not cst.ListComp:
        return None
    comp = expr.for_in
    if comp.inner_for_in is not None or comp.ifs or comp.asynchronous is not None or type(comp.target) is not cst.Name:
        return None
    count = _range_length(ev, comp.iter)
    if count is None or not 0 < count <= _MAX_ELEMENTS:
        return None
    name = comp.target.value
    elt = fact_with_binding(ev, expr.elt, name, Fact(kind=INT))
    if elt.shape is not None and any(_mentions(d, name) for d in elt.shape.dims):
        return None
    return [elt] * count


def fact_with_binding(ev: Eval, expr: cst.BaseExpression, name: str, bound: Fact) -> Fact:
    """The fact of ``expr`` with ``name`` bound to ``bound`` (the variable of a comprehension,
    the parameter of a lambda); the outer binding of ``name`` is back afterwards."""
    env = ev.model.scopes.top.env
    outer = env.get(name)
    env[name] = bound
    try:
        return ev.fact(expr)
    finally:
        if outer is None:
            env.pop(name, None)
        else:
            env[name] = outer


def _mentions(d: object, name: str) -> bool:
    return isinstance(d, str) and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", d) is not None


def _range_length(ev: Eval, expr: cst.BaseExpression) -> Optional[int]:
    """``len(range(...))`` when ``expr`` is a call of the builtin ``range`` with int bounds the
    analysis knows; else ``None``."""
    if type(expr) is not cst.Call or type(expr.func) is not cst.Name or expr.func.value != "range":
        return None
    defs = ev.model.callees
    if "range" in ev.model.scopes.top.env or defs is not None and "range" in defs.functions \
            or ev.model.imports.resolve(expr.func) is not None:
        return None  # a name that shadows the builtin
    if not 1 <= len(expr.args) <= 3 or any(a.keyword is not None or a.star for a in expr.args):
        return None
    bounds = [ev.fact(a.value).value for a in expr.args]
    if not all(type(b) is int for b in bounds) or len(bounds) == 3 and bounds[2] == 0:
        return None
    return len(range(*bounds))
