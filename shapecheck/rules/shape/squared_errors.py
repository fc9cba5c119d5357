"""A hand-written error reduced to a loss, between a ``(..., 1)`` prediction and a 1-D target.

``((out - y) ** 2).mean()`` with ``out`` ``(N, 1)`` (a regression head, ``nn.Linear(d, 1)``) and
``y`` ``(N,)``: broadcasting makes the difference ``(N, N)``, every prediction against every
target, and the mean of that is silently wrong (torch raises nothing). A column written on
purpose (``x[:, None] - y``, ``x.unsqueeze(1) - y``, ``x.view(-1, 1) - y``: the pairwise
differences of the outer-difference idiom) is not this mistake and is left alone.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.shape.bound_values import value_at_call, value_before
from shapecheck.rules.shape.loss_targets import column_fact, vector_fact
from shapecheck.semantic.syntax import is_number

__all__ = ["SquaredError", "squared_error"]

# the ops between the difference and the reduction that keep it elementwise
_ELEMENTWISE = frozenset({"abs", "square", "pow", "float", "double"})
_REDUCTIONS = frozenset({"mean", "sum"})
# the ops that make a column on purpose
_COLUMN_MAKERS = frozenset({"unsqueeze", "view", "reshape", "reshape_as", "view_as", "expand", "repeat"})


class SquaredError:
    """What :func:`squared_error` found: the difference, its column and its vector operand."""

    def __init__(self, difference: cst.BinaryOperation, column: cst.BaseExpression,
                 vector: cst.BaseExpression) -> None:
        self.difference = difference
        self.column = column
        self.vector = vector


def _operand(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The tensor ``.mean()``/``.sum()`` (or ``torch.mean``/``torch.sum``) of every element reduces."""
    qual = ctx.qualname(call.func)
    if qual in ("torch.mean", "torch.sum") and len(call.args) == 1 and call.args[0].keyword is None:
        return call.args[0].value
    if qual is None and type(call.func) is cst.Attribute and call.func.attr.value in _REDUCTIONS \
            and not call.args:
        return call.func.value
    return None


def _difference(ctx, expr: cst.BaseExpression) -> Optional[cst.BinaryOperation]:
    """The ``a - b`` under elementwise ops of it (``** 2``, ``.pow(2)``, ``.abs()``, ``torch.abs``),
    also through a name bound to them just before (``err = (out - y) ** 2``, then ``err.mean()``)."""
    named = False
    for _ in range(6):
        if type(expr) is cst.Name and not named:
            named = True
            bound = value_before(ctx, expr.value, expr, at_module=True)
            if bound is None:
                return None
            expr = bound
            continue
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) is cst.Subtract:
                return expr
            if type(expr.operator) is cst.Power and is_number(expr.right):
                expr = expr.left
                continue
            return None
        if type(expr) is not cst.Call or any(a.keyword is not None or a.star for a in expr.args):
            return None
        qual = ctx.qualname(expr.func)
        if qual in ("torch.abs", "torch.square") and len(expr.args) == 1:
            expr = expr.args[0].value
        elif qual is None and type(expr.func) is cst.Attribute and expr.func.attr.value in _ELEMENTWISE \
                and all(is_number(a.value) for a in expr.args):
            expr = expr.func.value
        else:
            return None
    return None


def _written_column(ctx, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``expr`` makes its trailing size-1 dim on purpose (``x[:, None]``, ``x.unsqueeze(1)``,
    ``x.view(-1, 1)``), directly or through a name bound to such a value just before."""
    if type(expr) is cst.Name and depth == 0:
        bound = value_before(ctx, expr.value, expr, at_module=True)
        if bound is None:  # a parameter: its callers, when the walk has their facts, made it
            passed = ctx.call_site_arguments(expr.value)
            return passed is None or any(_passed_column(ctx, a) for a in passed)
        return _written_column(ctx, bound, 1)
    if type(expr) is cst.Subscript:
        return any(type(e.slice) is cst.Index and (type(e.slice.value) is cst.Name and e.slice.value.value == "None")
                   for e in expr.slice)
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        name = expr.func.attr.value
        if name in _COLUMN_MAKERS:
            return True
        if name in ("float", "double", "detach", "squeeze", "to"):
            return _written_column(ctx, expr.func.value, depth)
    if type(expr) is cst.Call and ctx.qualname(expr.func) in ("torch.unsqueeze", "torch.reshape"):
        return True
    return False


def _passed_column(ctx, arg: cst.BaseExpression) -> bool:
    """A call site's argument makes its column on purpose, or may: a name whose value the
    straight-line code before the call does not give."""
    if type(arg) is cst.Name:
        value = value_at_call(ctx, arg.value, arg)
        return value is None or _written_column(ctx, value, 1)
    return _written_column(ctx, arg, 1)


def squared_error(ctx, call: cst.Call) -> Optional[SquaredError]:
    """A :class:`SquaredError` when ``call`` reduces every element of an error between a
    ``(..., 1)`` tensor that no code of this function made a column on purpose (a layer's output)
    and a 1-D tensor whose size is not known to be 1."""
    operand = _operand(ctx, call)
    diff = _difference(ctx, operand) if operand is not None else None
    if diff is None:
        return None
    left, right = ctx.fact(diff.left), ctx.fact(diff.right)
    for col, vec, fc, fv in ((diff.left, diff.right, left, right), (diff.right, diff.left, right, left)):
        if column_fact(fc) and vector_fact(fv) and "tensor" in (fc.kind, fv.kind) \
                and not _written_column(ctx, col):
            return SquaredError(diff, col, vec)
    return None
