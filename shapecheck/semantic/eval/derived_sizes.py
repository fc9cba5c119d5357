"""Sizes derived from a size read from a tensor and a value of unknown kind:
``hs = C // self.n_head`` after ``B, T, C = x.size()``; and inner dims of a matrix product that clash.

``self.n_head`` may be anything (an int from a config, most likely), so the result's kind stays
unknown; but when it is passed as a size (``x.view(B, T, self.n_head, hs)``) it stands for the
quotient ``C//self.n_head``, a size of the read of ``x`` as much as the same expression written in
the call (:func:`shapecheck.semantic.eval.sizes.size_dim`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.generic_dims import independent
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.eval.sizes import size_dim
from shapecheck.semantic.facts import INT, UNKNOWN, Fact
from shapecheck.shapes import Measured, Shape

__all__ = ["derived_size", "inner_dims_clash"]


def _plain_operand(expr: cst.BaseExpression, f: Fact) -> bool:
    """An operand that may enter a size: an int, or a name or attribute of unknown kind that
    holds no shape, items or reduction (a tensor or a list would not be a size)."""
    if f.kind == INT:
        return True
    return f.kind is None and f.shape is None and f.elems is None and f.reduction is None \
        and isinstance(expr, (cst.Name, cst.Attribute))


def derived_size(ev: Eval, expr: cst.BinaryOperation, left: Fact, right: Fact) -> Optional[Fact]:
    """``a * b`` or ``a // b`` where one side is an int read from a tensor's shape and the other
    a name of unknown kind: a value of unknown kind whose dim is that product or quotient (a
    :class:`~shapecheck.shapes.Measured` size); ``None`` when ``expr`` is not such a size."""
    if type(expr.operator) not in (cst.Multiply, cst.FloorDivide):
        return None
    if INT not in (left.kind, right.kind) or None not in (left.kind, right.kind):
        return None
    if not any(f.kind == INT and isinstance(f.dim, Measured) for f in (left, right)):
        return None
    if not (_plain_operand(expr.left, left) and _plain_operand(expr.right, right)):
        return None
    dim = size_dim(ev, expr, UNKNOWN)
    return Fact(dim=dim) if isinstance(dim, Measured) else None


def inner_dims_clash(a: Optional[Shape], b: Optional[Shape]) -> bool:
    """True when the inner dims of ``a @ b`` (both of known rank) differ: two different ints,
    or two sizes independent for generic sizes (``T`` and ``C//self.n_head``). torch raises
    there, and the sizes of the result would only repeat the finding further on."""
    if a is None or b is None or not a.rank or not b.rank:
        return False
    inner_a, inner_b = a.dims[-1], (b.dims[-2] if b.rank >= 2 else b.dims[-1])
    if isinstance(inner_a, int) and isinstance(inner_b, int):
        return inner_a != inner_b
    return independent(inner_a, inner_b)
