"""Sizes written in the code as generic symbols: a name or attribute the code passes as a size
(``view(b, t, self.n_head, -1)``), and products and quotients of sizes (``h * w``, ``C // g``)."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import Fact
from shapecheck.semantic.syntax import dotted_name
from shapecheck.shapes import Dim, Generic, Shape, dim_floordiv, dim_mul, measured


def size_dim(ev: Eval, expr: cst.BaseExpression, fact: Fact) -> Dim:
    """The size ``expr`` (whose fact is ``fact``) stands for in a size argument: the dim its
    fact knows; else, for a name or attribute of unknown kind, a generic symbol of that name
    (the same binding read twice is the same size); for ``a * b`` or ``a // b`` of such sizes,
    their product or quotient; else unknown."""
    if fact.dim is not None or fact.kind is not None and fact.kind != "int" or fact.value is not None:
        return fact.dim
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        if fact.shape is not None or fact.elems is not None:
            return None
        name = _size_name(expr)
        return Generic(name) if name is not None else None
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, (cst.Multiply, cst.FloorDivide)):
        left = size_dim(ev, expr.left, ev.fact(expr.left))
        right = size_dim(ev, expr.right, ev.fact(expr.right))
        if type(expr.operator) is cst.Multiply:
            return dim_mul(left, right)
        return dim_floordiv(left, right)
    return None


def _size_name(expr: cst.BaseExpression) -> Optional[str]:
    """``n``, ``self.n_head``, ``window_size[0]``: the text of a name, an attribute, or an item
    of one at a constant index; ``None`` for another expression."""
    if type(expr) is cst.Subscript:
        owner = dotted_name(expr.value)
        if owner is None or len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
            return None
        index = expr.slice[0].slice.value
        if type(index) is cst.UnaryOperation and type(index.operator) is cst.Minus \
                and type(index.expression) is cst.Integer:
            return f"{owner}[-{index.expression.value}]"
        return f"{owner}[{index.value}]" if type(index) is cst.Integer else None
    return dotted_name(expr)


def named_sizes(shape: Optional[Shape], targets: Sequence[cst.BaseElement],
                bound: Callable[[str], Optional[Fact]]) -> Optional[Shape]:
    """The shape unpacked by ``b, t, c = x.shape``: each unknown size named by its target (a
    generic symbol; ``_`` and targets that are not names stay unknown), the known ones kept;
    ``None`` when it names nothing new (and the rank was known). A name that already stands
    for the size of another tensor (``bound(name)``, the current binding, has it as its dim)
    gets a prime (``c'``): the two sizes may differ."""
    dims: list[Dim] = list(shape.dims) if shape is not None else [None] * len(targets)
    changed = shape is None
    read = object()  # the sizes of one read are independent of one another (shapes.Measured)
    for i, el in enumerate(targets):
        name = dotted_name(el.value)
        if dims[i] is None and name is not None and name != "_":
            dims[i] = measured(_fresh_symbol(name, bound(name)), read)
            changed = True
    return Shape(tuple(dims)) if changed else None


def _fresh_symbol(name: str, f: Optional[Fact]) -> str:
    """``name``, or ``name`` with one more prime than the symbol its binding ``f`` holds as a
    size (``c'`` after ``c``): the old symbol may still stand in another tensor's shape."""
    held = f.dim if f is not None else None
    if isinstance(held, str) and held.rstrip("'") == name:
        return held + "'"
    return name
