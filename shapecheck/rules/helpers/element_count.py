"""Whether a tensor holds more than one element when its unknown sizes are generic.

An unknown size is generic: at least 2 (see DESIGN.md, "What the linter may stand behind"). A
tensor with a dim known to exist whose size is unknown holds more than one element unless that
size is 1: a finding on it holds for generic sizes and names that exception.
"""

from __future__ import annotations

from typing import Optional

from shapecheck.rules.helpers.tensors import multi_element
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.shapes import format_shape


def several_elements(fact: Fact, name: str) -> Optional[tuple[str, Optional[str]]]:
    """``(description, condition)`` when the tensor ``fact`` of the expression written ``name``
    holds more than one element: for all sizes (``condition`` is ``None``: ``multi_element``), or
    for generic sizes (``condition`` is "`name` has one element"); ``None`` when one element is
    possible for generic sizes too (0-dim, size-1 dims only, unknown rank without a known dim)."""
    described = multi_element(fact)
    if described is not None:
        return described, None
    shape = fact.shape
    if fact.kind != TENSOR or shape is None:
        return None
    if any(d is None or isinstance(d, str) for d in shape.dims):
        return f"shape {format_shape(shape)}", f"`{name}` has one element"
    return None
