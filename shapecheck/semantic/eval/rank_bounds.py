"""Rank bounds that an op proves on a tensor of unknown rank.

Reductions: ``torch.sum(t, dim=1)`` runs only when ``t`` has at least two dims (else torch raises
IndexError), so its result has at least one: the dims of ``t`` before and after the reduced
one. Axes all counted from the front (``dim=1``, ``dim=(0, 2)``) bound the leading dims; axes
all counted from the end (``dim=-1``) bound the trailing dims. Mixed signs say nothing here.

Joins: ``torch.cat(pieces, dim)`` has at least one dim (torch refuses 0-dim pieces), and at least
``dim + 1``; ``torch.stack(pieces, dim)`` adds a dim, so it has at least one and at least
``dim + 1`` (``-dim`` counted from the end). The sizes stay unknown.
"""

from __future__ import annotations

from typing import Optional, Sequence

from shapecheck.shapes import Dim, Shape


#: reductions that pick an element (or its index) along the axis: without ``keepdim`` they are
#: how a decoder or a single-image check picks a class (``torch.max(prob, dim=1)``,
#: ``out.argmax(1) == label``), often for a batch of one by construction, so they give no bound;
#: a kept dim (``argmax(dim=1, keepdim=True)``) is for comparing rows against per-row targets
_SELECTIONS = frozenset({"max", "min", "median", "nanmedian", "argmax", "argmin"})


def bounded_reduce_shape(shape: Optional[Shape], axes: Sequence[int], keepdim: bool,
                         name: str) -> Optional[Shape]:
    """The shape after reducing ``axes`` of a tensor whose rank is unknown (``shape`` is
    ``None`` or bounded from below) by the reduction ``name``, as a rank bound; ``None`` when it
    bounds nothing."""
    if not axes or (shape is not None and shape.rank is not None) or (name in _SELECTIONS and not keepdim):
        return None
    if all(a >= 0 for a in axes):
        lead: tuple[Dim, ...] = () if shape is None else shape.dims if shape.rest_at == len(shape.dims) else ()
        if shape is not None and shape.rest_at != len(shape.dims) and shape.dims:
            return None
        dims = list(lead) + [None] * max(0, max(axes) + 1 - len(lead))
        kept = tuple(1 if i in axes else d for i, d in enumerate(dims)) if keepdim \
            else tuple(d for i, d in enumerate(dims) if i not in axes)
        return Shape(kept, rest_at=len(kept)) if kept else None
    if all(a < 0 for a in axes):
        trail: tuple[Dim, ...] = () if shape is None else shape.dims if shape.rest_at == 0 else ()
        if shape is not None and shape.rest_at != 0 and shape.dims:
            return None
        dims = [None] * max(0, max(-a for a in axes) - len(trail)) + list(trail)
        gone = {len(dims) + a for a in axes}
        kept = tuple(1 if i in gone else d for i, d in enumerate(dims)) if keepdim \
            else tuple(d for i, d in enumerate(dims) if i not in gone)
        return Shape(kept, rest_at=0) if kept else None
    return None


def bounded_join_shape(axis: int, stacked: Optional[int] = None) -> Shape:
    """The rank bound of ``torch.cat``/``torch.stack`` along ``axis`` of pieces of unknown rank;
    ``stacked``: how many pieces ``torch.stack`` joins, when the code lists them (the new dim's size)."""
    if axis >= 0:
        return Shape((None,) * axis + (stacked,), rest_at=axis + 1)
    return Shape((stacked,) + (None,) * (-axis - 1), rest_at=0)
