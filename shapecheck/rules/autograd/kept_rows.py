"""The element count of ``x[:, ...]``: a leading full slice keeps the first dim of ``x``.

``score = logit[:, class_idx]`` holds one value per row of ``logit`` whatever ``class_idx`` is
(an int drops dim 1, a list or tensor of indices keeps a dim of its own): more than one unless
``logit`` has one row (for generic sizes), or always when that dim is known to be above 1.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.held_values import held_values
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import TENSOR


def _keeps_rows(node: cst.Subscript) -> bool:
    """``node`` is ``x[:, ...]``: at least two index elements, the first a plain ``:``."""
    if len(node.slice) < 2:
        return False
    first = node.slice[0].slice
    return type(first) is cst.Slice and first.lower is None and first.upper is None and first.step is None


def kept_rows(ctx, expr: cst.BaseExpression) -> Optional[tuple[str, Optional[str]]]:
    """``(description, condition)`` when ``expr`` (or the name bound to it on every path here) is
    ``x[:, ...]`` of a tensor ``x`` whose first dim is not known to be 1; else ``None``."""
    values = held_values(ctx, expr, (cst.Subscript,))
    if len(values) != 1:
        return None
    value = values[0]
    if type(value) is not cst.Subscript or not _keeps_rows(value):
        return None
    base = ctx.fact(value.value)
    if base.kind not in (TENSOR, None) or base.elems is not None or base.value is not None:
        return None
    shape = base.shape
    rows = shape.dims[0] if shape is not None and len(shape.dims) > 0 and shape.rest_at != 0 else None
    name = short(ctx, value.value)
    if rows == 1:
        return None
    described = f"one value per row of `{name}` (`{short(ctx, value)}` keeps its first dim)"
    if isinstance(rows, int):
        return described, None
    return described, f"`{name}` has one row"
