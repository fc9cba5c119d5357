"""Broadcasting of shapes whose dims are ints, symbols or unknown, with a teacher's explanation.

The rule is numpy's and torch's: align the shapes on the right; in each column every size must be
equal to the others or be 1 (a missing dim counts as 1); the result takes the size that is not 1.

Over symbols (see :mod:`shapecheck.shapes`):

- two equal symbols broadcast (``batch`` with ``batch`` is ``batch``);
- a symbol with 1 gives the symbol;
- two different symbols, or a symbol and an int other than 1, cannot be proven equal: that is an
  error, with ``.certain`` False (the sizes might agree at run time);
- an unknown dim (``None``) never raises: it is taken to fit. Unknown with ``n`` (not 1) gives
  ``n``; unknown with 1 or with unknown stays unknown.

A shape of unknown rank (``Shape.unknown()``, or one with a ``*rest`` run) contributes only its
known trailing dims; the result then has unknown rank too.

Plain int shapes follow ``torch.broadcast_shapes`` exactly, including size 0 (``0`` with ``1``
gives ``0``; ``0`` with ``2`` fails) and negative sizes (an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

from shapecheck.errors import BroadcastError, ShapeCheckError
from shapecheck.generic_dims import broadcast_condition, independent
from shapecheck.shapes import Dim, Shape, as_shape, format_dim, format_shape, is_generic

ShapeLike = Union[Shape, Iterable[Dim], int]

RULE = (
    "rule: align the shapes on the right; in each column the sizes must be equal,\n"
    "          or be 1 (a missing dim counts as 1)"
)


class InvalidShapeError(ShapeCheckError, ValueError):
    """A shape with a negative size or a dim that is neither an int, a symbol nor unknown."""


class Mismatch(Exception):
    """Raised by :func:`combine` when two dims cannot broadcast; ``.certain`` as in errors."""

    def __init__(self, certain: bool) -> None:
        super().__init__()
        self.certain = certain


def combine(a: Dim, b: Dim) -> Dim:
    """Broadcast two dims; raises :class:`Mismatch` when they cannot broadcast."""
    if a == b:
        return a
    if a is None:
        return None if b == 1 else b
    if b is None:
        return None if a == 1 else a
    if a == 1:
        return b
    if b == 1:
        return a
    if is_generic(a) or is_generic(b):
        # a size the code computed may be any other: never a mismatch, the result is the other
        # one when that is an int (or 1 would fail), else unknown
        return b if isinstance(b, int) else a if isinstance(a, int) else None
    raise Mismatch(isinstance(a, int) and isinstance(b, int))


def _normalise(value: ShapeLike) -> Shape:
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        value = (value,)
    shape = as_shape(value)
    for d in shape.dims:
        if d is None or isinstance(d, str):
            continue
        if not isinstance(d, int):
            raise InvalidShapeError(
                f"shape {format_shape(shape)} has a dim {d!r} that is not an int, a symbol or unknown"
            )
        if d < 0:
            raise InvalidShapeError(f"shape {format_shape(shape)} has a negative size {d}")
    if any(type(d) is bool for d in shape.dims):
        shape = Shape(tuple(int(d) if type(d) is bool else d for d in shape.dims), shape.rest_at, shape.rest_name)
    return shape


def broadcast_shapes(*shapes: ShapeLike) -> Shape:
    """The shape that ``shapes`` broadcast to; raises :class:`~shapecheck.errors.BroadcastError`.

    Accepts :class:`~shapecheck.shapes.Shape` objects, tuples or lists of dims, ``torch.Size``
    and (like torch) a bare int for a 1-d shape. With no shapes the result is ``()``.
    """
    fast = _fast(shapes)
    if fast is not None:
        return Shape(fast)
    norm = [_normalise(s) for s in shapes]
    width = 0
    open_rank = False
    for s in norm:
        width = max(width, len(s.trailing()))
        open_rank = open_rank or s.rest_at is not None
    result: list[Dim] = [1] * width
    source: list[Optional[int]] = [None] * width
    for i, s in enumerate(norm):
        tail = s.trailing()
        known = len(tail)
        for j in range(1, width + 1):
            if j <= known:
                d = tail[-j]
            elif s.rest_at is not None:
                d = None
            else:
                continue
            cur = result[-j]
            try:
                new = combine(cur, d)
            except Mismatch as m:
                raise _error(norm, -j, source[-j], i, cur, d, m.certain) from None
            if d is not None and d != 1 and (source[-j] is None or cur is None or cur == 1):
                source[-j] = i
            result[-j] = new
    if open_rank:
        return Shape(tuple(result), 0)
    return Shape(tuple(result))


@dataclass(frozen=True)
class GenericMismatch:
    """Shapes that broadcast only when some generic sizes are equal or 1 (see
    :mod:`shapecheck.generic_dims`): ``columns`` holds ``(axis, a, b, first, second)`` for each
    column of two independent sizes (``axis`` negative, ``a`` from shape number ``first``, ``b``
    from shape number ``second``); ``condition`` is what would make them broadcast, for "raises
    unless ..."; ``reason`` says where they fail."""

    columns: tuple[tuple[int, Dim, Dim, int, int], ...]
    condition: str
    reason: str


