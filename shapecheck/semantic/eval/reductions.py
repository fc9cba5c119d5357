"""Reductions (``sum``, ``mean``, ``max``...), the ops that return a ``(values, indices)`` pair,
and the provenance a reduction without ``keepdim`` records for the rules."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.elementwise import elementwise
from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import CPU, NO_GRAD, TENSOR, TUPLE, DtypeKind, Fact, Reduction
from shapecheck.semantic.syntax import CallArgs, dotted_name
from shapecheck.semantic.torch_api import (
    MIN_MAX_PAIR_OPS, NO_GRAD_RESULT_OPS, REDUCTIONS, REDUCTIONS_DIM_SECOND, VALUES_INDICES_ALWAYS,
    VALUES_INDICES_WITH_DIM,
)


@method(*REDUCTIONS)
def reduce(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """Reductions: shape with or without keepdim, the (values, indices) pair, provenance."""
    if name in REDUCTIONS_DIM_SECOND:
        dim_expr = args.get(1, "dim")
        keep_expr = args.get(2, "keepdim")
    else:
        dim_expr = args.get(0, "dim")
        if dim_expr is None:
            dim_expr = args.kw.get("axis")
        keep_expr = args.get(1, "keepdim")
        if name in ("std", "var") and len(args.pos) >= 2:
            keep_expr = args.get(2, "keepdim")
            if len(args.pos) == 2:
                keep_expr = args.kw.get("keepdim")
    if keep_expr is None:
        keep_expr = args.kw.get("keepdims")  # the numpy spelling, which torch accepts too
    keepdim: Optional[bool] = False
    if keep_expr is not None:
        v = ev.fact(keep_expr).value
        keepdim = v if isinstance(v, bool) else None
    axes: Optional[list[int]] = None
    if dim_expr is not None:
        df = ev.fact(dim_expr)
        if name in ("max", "min") and df.kind == TENSOR:
            return elementwise(ev, [x, df], op_name="maximum")
        if isinstance(df.value, int) and not isinstance(df.value, bool):
            axes = [df.value]
        elif isinstance(df.value, tuple) and all(isinstance(v, int) for v in df.value):
            axes = list(df.value)
        elif df.kind is None and not isinstance(dim_expr, (cst.Tuple, cst.List)) and name in ("max", "min"):
            return Fact(kind=None)
        else:
            return _reduced(ev, x, name, None, None, axes_known=False)
    if keepdim is None:
        return _reduced(ev, x, name, None, None, axes_known=False)
    return _reduced(ev, x, name, axes, keepdim, axes_known=True)


def _reduced(ev: Eval, x: Fact, name: str, axes: Optional[list[int]], keepdim: Optional[bool],
             axes_known: bool) -> Fact:
    dtype = x.dtype_kind
    if name in ("argmax", "argmin", "count_nonzero"):
        dtype = DtypeKind.INT
    elif name in ("any", "all"):
        dtype = DtypeKind.BOOL
    elif name in ("mean", "std", "var", "norm", "logsumexp", "nanmean") and dtype in (DtypeKind.INT, DtypeKind.BOOL):
        dtype = DtypeKind.FLOAT
    elif name in ("sum", "prod", "nansum") and dtype == DtypeKind.BOOL:
        dtype = DtypeKind.INT
    differentiable = name not in NO_GRAD_RESULT_OPS
    shape = O.reduce_shape(x.shape, axes, bool(keepdim)) if axes_known else None
    fields: dict[str, Any] = {"device": x.device if x.kind == TENSOR else None,
                                  "grad": grad_of(ev, [x], differentiable) if x.kind == TENSOR else None,
                                  "dtype_kind": dtype}
    out = O.plain_tensor(shape, **fields)
    if shape is not None and shape.rank is not None and shape.rank > 1:
        out = out.with_(layout=None, strides=None)
    if shape is None:
        out = out.with_(layout=None)
    out = out.with_(is_scalar_cpu=shape is not None and shape.rank == 0 and fields["device"] == CPU)
    if x.kind is None:
        out = out.with_(kind=None)
    if axes_known and axes is not None and keepdim is False:
        out = out.with_(reduction=Reduction(x, None, tuple(axes), None))
    if name in VALUES_INDICES_WITH_DIM and axes is not None:
        values = out.with_(dtype_kind=x.dtype_kind)
        indices = out.with_(dtype_kind=DtypeKind.INT, grad=NO_GRAD if x.kind == TENSOR else None)
        return Fact(kind=TUPLE, shape=shape, elems=(values, indices))
    return out


@method(*VALUES_INDICES_ALWAYS, *MIN_MAX_PAIR_OPS)
def pair(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """sort/topk/kthvalue/mode...: always a (values, indices) pair; aminmax: a (min, max) pair."""
    values = Fact(kind=TENSOR if x.kind == TENSOR else None, device=x.device, dtype_kind=x.dtype_kind,
                  grad=grad_of(ev, [x], True) if x.kind == TENSOR else None)
    if name in MIN_MAX_PAIR_OPS:
        return Fact(kind=TUPLE, elems=(values, values))
    indices = values.with_(dtype_kind=DtypeKind.INT, grad=NO_GRAD if x.kind == TENSOR else None)
    if name == "sort" and x.shape is not None:
        values = values.with_(shape=x.shape)
        indices = indices.with_(shape=x.shape)
    return Fact(kind=TUPLE, elems=(values, indices))


def name_reduction(out: Fact, recv_expr: Optional[cst.BaseExpression], call: cst.Call) -> Fact:
    """Fill in the source name and the call node of a reduction's provenance."""
    name = dotted_name(recv_expr) if recv_expr is not None else None

    def fill(f: Fact) -> Fact:
        """One fact with the reduction's name and node filled in."""
        r = f.reduction
        if r is None:
            return f
        return f.with_(reduction=Reduction(r.source, name, r.axes, call))

    if out.kind == TUPLE and out.elems:
        return out.with_(elems=tuple(fill(e) for e in out.elems))
    return fill(out)
