"""Which tensors an op saves for its backward pass (read from the tables of
:mod:`~shapecheck.semantic.torch_api`), and the reading of expressions that this needs."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

import libcst as cst

from shapecheck.semantic.syntax import dotted_name, positional
from shapecheck.semantic.torch_api import BINARY_SAVES, OPERATOR_OPS, SCALAR_SAVES, UNARY_SAVES

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
    while stack:
        current = stack.pop()
        yield current
        if type(current) not in (cst.Lambda, cst.FunctionDef, cst.ClassDef):
            stack.extend(_parts(current))


def _parts(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    tp = type(node)
    if tp is cst.Name or tp is cst.Integer or tp is cst.Float or tp is cst.SimpleString:
        return ()
    if tp is cst.Attribute:
        return (node.value,)  # type: ignore[attr-defined]
    if tp is cst.Call:
        return [node.func, *(a.value for a in node.args)]  # type: ignore[attr-defined]
    if tp is cst.BinaryOperation or tp is cst.BooleanOperation:
        return (node.left, node.right)  # type: ignore[attr-defined]
    if tp is cst.UnaryOperation:
        return (node.expression,)  # type: ignore[attr-defined]
    if tp is cst.Subscript:
        parts: list[cst.CSTNode] = [node.value]  # type: ignore[attr-defined]
        for element in node.slice:  # type: ignore[attr-defined]
            inner = element.slice
            if type(inner) is cst.Index:
                parts.append(inner.value)
            elif type(inner) is cst.Slice:
                parts.extend(p for p in (inner.lower, inner.upper, inner.step) if p is not None)
        return parts
    if tp is cst.Tuple or tp is cst.List or tp is cst.Set:
        return [e.value for e in node.elements]  # type: ignore[attr-defined]
    if tp is cst.IfExp:
        return (node.test, node.body, node.orelse)  # type: ignore[attr-defined]
    return node.children


def torch_name(resolve: Resolve, expr: cst.CSTNode) -> Optional[str]:
    """For an expression that resolves to ``torch.X.Y``: ``"X.Y"``; else ``None``."""
    qual = resolve(expr)
    if qual is not None and qual.startswith("torch."):
        return qual[len("torch."):]
    return None


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
