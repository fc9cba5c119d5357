"""Comparing two dims of known shapes."""

from __future__ import annotations


def dims_differ(a, b) -> bool:
    """Two dims provably different: two ints, or two different annotation names."""
    if a is None or b is None:
        return False
    if isinstance(a, int) and isinstance(b, int):
        return a != b
    if isinstance(a, str) and isinstance(b, str):
        return a != b
    return False
