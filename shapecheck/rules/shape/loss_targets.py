"""Elementwise losses given an input of shape ``(..., 1)`` and a 1-D target (or the reverse).

``F.mse_loss(pred, y)`` with ``pred`` ``(N, 1)`` (a regression head, ``nn.Linear(d, 1)``) and
``y`` ``(N,)`` broadcasts to ``(N, N)``: torch only warns ("Using a target size ... that is
different to the input size") and averages every prediction against every target. The BCE
losses raise ``ValueError`` there, ``soft_margin_loss`` a ``RuntimeError`` (verified with torch
2.13). The sizes are different whatever ``N`` is, unless the target holds a single value.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.messages import short, with_exception
from shapecheck.semantic.facts import MODULE, TENSOR, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.shapes import Shape, format_shape

__all__ = ["column_fact", "loss_operands", "mismatch", "vector_fact"]

_LOSS_NAMES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
               "binary_cross_entropy_with_logits", "soft_margin_loss")
#: the functional losses that need an input and a target of one size
LOSS_FUNCTIONS = frozenset(f"torch.nn.functional.{n}" for n in _LOSS_NAMES)
#: the loss modules whose call takes ``(input, target)`` of one size
LOSS_MODULES = frozenset(f"torch.nn.{n}" for n in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
                                                    "BCEWithLogitsLoss", "SoftMarginLoss"))


def loss_operands(node: cst.Call, ctx) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression, str]]:
    """``(input, target, loss name)`` of a call of an elementwise loss, function or module."""
    if len(node.args) < 2:
        return None  # no input and target (a starred argument gives no pair either)
    qual = ctx.qualname(node.func)
    if qual in LOSS_FUNCTIONS:
        name = f"F.{qual.rsplit('.', 1)[-1]}"
    else:
        f = ctx.fact(node.func)
        if f.kind != MODULE or f.qual not in LOSS_MODULES:
            return None
        name = f"nn.{f.qual.rsplit('.', 1)[-1]}"
    args = CallArgs(node)
    if args.starred:
        return None
    inp, target = args.get(0, "input"), args.get(1, "target")
    if inp is None or target is None:
        return None
    return inp, target, name


def column_fact(f: Fact) -> bool:
    """A tensor of shape ``(..., 1)``: at least one dim, the last known to be 1."""
    s = f.shape
    return f.kind in (TENSOR, None) and s is not None and bool(s.trailing()) and s.trailing()[-1] == 1


def vector_fact(f: Fact) -> bool:
    """A 1-D tensor whose size is not known to be 1."""
    s = f.shape
    return f.kind in (TENSOR, None) and s is not None and s.rank == 1 and s.dims[0] != 1


def mismatch(node: cst.Call, ctx) -> Optional[tuple[str, Optional[str]]]:
    """``(message, condition)`` when the loss ``node`` is given a ``(..., 1)`` input and a 1-D
    target, or a 1-D input and a ``(..., 1)`` target; else ``None``."""
    found = loss_operands(node, ctx)
    if found is None:
        return None
    inp, target, name = found
    fi, ft = ctx.fact(inp), ctx.fact(target)
    if TENSOR not in (fi.kind, ft.kind):
        return None
    if column_fact(fi) and vector_fact(ft):
        column, vector, vec_fact = inp, target, ft
    elif vector_fact(fi) and column_fact(ft):
        column, vector, vec_fact = target, inp, fi
    else:
        return _enlarged(ctx, name, inp, target, fi, ft)
    c, v = short(ctx, column, 24), short(ctx, vector, 24)
    shape_c = format_shape(ctx.fact(column).shape or Shape.unknown())
    shape_v = format_shape(vec_fact.shape or Shape.unknown())
    size = vec_fact.shape.dims[0] if vec_fact.shape is not None else None
    condition = None if isinstance(size, int) else f"`{v}` has one element"
    message = (f"`{name}` is given `{c}` {shape_c} and `{v}` {shape_v}: a trailing size-1 dim against a 1-D "
               f"tensor broadcasts to every pair of them ((N, 1) with (N,) gives (N, N)), so the loss compares "
               f"each value with every other (torch only warns for MSE/L1 losses, BCE raises); "
               f"squeeze the last dim (`{c}.squeeze(-1)`) or view the other as (-1, 1)")
    return with_exception(message, condition), condition


def _enlarged(ctx, name: str, inp: cst.BaseExpression, target: cst.BaseExpression,
              fi: Fact, ft: Fact) -> Optional[tuple[str, Optional[str]]]:
    """``(message, condition)`` when the target has a size other than 1 on an axis where the
    input has size 1 (``(N, 1)`` against ``(N, N)``, a target that an earlier ``(N, 1) + (N,)``
    made square): the input is broadcast up to the target's shape, and the loss averages copies
    of each prediction against unrelated targets. Dims the input lacks are left alone (a vector
    compared with each row may be meant)."""
    si, st = fi.shape, ft.shape
    if si is None or st is None or si.rank is None or st.rank is None or st.rank < si.rank:
        return None
    pairs = list(zip(si.dims, st.dims[st.rank - si.rank:]))
    grown = [b for a, b in pairs if a == 1 and b is not None and b != 1 and not (isinstance(b, int) and b < 1)]
    if not grown or any(a not in (1, b) and b != 1 for a, b in pairs):
        return None
    symbols = [b for b in grown if isinstance(b, str)]
    # an int size widens the input whatever the symbols are; symbols alone widen it unless each is 1
    condition = None if len(symbols) < len(grown) else " and ".join(f"`{b}` is 1" for b in sorted(set(symbols)))
    i, t = short(ctx, inp, 24), short(ctx, target, 24)
    message = (f"`{name}` is given `{i}` {format_shape(si)} and a larger target `{t}` {format_shape(st)}: the "
               f"input is broadcast up to the target's shape, so each prediction is compared with targets of other "
               f"rows (torch only warns for MSE/L1 losses, BCE raises); make the target {format_shape(si)} "
               f"(a `(N, 1) + (N,)` before it gives `(N, N)`)")
    return with_exception(message, condition), condition

