"""What indexing with an index of unknown kind still says about the result's shape."""

from __future__ import annotations

from typing import Optional, Sequence

from shapecheck.semantic.facts import Fact
from shapecheck.shapes import Dim, Shape


def leading_kept(base: Fact, items: Sequence[tuple[str, object]]) -> Optional[Shape]:
    """The shape bound of ``x[:, ..., :, i]`` for a tensor ``x`` when every index before ``i`` is a
    slice and ``i`` is of unknown kind: whatever ``i`` is (an int, a slice, ``None``, ``...``,
    a list or a tensor of indices), the leading dims stay first, unchanged where the slice is
    ``:`` (of unknown size where it is ``a:b``), and the indexing needs that many dims. ``None``
    when an index before ``i`` is not a slice, or there is none."""
    if not items or any(kind not in ("full", "slice") for kind, _ in items):
        return None
    n = len(items)
    shape = base.shape
    dims: list[Dim] = []
    for j in range(n):
        known = shape is not None and (shape.rest_at is None or j < shape.rest_at) and j < len(shape.dims) \
            and items[j][0] == "full"
        dims.append(shape.dims[j] if known and shape is not None else None)
    return Shape(tuple(dims), rest_at=n)
