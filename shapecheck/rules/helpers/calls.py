"""Reading calls and names: the receiver and method of a call, its arguments, torch names."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.syntax import dotted_name, is_name, is_number, keyword, method_call, positional

__all__ = [
    "dotted_name",
    "is_name",
    "is_number",
    "keyword",
    "method_call",
    "positional",
    "torch_name",
    "torch_root",
]


def torch_name(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """For an expression that resolves to ``torch.X.Y``: ``"X.Y"``; else ``None`` (read from the
    import table at once: ``ctx.imports.resolve`` is ``ctx.qualname``, and this runs at every call)."""
    qual = ctx.imports.resolve(expr)
    if qual is not None and qual.startswith("torch."):
        return qual[6:]
    return None


def torch_root(ctx) -> Optional[str]:
    """A local name bound to the ``torch`` module (``torch``, ``T``), or ``None``."""
    aliases = getattr(ctx.imports, "aliases", {})
    if aliases.get("torch") == "torch":
        return "torch"
    for local, target in aliases.items():
        if target == "torch":
            return local
    return None
