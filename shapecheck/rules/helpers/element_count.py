"""Whether a tensor holds more than one element when its unknown sizes are generic.

An unknown size is generic: at least 2 (see DESIGN.md, "What the linter may stand behind"). A
tensor with a dim known to exist whose size is unknown holds more than one element unless that
size is 1: a finding on it holds for generic sizes and names that exception.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.rules.helpers.tensors import multi_element
from shapecheck.semantic.facts import BOOL, FLOAT, INT, TENSOR, Fact
from shapecheck.semantic.torch_api import CAST_METHODS, ELEMENTWISE_BINARY, SHAPE_KEEPING_UNARY, TENSOR_DEVICE_METHODS
from shapecheck.shapes import format_shape


def several_elements(fact: Fact, name: str) -> Optional[tuple[str, Optional[str]]]:
    """``(description, condition)`` when the tensor ``fact`` of the expression written ``name``
    holds more than one element: for all sizes (``condition`` is ``None``: ``multi_element``), or
    for generic sizes (``condition`` is "`name` has one element"); ``None`` when one element is
    possible for generic sizes too (0-dim, size-1 dims only, unknown rank without a known dim)."""
    described = multi_element(fact)
    if described is not None:
        return described, None
    shape = fact.shape
    if fact.kind != TENSOR or shape is None:
        return None
    if any(d is None or isinstance(d, str) for d in shape.dims):
        return f"shape {format_shape(shape)}", f"`{name}` has one element"
    return None


#: what ``==`` compares elementwise with a tensor
_TENSOR_OR_NUMBER = frozenset({TENSOR, INT, FLOAT, BOOL})
#: Tensor methods whose result has its receiver's shape (besides the shape-keeping ops)
_SAME_SHAPE_METHODS = frozenset(CAST_METHODS) | TENSOR_DEVICE_METHODS | {"detach", "clone", "contiguous"}


def _same_shape_source(ctx, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of ``expr`` whose elements its result holds at least as many of: both sides
    of an elementwise comparison or arithmetic (broadcasting never shrinks an operand), the
    input of a shape-keeping ``torch``/``F`` function or tensor method; else none."""
    if type(expr) is cst.Comparison:
        if len(expr.comparisons) == 1 and isinstance(expr.comparisons[0].operator, COMPARISON_OPERATORS):
            sides = [expr.left, expr.comparisons[0].comparator]
            if isinstance(expr.comparisons[0].operator, (cst.Equal, cst.NotEqual)) and \
                    any(ctx.fact(side).kind not in _TENSOR_OR_NUMBER for side in sides):
                return []  # `x == None` (or a string, a list...) is a Python bool
            return sides
    elif type(expr) is cst.BinaryOperation:
        if isinstance(expr.operator, ARITHMETIC_OPERATORS + (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return [expr.left, expr.right]
    elif type(expr) is cst.UnaryOperation and isinstance(expr.operator, (cst.Minus, cst.BitInvert)):
        return [expr.expression]
    elif type(expr) is cst.Call:
        positional = [a.value for a in expr.args if a.keyword is None and not a.star]
        qual = ctx.qualname(expr.func)
        if qual is not None:
            name = qual.rsplit(".", 1)[-1]
            if (qual.startswith("torch.") and name in SHAPE_KEEPING_UNARY | ELEMENTWISE_BINARY
                    and positional and qual.count(".") <= 3):
                return positional[:2] if name in ELEMENTWISE_BINARY else positional[:1]
        elif type(expr.func) is cst.Attribute:
            name = expr.func.attr.value
            if name in SHAPE_KEEPING_UNARY | _SAME_SHAPE_METHODS | ELEMENTWISE_BINARY:
                return [expr.func.value]
    return []


def several_elements_of(ctx, expr: cst.BaseExpression, name: str,
                        depth: int = 0) -> Optional[tuple[str, Optional[str]]]:
    """:func:`several_elements` for the tensor ``expr`` (written ``name``), also through the
    operands its result holds at least as many elements as (``a > best`` with ``a`` of shape
    ``(..., 4)``; ``torch.relu(m)``; ``(pred == y)`` with ``pred`` a reduction that keeps a dim)."""
    fact = ctx.fact(expr)
    if fact.kind != TENSOR or (depth == 0 and _method_of_unknown(ctx, expr)):
        return None
    found = several_elements(fact, name)
    if found is not None or depth > 4:
        return found
    for operand in _same_shape_source(ctx, expr):
        inner = several_elements_of(ctx, operand, name, depth + 1)
        if inner is not None:
            return inner
    return None


def _method_of_unknown(ctx, expr: cst.BaseExpression) -> bool:
    """Some method chain in ``expr`` starts at a name not known to be a tensor (``x.transpose(1, 2)``
    with ``x`` possibly a NumPy array): its result's shape is no evidence of a tensor."""
    if type(expr) is cst.Comparison:
        return _method_of_unknown(ctx, expr.left) or any(_method_of_unknown(ctx, c.comparator)
                                                         for c in expr.comparisons)
    if type(expr) is cst.BinaryOperation:
        return _method_of_unknown(ctx, expr.left) or _method_of_unknown(ctx, expr.right)
    if type(expr) is cst.UnaryOperation:
        return _method_of_unknown(ctx, expr.expression)
    root = expr
    chained = False
    while True:
        if type(root) is cst.Call and type(root.func) is cst.Attribute:
            if ctx.qualname(root.func) is not None:
                return False  # `torch.relu(...)`: a function of a module, not a method
            root, chained = root.func.value, True
        elif type(root) is cst.Subscript:
            root = root.value
        else:
            break
    return chained and type(root) is cst.Name and ctx.fact(root).kind != TENSOR
