"""Sizes of a tensor that land on another of its axes when the code combines the two elementwise.

A size read from a tensor (``x.shape[0]``, ``x.size(1)``) names one axis of it. Two spellings put
it on a different axis of that same tensor, because broadcasting lines dims up from the right:

- a tensor sized by it (``y.view(x.shape[0], -1)``) combined with or expanded to ``x`` whose rank
  is larger: ``y.view(x.shape[0], -1).expand_as(x)`` with ``x`` of rank 4 puts ``x.shape[0]``
  against dim 2 of ``x``;
- a table cut to that size on the wrong axis, ``x + pe[:, :x.size(0)]``: when the cut dim has
  size 1 the cut does nothing, and the table keeps its full length on the axis that meets ``x``'s;
  when the ranks are known the cut dim lines up with another axis of ``x``.

Two sizes of one tensor at different axes are independent for generic sizes (DESIGN.md), so the
finding holds unless they happen to be equal. Only a tensor that the function never rebinds is
matched against a size its name reads (the size and the tensor are then the same binding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from shapecheck.semantic.syntax import dotted_name, target_names
from shapecheck.semantic.walk import walk
from shapecheck.shapes import Shape, format_dim

__all__ = ["Misplaced", "misplaced_size", "misplaced_cut", "rebound"]

_READ = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?:\.shape\[(-?\d+)\]|\.size\((-?\d+)\))$")


@dataclass(frozen=True)
class Misplaced:
    """A size of ``tensor`` (its dim ``axis``, spelled ``size``), dim ``position`` of ``holder``,
    that lands on dim ``lands`` of ``tensor`` (``exact``), on that dim or a later one (the rank of
    ``tensor`` only bounded), or, for a cut that does nothing (``kept``: the size it keeps, on dim
    ``lands`` of the table), on an unknown dim."""

    tensor: str
    size: str
    axis: int
    lands: int
    exact: bool
    holder: cst.BaseExpression
    position: int
    kept: Optional[str] = None


def _read_of(text: str) -> Optional[tuple[str, int]]:
    """``("x", 0)`` for the size text ``x.shape[0]`` or ``x.size(0)``."""
    m = _READ.match(text)
    if m is None:
        return None
    return m.group(1), int(m.group(2) if m.group(2) is not None else m.group(3))


def _size_call(expr: Optional[cst.BaseExpression]) -> Optional[tuple[str, int]]:
    """``("x", k)`` for the expression ``x.size(k)`` or ``x.shape[k]`` (``k`` an int literal)."""
    if expr is None:
        return None
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" \
            and len(expr.args) == 1 and expr.args[0].keyword is None:
        owner, index = dotted_name(expr.func.value), _int(expr.args[0].value)
    elif type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape" \
            and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        owner, index = dotted_name(expr.value.value), _int(expr.slice[0].slice.value)
    else:
        return None
    return (owner, index) if owner is not None and index is not None else None


def _int(expr: cst.BaseExpression) -> Optional[int]:
    if type(expr) is cst.Integer:
        return int(expr.value)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus and type(expr.expression) is cst.Integer:
        return -int(expr.expression.value)
    return None


def rebound(function: Optional[cst.FunctionDef], name: str, once: bool = False) -> bool:
    """True when ``function`` (the module level when ``None``: then always) binds ``name``'s root
    (a plain name) or assigns the attribute ``name`` itself; with ``once``, when it does so more
    than once."""
    if function is None:
        return True
    root = name.split(".")[0]
    count = 0
    for node in walk(function.body, into_defs=True):
        tp = type(node)
        if tp is cst.Assign:
            targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
        elif tp in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor):
            targets = [node.target]  # type: ignore[attr-defined]
        elif tp is cst.AsName:
            targets = [node.name]  # type: ignore[attr-defined]
        else:
            continue
        count += sum(1 for t in targets if root in target_names(t) or dotted_name(t) == name)
    return count > (1 if once else 0)


def _lands(position: int, rank: int, tensor: Shape) -> Optional[tuple[int, bool]]:
    """Where dim ``position`` of a tensor of rank ``rank`` lands among the dims of ``tensor``,
    lined up from the right, and whether that is exact (``tensor``'s rank known) or the least
    axis it can be (only a lower bound on the leading dims); ``None`` when unknown."""
    if tensor.rank is not None:
        return position + tensor.rank - rank, True
    if tensor.rest_at == len(tensor.dims):
        return position + len(tensor.dims) - rank, False
    return None


def misplaced_size(ctx, holder: cst.BaseExpression, other: cst.BaseExpression) -> Optional[Misplaced]:
    """A dim of ``holder`` that is a size of ``other`` (``x.shape[0]``) and lands, against
    ``other``, on another axis of it; ``None`` when there is none or it is not certain."""
    name = dotted_name(other)
    mine, theirs = ctx.fact(holder).shape, ctx.fact(other).shape
    if name is None or mine is None or mine.rank is None or theirs is None:
        return None
    for i, d in enumerate(mine.dims):
        read = _read_of(d) if isinstance(d, str) else None
        if read is None or read[0] != name:
            continue
        where = _lands(i, mine.rank, theirs)
        if where is None or where[0] < 0:
            continue
        lands, exact = where
        axis = read[1] if read[1] >= 0 else (theirs.rank + read[1] if theirs.rank is not None else None)
        if axis is None or axis < 0 or lands == axis or not exact and lands < axis:
            continue
        if lands < len(theirs.dims) and (theirs.dims[lands] == 1 or theirs.dims[lands] == d
                                         or axis < len(theirs.dims) and theirs.dims[lands] == theirs.dims[axis]
                                         and theirs.dims[axis] is not None):
            continue
        if rebound(ctx.function, name):
            continue
        return Misplaced(name, str(d), axis, lands, exact, holder, i)
    return None


def misplaced_cut(ctx, cut: cst.BaseExpression, other: cst.BaseExpression) -> Optional[Misplaced]:
    """``cut`` is ``t[:, :x.size(k)]`` with ``x`` the expression ``other``: the cut dim has size 1
    in ``t`` (the cut does nothing and ``t`` keeps a larger dim elsewhere), or, ranks known, it
    lands on another axis of ``x``; ``None`` otherwise."""
    name = dotted_name(other)
    if name is None or type(cut) is not cst.Subscript:
        return None
    found: Optional[tuple[int, tuple[str, int], cst.BaseExpression]] = None
    for j, el in enumerate(cut.slice):
        s = el.slice
        if type(s) is not cst.Slice or s.step is not None:
            return None
        if s.lower is None and s.upper is None:
            continue
        read = _size_call(s.upper)
        if found is not None or s.lower is not None and _int(s.lower) != 0 or read is None or read[0] != name:
            return None
        found = (j, read, s.upper)  # type: ignore[assignment]
    table = ctx.fact(cut.value).shape
    if found is None or table is None or table.rank is None:
        return None
    j, (_n, k), upper = found
    size = " ".join(ctx.source(upper).split())
    theirs = ctx.fact(other).shape
    if table.dims[j] == 1:
        kept = [(p, d) for p, d in enumerate(table.dims[:-1]) if p != j and d != 1 and d is not None]
        if kept and k >= 0:
            return Misplaced(name, size, k, kept[0][0], False, cut, j, format_dim(kept[0][1]))
        return None
    if theirs is None or theirs.rank is None:
        return None
    axis = k if k >= 0 else theirs.rank + k
    lands = j + theirs.rank - table.rank
    if lands < 0 or axis < 0 or lands == axis:
        return None
    return Misplaced(name, size, axis, lands, True, cut, j)
