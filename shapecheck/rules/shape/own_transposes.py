"""A tensor combined elementwise with its own transpose (`x - x.transpose(1, 2)`, `(w + w.T) / 2`).

Such an expression takes the symmetric or skew-symmetric part of a square matrix: it is written
only for matrices whose swapped dims are equal, so two different sizes on those dims are not
independent there, and a mismatch that holds only for generic sizes is no finding.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

# methods whose result is the receiver with its dims reordered
_REORDERING_METHODS = frozenset({"transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis"})
# attributes that name the receiver's transpose
_TRANSPOSE_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})


def _plain(expr: cst.BaseExpression) -> bool:
    """True for a name, an attribute chain or a subscript of one with no call: evaluating it twice
    in one expression gives the same object."""
    while True:
        if type(expr) is cst.Name:
            return True
        if type(expr) is cst.Attribute:
            expr = expr.value
        elif type(expr) is cst.Subscript and all(
                type(e.slice) is cst.Index and type(e.slice.value) in (cst.Integer, cst.Name)
                for e in expr.slice):
            expr = expr.value
        else:
            return False


def reordered_from(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``x`` for ``x.transpose(i, j)``, ``x.permute(...)``, ``x.swapaxes(i, j)``, ``x.T``, ``x.mT``...;
    ``None`` for anything else."""
    if type(expr) is cst.Attribute and expr.attr.value in _TRANSPOSE_ATTRIBUTES:
        return expr.value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute \
            and expr.func.attr.value in _REORDERING_METHODS and expr.args:
        return expr.func.value
    return None


def with_own_transpose(ctx, operands: Sequence[cst.BaseExpression]) -> bool:
    """True when one operand is a reordering of the dims of another operand written the same way
    (``x - x.transpose(1, 2)``): the code states that the reordered dims are equal."""
    texts = {ctx.source(o).replace(" ", "") for o in operands if _plain(o)}
    for operand in operands:
        base = reordered_from(operand)
        if base is not None and _plain(base) and ctx.source(base).replace(" ", "") in texts:
            return True
    return False
