"""A reduction of a matrix product's left operand, without keepdim, combined with the product.

``g = a @ b.t()`` has ``a``'s rows on its next-to-last dim and ``b``'s rows on its last.
``n1 = a.norm(dim=1)`` holds one value per row of ``a``: broadcasting lines it up with the last
dim of ``g``, the columns, so ``g / (n1 * n2)`` (cosine similarity) divides each column by the
norm of the wrong row. torch raises unless the two row counts are equal, and is silent and wrong
when they are (a Gram matrix ``x @ x.t()``). The fix is ``n1[:, None] * n2[None, :]`` or
``keepdim=True``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.facts import Reduction

__all__ = ["GramNorm", "gram_norm"]

_PRODUCT_FUNCS = frozenset({"torch.mm", "torch.matmul", "torch.bmm"})
_PRODUCT_METHODS = frozenset({"mm", "matmul", "bmm"})
# calls that keep the shape of their first operand (or receiver): `(n1 * n2).clamp(min=eps)`
_KEEPING_METHODS = frozenset({"clamp", "clamp_min", "clamp_", "clamp_min_", "sqrt", "pow", "add", "mul"})
_KEEPING_FUNCS = frozenset({"torch.clamp", "torch.clamp_min", "torch.sqrt", "torch.pow"})


class GramNorm:
    """What :func:`gram_norm` found: the product's left operand and the reduction of it."""

    def __init__(self, left: str, product: cst.BaseExpression, reduction: Reduction, same: bool) -> None:
        self.left = left
        self.product = product
        self.reduction = reduction
        self.same = same  # the product's right operand reads the same tensor (a Gram matrix)


def _product_operands(ctx, expr: cst.BaseExpression, depth: int = 0) -> Optional[tuple[cst.BaseExpression,
                                                                                      cst.BaseExpression]]:
    """``(left, right)`` of a matrix product ``expr`` (``a @ b``, ``torch.mm(a, b)``,
    ``a.matmul(b)``), or of the product a name holds there."""
    if type(expr) is cst.Name and depth == 0:
        bound = value_before(ctx, expr.value, expr)
        return _product_operands(ctx, bound, 1) if bound is not None else None
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.MatrixMultiply:
        return expr.left, expr.right
    if type(expr) is cst.Call:
        args = [a.value for a in expr.args if a.keyword is None and not a.star]
        if len(args) != len(expr.args):
            return None
        if ctx.qualname(expr.func) in _PRODUCT_FUNCS and len(args) == 2:
            return args[0], args[1]
        if type(expr.func) is cst.Attribute and expr.func.attr.value in _PRODUCT_METHODS and len(args) == 1 \
                and ctx.qualname(expr.func) is None:
            return expr.func.value, args[0]
    return None


def _factors(ctx, expr: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
    """The operands a divisor or multiplier is the product of: ``n1 * n2`` gives both, through
    ``clamp``/``sqrt``/``+ eps``-like calls that keep their operand's shape."""
    if depth > 6:
        return [expr]
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _factors(ctx, expr.left, depth + 1) + _factors(ctx, expr.right, depth + 1)
    if type(expr) is cst.Call and expr.args:
        if ctx.qualname(expr.func) in _KEEPING_FUNCS:
            return _factors(ctx, expr.args[0].value, depth + 1)
        if type(expr.func) is cst.Attribute and expr.func.attr.value in _KEEPING_METHODS \
                and ctx.qualname(expr.func) is None and all(ctx.fact(a.value).reduction is None for a in expr.args):
            return _factors(ctx, expr.func.value, depth + 1)
    return [expr]


def _mentions(expr: cst.BaseExpression, name: str) -> bool:
    """``expr`` reads the name ``name`` (``x.t()``, ``x.transpose(0, 1)`` read ``x``)."""
    if dotted_name(expr) == name:
        return True
    return any(_mentions(c, name) for c in expr.children if isinstance(c, cst.BaseExpression))


def gram_norm(ctx, product_expr: cst.BaseExpression, other: cst.BaseExpression) -> Optional[GramNorm]:
    """A :class:`GramNorm` when ``other`` is (a product of) reductions among which one reduces,
    without keepdim, the left operand of the matrix product ``product_expr``. When the right
    operand reads that same tensor (``x @ x.t()``), only a product of two or more reductions
    counts (``g / n`` there may mean to normalise the columns)."""
    reductions = [ctx.fact(f).reduction for f in _factors(ctx, other)]
    if all(r is None for r in reductions):
        return None  # the common case, decided before the product is looked for
    operands = _product_operands(ctx, product_expr)
    if operands is None:
        return None
    left, right = operands
    left_name = dotted_name(left)
    if left_name is None:
        return None
    same = _mentions(right, left_name)
    if same and sum(r is not None for r in reductions) < 2:
        return None
    left_fact = ctx.fact(left)
    for red in reductions:
        if red is not None and red.source_name == left_name and red.source is left_fact and len(red.axes) == 1 \
                and not red.alternatives:
            return GramNorm(left_name, product_expr, red, same)
    return None
