"""Reading the arguments of torch calls: sizes, dims, int lists, dtypes, nested literals."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.eval.declared_numbers import declared_number
from shapecheck.semantic.eval.sizes import size_dim
from shapecheck.semantic.facts import BOOL, FLOAT, INT, SIZE, TENSOR, DtypeKind, Fact
from shapecheck.shapes import Dim, Shape


def dtype_value(ev: Eval, expr: cst.BaseExpression) -> Optional[DtypeKind]:
    """The dtype kind an expression names (``torch.float16`` -> ``float``, ``int``), or ``None``."""
    qual = ev.model.imports.resolve(expr)
    if qual is not None and qual.startswith("torch."):
        return O.dtype_kind(qual[6:])
    if type(expr) is cst.Name and expr.value in ("float", "int", "bool", "complex"):
        return DtypeKind(expr.value)
    return None


def py_dtype(f: Fact) -> Optional[DtypeKind]:
    """The dtype kind a Python scalar takes in a tensor op."""
    return _PY_DTYPES.get(f.kind) if f.kind is not None else None


# the dtype kind of a Python scalar in an op: Python's types, no table of torch
_PY_DTYPES = {INT: DtypeKind.INT, FLOAT: DtypeKind.FLOAT, BOOL: DtypeKind.BOOL}


def size_args(ev: Eval, pos: Sequence[cst.BaseExpression],
              size_kw: Optional[cst.BaseExpression]) -> Optional[Shape]:
    """The shape named by factory size arguments: ``(2, 3)``, ``((2, 3))``, ``(x.shape)``;
    ``None`` for ``size=`` given one int (``size=(3)`` is ``size=3``: torch raises TypeError)."""
    if size_kw is not None:
        if not isinstance(size_kw, (cst.Tuple, cst.List)) and ev.fact(size_kw).kind == INT:
            return None
        pos = [size_kw]
    if not pos:
        return Shape(())
    if len(pos) == 1:
        first = pos[0]
        f = ev.fact(first)
        if f.kind == SIZE:
            return f.shape
        if isinstance(first, (cst.Tuple, cst.List)):
            return size_args(ev, first.elements and [e.value for e in first.elements] or [], None) \
                if not any(type(e) is cst.StarredElement for e in first.elements) else None
        if f.elems is not None:
            return Shape(tuple(e.dim for e in f.elems))
        if f.kind == INT:
            return Shape((f.dim,))
        return None
    dims = []
    for p in pos:
        f = ev.fact(p)
        if f.kind != INT and f.kind is not None:
            return None
        dims.append(f.dim)
    return Shape(tuple(dims))


def target_dims(ev: Eval, pos: Sequence[cst.BaseExpression],
                kw: Optional[cst.BaseExpression]) -> Optional[list[Dim]]:
    """The sizes asked of ``view``/``reshape``/``expand``/``repeat`` (``-1`` kept, unknown ones
    ``None``), or ``None`` when they cannot be read."""
    if kw is not None:
        pos = [kw]
    if len(pos) == 1:
        f = ev.fact(pos[0])
        if f.kind == SIZE:
            if f.shape is None or f.shape.rank is None:
                return None
            return list(f.shape.dims)
        only = pos[0]
        if isinstance(only, (cst.Tuple, cst.List)):
            if any(type(e) is cst.StarredElement for e in only.elements):
                return None
            pos = [e.value for e in only.elements]
        elif f.elems is not None:
            return [e.dim if e.kind == INT else None for e in f.elems]
        elif f.kind != INT:
            return None
    dims: list[Dim] = []
    for p in pos:
        f = ev.fact(p)
        if f.kind == SIZE or f.elems is not None:
            return None
        if f.kind not in (INT, None):
            return None
        dims.append(size_dim(ev, p, f))
    return dims


def int_list(ev: Eval, pos: Sequence[cst.BaseExpression], kw: Optional[cst.BaseExpression]) -> Optional[list[int]]:
    """Known ints given one by one or as one tuple/list (``permute(0, 2, 1)``, ``dims=(0, 1)``)."""
    if kw is not None:
        pos = [kw]
    if len(pos) == 1:
        only = pos[0]
        if isinstance(only, (cst.Tuple, cst.List)):
            pos = [e.value for e in only.elements]
    vals = []
    for p in pos:
        v = ev.fact(p).value
        if not isinstance(v, int) or isinstance(v, bool):
            return None
        vals.append(v)
    return vals


def opt_int(ev: Eval, expr: Optional[cst.BaseExpression]) -> object:
    """A slice bound: ``None`` when absent, its int value when known, else ``"?"``."""
    if expr is None:
        return None
    f = ev.fact(expr)
    if f.kind == INT and isinstance(f.value, int):
        return f.value
    return "?"


def literal_shape(ev: Eval, data: cst.BaseExpression) -> tuple[Optional[Shape], Optional[DtypeKind]]:
    """Shape and dtype kind of ``torch.tensor(<nested literal>)``."""
    if isinstance(data, (cst.List, cst.Tuple)):
        if any(type(e) is cst.StarredElement for e in data.elements):
            return None, None
        if not data.elements:
            return Shape((0,)), DtypeKind.FLOAT
        subs = [literal_shape(ev, e.value) for e in data.elements]
        first = subs[0][0]
        if first is None or any(s[0] != first for s in subs):
            return None, _merge_kinds([s[1] for s in subs])
        return Shape((len(subs),) + first.dims), _merge_kinds([s[1] for s in subs])
    f = ev.fact(data)
    if f.kind == INT:
        return Shape(()), DtypeKind.INT
    if f.kind == FLOAT:
        return Shape(()), DtypeKind.FLOAT
    if f.kind == BOOL:
        return Shape(()), DtypeKind.BOOL
    if f.kind == TENSOR:
        return f.shape, f.dtype_kind
    if f.kind is None and declared_number(ev, data):
        return Shape(()), None  # `torch.tensor(r)` of a parameter `r=10.0`: a 0-dim tensor
    return None, None


def _merge_kinds(kinds: Sequence[Optional[DtypeKind]]) -> Optional[DtypeKind]:
    if any(k is None for k in kinds):
        return None
    return O.promote(kinds)
