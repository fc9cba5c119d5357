"""Two sets of rows paired by position where the same function pairs them all-against-all.

``torch.min(boxes1[:, None, 2:], boxes2[:, 2:])`` makes an ``(N, M, 2)`` result: the ``None``
puts the rows of ``boxes1`` and those of ``boxes2`` on two axes (every box against every box).
``torch.max(boxes1[:, :2], boxes2[:, :2])`` in the same function, the ``None`` forgotten, lines
the rows of the two up on one axis: ``(N, 2)`` against ``(M, 2)`` raises unless ``N`` equals
``M``. When the code then combines the two results (``rb - lt``), it says itself that both were
meant as the same all-against-all pairs, so the second one is the bug (wrong unless the two sets
have the same length, and then it pairs box ``i`` with box ``i`` only).

Only plain names that the function never rebinds are matched, each operand a subscript that keeps
the rows first (``p[:, :2]``, ``p[:, 2:]``) or the name itself; the pairing operand is
``p[:, None, ...]`` or ``p.unsqueeze(1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.rules.shape.axis_sizes import rebound
from shapecheck.semantic.torch_api import BROADCASTING_FUNCTIONS
from shapecheck.semantic.walk import walk

__all__ = ["Pairing", "paired_by_position"]


@dataclass(frozen=True)
class Pairing:
    """The all-against-all combination (``node``) of ``rows`` and ``cols`` that the result of
    the op found (bound to ``name``) is combined with (at ``mixed``)."""

    rows: str
    cols: str
    node: cst.CSTNode
    mixed: cst.BinaryOperation


def _is_none(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def _full(el: cst.SubscriptElement) -> bool:
    s = el.slice
    return type(s) is cst.Slice and s.lower is None and s.upper is None and s.step is None


def _rows_first(expr: cst.BaseExpression) -> Optional[str]:
    """``p`` for ``p`` or ``p[:, ...]`` with no new axis and no ellipsis (the rows stay dim 0)."""
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is not cst.Subscript or type(expr.value) is not cst.Name or not expr.slice \
            or not _full(expr.slice[0]):
        return None
    for el in expr.slice[1:]:
        s = el.slice
        if type(s) is cst.Index and (_is_none(s.value) or type(s.value) is cst.Ellipsis):
            return None
    return expr.value.value


def _rows_apart(expr: cst.BaseExpression) -> Optional[str]:
    """``p`` for ``p[:, None, ...]`` or ``p.unsqueeze(1)``: the rows of ``p`` on their own axis."""
    if type(expr) is cst.Subscript and type(expr.value) is cst.Name and len(expr.slice) >= 2 \
            and _full(expr.slice[0]) and type(expr.slice[1].slice) is cst.Index and _is_none(expr.slice[1].slice.value):
        return expr.value.value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "unsqueeze" \
            and type(expr.func.value) is cst.Name and len(expr.args) == 1 \
            and type(expr.args[0].value) is cst.Integer and expr.args[0].value.value == "1":
        return expr.func.value.value
    return None


def operands(ctx, node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The two operands of an elementwise binary op or a broadcasting torch function call."""
    if type(node) is cst.BinaryOperation and isinstance(node.operator, ARITHMETIC_OPERATORS):
        return node.left, node.right
    if type(node) is cst.Comparison and len(node.comparisons) == 1 \
            and isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
        return node.left, node.comparisons[0].comparator
    if type(node) is cst.Call:
        qual = ctx.qualname(node.func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual is not None and qual.startswith("torch.") and len(args) == 2 and len(node.args) == 2 and (
                qual[6:] in BROADCASTING_FUNCTIONS
                or qual in ("torch.max", "torch.min") and cst.Subscript in (type(args[0]), type(args[1]))):
            return args[0], args[1]  # `torch.max(a, b[:, :2])`: a slice is a tensor, not a dim
    return None


def _assigned(function: cst.FunctionDef) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``(name, value)`` of each ``name = value`` statement directly in ``function``'s body."""
    for stmt in function.body.body:
        if type(stmt) is not cst.SimpleStatementLine:
            continue
        for small in stmt.body:
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
                yield small.targets[0].target.value, small.value


def _names_in(expr: cst.BaseExpression) -> set[str]:
    found = {n.value for n in walk(expr, into_defs=True) if type(n) is cst.Name}
    if type(expr) is cst.Name:
        found.add(expr.value)
    return found


def _mixes(function: cst.FunctionDef, a: str, b: str) -> Optional[cst.BinaryOperation]:
    """An arithmetic op in ``function`` whose two sides read ``a`` and ``b`` (``rb - lt``)."""
    for node in walk(function.body, into_defs=True):
        if type(node) is cst.BinaryOperation and isinstance(node.operator, ARITHMETIC_OPERATORS):
            left, right = _names_in(node.left), _names_in(node.right)
            if a in left and b in right or b in left and a in right:
                return node
    return None


def paired_by_position(ctx, node: cst.CSTNode) -> Optional[Pairing]:
    """A :class:`Pairing` when ``node``, bound alone to a name, lines up the rows of two tensors
    that the same function pairs all-against-all in an op whose result is combined with it."""
    function = ctx.function
    pair = operands(ctx, node)
    if function is None or pair is None:
        return None
    p, q = _rows_first(pair[0]), _rows_first(pair[1])
    if p is None or q is None or p == q:
        return None
    mine = [name for name, value in _assigned(function) if value is node]
    if len(mine) != 1:
        return None
    for name, value in _assigned(function):
        other = operands(ctx, value)
        if other is None or value is node:
            continue
        for a, b in (other, other[::-1]):
            rows, cols = _rows_apart(a), _rows_first(b)
            if {rows, cols} != {p, q}:
                continue
            mixed = _mixes(function, mine[0], name)
            if mixed is not None and not rebound(function, p) and not rebound(function, q) \
                    and not rebound(function, mine[0], once=True) and not rebound(function, name, once=True):
                return Pairing(rows, cols, value, mixed)  # type: ignore[arg-type]
    return None
