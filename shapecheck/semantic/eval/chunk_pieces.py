"""The pieces of ``x.chunk(n, dim)`` with ``n`` an int literal: ``n`` tensors of ``x``'s rank,
the size along ``dim`` unknown (torch may return fewer pieces when the size does not divide:
the count is what the code asks for, as ``q, k, v = x.chunk(3, -1)`` reads it)."""

from __future__ import annotations

from typing import Optional

from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.semantic.syntax import CallArgs, int_literal
from shapecheck.shapes import Shape

#: more pieces than this are not spelled out
_MAX_PIECES = 16


@method("chunk")
def chunk(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """``x.chunk(n, dim)``: ``n`` pieces of ``x``'s rank, each laid out as torch leaves a slice
    (unknown here), the split dim unknown."""
    if x.kind != TENSOR or args.starred:
        return None
    count_expr = args.get(0, "chunks")
    dim_expr = args.get(1, "dim")
    count = int_literal(count_expr) if count_expr is not None else None
    d = int_literal(dim_expr) if dim_expr is not None else 0
    if count is None or d is None or not 1 <= count <= _MAX_PIECES:
        return None
    shape = x.shape
    if shape is not None and shape.rank is not None:
        if not -shape.rank <= d < shape.rank:
            return None
        dims = list(shape.dims)
        dims[d % shape.rank] = None
        shape = Shape(tuple(dims))
    elif shape is not None and not (d >= 0 and d < (shape.rest_at or 0) or d < 0 and -d <= len(shape.trailing())):
        shape = None  # the split dim may be one the bound names
    piece = Fact(kind=TENSOR, shape=shape, device=x.device, grad=x.grad, dtype_kind=x.dtype_kind)
    return Fact(elems=(piece,) * count)
