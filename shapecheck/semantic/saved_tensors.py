"""Which tensors an op saves for its backward pass (read from the tables of
:mod:`~shapecheck.semantic.torch_api`), and the reading of expressions that this needs."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

import libcst as cst

from shapecheck.semantic.imports import torch_name
from shapecheck.semantic.syntax import dotted_name, positional
from shapecheck.semantic.torch_api import BINARY_SAVES, OPERATOR_OPS, SCALAR_SAVES, UNARY_SAVES
from shapecheck.semantic.walk import child_nodes

Resolve = Callable[[cst.CSTNode], Optional[str]]


def names_read(expr: cst.BaseExpression) -> set[str]:
    """Dotted names (``x``, ``self.h``) read by ``expr``; a chain counts once, at its longest."""
    dotted = dotted_name(expr)
    if dotted is not None:
        return {dotted}
    names: set[str] = set()
    for node in below(expr):
        if type(node) is cst.Attribute:
            dotted = dotted_name(node)
            if dotted is not None:
                names.add(dotted)
        elif type(node) is cst.Name:
            names.add(node.value)
    return names


def below(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below ``node`` (not inside lambdas, functions and classes), last child first."""
    stack = list(_parts(node))
    pop = stack.pop
    extend = stack.extend
    by_field = _READ_BY_FIELD
    while stack:
        current = pop()
        yield current
        tp = type(current)
        if tp in by_field:
            if tp not in _NO_PARTS:
                extend(child_nodes(current))
        elif tp not in _NOT_ENTERED:
            extend(current.children)


#: the node types whose parts :func:`below` reads field by field, as :func:`child_nodes` does; it
#: takes every child of any other type (a list comprehension's ``for`` too). A comparison gives
#: its operands only: its operators and targets hold no expression
_READ_BY_FIELD = frozenset({
    cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Attribute, cst.Call, cst.BinaryOperation,
    cst.BooleanOperation, cst.UnaryOperation, cst.Subscript, cst.Tuple, cst.List, cst.Set, cst.IfExp,
    cst.Comparison,
})

#: the node types of :data:`_READ_BY_FIELD` without parts
_NO_PARTS = frozenset({cst.Name, cst.Integer, cst.Float, cst.SimpleString})
#: the node types :func:`below` does not look into
_NOT_ENTERED = frozenset({cst.Lambda, cst.FunctionDef, cst.ClassDef})


def _parts(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    return child_nodes(node) if type(node) in _READ_BY_FIELD else node.children


# ---------------------------------------------------------------------- what saves what
def saved_roles(op: str, self_grad: Optional[bool], other_grad: Optional[bool],
                other_is_number: bool = False) -> Optional[frozenset[str]]:
    """The roles (``self``, ``other``, ``result``) that ``op`` saves, or ``None`` when unknown.

    ``self_grad``/``other_grad`` say whether each operand requires grad (``None``: unknown).
    For a unary op pass ``other_grad=None`` and ``other_is_number=False``. Nothing is saved when
    no operand requires grad.
    """
    if op in UNARY_SAVES and other_grad is None and not other_is_number:
        if self_grad is None:
            return None
        return UNARY_SAVES[op] if self_grad else frozenset()
    if other_is_number:
        if op not in SCALAR_SAVES or self_grad is None:
            return None
        return SCALAR_SAVES[op] if self_grad else frozenset()
    table = BINARY_SAVES.get(op)
    if table is None or self_grad is None or other_grad is None:
        return None
    if not (self_grad or other_grad):
        return frozenset()
    return table[(self_grad, other_grad)]


def saving_op(
    resolve: Resolve, node: cst.CSTNode,
) -> Optional[tuple[str, Optional[cst.BaseExpression], Optional[cst.BaseExpression]]]:
    """For a call or operator that the tables know: ``(op, self operand, other operand)``;
    ``other`` is ``None`` for a unary op."""
    if type(node) is cst.BinaryOperation:
        op = OPERATOR_OPS.get(type(node.operator).__name__)
        if op is None:
            return None
        return op, node.left, node.right
    if type(node) is not cst.Call:
        return None
    args = positional(node)
    name = torch_name(resolve, node.func)
    if name is not None:
        short = name.split(".")[-1]
        if name.startswith(("nn.functional.", "linalg.")) or "." not in name:
            if short in UNARY_SAVES and args:
                return short, args[0], None
            if short in BINARY_SAVES and len(args) >= 2:
                return short, args[0], args[1]
        return None
    if type(node.func) is not cst.Attribute:
        return None
    receiver, method = node.func.value, node.func.attr.value
    if method in UNARY_SAVES:
        return method, receiver, None
    if method in BINARY_SAVES and args:
        return method, receiver, args[0]
    return None