def generic_mismatch(*shapes: ShapeLike) -> Optional[GenericMismatch]:
    """The verdict of broadcasting ``shapes`` for generic sizes, next to the exact one of
    :func:`broadcast_shapes` (which takes any two symbols to fit): a :class:`GenericMismatch`
    when some column holds two independent sizes (``T`` and ``B`` of ``B, T = x.shape``), which
    broadcast only when they are equal or one of them is 1; ``None`` otherwise (an unknown dim,
    a missing one or a size 1 never makes a column fail here)."""
    norm = [_normalise(s) for s in shapes]
    width = max([len(s.trailing()) for s in norm] + [0])
    columns: list[tuple[int, Dim, Dim, int, int]] = []
    for j in range(width, 0, -1):
        seen: list[tuple[Dim, int]] = []
        for i, s in enumerate(norm):
            tail = s.trailing()
            d = tail[-j] if j <= len(tail) else None
            if d is not None and d != 1 and all(d != e for e, _k in seen):
                seen.append((d, i))
        if len(seen) == 2 and independent(seen[0][0], seen[1][0]):
            columns.append((-j, seen[0][0], seen[1][0], seen[0][1], seen[1][1]))
    if not columns:
        return None
    by_pair: dict[frozenset, str] = {}  # (B, T) against (T, B) says it once
    for _j, a, b, _f, _s in columns:
        by_pair.setdefault(frozenset((a, b)), broadcast_condition(a, b))
    clauses = list(by_pair.values())
    condition = clauses[0] if len(clauses) == 1 else " and ".join(f"({c})" for c in clauses)
    where = "; ".join(
        f"dim {j} is {format_dim(a)} in shape {f} but {format_dim(b)} in shape {s}" for j, a, b, f, s in columns
    )
    reason = f"shapes {_join([format_shape(s) for s in norm])} do not broadcast for generic sizes: {where}"
    return GenericMismatch(tuple(columns), condition, reason)


def _fast(shapes: tuple) -> Optional[tuple]:
    """The result for tuples of non-negative ints that broadcast; ``None`` otherwise (the
    general path then handles symbols, unknowns and explains any fault)."""
    out: list = []
    for s in shapes:
        if not isinstance(s, tuple):
            return None
        n = len(s)
        if n > len(out):
            out[:0] = [1] * (n - len(out))
        off = len(out) - n
        for i, d in enumerate(s):
            if type(d) is not int or d < 0:
                return None
            cur = out[off + i]
            if cur == 1:
                out[off + i] = d
            elif d != cur and d != 1:
                return None
    return tuple(out)


def broadcast_table(
    shapes: Sequence[ShapeLike],
    axis: Optional[int] = None,
    rows: Sequence[int] = (),
    labels: Optional[Sequence[str]] = None,
) -> str:
    """The shapes right-aligned in a table, one column per dim counted from the right; with
    ``axis`` (negative), a caret under that column and ``<`` beside the ``rows`` involved.
    ``labels`` names the rows (default ``shape 0 (2, 3)``, ``shape 1 (3,)`` ...)."""
    norm = [_normalise(s) for s in shapes]
    width = max([len(s.trailing()) for s in norm] + [0])
    if labels is None:
        labels = [f"shape {i} {format_shape(s)}" for i, s in enumerate(norm)]
    head = "dim"
    lw = max([len(lab) for lab in labels] + [len(head)])
    cells: list[list[str]] = []
    for s in norm:
        tail = s.trailing()
        row = []
        for j in range(width, 0, -1):
            if j <= len(tail):
                row.append(format_dim(tail[-j]))
            elif s.rest_at is not None:
                row.append("...")
            else:
                row.append("")
        cells.append(row)
    heads = [str(-j) for j in range(width, 0, -1)]
    colw = [max([len(heads[c])] + [len(r[c]) for r in cells]) for c in range(width)]
    lines = ["    " + head.rjust(lw) + "".join("  " + h.rjust(w) for h, w in zip(heads, colw))]
    for i, (lab, row) in enumerate(zip(labels, cells)):
        line = "    " + lab.ljust(lw) + "".join("  " + v.rjust(w) for v, w in zip(row, colw))
        if i in rows:
            line += "   <"
        lines.append(line.rstrip() if i not in rows else line)
    if axis is not None and -width <= axis < 0:
        col = width + axis
        offset = 4 + lw + sum(2 + w for w in colw[:col]) + 2 + colw[col] - 1
        lines.append(" " * offset + "^")
    return "\n".join(lines)


def _join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _error(
    norm: list[Shape], axis: int, first: Optional[int], second: int, a: Dim, b: Dim, certain: bool
) -> BroadcastError:
    if first is None:
        first = 0
    names = _join([format_shape(s) for s in norm])
    reason = (
        f"shapes {names} do not broadcast: dim {axis} is {format_dim(a)} in shape {first} "
        f"but {format_dim(b)} in shape {second}"
    )
    if certain:
        why = f"{format_dim(a)} and {format_dim(b)} are different and neither is 1"
    else:
        reason += " (cannot prove equal)"
        why = (
            f"{format_dim(a)} and {format_dim(b)} cannot be proven equal "
            "(different symbols, or a symbol and a size other than 1)"
        )
    table = broadcast_table(norm, axis, (first, second))
    table += "\n    " + RULE + "\n    here: " + why + "."
    return BroadcastError(reason, tuple(norm), axis, table, certain)
