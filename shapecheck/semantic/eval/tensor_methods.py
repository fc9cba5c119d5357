"""Tensor method calls: the dispatch to the registered handlers, and the methods that keep the
shape (unary elementwise ops, casts, device moves, ``detach``, ``requires_grad_``, in-place ops)
or read it (``size``, ``dim``, ``numel``, ``item``)."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.arguments import dtype_value
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.devices import to_device
from shapecheck.semantic.eval.layout import DENSE_COPY, MAYBE_COPY, SAME_STORAGE, contiguous, copy_layout
from shapecheck.semantic.eval.nn_modules import module_method
from shapecheck.semantic.eval.reductions import name_reduction
from shapecheck.semantic.eval.registry import METHODS, Eval, method
from shapecheck.semantic.evidence import method_use
from shapecheck.semantic.facts import (
    BOOL, CPU, CUDA, DEVICE, FLOAT, INT, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, OPTIMIZER, SIZE,
    STR, TENSOR, TUPLE, UNKNOWN, DtypeKind, Fact,
)
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    BOOL_RESULT_ELEMENTWISE, INPLACE_FILLING_METHODS, INPLACE_METHODS, NEVER_INTEGER_UNARY,
    NO_GRAD_RESULT_OPS, PYTHON_BOOL_RESULTS, SAME_STORAGE_METHODS, SELF_IF_UNCHANGED_METHODS,
    SHAPE_KEEPING_NOT_ELEMENTWISE, SHAPE_KEEPING_UNARY,
    TENSOR_ONLY_METHODS,
)


def method_call(ev: Eval, recv: Fact, name: str, expr: cst.Call, func_form: bool = False,
                recv_expr: Optional[cst.BaseExpression] = None) -> Fact:
    """``recv.<name>(...)``, or ``torch.<name>(recv, ...)`` with ``func_form``."""
    kind = recv.kind
    if kind == MODULE:
        return module_method(ev, recv, name, expr)
    if kind == OPTIMIZER or kind == TUPLE or kind == DEVICE:
        return UNKNOWN
    if kind == SIZE:
        if name == "numel":
            return Fact(kind=INT)
        return UNKNOWN
    if kind not in (TENSOR, None):
        return UNKNOWN
    if kind is None and not func_form and method_use(name, expr).tensor:
        recv, kind = recv.with_(kind=TENSOR), TENSOR  # a use only a tensor allows
    if name in PYTHON_BOOL_RESULTS:
        return Fact(kind=BOOL) if kind == TENSOR or func_form else UNKNOWN
    handler = METHODS.get(name)
    if handler is None:
        return UNKNOWN
    args = CallArgs(expr)
    if func_form:
        args.pos = args.pos[1:]
        args.kw.pop("input", None)
    out = handler(ev, recv, name, args)
    if out is None:
        return UNKNOWN
    if (out.reduction is not None and out.reduction is not recv.reduction) or out.kind == TUPLE:
        out = name_reduction(out, recv_expr, expr, ev)
    if kind is None and not func_form:
        if out.kind == TUPLE and "dim" not in args.kw:  # numpy and pandas say `axis=`
            # maybe not a tensor (numpy's max(1) is an array): only .values/.indices read it
            return Fact(elems=out.elems, maybe_pair=True)
        if out.kind == TENSOR and name not in TENSOR_ONLY_METHODS:
            out = out.with_(kind=None, device=None, grad=None)
    return out


_KEEPING = (
    SHAPE_KEEPING_UNARY | INPLACE_FILLING_METHODS | {n + "_" for n in SHAPE_KEEPING_UNARY if n + "_" in INPLACE_METHODS}
    | SELF_IF_UNCHANGED_METHODS | SAME_STORAGE_METHODS | {"clone"}
)


@method(*_KEEPING)
def keep(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """Ops that keep shape and layout: clone, elementwise unary ops, casts, device moves."""
    if name == "type" and not args.pos and not args.kw and not args.starred:
        return Fact(kind=STR) if x.kind == TENSOR else UNKNOWN  # `x.type()`: 'torch.FloatTensor'
    if name in SAME_STORAGE_METHODS or name.endswith("_"):
        how = SAME_STORAGE  # the same tensor (or a view of it): the layout does not change
    elif name in SELF_IF_UNCHANGED_METHODS:
        how = MAYBE_COPY
    else:
        how = DENSE_COPY
    # an elementwise op or a cast keeps the shape: a reduction stays one (`x.var(1).sqrt()`)
    kept = x.reduction if how != SAME_STORAGE and name not in SHAPE_KEEPING_NOT_ELEMENTWISE else None
    if how == DENSE_COPY and name in SHAPE_KEEPING_NOT_ELEMENTWISE:
        out = contiguous(ev, x.with_(reduction=None, kind=x.kind), name, args)  # torch allocates these row-major
    else:
        out = copy_layout(x, x.with_(reduction=kept, kind=x.kind), how)
    assert out is not None
    if name in ("detach",):
        return out.with_(grad=NO_GRAD)
    if name == "detach_":
        return out.with_(grad=NO_GRAD)
    kind = O.cast_kind(name)
    if kind is not None:
        grad = NO_GRAD if kind in (DtypeKind.INT, DtypeKind.BOOL) else grad_of(ev, [x], True)
        return out.with_(dtype_kind=kind, grad=grad if x.kind == TENSOR else None)
    if name in ("cuda", "cpu"):
        return out.with_(device=CUDA if name == "cuda" else CPU, grad=grad_of(ev, [x], True),
                         is_scalar_cpu=name == "cpu" and x.rank == 0)
    if name == "to" or name == "type":
        return _to_result(ev, out, x, args)
    if name == "requires_grad_":
        flag = args.get(0, "requires_grad")
        v = ev.fact(flag).value if flag is not None else True
        if v is True:
            return out.with_(grad=LEAF_REQUIRES_GRAD if x.grad in (NO_GRAD, LEAF_REQUIRES_GRAD) else x.grad)
        return out.with_(grad=NO_GRAD if v is False and x.grad != NON_LEAF else None)
    if name == "type_as":
        other = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        return out.with_(dtype_kind=other.dtype_kind, device=other.device if other.kind == TENSOR else None)
    if name.endswith("_") and name != "requires_grad_":
        return out
    differentiable = name not in NO_GRAD_RESULT_OPS
    dtype = x.dtype_kind
    if name in BOOL_RESULT_ELEMENTWISE:
        dtype = DtypeKind.BOOL
    elif name in NEVER_INTEGER_UNARY and dtype == DtypeKind.INT:
        dtype = DtypeKind.FLOAT
    return out.with_(grad=grad_of(ev, [x], differentiable) if x.kind == TENSOR else None, dtype_kind=dtype,
                     is_scalar_cpu=x.is_scalar_cpu)


def _to_result(ev: Eval, out: Fact, x: Fact, args: CallArgs) -> Fact:
    """``x.to(...)``/``x.type(...)``: a device, a dtype, both, or another tensor's."""
    dev = to_device(ev, args)
    dtype = x.dtype_kind
    if "dtype" in args.kw:
        dtype = dtype_value(ev, args.kw["dtype"])
    for a in args.pos[:2]:
        d = dtype_value(ev, a)
        if d is not None:
            dtype = d
            continue
        f = ev.fact(a)
        if f.kind == TENSOR:
            dtype = f.dtype_kind
        elif f.kind not in (DEVICE, STR):
            dtype = None  # a name that may hold a dtype
    changes: dict[str, Any] = {"grad": grad_of(ev, [x], True) if x.kind == TENSOR else None,
                               "dtype_kind": dtype}
    if dev is not False:
        changes["device"] = dev
        changes["is_scalar_cpu"] = dev == CPU and x.rank == 0
    return out.with_(**changes)


