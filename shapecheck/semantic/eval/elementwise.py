"""Elementwise ops and matrix products: operators (``+``, ``<``, ``-x``, ``@``), the binary
tensor methods, broadcasting, dtype promotion, and the device and grad of the result."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.arguments import py_dtype
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.declared_numbers import declared_number
from shapecheck.semantic.eval.derived_sizes import derived_size, inner_dims_clash
from shapecheck.semantic.eval.devices import device_of
from shapecheck.semantic.eval.layout import elementwise_layout
from shapecheck.semantic.eval.registry import Eval, expression, method
from shapecheck.semantic.facts import BOOL, CPU, FLOAT, INT, SIZE, STR, TENSOR, UNKNOWN, DtypeKind, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    BOOL_RESULT_ELEMENTWISE, ELEMENTWISE_BINARY, INPLACE_METHODS, MATRIX_PRODUCTS, NO_GRAD_RESULT_OPS,
)
from shapecheck.shapes import Shape, dim_floordiv, dim_mul

#: constant folding gives up on ints longer than this (Python prints at most 4300 digits)
_MAX_FOLDED_BITS = 4096


def elementwise(ev: Eval, operands: Sequence[Fact], op_name: Optional[str], div: bool = False,
                keep_kind: bool = True) -> Fact:
    """An elementwise op over tensors and Python scalars (broadcast, layout, device, grad)."""
    tensors = [f for f in operands if f.kind == TENSOR or (f.kind is None and f.shape is not None)]
    unknown = [f for f in operands if f.kind is None and f.shape is None]
    shapes = [f.shape for f in tensors]
    if unknown:
        shape = None
    else:
        shape, _err = O.elementwise_shape(shapes)
        shape = _keep_rank_bound(shape, shapes)
    fields: dict[str, Any] = {"kind": TENSOR if keep_kind else None, "shape": shape}
    fields.update(elementwise_layout(operands, tensors, shape, len(unknown) > 0))
    dtype: Optional[DtypeKind]
    if op_name in BOOL_RESULT_ELEMENTWISE:
        dtype = DtypeKind.BOOL
    else:
        kinds = [f.dtype_kind if f.kind == TENSOR else py_dtype(f) for f in operands]
        dtype = O.promote(kinds)
        if div and dtype in (DtypeKind.INT, DtypeKind.BOOL):
            dtype = DtypeKind.FLOAT
    fields["dtype_kind"] = dtype
    if keep_kind:
        fields["device"] = device_of(tensors, len(unknown) > 0)
        differentiable = op_name not in NO_GRAD_RESULT_OPS
        fields["grad"] = grad_of(ev, list(operands), differentiable)
        fields["is_scalar_cpu"] = bool(shape is not None and shape.rank == 0 and fields["device"] == CPU)
    return Fact(**fields)


def _keep_rank_bound(shape: Optional[Shape], shapes: Sequence[Optional[Shape]]) -> Optional[Shape]:
    """A broadcast result of unknown rank has at least as many dims as each operand."""
    if shape is None or shape.rest_at is None:
        return shape
    least = max((len(s.dims) for s in shapes if s is not None), default=0)
    if len(shape.dims) >= least:
        return shape
    return Shape((None,) * (least - len(shape.dims)) + shape.dims, rest_at=0)


def matmul(ev: Eval, a: Fact, b: Fact) -> Fact:
    """``a @ b`` (``matmul``, ``mm``, ``bmm``, ``mv``, ``dot``)."""
    if a.kind not in (TENSOR, None) or b.kind not in (TENSOR, None):
        return UNKNOWN
    shape = O.matmul_shape(a.shape, b.shape)
    if shape is None:
        shape = _matmul_rank_bound(a.shape, b.shape)
    elif inner_dims_clash(a.shape, b.shape):
        shape = Shape((None,) * len(shape.dims))  # torch raises there: no sizes for what follows
    out = O.plain_tensor(shape)
    return out.with_(
        kind=TENSOR if TENSOR in (a.kind, b.kind) else None,
        device=device_of([a, b]) if a.kind == b.kind == TENSOR else None,
        grad=grad_of(ev, [a, b], True),
        dtype_kind=O.promote([a.dtype_kind, b.dtype_kind]),
    )


def _matmul_rank_bound(a: Optional[Shape], b: Optional[Shape]) -> Optional[Shape]:
    """torch.matmul's rank rule for operands of which only a rank bound is known: two operands
    of at least 2 dims give at least as many dims as the larger bound (the batch dims broadcast)."""
    if a is None or b is None:
        return None
    least = min(len(a.dims), len(b.dims))
    if least < 2 or (a.rank is not None and b.rank is not None):
        return None
    # the rows come from a's next-to-last dim and the columns from b's last, whatever the batch dims
    rows, cols = a.trailing(), b.trailing()
    last = (rows[-2] if len(rows) >= 2 else None, cols[-1] if cols else None)
    return Shape((None,) * (max(len(a.dims), len(b.dims)) - 2) + last, rest_at=0)


@expression(cst.BinaryOperation)
def binary_operation(ev: Eval, expr: cst.BinaryOperation) -> Fact:
    """``a + b``, ``a @ b``...: folded numbers, concatenated sizes, or an elementwise op."""
    left, right = ev.fact(expr.left), ev.fact(expr.right)
    op = expr.operator
    if type(op) is cst.MatrixMultiply:
        return matmul(ev, left, right)
    left, right = _declared_numbers(ev, expr.left, left, expr.right, right)
    derived = derived_size(ev, expr, left, right)
    if derived is not None:
        return derived
    if left.kind in (INT, FLOAT) and right.kind in (INT, FLOAT):
        return _fold_numbers(op, left, right)
    if left.kind == SIZE and right.kind == SIZE and type(op) is cst.Add:
        if left.shape is not None and right.shape is not None and left.shape.rank is not None \
                and right.shape.rank is not None:
            return Fact(kind=SIZE, shape=Shape(left.shape.dims + right.shape.dims))
        return Fact(kind=SIZE)
    if left.kind != TENSOR and right.kind != TENSOR:
        for mine, other in ((left, right), (right, left)):
            if mine.kind is None and mine.reduction is not None and other.kind in (INT, FLOAT):
                return Fact(shape=mine.shape, reduction=mine.reduction)  # `x.sum(1) + eps`, x maybe an array
        if left.kind is None and right.kind is None and (left.perm is not None or right.perm is not None):
            return elementwise(ev, [left, right], op_name=None, div=type(op) is cst.Divide, keep_kind=False)
        return UNKNOWN
    return with_scalar_reduction(elementwise(ev, [left, right], op_name=None, div=type(op) is cst.Divide),
                                 left, right)


def _declared_numbers(ev: Eval, left_expr: cst.BaseExpression, left: Fact, right_expr: cst.BaseExpression,
                      right: Fact) -> tuple[Fact, Fact]:
    """Next to a reduction, an operand of unknown kind that the code declares a number
    (``eps=1e-6``, ``self.eps``) is a number: ``torch.sum(x ** 2, 1) + eps`` is still that reduction."""
    if left.reduction is not None and right.kind is None and declared_number(ev, right_expr):
        return left, Fact(kind=FLOAT)
    if right.reduction is not None and left.kind is None and declared_number(ev, left_expr):
        return Fact(kind=FLOAT), right
    return left, right


def with_scalar_reduction(out: Fact, left: Fact, right: Fact) -> Fact:
    """A reduction combined with a number (``x.var(1) + eps``) keeps its shape: the result is
    still that reduction, for the rule that finds it broadcast back against its source."""
    if out.kind != TENSOR or out.reduction is not None:
        return out
    for mine, other in ((left, right), (right, left)):
        if mine.reduction is not None and other.reduction is None and (other.kind in (INT, FLOAT) or other.rank == 0):
            return out.with_(reduction=mine.reduction)
    return out


@expression(cst.Comparison)
def comparison(ev: Eval, expr: cst.Comparison) -> Fact:
    """``a < b``: a bool tensor for tensors, a Python bool for scalars."""
    if len(expr.comparisons) != 1:
        return UNKNOWN
    comp = expr.comparisons[0]
    if not isinstance(comp.operator, (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual,
                                      cst.GreaterThan, cst.GreaterThanEqual)):
        return Fact(kind=BOOL)
    left, right = ev.fact(expr.left), ev.fact(comp.comparator)
    if left.kind != TENSOR and right.kind != TENSOR:
        if left.kind in (INT, FLOAT, STR, BOOL) and right.kind in (INT, FLOAT, STR, BOOL):
            return Fact(kind=BOOL)
        for mine, other in ((left, right), (right, left)):
            if mine.kind is None and mine.shape is not None and other.kind in (INT, FLOAT, BOOL):
                # an array or a tensor compared with a number: a mask of its shape, whichever it is
                return Fact(shape=mine.shape, dtype_kind=DtypeKind.BOOL)
        return UNKNOWN
    return elementwise(ev, [left, right], op_name="eq")


@expression(cst.UnaryOperation)
def unary_operation(ev: Eval, expr: cst.UnaryOperation) -> Fact:
    """``not x``, ``-x``, ``~x``."""
    f = ev.fact(expr.expression)
    if type(expr.operator) is cst.Not:
        return Fact(kind=BOOL)
    if f.kind in (INT, FLOAT) and f.value is not None and type(expr.operator) is cst.Minus:
        v = -f.value
        return f.with_(value=v, dim=v if f.kind == INT else None)
    if f.kind == TENSOR or (f.kind is None and f.shape is not None):
        return f.with_(reduction=None)
    return UNKNOWN


@method(*ELEMENTWISE_BINARY, *(n + "_" for n in ELEMENTWISE_BINARY if n + "_" in INPLACE_METHODS))
def binary_method(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """Elementwise methods with another operand (add, mul, eq, maximum...)."""
    other_expr = args.get(0, "other")
    if other_expr is None:
        return None
    other = ev.fact(other_expr)
    if x.reduction is not None and other.kind is None and declared_number(ev, other_expr):
        other = Fact(kind=FLOAT)
    out = elementwise(ev, [x, other], op_name=name, div=name in ("div", "true_divide", "divide"))
    if name.endswith("_"):
        return x.with_(reduction=None)
    return with_scalar_reduction(out, x, other)


@method(*MATRIX_PRODUCTS)
def matmul_method(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """matmul/mm/bmm/mv/dot as methods."""
    other = args.get(0, "other") or args.get(0, "mat2") or args.get(0, "vec")
    if other is None:
        return None
    return matmul(ev, x, ev.fact(other))


def _fold_numbers(op: cst.BaseBinaryOp, a: Fact, b: Fact) -> Fact:
    kind = FLOAT if FLOAT in (a.kind, b.kind) or type(op) is cst.Divide else INT
    av, bv = a.value, b.value
    value = None
    if av is not None and bv is not None and not isinstance(av, bool) and not isinstance(bv, bool):
        try:
            if type(op) is cst.Add:
                value = av + bv
            elif type(op) is cst.Subtract:
                value = av - bv
            elif type(op) is cst.Multiply:
                value = av * bv
            elif type(op) is cst.FloorDivide and bv:
                value = av // bv
            elif type(op) is cst.Divide and bv:
                value = av / bv
            elif type(op) is cst.Modulo and bv:
                value = av % bv
        except (TypeError, OverflowError):
            value = None
    if isinstance(value, int) and value.bit_length() > _MAX_FOLDED_BITS:
        value = None  # far beyond any size, and too long to print in a message
    if kind == INT:
        if not isinstance(value, int) and isinstance(op, (cst.Multiply, cst.FloorDivide)):
            return Fact(kind=INT, dim=dim_mul(a.dim, b.dim) if type(op) is cst.Multiply
                        else dim_floordiv(a.dim, b.dim))  # sizes as symbols: `h * w`, `c // g`
        return Fact(kind=INT, value=value, dim=value if isinstance(value, int) else None)
    return Fact(kind=FLOAT, value=value)
