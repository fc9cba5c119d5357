"""The shapes of ``einops.rearrange`` and of ``map(lambda t: ..., seq)``.

``rearrange(t, 'b n (h d) -> b h n d', h=self.heads)`` reads the sizes of ``t`` as the pattern
names them, as ``b, n, hd = t.shape`` would: sizes of one read (:class:`~shapecheck.shapes.Measured`),
``d`` the quotient of the group by the sizes the keywords give. A keyword size that splits a
group while the single axes of the pattern are kept (``h`` above) is a
:class:`~shapecheck.generic_dims.Part` of the read. Patterns with ``...``, anonymous axes or
unbalanced parentheses are left unknown.

``map(lambda t: body, seq)`` over a sequence of known length is that many results of ``body``,
evaluated once with ``t`` bound to the join of the elements (``q, k, v = map(lambda t:
rearrange(t, ...), qkv)``: the chunks of one projection, read by one pattern).
"""

from __future__ import annotations

import re
from typing import Optional, Union

import libcst as cst

from shapecheck.generic_dims import part_of
from shapecheck.semantic.eval import chunk_pieces  # noqa: F401  (map over the pieces of a chunk)
from shapecheck.semantic.eval.comprehensions import fact_with_binding
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.eval.sizes import size_dim
from shapecheck.semantic.facts import Fact, join
from shapecheck.semantic.syntax import CallArgs
from shapecheck.shapes import Dim, Shape, dim_floordiv, dims_product, measured

__all__ = ["rearrange_shape", "mapped"]

#: one axis of a pattern side: a name, or the names of a parenthesised group
Axis = Union[str, tuple[str, ...]]

_TOKEN = re.compile(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S+")


def _side(text: str) -> Optional[list[Axis]]:
    """The axes of one side of a pattern; ``None`` for what is not read here (``...``, ``1``,
    nested or unbalanced parentheses, a name twice)."""
    axes: list[Axis] = []
    group: Optional[list[str]] = None
    for tok in _TOKEN.findall(text):
        if tok == "(":
            if group is not None:
                return None
            group = []
        elif tok == ")":
            if group is None or not group:
                return None
            axes.append(tuple(group))
            group = None
        elif tok.isidentifier():
            if group is not None:
                group.append(tok)
            else:
                axes.append(tok)
        else:
            return None
    if group is not None:
        return None
    names = [n for a in axes for n in ((a,) if isinstance(a, str) else a)]
    return axes if len(names) == len(set(names)) else None


def rearrange_shape(ev: Eval, expr: cst.Call, source: Fact) -> Optional[Shape]:
    """The shape of ``einops.rearrange(x, pattern, **sizes)`` with ``x`` of fact ``source``;
    ``None`` when the pattern or the input's rank does not allow it."""
    args = CallArgs(expr)
    if args.starred or len(args.pos) != 2 or type(args.pos[1]) is not cst.SimpleString:
        return None
    pattern = args.pos[1].evaluated_value
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        return None
    left_text, right_text = pattern.split("->")
    left, right = _side(left_text), _side(right_text)
    if left is None or right is None:
        return None
    shape = source.shape
    if shape is not None and shape.rank is not None and shape.rank != len(left):
        return None
    given = {name: size_dim(ev, value, ev.fact(value)) for name, value in args.kw.items()}
    dims = shape.dims if shape is not None and shape.rank is not None else (None,) * len(left)
    read = object()
    sizes: dict[str, Dim] = {}
    for axis, d in zip(left, dims):
        if isinstance(axis, str):
            sizes[axis] = given.get(axis) or (d if d is not None else measured(axis, read))
    kept = [sizes[a] for a in left if isinstance(a, str)]
    for axis, d in zip(left, dims):
        if isinstance(axis, str):
            continue
        free = [n for n in axis if given.get(n) is None]
        for n in axis:
            if given.get(n) is not None:
                sizes[n] = part_of(given[n], kept)
        if len(free) == 1:
            known = dims_product([given[n] for n in axis if n != free[0]])
            sizes[free[0]] = measured(free[0], read) if d is None else dim_floordiv(d, known)
        else:
            sizes.update(dict.fromkeys(free))
    if any(n not in sizes for a in right for n in ((a,) if isinstance(a, str) else a)):
        return None
    out = [sizes[a] if isinstance(a, str) else dims_product([sizes[n] for n in a]) for a in right]
    return Shape(tuple(out))


def mapped(ev: Eval, expr: cst.Call) -> Optional[Fact]:
    """``map(lambda t: body, seq)`` over a sequence of known length (see the module docstring);
    ``None`` for any other ``map``."""
    args = CallArgs(expr)
    if args.starred or args.kw or len(args.pos) != 2 or type(args.pos[0]) is not cst.Lambda:
        return None
    fn = args.pos[0]
    params = fn.params
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params \
            or isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.star_kwarg is not None \
            or params.params[0].default is not None:
        return None
    seq = ev.fact(args.pos[1])
    if not seq.elems:
        return None
    element = seq.elems[0]
    for e in seq.elems[1:]:
        element = join(element, e)
    result = fact_with_binding(ev, fn.body, params.params[0].name.value, element)
    return Fact(elems=(result,) * len(seq.elems))
