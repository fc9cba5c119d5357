"""Reads of a tensor's rank: ``x.ndim``, ``x.dim()``, ``x.ndimension()``, ``len(x.shape)``, ``len(x.size())``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

_RANK_METHODS = frozenset({"dim", "ndimension"})


def rank_read(expr: cst.BaseExpression) -> Optional[str]:
    """The name whose rank ``expr`` reads (``x`` for ``x.ndim``, ``x.dim()``, ``len(x.shape)``), or ``None``."""
    if type(expr) is cst.Attribute and expr.attr.value == "ndim" and type(expr.value) is cst.Name:
        return expr.value.value
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value in _RANK_METHODS and not expr.args \
            and type(func.value) is cst.Name:
        return func.value.value
    if type(func) is cst.Name and func.value == "len" and len(expr.args) == 1:
        inner = expr.args[0].value
        if type(inner) is cst.Call and not inner.args:
            inner = inner.func  # `len(x.size())`
            if type(inner) is not cst.Attribute or inner.attr.value != "size":
                return None
        elif type(inner) is not cst.Attribute or inner.attr.value != "shape":
            return None
        if type(inner.value) is cst.Name:
            return inner.value.value
    return None
