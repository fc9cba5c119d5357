"""Layouts of computed tensors: the strides and dim order that elementwise ops, copies and
``*_like`` factories give, following torch's TensorIterator (pure stride arithmetic lives in
:mod:`shapecheck.strides`, the moves of dims in :mod:`shapecheck.semantic.shape_ops`)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import libcst as cst

from shapecheck import strides as L
from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import BOOL, CONTIGUOUS, FLOAT, INT, NON_CONTIGUOUS, TENSOR, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import FORMAT_CONTIGUOUS_3D, FUNCTIONAL_RESULT_LAYOUT, NN_LAYER_FUNCTION
from shapecheck.shapes import Shape

#: how a method's result relates to its receiver's storage (see :func:`copy_layout`)
SAME_STORAGE = "same"
MAYBE_COPY = "maybe-copy"
DENSE_COPY = "copy"


def elementwise_layout(operands: Sequence[Fact], tensors: Sequence[Fact], shape: Optional[Shape],
                       has_unknown: bool) -> dict[str, Any]:
    """The layout fields (``layout``, ``strides``, ``perm``, ``moved_by``) of an elementwise
    result of ``shape``: exact when every operand's strides are known, else those of the operand
    that has the result's shape (or the highest rank); empty when no operand decides."""
    layout_src = _layout_source(operands, tensors, shape, has_unknown)
    fields: dict[str, Any] = {}
    exact = _exact_elementwise_strides(operands, tensors, shape) if not has_unknown else None
    if exact is not None:
        fields.update(O.layout_fields(shape, exact))
        if fields["layout"] != CONTIGUOUS and layout_src is not None:
            fields.update(perm=O.compact_perm(layout_src.perm), moved_by=layout_src.moved_by)
    elif layout_src is not None:
        if layout_src.strides is not None and shape is not None and shape.is_fully_known:
            fields.update(O.layout_fields(shape, L.dense_like(shape.dims, layout_src.strides)))  # type: ignore[arg-type]
            if fields["layout"] != CONTIGUOUS:
                fields.update(perm=O.compact_perm(layout_src.perm), moved_by=layout_src.moved_by)
        elif layout_src.perm is not None:
            perm = O.compact_perm(layout_src.perm)
            if perm is None:
                fields.update(layout=None, perm=None, moved_by=None)
            else:
                fields.update(layout=layout_src.layout, perm=perm, moved_by=layout_src.moved_by)
        else:
            fields.update(layout=layout_src.layout, perm=layout_src.perm, moved_by=layout_src.moved_by)
            if layout_src.layout == CONTIGUOUS and shape is not None and shape.is_fully_known:
                fields["strides"] = L.contiguous_strides(shape.dims)  # type: ignore[arg-type]
    return fields


def _layout_source(operands: Sequence[Fact], tensors: Sequence[Fact], shape: Optional[Shape],
                   has_unknown: bool) -> Optional[Fact]:
    """The operand whose layout an elementwise result takes, when the shapes tell."""
    for f in operands:
        if f.kind in (INT, FLOAT, BOOL):
            continue
        if f.kind is None and f.shape is None:
            return None
        if f.rank == 0 and (shape is None or shape.rank != 0):
            continue
        if shape is not None and f.shape == shape:
            return f
        if shape is None and f.rank is not None and all(
            g.rank is None or g.rank < f.rank or g is f for g in tensors
        ) and not has_unknown and (f.shape is None or 1 not in f.shape.dims):
            return f
        return None
    return None


def _exact_elementwise_strides(operands: Sequence[Fact], tensors: Sequence[Fact],
                               shape: Optional[Shape]) -> Optional[tuple[int, ...]]:
    """TensorIterator's result strides when every operand's strides are known."""
    if shape is None or not shape.is_fully_known or not tensors:
        return None
    aligned = []
    for f in operands:
        if f.kind in (INT, FLOAT, BOOL):
            continue
        if f.strides is None or f.shape is None or not f.shape.is_fully_known:
            return None
        aligned.append(L.aligned_strides(shape.dims, f.shape.dims, f.strides))  # type: ignore[arg-type]
    return L.iterator_strides(shape.dims, aligned)  # type: ignore[arg-type]


def copy_layout(x: Fact, out: Fact, how: str) -> Fact:
    """``out`` (a method result with ``x``'s fields) with the layout the method gives: ``x``'s
    for the same storage; for a copy, a dense tensor in ``x``'s dim order; for a method that
    copies only when the dtype or device changes, ``x``'s when ``x`` is dense, else unknown."""
    known = x.strides is not None and x.shape is not None and x.shape.is_fully_known
    if how == SAME_STORAGE:
        return out
    if how == MAYBE_COPY:
        # a no-op when dtype and device already match, else a dense copy in the same dim
        # order: the two agree only when the input is dense
        if known and not L.is_dense(x.shape.dims, x.strides):  # type: ignore[union-attr, arg-type]
            return out.with_(layout=None, strides=None, perm=None, moved_by=None)
        if not known and x.perm is not None and O.compact_perm(x.perm) != tuple(x.perm):
            return out.with_(layout=None, perm=None, moved_by=None)
        return out
    if known:
        out = out.with_(**O.layout_fields(x.shape, L.dense_like(x.shape.dims, x.strides)))  # type: ignore[union-attr, arg-type]
        if out.layout != CONTIGUOUS:
            out = out.with_(perm=O.compact_perm(x.perm), moved_by=x.moved_by)
        return out
    if x.perm is not None:
        perm = O.compact_perm(x.perm)
        return out.with_(perm=perm, moved_by=x.moved_by if perm is not None else None,
                         layout=x.layout if perm is not None else None)
    return out


