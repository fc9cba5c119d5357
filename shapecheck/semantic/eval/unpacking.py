"""What unpacking a tensor binds: ``q, k, v = qkv`` iterates ``qkv`` along its first dim, so
each name holds ``qkv[i]``, a tensor of the remaining dims."""

from __future__ import annotations

from typing import Optional

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import CONTIGUOUS, CPU, TENSOR, Fact

__all__ = ["unpacked_rows"]


def unpacked_rows(ev: Eval, value: Fact, count: int) -> Optional[tuple[Fact, ...]]:
    """The ``count`` facts ``a, b, ... = value`` binds when ``value`` is a tensor of known rank
    whose first dim may hold ``count`` rows; ``None`` otherwise (the caller binds unknowns)."""
    shape = value.shape
    if value.kind != TENSOR or shape is None or shape.rank is None or shape.rank < 1:
        return None
    first = shape.dims[0]
    if isinstance(first, int) and first != count:
        return None  # torch raises ValueError: not what this binds
    row = O.index_fact(value, [("int", None)])
    if row is None:
        return None
    row = row.with_(grad=grad_of(ev, [value], True), reduction=None,
                    is_scalar_cpu=row.rank == 0 and value.device == CPU)
    if row.rank == 0:
        row = row.with_(layout=CONTIGUOUS)
    return (row,) * count