@method("gather")
def gather(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """``x.gather(dim, index)``: a new tensor of the index's shape, on ``x``'s device, of its dtype."""
    index = args.get(1, "index")
    if index is None or args.starred:
        return None
    fi = ev.fact(index)
    shape = fi.shape if fi.kind == TENSOR else None
    return O.plain_tensor(shape, device=x.device, grad=grad_of(ev, [x], True) if x.kind == TENSOR else None,
                          dtype_kind=x.dtype_kind)


@method("size")
def size(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """size(): a torch.Size; size(d): an int (its value when known)."""
    d = args.get(0, "dim")
    if d is None:
        return Fact(kind=SIZE, shape=x.shape)
    v = ev.fact(d).value
    if not isinstance(v, int) or x.shape is None or x.shape.rank is None:
        return Fact(kind=INT)
    a = O.norm_axis(v, x.shape.rank)
    if a is None:
        return Fact(kind=INT)
    dim = x.shape.dims[a]
    return Fact(kind=INT, dim=dim, value=dim if isinstance(dim, int) else None)


@method("dim", "ndimension", "numel", "item")
def scalar(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """dim()/numel()/item(): Python numbers."""
    if name in ("dim", "ndimension"):
        r = x.rank
        return Fact(kind=INT, value=r, dim=r)
    if name == "numel":
        n = x.shape.numel() if x.shape is not None else None
        if n is not None and n > O.MAX_SIZE:
            n = None
        return Fact(kind=INT, value=n, dim=n)
    if name == "item":
        if x.dtype_kind == DtypeKind.FLOAT:
            return Fact(kind=FLOAT)
        if x.dtype_kind == DtypeKind.INT:
            return Fact(kind=INT)
        return UNKNOWN
    return UNKNOWN
