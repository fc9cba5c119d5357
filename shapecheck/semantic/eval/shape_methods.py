"""Tensor methods that change the shape or the dim order: view/reshape, flatten, transpose and
permute, unsqueeze/squeeze, expand, repeat, narrow; and the view verdicts rules ask for."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.generic_dims import split_parts
from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.bounded_moves import bounded_transpose, matrix_transpose_bound, moved_unknown
from shapecheck.semantic.eval.arguments import dtype_value, int_list, target_dims
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.flatten_ranks import flattened_rank
from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import CONTIGUOUS, TENSOR, UNKNOWN, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import DIM_PERMUTING_METHODS
from shapecheck.shapes import Dim, Shape


def lost(x: Fact) -> Fact:
    """``x`` with its shape and layout unknown (an op whose arguments cannot be read)."""
    return x.with_(shape=None, layout=None, strides=None, perm=None, moved_by=None, reduction=None)


@method("view", "reshape")
def view(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """view/reshape: the new shape, and the layout the stride rule gives."""
    if args.starred:
        return None
    if name == "view" and len(args.pos) == 1 and dtype_value(ev, args.pos[0]) is not None:
        return None
    if "dtype" in args.kw:
        return None
    target = target_dims(ev, args.pos, args.kw.get("size") or args.kw.get("shape"))
    if target is None:
        return x.with_(kind=TENSOR if x.kind == TENSOR else None, shape=None, layout=None, strides=None,
                       perm=None, moved_by=None, reduction=None)
    out, possible = O.view_result(x, split_parts(x.shape, target), name == "view")
    if name == "reshape" and possible is False:
        out = out.with_(layout=CONTIGUOUS)
    if name == "reshape" and possible is None:
        out = out.with_(layout=None, strides=None, perm=None)
    return out.with_(grad=grad_of(ev, [x], True) if x.kind == TENSOR else None)


def view_target(ev: Eval, call: cst.Call) -> Optional[list[Dim]]:
    """The sizes asked of ``x.view(...)``/``x.reshape(...)`` (``-1`` kept; unknown sizes
    ``None``), or ``None`` when they cannot be read (starred args, a dtype view)."""
    args = CallArgs(call)
    if args.starred or "dtype" in args.kw:
        return None
    if len(args.pos) == 1 and dtype_value(ev, args.pos[0]) is not None:
        return None
    return target_dims(ev, args.pos, args.kw.get("size") or args.kw.get("shape"))


def view_verdict(ev: Eval, call: cst.Call) -> Optional[tuple[Fact, list[Dim], Optional[bool]]]:
    """For ``x.view(...)``: ``(fact of x, target sizes, possible)`` where ``possible`` is
    ``False`` only when the view is proven to fail (exact strides, or merged moved dims)."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    target = view_target(ev, call)
    if target is None or target.count(-1) > 1 or any(O.is_negative(d) for d in target if d != -1):
        return None
    recv = ev.fact(func.value)
    if recv.kind not in (TENSOR, None):
        return None
    _out, possible = O.view_result(recv, target, True)
    return recv, target, possible


