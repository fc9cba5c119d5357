"""The names whose autograd graph a value computed from an expression is part of.

:func:`shapecheck.semantic.saved_tensors.names_read` lists every name an expression reads; a read
through ``t.detach()``, ``t.data``, ``t.item()`` (or another method that returns no graph, or
metadata such as ``t.shape``) gives a value that shares none of ``t``'s graph: left out here.
"""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.syntax import dotted_name
from shapecheck.semantic.walk import child_nodes

#: methods whose result carries no autograd history of their receiver
_CUT_METHODS = frozenset({"detach", "item", "tolist", "numpy", "size", "dim", "numel", "nelement"})
#: attributes that carry no autograd history of their owner
_CUT_ATTRIBUTES = frozenset({"data", "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda"})


def graph_names_read(expr: cst.BaseExpression) -> set[str]:
    """The dotted names ``expr`` reads, except those read only through a cut (``t.detach()``,
    ``t.data``, ``t.item()``, ``t.shape``)."""
    dotted = dotted_name(expr)
    if dotted is not None:
        if type(expr) is cst.Attribute and expr.attr.value in _CUT_ATTRIBUTES:
            return set()
        parts = dotted.split(".")
        return {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _CUT_METHODS:
        cut: set[str] = set()
        for arg in expr.args:
            cut |= graph_names_read(arg.value)
        return cut
    if type(expr) is cst.Attribute and expr.attr.value in _CUT_ATTRIBUTES:
        return set()
    if type(expr) is cst.Attribute:
        return graph_names_read(expr.value)
    if type(expr) is cst.Lambda:
        return set()
    found: set[str] = set()
    for child in child_nodes(expr):
        if type(child) is cst.Arg:
            found |= graph_names_read(child.value)
        elif type(child) not in (cst.FunctionDef, cst.ClassDef):
            found |= graph_names_read(child)  # type: ignore[arg-type]
    return found
