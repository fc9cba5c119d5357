"""Reading the tensor facts of an expression: is it a tensor, can it hold one element."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.shapes import format_shape


def tensor_fact(ctx, expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of ``expr`` when it is known to be a tensor, else ``None``."""
    fact = ctx.fact(expr)
    return fact if fact.kind == TENSOR else None


def multi_element(fact: Fact) -> Optional[str]:
    """A description of the shape when the tensor surely does not hold exactly one element.

    Some dim is a known int above 1 (so the count is 0 or at least 2), or a dim is 0. Returns
    ``"shape (2, 3)"`` for messages, or ``None`` when one element is possible.
    """
    shape = fact.shape
    if fact.kind != TENSOR or shape is None:
        return None
    if any(isinstance(d, int) and (d > 1 or d == 0) for d in shape.dims):
        return f"shape {format_shape(shape)}"
    return None
