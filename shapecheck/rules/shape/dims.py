"""Comparing two dims of known shapes."""

from __future__ import annotations

from shapecheck.shapes import is_generic


def dims_differ(a, b) -> bool:
    """Two dims provably different: two ints, or two different annotation names. (Two sizes that
    differ only for generic sizes: :func:`shapecheck.generic_dims.independent`.)"""
    if a is None or b is None or is_generic(a) or is_generic(b):
        return False  # a generic size (one the code computed) may equal any other
    if isinstance(a, int) and isinstance(b, int):
        return a != b
    if isinstance(a, str) and isinstance(b, str):
        return a != b
    return False
