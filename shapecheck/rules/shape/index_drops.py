"""An integer index that drops a non-leading dim, broadcast back against the tensor it indexed.

``y / y[:, -1, :]`` is the same bug as a reduction without ``keepdim``: the index removes dim 1,
and broadcasting lines what is left up with the trailing dims of ``y``. A slice (``[:, -1:]``), a
list (``[:, [-1]]``) or ``None`` keeps the dim and is not such an index.

The values of ``torch.topk``/``torch.sort`` of a tensor have its rank, so ``logits < v[:, -1]``
after ``v, _ = torch.topk(logits, k)`` is misaligned the same way (nanoGPT's top-k filter with
``[:, [-1]]`` forgotten).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.semantic.facts import FLOAT, INT, TENSOR
from shapecheck.semantic.eval.declared_numbers import class_numbers, number_param
from shapecheck.semantic.syntax import all_params, int_literal, is_number, target_names
from shapecheck.semantic.walk import walk

__all__ = ["IndexDrop", "dropped_index", "index_against", "pair_values", "python_number", "without_numbers"]

# ops whose values keep the rank of the tensor they sort or select from
_RANK_KEEPING = frozenset({"topk", "sort"})


@dataclass(frozen=True)
class IndexDrop:
    """``node`` indexes the tensor ``name`` (expression ``source``) with one integer at ``axis``
    (as written: negative after an ``...``), every other dim a full slice."""

    node: cst.Subscript
    source: cst.BaseExpression
    name: str
    axis: int


def _full_slice(el: cst.SubscriptElement) -> bool:
    s = el.slice
    return type(s) is cst.Slice and s.lower is None and s.upper is None and s.step is None


def _is_int(el: cst.SubscriptElement) -> bool:
    return type(el.slice) is cst.Index and int_literal(el.slice.value) is not None


def _is_ellipsis(el: cst.SubscriptElement) -> bool:
    return type(el.slice) is cst.Index and type(el.slice.value) is cst.Ellipsis


def dropped_index(ctx, expr: cst.BaseExpression) -> Optional[IndexDrop]:
    """The integer index of a named tensor that ``expr`` is, looking through numbers added or
    multiplied (``y[:, -1, :] + eps``): one integer, full slices elsewhere, an optional leading
    ``...``."""
    expr = without_numbers(ctx, expr)
    if type(expr) is not cst.Subscript:
        return None
    name = dotted_name(expr.value)
    if name is None or ctx.fact(expr.value).kind not in (TENSOR, None):
        return None
    els = list(expr.slice)
    lead = 1 if els and _is_ellipsis(els[0]) else 0
    rest = els[lead:]
    ints = [i for i, el in enumerate(rest) if _is_int(el)]
    if len(ints) != 1 or not all(_full_slice(el) for i, el in enumerate(rest) if i != ints[0]):
        return None
    axis = ints[0] - len(rest) if lead else ints[0]
    return IndexDrop(expr, expr.value, name, axis)


def without_numbers(ctx, expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without the Python numbers added, multiplied... to it (``y[:, -1] + eps`` gives
    ``y[:, -1]``): the operand whose shape the result has."""
    for _ in range(8):
        if type(expr) is cst.BinaryOperation and type(expr.operator) is not cst.MatrixMultiply:
            if python_number(ctx, expr.right):
                expr = expr.left
                continue
            if python_number(ctx, expr.left):
                expr = expr.right
                continue
        break
    return expr


def python_number(ctx, expr: cst.BaseExpression) -> bool:
    """A Python number: a literal, a value known to be one, a parameter with a number default
    the function never rebinds, or ``self.<attr>`` the class only ever sets to numbers."""
    if is_number(expr) or ctx.fact(expr).kind in (INT, FLOAT):
        return True
    func = ctx.function
    if func is None or ctx.fact(expr).kind is not None:
        return False
    if type(expr) is cst.Name:
        return number_param(func, expr.value)
    params = all_params(func.params)
    return type(expr) is cst.Attribute and type(expr.value) is cst.Name and ctx.class_def is not None \
        and bool(params) and params[0].name.value == expr.value.value and not func.decorators \
        and expr.attr.value in class_numbers(ctx.class_def)


def index_against(ctx, other: cst.BaseExpression, drop: IndexDrop) -> Optional[str]:
    """The name of the tensor ``other`` is when it is the tensor ``drop`` indexed (the same
    binding), or the tensor whose ``topk``/``sort`` values ``drop`` indexed; else ``None``."""
    name = dotted_name(other)
    if name is None or ctx.fact(other).kind not in (TENSOR, None):
        return None
    if name == drop.name:
        return name if ctx.fact(other) is ctx.fact(drop.source) else None
    if type(drop.source) is cst.Name and _values_of(ctx, drop.source.value, name):
        return name
    return None


def _values_of(ctx, values: str, source: str) -> bool:
    """``values`` is bound once in the function, to the values of ``torch.topk(source, ...)``
    or ``source.topk(...)`` (or ``sort``), through ``v, _ =``, ``[0]`` or ``.values``."""
    func = ctx.function
    if func is None:
        return False
    binds = [n for n in walk(func) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For,
                                                     cst.NamedExpr, cst.CompFor))
             and _binds(n, values)]
    if len(binds) != 1 or type(binds[0]) is not cst.Assign or len(binds[0].targets) != 1:
        return False
    target, value = binds[0].targets[0].target, binds[0].value
    if type(target) is cst.Tuple:
        els = target.elements
        if not els or type(els[0].value) is not cst.Name or els[0].value.value != values:
            return False
        call = value
    elif type(target) is cst.Name:
        inner = pair_values(value)
        if inner is None:
            return False
        call = inner
    else:
        return False
    return _rank_keeping_call_of(ctx, call, source)


def pair_values(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``c`` for ``c.values`` or ``c[0]``: the values of a ``(values, indices)`` pair; else ``None``."""
    if type(expr) is cst.Attribute and expr.attr.value == "values":
        return expr.value
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index \
            and int_literal(expr.slice[0].slice.value) == 0:
        return expr.value
    return None


def _binds(node: cst.CSTNode, name: str) -> bool:
    if type(node) is cst.Assign:
        return any(name in target_names(t.target) for t in node.targets)
    return name in target_names(node.target)  # type: ignore[attr-defined]


def _rank_keeping_call_of(ctx, call: cst.BaseExpression, source: str) -> bool:
    if type(call) is not cst.Call or not call.args:
        return False
    qual = ctx.qualname(call.func)
    if qual is not None:
        return qual[6:] in _RANK_KEEPING and qual.startswith("torch.") and call.args[0].keyword is None \
            and dotted_name(call.args[0].value) == source
    return type(call.func) is cst.Attribute and call.func.attr.value in _RANK_KEEPING \
        and dotted_name(call.func.value) == source
