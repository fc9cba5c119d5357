"""``flatten`` of a tensor whose rank is only bounded: the rank of the result is known anyway.

``x.flatten(1)`` merges every dim from 1 to the end, so it is 2-D whatever ``x``'s rank (at
least 2, which the call itself says); the merged dim's size is unknown, and so are the leading
ones unless ``x``'s shape knows them.
"""

from __future__ import annotations

from typing import Optional

from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.shapes import Dim, Shape

__all__ = ["flattened_rank"]


def flattened_rank(ev: Eval, x: Fact, start: int, end: int) -> Optional[Fact]:
    """The fact of ``x.flatten(start, end)`` when ``x``'s rank is unknown: exactly ``start + 1``
    dims when ``start >= 0`` and ``end == -1`` (the first ``start`` from ``x``'s known leading
    dims); ``None`` (unknown) for any other spelling."""
    if x.kind != TENSOR or start < 0 or end != -1:
        return None
    leading: tuple[Dim, ...] = x.shape.leading() if x.shape is not None else ()
    dims: list[Dim] = [leading[i] if i < len(leading) else None for i in range(start)]
    return Fact(kind=TENSOR, shape=Shape(tuple(dims) + (None,)), device=x.device, dtype_kind=x.dtype_kind,
                grad=grad_of(ev, [x], True))