def like_layout(out: Fact, like: Fact, shape: Optional[Shape]) -> Fact:
    """A ``*_like`` factory's result laid out like its input: dense in the same dim order."""
    if like.strides is not None and shape is not None and shape.is_fully_known:
        return out.with_(**O.layout_fields(shape, L.dense_like(shape.dims, like.strides)))  # type: ignore[arg-type]
    if like.layout != CONTIGUOUS:
        return out.with_(layout=None, strides=None, perm=like.perm, moved_by=like.moved_by)
    return out


@method("contiguous")
def contiguous(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """contiguous(): the same tensor laid out row-major."""
    sizes = O.known_sizes(x.shape)
    return x.with_(layout=CONTIGUOUS, strides=L.contiguous_strides(sizes) if sizes is not None else None,
                   perm=None, moved_by=None, reduction=None)


def _channels_last(perm: Sequence[int]) -> bool:
    """Whether a 4-d tensor whose dims lie in this order (see :mod:`shapecheck.strides`) is laid
    out channels-last: dim 1 fastest, then dims 3, 2 and 0 (size-1 dims anywhere)."""
    order = [d for d in (1, 3, 2, 0) if perm[d] >= 0]
    return all(perm[a] > perm[b] for a, b in zip(order, order[1:]))


def input_order_layout(name: Optional[str], x: Fact, out: Fact) -> Fact:
    """``out``, the result of ``F.<name>`` (a function that keeps its input's rank) or of an
    ``nn`` layer (``name`` ``None``) on ``x``, with the layout torch gives it when ``x`` is not
    a plain tensor (see ``torch_api.FUNCTIONAL_RESULT_LAYOUT``): contiguous, ``x``'s, dense in
    ``x``'s channels-last order, or non-contiguous in an order the linter does not know (then
    no later transpose is taken to start from a plain tensor)."""
    if x.layout == CONTIGUOUS or x.perm is None and x.layout is None or x.perm is not None and L.is_identity(x.perm):
        return out
    how = FUNCTIONAL_RESULT_LAYOUT.get(name) if name is not None else None
    rank = x.rank if x.rank is not None else out.rank  # an op that takes at most the rank `x` has at least
    unknown_order = out.with_(layout=NON_CONTIGUOUS, strides=None, perm=None, moved_by=None)
    if how == "contiguous":
        return out.with_(layout=CONTIGUOUS, strides=None, perm=None, moved_by=None)
    if how == "strides":
        return out.with_(layout=x.layout, perm=x.perm, moved_by=x.moved_by) if x.perm is not None else unknown_order
    if how == "format" and rank == 3 and name in FORMAT_CONTIGUOUS_3D:
        return out.with_(layout=CONTIGUOUS, strides=None, perm=None, moved_by=None)
    if how == "format" and rank == 4 and x.perm is not None and len(x.perm) == 4:
        perm = O.compact_perm(x.perm)
        if perm is None:
            return unknown_order
        if _channels_last(perm):
            # dense channels-last, whatever the new sizes: N slowest, then H, W, and C fastest
            return out.with_(layout=NON_CONTIGUOUS, strides=None, perm=(0, 3, 1, 2), moved_by=x.moved_by)
        return out.with_(layout=CONTIGUOUS, strides=None, perm=None, moved_by=None)
    return unknown_order


def layer_output_layout(layer: Optional[str], x: Fact, out: Fact) -> Fact:
    """``out``, the result of the ``torch.nn`` layer ``layer`` (``"Conv1d"``; ``None`` for a layer
    of no known class) on ``x``: contiguous when the function the layer calls gives a contiguous
    result whatever ``x``'s order (``torch_api.NN_LAYER_FUNCTION``), else laid out as
    :func:`input_order_layout` says of an unknown function. A channels-last order is not carried
    through a layer: its spatial output sizes are often 1 (a kernel as large as its input), and
    then the order changes nothing."""
    function = NN_LAYER_FUNCTION.get(layer) if layer is not None else None
    if function is not None:
        laid = input_order_layout(function, x, out)
        if laid.layout == CONTIGUOUS:
            return laid
    return input_order_layout(None, x, out)


def unknown_result_order(ev: Eval, call: cst.Call, out: Fact) -> Fact:
    """``out``, the result of ``call``; when nothing is known of it and a tensor passed to the
    call is laid out in a known order other than the plain one (``f(x.permute(0, 3, 1, 2))``),
    marked non-contiguous in an unknown order: a layer may keep its input's order, so no later
    transpose of the result is taken to start from a plain tensor."""
    if out.kind is not None or out.shape is not None or out.layout is not None:
        return out
    for arg in call.args:
        f = ev.fact(arg.value)
        if f.kind in (TENSOR, None) and (f.layout == NON_CONTIGUOUS or f.perm is not None
                                         and not L.is_identity(f.perm)):
            return Fact(layout=NON_CONTIGUOUS)
    return out
