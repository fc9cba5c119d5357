"""Running totals: a name that a function adds into (`total = total + loss`, `total += loss`).

A `requires_grad=True` zero made to start such a total (an auxiliary loss summed over the
branches that ran) is an accumulator, not a weight: nothing is lost by making it afresh.
"""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.walk import walk

_SUMS = (cst.Add, cst.Subtract)
_AUGMENTED_SUMS = (cst.AddAssign, cst.SubtractAssign)


def _reads(expr: cst.BaseExpression, name: str) -> bool:
    """True when ``expr`` is ``name`` itself or a sum with ``name`` as one of its terms."""
    if type(expr) is cst.Name:
        return expr.value == name
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, _SUMS):
        return _reads(expr.left, name) or _reads(expr.right, name)
    return False


def added_into(function: cst.FunctionDef, name: str) -> bool:
    """True when ``function`` adds into the local ``name``: ``name += v`` or ``name = name + v``."""
    for node in walk(function.body):
        if type(node) is cst.AugAssign and isinstance(node.operator, _AUGMENTED_SUMS) \
                and type(node.target) is cst.Name and node.target.value == name:
            return True
        if type(node) is cst.Assign and type(node.value) is cst.BinaryOperation \
                and any(type(t.target) is cst.Name and t.target.value == name for t in node.targets) \
                and _reads(node.value, name):
            return True
    return False
