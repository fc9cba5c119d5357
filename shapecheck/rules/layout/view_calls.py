"""`view`/`reshape` calls: which calls they are, their text, and the sizes torch rejects first."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import Fact
from shapecheck.semantic.torch_api import RESHAPE_METHODS
from shapecheck.strides import generic_view_exceptions, unknown_dim_atom


def view_call(node: cst.Call) -> Optional[str]:
    """``view``/``reshape`` when ``node`` is such a method call."""
    func = node.func
    if type(func) is cst.Attribute and func.attr.value in RESHAPE_METHODS and node.args:
        return func.attr.value
    return None


def view_request(node: cst.Call, ctx) -> Optional[tuple[str, Fact, list]]:
    """``(method, receiver fact, target sizes)`` for a ``view``/``reshape`` call on a tensor (or
    on a value of unknown kind) whose target sizes the inference read; else ``None``."""
    method = view_call(node)
    if method is None or type(node.func) is not cst.Attribute:
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
    if all(isinstance(d, int) for d in target):
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


def view_condition(recv: Fact, target, subject: str) -> Optional[str]:
    """The exception of a view proven to fail for generic sizes only: which sizes being 1 let
    it work (``"`T` or dim 2 of `y` is 1"``); ``None`` when it fails whatever the sizes (the
    exact strides are known, or no size being 1 helps)."""
    shape = recv.shape
    if shape is None or (recv.strides is not None and shape.is_fully_known):
        return None
    if shape.rank is None:
        if recv.perm is None or shape.rest_at != len(shape.dims) or len(recv.perm) != len(shape.dims):
            return "some size is 1"
        found = _bounded_exceptions(shape.dims, recv.perm, target)
    else:
        found = generic_view_exceptions(shape.dims, recv.perm, target)
    if found is None:
        return "some size is 1"
    if not found:
        return None
    names = {unknown_dim_atom(i): f"dim {i} of `{subject}`" for i in range(len(shape.dims))}

    def name(atom: str) -> str:
        if atom.startswith("#gap"):
            return "a dim (or the part of one) that indexing removed"
        return names.get(atom) or f"`{atom}`"

    if all(len(group) == 1 for group in found):
        dims = [int(g[0][1:]) for g in found if g[0][:1] == "#" and g[0][1:].isdigit()]
        named = [name(g[0]) for g in found if not (g[0][:1] == "#" and g[0][1:].isdigit())]
        parts = [_either(named) + " is 1"] if named else []
        if dims:
            parts.append("dim " + _either([str(i) for i in dims]) + f" of `{subject}` is 1")
        return " or ".join(parts)
    return _either([name(g[0]) + " is 1" if len(g) == 1 else " and ".join(name(a) for a in g) + " are 1"
                    for g in found])


def _bounded_exceptions(dims, perm, target) -> Optional[list[tuple[str, ...]]]:
    """:func:`generic_view_exceptions` for a tensor of at least ``len(dims)`` dims (see
    ``strides.generic_view_bounded``): the sets of sizes whose being 1 lets the view work with
    or without the further dims, the smallest first."""
    without = generic_view_exceptions(dims, perm, target)
    top = max((p for p in perm if p >= 0), default=-1) + 1
    rest = unknown_dim_atom(len(dims))
    with_rest = generic_view_exceptions([*dims, None], [*perm, top], target)
    if without is None or with_rest is None:
        return None
    found: list[tuple[str, ...]] = []
    for group in sorted(without + [g for g in with_rest if rest not in g], key=len):
        if not any(set(f) <= set(group) for f in found):
            found.append(group)
    return found


def _either(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
