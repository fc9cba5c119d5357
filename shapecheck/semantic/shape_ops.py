"""Pure shape and layout rules of torch ops, used by the expression evaluator of the inference.

Every function takes facts and plain values and returns a :class:`~shapecheck.semantic.facts.Fact` (or
parts of one). None of them raises on unknowns: an unknown input gives an unknown output.
"""

from __future__ import annotations

from typing import Optional, Sequence, cast

from shapecheck import strides as L
from shapecheck.broadcast import broadcast_shapes
from shapecheck.errors import ShapeCheckError
from shapecheck.semantic.bounded_moves import front_bounded
from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, TENSOR, DtypeKind, Fact
from shapecheck.semantic.torch_api import CAST_METHODS, DTYPE_KIND_ORDER, DTYPE_KINDS
from shapecheck.shapes import Dim, Shape, dim_floordiv, dims_product, monomial, monomial_quotient


def dtype_kind(name: str) -> Optional[DtypeKind]:
    """The kind of the dtype ``torch.<name>`` (``"float16"`` -> float), ``None`` for another name."""
    kind = DTYPE_KINDS.get(name)
    return None if kind is None else DtypeKind(kind)


def cast_kind(method: str) -> Optional[DtypeKind]:
    """The dtype kind that the tensor method ``method`` casts to (``"long"`` -> int), or ``None``."""
    kind = CAST_METHODS.get(method)
    return None if kind is None else DtypeKind(kind)


def promote(kinds: Sequence[Optional[DtypeKind]]) -> Optional[DtypeKind]:
    """The dtype kind of an elementwise result; ``None`` when any input kind is unknown."""
    best = None
    for k in kinds:
        if k is None:
            return None
        if best is None or DTYPE_KIND_ORDER.index(k) > DTYPE_KIND_ORDER.index(best):
            best = k
    return best


def known_sizes(shape: Optional[Shape]) -> Optional[tuple[int, ...]]:
    """The int sizes of a fully known shape, else ``None``."""
    if shape is None or not shape.is_fully_known:
        return None
    return shape.dims  # type: ignore[return-value]


def norm_axis(axis: int, rank: Optional[int]) -> Optional[int]:
    """A non-negative axis, or ``None`` when it cannot be resolved or is out of range."""
    if axis >= 0:
        if rank is not None and axis >= rank:
            return None
        return axis
    if rank is None or axis < -rank:
        return None
    return axis + rank


def plain_tensor(shape: Optional[Shape], **fields) -> Fact:
    """A freshly allocated tensor: contiguous, exact strides when the sizes are known."""
    sizes = known_sizes(shape)
    strides = L.contiguous_strides(sizes) if sizes is not None else None
    return Fact(kind=TENSOR, shape=shape, layout=CONTIGUOUS, strides=strides, **fields)


def layout_fields(shape: Optional[Shape], strides: Optional[tuple[int, ...]]) -> dict:
    """layout/strides fields for a result whose exact strides are known (or not)."""
    sizes = known_sizes(shape)
    if sizes is None or strides is None:
        return {"layout": None, "strides": None, "perm": None, "moved_by": None}
    layout = CONTIGUOUS if L.is_contiguous(sizes, strides) else NON_CONTIGUOUS
    return {"layout": layout, "strides": tuple(strides), "perm": None, "moved_by": None}


def base_perm(f: Fact) -> Optional[list[int]]:
    """The perm of ``f`` to start a move from: its own, or the identity for its rank."""
    if f.perm is not None:
        return list(f.perm)
    rank = f.rank
    if rank is None or f.layout == NON_CONTIGUOUS and f.strides is None:
        return None  # not plain, in an order nobody knows
    perm = []
    position = 0
    for d in cast(Shape, f.shape).dims:
        if d == 1:
            perm.append(L.SIZE_ONE)  # a size-1 dim sits anywhere without breaking adjacency
        else:
            perm.append(position)
            position += 1
    return perm


