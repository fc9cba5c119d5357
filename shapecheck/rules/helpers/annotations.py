"""Reading type annotations as written."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.syntax import dotted_name

__all__ = ["unwrap_optional"]


def unwrap_optional(annotation: cst.BaseExpression) -> cst.BaseExpression:
    """The type inside ``Optional[...]`` (``typing.Optional[...]``); ``annotation`` itself otherwise."""
    if type(annotation) is cst.Subscript and dotted_name(annotation.value) in ("Optional", "typing.Optional"):
        inner = annotation.slice[0].slice
        if type(inner) is cst.Index:
            return inner.value
    return annotation
