"""`view`/`reshape` calls: which calls they are, their text, and the sizes torch rejects first."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import Fact
from shapecheck.semantic.torch_api import RESHAPE_METHODS


def view_call(node: cst.Call) -> Optional[str]:
    """``view``/``reshape`` when ``node`` is such a method call."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in RESHAPE_METHODS and node.args:
        return func.attr.value
    return None


def view_request(node: cst.Call, ctx) -> Optional[tuple[str, Fact, list]]:
    """``(method, receiver fact, target sizes)`` for a ``view``/``reshape`` call on a tensor (or
    on a value of unknown kind) whose target sizes the inference read; else ``None``."""
    method = view_call(node)
    if method is None or not isinstance(node.func, cst.Attribute):
        return None
    recv = ctx.fact(node.func.value)
    if recv.kind not in ("tensor", None):
        return None
    target = ctx.view_target(node)
    if target is None:
        return None
    return method, recv, target


def call_text(ctx, node: cst.Call, method: str, target) -> str:
    """``.view(2, 3)`` with the sizes the linter computed, or the arguments as written when
    some size is unknown (``.view(batch, seq, -1)``)."""
    if all(d is not None for d in target):
        return f".{method}(" + ", ".join(str(d) for d in target) + ")"
    return f".{method}(" + ", ".join(ctx.source(a.value) for a in node.args) + ")"


def _second_inferred(target) -> int:
    """The index of the second ``-1`` of a view target (its length when there is none)."""
    seen = False
    for i, d in enumerate(target):
        if d == -1:
            if seen:
                return i
            seen = True
    return len(target)


def negative_view_size(target) -> Optional[int]:
    """The index of the first size torch rejects in a view target (below ``-1``), scanning as
    torch does; ``None`` when there is none or a second ``-1`` comes first (SC102's finding)."""
    end = _second_inferred(target)
    return next((i for i, d in enumerate(target[:end]) if isinstance(d, int) and d < -1), None)


def clipped_source(ctx, node: cst.BaseExpression) -> str:
    """The source of ``node`` as written, cut to 40 characters, for messages."""
    text = ctx.source(node)
    return text if len(text) <= 40 else text[:37] + "..."