@method("flatten")
def flatten(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """flatten(start, end): a reshape that merges a run of dims."""
    s = args.get(0, "start_dim")
    e = args.get(1, "end_dim")
    start = ev.fact(s).value if s is not None else 0
    end = ev.fact(e).value if e is not None else -1
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    dims = O.merged_shape(x.shape, start, end)
    if dims is None:
        return flattened_rank(ev, x, start, end)
    out, possible = O.view_result(x, dims, False)
    if possible is False:
        out = out.with_(layout=CONTIGUOUS)
    if possible is None:
        out = out.with_(layout=None, strides=None, perm=None)
    return out.with_(grad=grad_of(ev, [x], True))


@method(*DIM_PERMUTING_METHODS)
def transpose(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """transpose/swapaxes/permute/t/movedim: dims reordered, strides moved with them."""
    rank = x.rank
    order: Optional[list[int]]
    if name == "t":
        if rank is not None and rank < 2:
            return x.with_(reduction=None)
        if rank is None and (exact := matrix_transpose_bound(x)) is not None:
            x, rank = exact, 2
        order = [1, 0] if rank == 2 else None
        text = ".t()"
    elif name == "permute":
        vals = int_list(ev, args.pos, args.kw.get("dims"))
        if vals is None:
            return moved_unknown(x)
        if rank is None:
            rank = len(vals)
        axes = [O.norm_axis(v, rank) for v in vals]
        if None in axes or sorted(axes) != list(range(rank)):  # type: ignore[type-var]
            return moved_unknown(x)
        if x.shape is None or x.shape.rank is None:
            x = x.with_(shape=O.rank_only(x.shape, rank))  # permute takes every dim: the rank is known
            if x.shape is None:
                return moved_unknown(x)
        order = axes  # type: ignore[assignment]
        text = ".permute(" + ", ".join(str(v) for v in vals) + ")"
    elif name in ("movedim", "moveaxis"):
        a, b = args.get(0, "source"), args.get(1, "destination")
        av = ev.fact(a).value if a is not None else None
        bv = ev.fact(b).value if b is not None else None
        if rank is None or not isinstance(av, int) or not isinstance(bv, int):
            return moved_unknown(x)
        s, d = O.norm_axis(av, rank), O.norm_axis(bv, rank)
        if s is None or d is None:
            return moved_unknown(x)
        order = [i for i in range(rank) if i != s]
        order.insert(d, s)
        text = f".{name}({av}, {bv})"
    else:
        a, b = args.get(0, "dim0"), args.get(1, "dim1")
        av = ev.fact(a).value if a is not None else None
        bv = ev.fact(b).value if b is not None else None
        if not isinstance(av, int) or not isinstance(bv, int):
            return moved_unknown(x)
        order = O.transpose_order(rank, av, bv)
        text = f".{name}({av}, {bv})"
        if rank is None and (bounded := bounded_transpose(x, av, bv, text)) is not None:
            return bounded.with_(grad=grad_of(ev, [x], True) if x.kind == TENSOR else None)
    if order is None:
        return moved_unknown(x)
    out = O.moved(x, O.permute_shape(x.shape, order), order, text)
    return out.with_(grad=grad_of(ev, [x], True) if x.kind == TENSOR else None)


@method("unsqueeze")
def unsqueeze(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """unsqueeze(dim): a new size-1 dim."""
    d = args.get(0, "dim")
    v = ev.fact(d).value if d is not None else None
    if not isinstance(v, int):
        return lost(x)
    return O.unsqueeze_fact(x, v)


@method("squeeze")
def squeeze(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """squeeze(dim) / squeeze(): size-1 dims removed when they are known to be 1."""
    rank = x.rank
    d = args.get(0, "dim")
    if rank is None or x.shape is None:
        vals = int_list(ev, [d], None) if d is not None else None
        return _squeezed_bound(x, vals) if vals else lost(x)
    if d is None:
        if x.shape.is_fully_known or (x.kind == TENSOR and _one_unknown_size(x.shape)):
            return O.drop_axes(x, [i for i, s in enumerate(x.shape.dims) if s == 1])
        return lost(x)
    vals = int_list(ev, [d], None)
    if vals is None:
        return lost(x)
    axes = []
    for v in vals:
        a = O.norm_axis(v, rank)
        if a is None:
            return lost(x)
        size = x.shape.dims[a]
        if size == 1:
            axes.append(a)
        elif size is None:
            return _squeezed_bound(x, vals)
    return O.drop_axes(x, axes)


def _one_unknown_size(shape: Shape) -> bool:
    """Exactly one dim of ``shape`` (of known rank) has a size that is not a known int: a
    generic size (at least 2), which ``squeeze()`` keeps (``model(x).squeeze()`` of a ``(B, 1)``
    output is ``(B,)``; a finding on it holds unless ``B`` is 1, as a finding on ``B`` itself
    does). With two or more, a slice of unknown bounds may well be a size-1 dim the author
    squeezes on purpose: the result stays unknown."""
    return sum(not isinstance(d, int) for d in shape.dims) == 1


def _squeezed_bound(x: Fact, dims: list[int]) -> Fact:
    """``squeeze(dims)`` where a squeezed size is unknown: ``x`` has the dims it names, and the
    result keeps at least all but one dim per squeezed dim, the leading ones in place (a lower
    bound on the rank, shape otherwise unknown)."""
    rank = x.rank
    if rank is None:
        if any(v < 0 for v in dims):
            return lost(x)
        rank_at_least = max(dims) + 1
    else:
        rank_at_least = rank
        dims = [v % rank for v in dims if -rank <= v < rank]
    lead = min(dims)
    keep = rank_at_least - len(set(dims))
    if keep <= 0:
        return lost(x)
    known = x.shape.dims[:lead] if rank is not None and x.shape is not None else (None,) * lead
    bound = Shape(tuple(known) + (None,) * max(keep - lead, 0), rest_at=lead) if keep > lead \
        else Shape(tuple(known[:keep]), rest_at=keep)
    return lost(x).with_(shape=bound)


@method("expand", "expand_as")
def expand(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """expand/expand_as: broadcast dims with stride 0."""
    if name == "expand_as":
        other = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        if other.shape is None or other.shape.rank is None:
            return lost(x)
        return O.expand_fact(x, list(other.shape.dims), ".expand_as()")
    target = target_dims(ev, args.pos, args.kw.get("size"))
    if target is None:
        return lost(x)
    return O.expand_fact(x, target, ".expand(" + ", ".join("?" if t is None else str(t) for t in target) + ")")


@method("repeat")
def repeat(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """repeat: a new contiguous tensor with multiplied sizes."""
    target = target_dims(ev, args.pos, None)
    if target is None or x.rank is None or x.shape is None or len(target) < x.rank:
        return O.plain_tensor(None, device=x.device, grad=grad_of(ev, [x], True), dtype_kind=x.dtype_kind)
    lead = len(target) - x.rank
    dims = list(target[:lead])
    for r, d in zip(target[lead:], x.shape.dims):
        dims.append(r * d if isinstance(r, int) and isinstance(d, int) else (d if r == 1 else None))
    return O.plain_tensor(Shape(tuple(dims)), device=x.device, grad=grad_of(ev, [x], True),
                          dtype_kind=x.dtype_kind)


@method("narrow")
def narrow(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """narrow(dim, start, length): a slice of one dim."""
    d, s, n = args.get(0, "dim"), args.get(1, "start"), args.get(2, "length")
    dv = ev.fact(d).value if d is not None else None
    sv = ev.fact(s).value if s is not None else None
    nv = ev.fact(n).value if n is not None else None
    rank = x.rank
    if not isinstance(dv, int) or rank is None:
        return lost(x)
    a = O.norm_axis(dv, rank)
    if a is None:
        return lost(x)
    items: list = [("full", None)] * rank
    if isinstance(sv, int) and isinstance(nv, int):
        items[a] = ("slice", (sv, sv + nv, 1))
    else:
        items[a] = ("slice", ("?", "?", 1))
    out = O.index_fact(x, items)
    return out if out is not None else lost(x)
