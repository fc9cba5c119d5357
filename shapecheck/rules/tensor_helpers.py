"""Small syntax helpers shared by the autograd, device and pitfall rules."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.facts import TENSOR, Fact
from shapecheck.shapes import format_shape


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


def tensor_fact(ctx, expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of ``expr`` when it is known to be a tensor, else ``None``."""
    fact = ctx.fact(expr)
    return fact if fact.kind == TENSOR else None


def multi_element(fact: Fact) -> Optional[str]:
    """A description of the shape when the tensor surely does not hold exactly one element.

    Some dim is a known int above 1 (so the count is 0 or at least 2), or a dim is 0. Returns
    ``"shape (2, 3)"`` for messages, or ``None`` when one element is possible.
    """
    shape = fact.shape
    if fact.kind != TENSOR or shape is None:
        return None
    if any(isinstance(d, int) and (d > 1 or d == 0) for d in shape.dims):
        return f"shape {format_shape(shape)}"
    return None


def walk(node: cst.CSTNode, *, into_defs: bool = False) -> Iterator[cst.CSTNode]:
    """Every node below ``node`` (not ``node`` itself), in source order.

    Nested function and class definitions and lambdas are skipped unless ``into_defs``.
    """
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        if not into_defs and isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(current.children))


def name_of(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def short(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    """The source of ``node`` on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(ctx.source(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
