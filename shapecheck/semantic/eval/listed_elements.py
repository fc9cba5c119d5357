"""The elements of a list built in one expression and read unchanged.

``[torch.randn(2, 8) for _ in range(3)]`` is a list of three ``(2, 8)`` tensors (the elements of
:func:`~shapecheck.semantic.eval.comprehensions.comprehension_elements`), and a parameter bound
to it at a call site holds them. ``torch.stack(data)`` reads them through the name only while the
function never changes the list in place: no method call on it (``data.append(t)``), no item,
slice or augmented assignment, no ``del`` of an item.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.comprehensions import comprehension_elements
from shapecheck.semantic.eval.registry import Eval, expression
from shapecheck.semantic.facts import UNKNOWN, Fact
from shapecheck.semantic.walk import walk

__all__ = ["list_comprehension", "unchanged_elements"]


@expression(cst.ListComp)
def list_comprehension(ev: Eval, expr: cst.ListComp) -> Fact:
    """A list of the elements :func:`comprehension_elements` knows; unknown for any other
    comprehension."""
    elems = comprehension_elements(ev, expr)
    return Fact(elems=tuple(elems)) if elems is not None else UNKNOWN


def unchanged_elements(ev: Eval, expr: cst.BaseExpression) -> Optional[list[Fact]]:
    """The facts of the elements of the list the name ``expr`` holds, when the function being
    analysed never changes a list through that name; else ``None``."""
    if type(expr) is not cst.Name:
        return None
    held = ev.fact(expr)
    func = ev.model.scopes.analysed_function()
    if held.elems is None or held.maybe_pair or held.kind is not None or held.value is not None or func is None:
        return None
    name = expr.value
    return list(held.elems) if not any(_changes(node, name) for node in walk(func.body, into_defs=True)) \
        else None


def _changes(node: cst.CSTNode, name: str) -> bool:
    """``node`` changes the list called ``name`` in place (or may: a method call on it)."""
    if isinstance(node, cst.Call):
        return type(node.func) is cst.Attribute and type(node.func.value) is cst.Name and node.func.value.value == name
    if isinstance(node, cst.AugAssign):
        return type(node.target) is cst.Name and node.target.value == name
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, cst.Del):
        targets = [node.target]
    return any(type(t) is cst.Subscript and type(t.value) is cst.Name and t.value.value == name for t in targets)
