"""Dim moves of a tensor whose rank is only bounded from below (``Shape`` with its unknown run
at the end): ``x.transpose(0, 1)`` on a value of unknown rank says it has at least 2 dims.

Such a fact's ``perm`` covers the leading dims only (``len(perm) == len(shape.dims)`` and
``shape.rest_at == len(shape.dims)``); the dims of the unknown run lie innermost, in order, as
in a tensor that nothing moved. The view rule is run on it both without the run and with the run
as one more dim (:func:`shapecheck.strides.generic_view_bounded`), which together cover every
rank the bound allows: a run of dims laid out in order behaves as one dim.
"""

from __future__ import annotations

from typing import Optional

from shapecheck.semantic.facts import NON_CONTIGUOUS, Fact
from shapecheck.shapes import Dim, Shape


def front_bounded(shape: Optional[Shape]) -> bool:
    """``shape`` is a rank bound with known leading positions (``Shape((None,)*n, rest_at=n)``)."""
    return shape is not None and shape.rest_at is not None and shape.rest_at == len(shape.dims)


def _leading_perm(x: Fact, n: int) -> Optional[list[int]]:
    """The memory positions of the first ``n`` dims of ``x`` (rank at least ``n``); ``None``
    when its layout is not known to start from a plain tensor."""
    if x.perm is None:
        if x.layout == NON_CONTIGUOUS:
            return None
        return list(range(n))
    if not front_bounded(x.shape) or len(x.perm) > n:
        return None
    perm = list(x.perm)
    nxt = max((p for p in perm if p >= 0), default=-1) + 1
    return perm + list(range(nxt, nxt + n - len(perm)))


def bounded_transpose(x: Fact, a: int, b: int, text: str) -> Optional[Fact]:
    """``x.transpose(a, b)`` (``a``, ``b`` not negative) when the rank of ``x`` is unknown or
    bounded from below: at least ``max(a, b) + 1`` dims, the two swapped; ``None`` when this
    does not apply (a known rank, a bound on the trailing dims); with a negative dim, see
    :func:`trailing_transpose`."""
    if a < 0 or b < 0:
        return trailing_transpose(x, a, b)
    shape = x.shape
    if shape is not None and not front_bounded(shape):
        return None
    dims: list[Dim] = list(shape.dims) if shape is not None else []
    n = max(len(dims), a + 1, b + 1)
    dims += [None] * (n - len(dims))
    dims[a], dims[b] = dims[b], dims[a]
    out = x.with_(shape=Shape(tuple(dims), rest_at=n), strides=None, reduction=None)
    perm = _leading_perm(x, n)
    if perm is None:  # laid out in an order nobody knows: it stays so (no later move starts plain)
        return out.with_(layout=NON_CONTIGUOUS, perm=None, moved_by=None)
    if a == b:  # a no-op
        return out.with_(perm=tuple(perm) if x.perm is not None else None)
    perm[a], perm[b] = perm[b], perm[a]
    return out.with_(layout=None, perm=tuple(perm), moved_by=text)


def moved_unknown(x: Fact) -> Fact:
    """``x`` after a move of dims the linter cannot follow (``transpose(a, b)`` with unknown
    ``a``, ``b``; ``.t()`` of unknown rank): shape unknown, laid out in an unknown order, so no
    later move starts from a plain tensor."""
    return x.with_(shape=None, layout=NON_CONTIGUOUS, strides=None, perm=None, moved_by=None, reduction=None)


def trailing_transpose(x: Fact, a: int, b: int) -> Fact:
    """``x.transpose(a, b)`` with a negative dim when the rank of ``x`` is unknown or bounded:
    with two negative dims, at least ``max(-a, -b)`` dims, the trailing ones known and swapped;
    laid out in an order the linter does not know (the memory positions of the dims counted from
    the end are not tracked), so no later move starts from a plain tensor."""
    unknown_order = {"layout": NON_CONTIGUOUS, "strides": None, "perm": None, "moved_by": None, "reduction": None}
    if a >= 0 or b >= 0:
        return x.with_(shape=None, **unknown_order)
    shape = x.shape
    n = max(-a, -b)
    dims: list[Dim] = list(shape.dims) if shape is not None and shape.rest_at == 0 else []
    dims = [None] * (n - len(dims)) + dims
    dims[a], dims[b] = dims[b], dims[a]
    out = x.with_(shape=Shape(tuple(dims), rest_at=0))
    return out.with_(reduction=None) if a == b else out.with_(**unknown_order)


def matrix_transpose_bound(x: Fact) -> Optional[Fact]:
    """``x`` with exactly 2 dims when ``.t()`` is called on it and a bound says it has at least 2
    (``t()`` raises above 2 dims); ``None`` when the bound does not say so (``t()`` of a 0-d or
    1-d tensor is a no-op, so an unknown rank stays unknown)."""
    shape = x.shape
    if shape is None or shape.rest_at is None or len(shape.dims) != 2:
        return None
    if x.perm is not None and len(x.perm) != 2:
        return None
    return x.with_(shape=Shape(tuple(shape.dims)))
