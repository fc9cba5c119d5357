"""The layout of the pieces of ``a, b, c = x.unbind(0)`` / ``x.chunk(3, d)`` / ``x.split(n, d)``:
views of ``x``, so laid out in ``x``'s dim order (for ``unbind``, with the removed dim's memory
slot left as a gap between its neighbours). The gaps a ``chunk``/``split`` opens are not tracked:
a view across one is taken as possible, never as failing."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, Fact


def piece_layout(recv: Fact, method: str, d: int) -> dict[str, Any]:
    """The layout fields of one piece of ``recv`` cut along dim ``d`` (normalised) by ``method``."""
    rank = recv.shape.rank if recv.shape is not None else None
    if recv.perm is None or rank is None or len(recv.perm) != rank:
        if recv.layout == NON_CONTIGUOUS or recv.perm is not None:
            return {"layout": NON_CONTIGUOUS}  # in an order nobody knows: no later move starts plain
        return {}
    if method != "unbind":
        return {"layout": None if recv.layout == CONTIGUOUS else recv.layout, "perm": recv.perm,
                "moved_by": recv.moved_by}
    perm = _unbound_perm(recv.perm, d)
    return {"layout": None, "perm": perm, "moved_by": recv.moved_by if perm is not None else None}


def _unbound_perm(perm: Sequence[int], d: int) -> Optional[tuple[int, ...]]:
    """``perm`` without dim ``d``: its memory slot stays as a gap, unless it was the outermost."""
    gone = perm[d]
    rest = [p for i, p in enumerate(perm) if i != d]
    if gone >= 0 and gone == min(p for p in perm if p >= 0):
        rest = [p - 1 if p > gone else p for p in rest]
    return tuple(rest)