def moved(f: Fact, new_shape: Optional[Shape], order: Optional[Sequence[int]], text: str) -> Fact:
    """The result of a dim move (transpose/permute/T/mT/movedim) of ``f`` by ``order``.

    ``order[i]`` is the input dim that becomes output dim ``i``.
    """
    changes: dict = {"shape": new_shape, "reduction": None}
    sizes = known_sizes(f.shape)
    if order is None:
        changes.update(layout=None, strides=None, perm=None, moved_by=None)
        return f.with_(**changes)
    if sizes is not None and f.strides is not None:
        new_strides = tuple(f.strides[i] for i in order)
        changes.update(layout_fields(new_shape, new_strides))
    else:
        changes.update(layout=None, strides=None)
    perm = base_perm(f)
    if perm is not None and len(perm) == len(order):
        new_perm = tuple(perm[i] for i in order)
        if L.is_identity(new_perm) and f.layout == CONTIGUOUS:
            changes.update(perm=None, moved_by=None, layout=CONTIGUOUS)
        elif L.is_identity(new_perm):
            changes.update(perm=None if f.perm is None else new_perm, moved_by=f.moved_by)
        else:
            changes.update(perm=new_perm, moved_by=text)
    else:
        changes.update(perm=None, moved_by=None)
    return f.with_(**changes)


def compact_perm(perm: Optional[Sequence[int]]) -> Optional[tuple[int, ...]]:
    """The perm of a dense copy laid out in the same dim order (``clone``, elementwise results):
    positions renumbered without gaps; ``None`` when an expanded dim makes the order unknown."""
    if perm is None or L.BROADCAST in perm:
        return None
    order = {p: i for i, p in enumerate(sorted(p for p in perm if p >= 0))}
    return tuple(p if p < 0 else order[p] for p in perm)


def rank_only(shape: Optional[Shape], rank: int) -> Optional[Shape]:
    """A shape of exactly ``rank`` dims that agrees with ``shape`` (unknown rank, perhaps with
    known leading or trailing dims); ``None`` when they cannot agree."""
    if shape is None:
        return Shape((None,) * rank)
    if shape.rank is not None:
        return shape if shape.rank == rank else None
    lead, trail = shape.leading(), shape.trailing()
    if len(lead) + len(trail) > rank:
        return None
    return Shape(tuple(lead) + (None,) * (rank - len(lead) - len(trail)) + tuple(trail))


def permute_shape(shape: Optional[Shape], order: Sequence[int]) -> Optional[Shape]:
    """``shape`` with its dims reordered by ``order`` (same rank required)."""
    if shape is None or shape.rank is None or len(order) != shape.rank:
        return None
    return Shape(tuple(shape.dims[i] for i in order))


def transpose_order(rank: Optional[int], a: int, b: int) -> Optional[list[int]]:
    """The order of ``transpose(a, b)`` for a tensor of this rank."""
    if rank is None:
        return None
    ia, ib = norm_axis(a, rank), norm_axis(b, rank)
    if ia is None or ib is None:
        return None
    order = list(range(rank))
    order[ia], order[ib] = order[ib], order[ia]
    return order


def product(dims: Sequence[Dim]) -> Dim:
    """The product of dims when all are known ints."""
    n = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        n *= d
    return n


#: torch keeps sizes in int64: no tensor has a larger one
MAX_SIZE = 2 ** 63 - 1


def is_negative(d: Dim) -> bool:
    """True for a dim that is a negative int: torch rejects it as a size."""
    return isinstance(d, int) and d < 0


def _impossible(d: Dim) -> bool:
    """True for an int dim that no tensor can have: negative, or beyond int64."""
    return isinstance(d, int) and (d < 0 or d > MAX_SIZE)


def without_impossible_sizes(f: Fact) -> Fact:
    """``f`` with every negative size of its shape, or one too large for torch, made unknown
    (and its strides dropped).

    Such a size is an error that a rule reports where it is written (SC103 for negative ones);
    the value it would have had is unknown, so no later op computes with it.
    """
    shape = f.shape
    if shape is None:
        return f
    for d in shape.dims:  # a plain loop: this runs for every fact the evaluator computes
        if d.__class__ is int and (d < 0 or d > MAX_SIZE):
            break
    else:
        return f
    dims = tuple(None if _impossible(d) else d for d in shape.dims)
    return f.with_(shape=Shape(dims, shape.rest_at, shape.rest_name), strides=None)


