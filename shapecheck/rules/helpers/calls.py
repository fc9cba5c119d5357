"""Reading calls and names: the receiver and method of a call, its arguments, torch names."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.evaluator import dotted_name

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


def method_call(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, str]]:
    """``(receiver, method name)`` for a call ``receiver.method(...)``, else ``None``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.value, node.func.attr.value
    return None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    """The argument passed as ``name=...`` to ``call``, or ``None``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    """The positional argument expressions of ``call`` (stops at the first ``*args``)."""
    values = []
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if arg.star:
            break
        values.append(arg.value)
    return values


def is_name(expr: Optional[cst.BaseExpression], value: str) -> bool:
    """True when ``expr`` is the bare name ``value`` (``True``, ``None``...)."""
    return isinstance(expr, cst.Name) and expr.value == value


def is_number(expr: cst.BaseExpression) -> bool:
    """True for a number literal, signed or not (``2``, ``1e-9``, ``-1``)."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))


def torch_name(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """For an expression that resolves to ``torch.X.Y``: ``"X.Y"``; else ``None``."""
    qual = ctx.qualname(expr)
    if qual is not None and qual.startswith("torch."):
        return qual[len("torch."):]
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
