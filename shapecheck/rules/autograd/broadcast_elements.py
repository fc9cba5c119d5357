"""The element count of an arithmetic result whose other operands are unknown.

Broadcasting never shrinks a dim: each dim of ``a - b`` is the size of the matching dim of
``a`` (when ``b``'s is 1 or absent) or of ``b`` (when ``a``'s is 1), or the two agree; anything
else raises. So when one operand holds more than one element (a known dim above 1, or for
generic sizes an unknown one), so does the result, whatever the other operands are (tensors or
numbers).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.held_values import held_values
from shapecheck.rules.helpers.element_count import several_elements
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact

#: the operators that broadcast their operands elementwise
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def _operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The leaves of an arithmetic tree (``(pred - y) ** 2`` gives ``pred``, ``y``, ``2``)."""
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, _ELEMENTWISE):
        return _operands(expr.left) + _operands(expr.right)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        return _operands(expr.expression)
    return [expr]


def broadcast_elements(ctx, expr: cst.BaseExpression, name: str) -> Optional[tuple[str, Optional[str]]]:
    """``(description, condition)`` when the arithmetic expression ``expr`` (or the name bound to
    one on every path here, written ``name``) holds more than one element because an operand
    does; ``None`` otherwise."""
    values = held_values(ctx, expr, (cst.BinaryOperation, cst.UnaryOperation))
    if len(values) != 1:
        return None
    tree = values[0]
    if not isinstance(tree, (cst.BinaryOperation, cst.UnaryOperation)):
        return None
    for leaf in _operands(tree):
        fact = tensor_fact(ctx, leaf)
        if fact is None:
            continue
        leaf_name = short(ctx, leaf)
        found = several_elements(fact, leaf_name)
        if found is not None:
            described, condition = found
            return f"at least the elements of `{leaf_name}` ({described})", condition
    return None
