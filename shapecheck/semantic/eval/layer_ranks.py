"""The shape of the result of a layer or ``F`` function that keeps its input's rank: which dims
it keeps (``torch_api.FUNCTIONAL_KEPT_DIMS``, ``NN_KEPT_DIMS``), every other size unknown."""

from __future__ import annotations

from typing import Optional

from shapecheck.shapes import Dim, Shape


def kept_shape(shape: Optional[Shape], how: Optional[str], name: str) -> Optional[Shape]:
    """The result shape of op ``name`` (``"max_pool2d"``, ``"Conv2d"``) on an input of ``shape``
    that keeps ``how`` of its dims (``"all"``, ``"batch_channel"``, ``"batch"`` or ``None``). The
    result's dim order is ``eval.layout.input_order_layout``'s business."""
    if shape is None:
        return None
    if shape.rest_at is not None:
        return Shape((None,) * len(shape.dims), rest_at=shape.rest_at)
    if how == "all":
        return shape
    rank = len(shape.dims)
    spatial = int(name[-2]) if name[-1:] == "d" and name[-2:-1].isdigit() else None
    batched = name in ("interpolate", "Upsample") or (spatial is not None and rank == spatial + 2)
    unbatched = spatial is not None and rank == spatial + 1
    kept: tuple[int, ...] = ()
    if how == "batch_channel":
        kept = (0, 1) if batched else (0,) if unbatched else ()
    elif how == "batch" and batched:
        kept = (0,)
    dims: list[Dim] = [d if i in kept else None for i, d in enumerate(shape.dims)]
    return Shape(tuple(dims))