def resolve_view_sizes(shape: Optional[Shape], target: Sequence[Dim]) -> Optional[tuple[Dim, ...]]:
    """``target`` with one ``-1`` filled in when the element counts allow it; a target torch
    rejects (a size below ``-1``, two ``-1``) gives unknown sizes where it is negative."""
    inferred = target.count(-1)
    if inferred > 1 or any(is_negative(d) and d != -1 for d in target):
        return tuple(None if is_negative(d) else d for d in target)
    if inferred == 0:
        return tuple(target)
    numel = shape.numel() if shape is not None else None
    rest = product([d for d in target if d != -1])
    if numel is None and shape is not None and shape.rank is not None:
        return tuple(_symbolic_rest(shape, target) if d == -1 else d for d in target)
    if numel is None or not isinstance(rest, int) or rest == 0 or numel % rest:
        return tuple(None if d == -1 else d for d in target)
    return tuple(numel // rest if d == -1 else d for d in target)


def _symbolic_rest(shape: Shape, target: Sequence[Dim]) -> Dim:
    """The size a ``-1`` stands for when the sizes are symbols: the element count divided by
    the other sizes, when that division is exact as a product (``(B, T, C).view(B, -1)``: ``T*C``)."""
    total, known = dims_product(shape.dims), dims_product([d for d in target if d != -1])
    numel, rest = monomial(total), monomial(known)
    if numel is None or rest is None or rest[0] == 0:
        return None
    quotient = monomial_quotient(numel, rest)
    return dim_floordiv(total, known) if quotient is not None else None  # exact: a product, of one read or not


def view_result(f: Fact, target: Sequence[Dim], is_view: bool) -> tuple[Fact, Optional[bool]]:
    """The result of ``view``/``reshape`` of ``f`` to ``target`` (dims, ``-1`` allowed).

    Returns the fact and whether a view is possible: ``True``, ``False`` (proven to fail: by the
    exact strides, or by the dims a transpose moved), or ``None`` (unknown).
    """
    sizes = resolve_view_sizes(f.shape, target)
    new_shape = Shape(tuple(sizes)) if sizes is not None else None
    base = f.with_(shape=new_shape, reduction=None, kind=f.kind or TENSOR)
    old_sizes = known_sizes(f.shape)
    new_sizes = known_sizes(new_shape)
    possible: Optional[bool] = None
    if old_sizes is not None and new_sizes is not None and f.strides is not None:
        if product(old_sizes) != product(new_sizes):
            return base.with_(layout=None, strides=None, perm=None, moved_by=None), None
        strides = L.view_strides(old_sizes, f.strides, new_sizes)
        possible = strides is not None
        if strides is not None:
            return base.with_(**layout_fields(new_shape, strides)), True
        return base.with_(**layout_fields(new_shape, L.contiguous_strides(new_sizes))), False
    if f.perm is not None and f.shape is not None and f.shape.rank == len(f.perm):
        if L.generic_view(f.shape.dims, f.perm, target) is False:
            possible = False
    elif f.perm is not None and front_bounded(f.shape) and len(f.perm) == len(cast(Shape, f.shape).dims):
        if L.generic_view_bounded(cast(Shape, f.shape).dims, f.perm, target) is False:
            possible = False
    if possible is False:
        return base.with_(layout=CONTIGUOUS, strides=None, perm=None, moved_by=None), False
    if f.layout == CONTIGUOUS and f.perm is None:
        strides = L.contiguous_strides(new_sizes) if new_sizes is not None else None
        return base.with_(layout=CONTIGUOUS, strides=strides, perm=None, moved_by=None), True
    return base.with_(layout=None, strides=None, perm=None, moved_by=None), possible


def merged_shape(shape: Optional[Shape], start: int, end: int) -> Optional[list[Dim]]:
    """The dims of ``flatten(start, end)``."""
    if shape is None or shape.rank is None:
        return None
    rank = shape.rank
    if rank == 0:
        return [1]
    s, e = norm_axis(start, rank), norm_axis(end, rank)
    if s is None or e is None or s > e:
        return None
    dims = list(shape.dims)
    return dims[:s] + [dims_product(dims[s:e + 1])] + dims[e + 1:]


def unsqueeze_fact(f: Fact, axis: int) -> Fact:
    """``f.unsqueeze(axis)``."""
    rank = f.rank
    if rank is None:
        return f.with_(shape=None, layout=None, strides=None, perm=None, reduction=None)
    a = axis + rank + 1 if axis < 0 else axis
    if a < 0 or a > rank:
        return f.with_(shape=None, layout=None, strides=None, perm=None, reduction=None)
    old_dims = cast(Shape, f.shape).dims
    dims = list(old_dims)
    dims.insert(a, 1)
    shape = Shape(tuple(dims))
    changes: dict = {"shape": shape, "reduction": None}
    if f.strides is not None:
        strides = list(f.strides)
        strides.insert(a, f.strides[a] * cast(int, old_dims[a]) if a < rank else 1)
        changes["strides"] = tuple(strides)
    if f.perm is not None:
        perm = list(f.perm)
        perm.insert(a, L.SIZE_ONE)
        changes["perm"] = tuple(perm)
    return f.with_(**changes)


def drop_axes(f: Fact, axes: Sequence[int]) -> Fact:
    """``f`` with the given (non-negative) axes removed (squeeze of size-1 dims, int indexing)."""
    dims = [d for i, d in enumerate(cast(Shape, f.shape).dims) if i not in axes]
    shape = Shape(tuple(dims))
    changes: dict = {"shape": shape, "reduction": None}
    if f.strides is not None:
        strides = tuple(s for i, s in enumerate(f.strides) if i not in axes)
        changes.update(layout_fields(shape, strides))
    if f.perm is not None:
        perm = tuple(p for i, p in enumerate(f.perm) if i not in axes)
        changes["perm"] = None if L.is_identity(perm) and f.layout == CONTIGUOUS else perm
    return f.with_(**changes)


def expand_fact(f: Fact, target: Sequence[Dim], text: str) -> Fact:
    """``f.expand(*target)``: new and size-1 dims get stride 0."""
    rank = f.rank
    if rank is None or len(target) < rank:
        return f.with_(shape=None, layout=None, strides=None, perm=None, reduction=None)
    lead = len(target) - rank
    dims: list[Dim] = []
    broadcast_axes = []
    for i, t in enumerate(target):
        if i < lead:
            dims.append(None if is_negative(t) else t)
            if t != 1:
                broadcast_axes.append(i)
            continue
        old = cast(Shape, f.shape).dims[i - lead]
        if is_negative(t) and t != -1:
            dims.append(None)
        elif t == -1 or t == old:
            dims.append(old)
        elif old == 1:
            dims.append(t)
            if t != 1:
                broadcast_axes.append(i)
        else:
            dims.append(None if t is None or old is None else t)
    shape = Shape(tuple(dims))
    changes: dict = {"shape": shape, "reduction": None}
    if f.strides is not None and shape.is_fully_known:
        strides = [0] * lead + list(f.strides)
        for i in broadcast_axes:
            strides[i] = 0
        changes.update(layout_fields(shape, tuple(strides)))
    else:
        changes.update(layout=None, strides=None)
    perm = base_perm(f)
    if perm is not None:
        new_perm = [L.BROADCAST] * lead + perm
        for i in broadcast_axes:
            new_perm[i] = L.BROADCAST
        if broadcast_axes:
            changes.update(perm=tuple(new_perm), moved_by=text)
        else:
            changes["perm"] = f.perm
    return f.with_(**changes)


def reduce_shape(shape: Optional[Shape], axes: Optional[Sequence[int]], keepdim: bool) -> Optional[Shape]:
    """The shape after reducing ``axes`` (``None``: all axes)."""
    if axes is None:
        if keepdim:
            if shape is None or shape.rank is None:
                return None
            return Shape(tuple(1 for _ in shape.dims))
        return Shape(())
    if shape is None or shape.rank is None:
        return None
    norm = set()
    for a in axes:
        n = norm_axis(a, shape.rank)
        if n is None:
            return None
        norm.add(n)
    if keepdim:
        return Shape(tuple(1 if i in norm else d for i, d in enumerate(shape.dims)))
    return Shape(tuple(d for i, d in enumerate(shape.dims) if i not in norm))


def elementwise_shape(shapes: Sequence[Optional[Shape]]) -> tuple[Optional[Shape], Optional[ShapeCheckError]]:
    """Broadcast the shapes of the tensor operands; unknown operands make an unknown result."""
    if any(s is None for s in shapes):
        return None, None
    try:
        return broadcast_shapes(*cast(Sequence[Shape], shapes)), None
    except ShapeCheckError as err:
        return None, err


def matmul_shape(a: Optional[Shape], b: Optional[Shape]) -> Optional[Shape]:
    """The shape of ``a @ b`` (``None`` when unknown or not valid)."""
    if a is None or b is None or a.rank is None or b.rank is None or a.rank == 0 or b.rank == 0:
        return None
    ad, bd = list(a.dims), list(b.dims)
    if a.rank == 1 and b.rank == 1:
        return Shape(())
    if a.rank == 1:
        return Shape(tuple(bd[:-2] + bd[-1:]))
    if b.rank == 1:
        return Shape(tuple(ad[:-1]))
    try:
        batch = broadcast_shapes(Shape(tuple(ad[:-2])), Shape(tuple(bd[:-2])))
    except ShapeCheckError:
        return None
    return Shape(tuple(batch.dims) + (ad[-2], bd[-1]))


def index_fact(f: Fact, items: Sequence[tuple[str, object]]) -> Optional[Fact]:
    """The result of basic indexing ``f[...]``.

    ``items`` holds ``("int", None)``, ``("slice", (start, stop, step))`` with ints or ``None``,
    ``("full", None)`` for ``:``, ``("new", None)`` for ``None``, ``("ellipsis", None)``.
    Returns ``None`` when the rank is unknown where it matters.
    """
    rank = f.rank
    n_real = sum(1 for k, _ in items if k in ("int", "slice", "full"))
    if any(k == "ellipsis" for k, _ in items):
        if rank is None:
            return None
        fill = rank - n_real
        if fill < 0:
            return None
        expanded: list = []
        for k, v in items:
            if k == "ellipsis":
                expanded.extend([("full", None)] * fill)
            else:
                expanded.append((k, v))
        items = expanded
    elif rank is not None:
        if n_real > rank:
            return None
        items = list(items) + [("full", None)] * (rank - n_real)
    else:
        return None
    dims: list[Dim] = []
    strides: Optional[list[int]] = [] if f.strides is not None else None
    perm: Optional[list[int]] = [] if f.perm is not None else None
    sliced: list[int] = []  # the memory positions of the dims a slice cut short
    exact = True
    axis = 0
    for kind, val in items:
        if kind == "new":
            dims.append(1)
            if strides is not None:
                strides.append(1)
            if perm is not None:
                perm.append(L.SIZE_ONE)
            continue
        size = cast(Shape, f.shape).dims[axis]
        if kind == "int":
            axis += 1
            continue
        if kind == "full":
            dims.append(size)
            if strides is not None:
                strides.append(cast(tuple, f.strides)[axis])
            if perm is not None:
                perm.append(cast(tuple, f.perm)[axis])
            axis += 1
            continue
        start, stop, step = val  # type: ignore[misc]
        new = _slice_len(size, start, stop, step)
        dims.append(new)
        if strides is not None:
            strides.append(cast(tuple, f.strides)[axis] * (step if isinstance(step, int) else 1))
            if not isinstance(step, (int, type(None))):
                exact = False
        if perm is not None and step in (None, 1) and f.perm is not None and f.perm[axis] >= 0:
            perm.append(f.perm[axis])
            if not (start in (None, 0) and stop is None) and not (new is not None and new == size):
                sliced.append(f.perm[axis])
        else:
            perm = None
        axis += 1
    if perm is not None and sliced:
        perm = L.sliced_perm(perm, [p for p in cast(tuple, f.perm) if p >= 0], sliced)
    shape = Shape(tuple(dims))
    out = f.with_(shape=shape, reduction=None)
    if strides is not None and exact and shape.is_fully_known:
        return out.with_(**layout_fields(shape, tuple(strides)))
    if perm is not None:
        p = tuple(perm)
        keep_contig = f.layout == CONTIGUOUS and L.is_identity(p)
        return out.with_(strides=None, perm=None if keep_contig else p,
                         layout=CONTIGUOUS if keep_contig else None)
    return out.with_(layout=None, strides=None, perm=None, moved_by=None)


def _slice_len(size: Dim, start, stop, step) -> Dim:
    if step is None:
        step = 1
    if not isinstance(step, int) or step <= 0:
        return None
    if not isinstance(size, int):
        if start is None and stop is None and step == 1:
            return size
        if (start in (None, 0) and stop == 1 or start == -1 and stop is None) and step == 1:
            return 1  # `x[:1]`, `x[-1:]`: one row of any size but 0 (which no rule relies on)
        return None
    if start is not None and not isinstance(start, int):
        return None
    if stop is not None and not isinstance(stop, int):
        return None
    return len(range(size)[slice(start, stop, step)])
