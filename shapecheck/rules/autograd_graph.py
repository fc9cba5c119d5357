"""A small, per-function model of the autograd graph, for SC302 and SC308.

It follows names in statement order: which binding (name, version) each op saved for backward,
which bindings each value depends on, which bindings were changed in place. The rules feed it
from their hooks; it never queries torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from shapecheck.rules import torch_ops as ops
from shapecheck.rules.helpers.calls import dotted_name, is_number, method_call, positional, torch_name
from shapecheck.rules.helpers.walk import walk

Binding = tuple[str, int]


@dataclass
class SaveRecord:
    """``op`` (source text) saved ``binding`` (its ``role``) for backward."""

    op: str
    binding: Binding
    role: str
    changed_by: Optional[cst.CSTNode] = None


@dataclass
class FunctionGraph:
    """The state for one function body (or the module's top level)."""

    versions: dict[str, int] = field(default_factory=dict)
    deps: dict[Binding, set[int]] = field(default_factory=dict)
    records: list[SaveRecord] = field(default_factory=list)
    assigned_from: dict[Binding, cst.BaseExpression] = field(default_factory=dict)
    #: whether the function calls ``backward()``/``autograd.grad`` at all (else saves are moot)
    has_backward: bool = True

    def binding(self, name: str) -> Binding:
        """The current binding of ``name``."""
        return name, self.versions.get(name, 0)

    def rebind(self, name: str) -> Binding:
        """Start a new binding of ``name`` (an assignment) and return it."""
        self.versions[name] = self.versions.get(name, 0) + 1
        return self.binding(name)

    def deps_of(self, expr: cst.BaseExpression) -> set[int]:
        """The save records that the value of ``expr`` depends on (through the names it reads)."""
        found: set[int] = set()
        for name in names_read(expr):
            found |= self.deps.get(self.binding(name), set())
        return found


def names_read(expr: cst.BaseExpression) -> set[str]:
    """Dotted names (``x``, ``self.h``) read by ``expr``; a chain counts once, at its longest."""
    names: set[str] = set()
    dotted = dotted_name(expr)
    if dotted is not None:
        names.add(dotted)
        return names
    for node in [expr, *walk(expr)]:
        if isinstance(node, cst.Attribute):
            dotted = dotted_name(node)
            if dotted is not None:
                names.add(dotted)
        elif isinstance(node, cst.Name):
            names.add(node.value)
    return names


def saving_op(
    ctx, node: cst.CSTNode,
) -> Optional[tuple[str, Optional[cst.BaseExpression], Optional[cst.BaseExpression]]]:
    """For a call or operator that the tables know: ``(op, self operand, other operand)``.

    ``other`` is ``None`` for a unary op.
    """
    if isinstance(node, cst.BinaryOperation):
        op = ops.OPERATOR_OPS.get(type(node.operator).__name__)
        if op is None:
            return None
        return op, node.left, node.right
    if not isinstance(node, cst.Call):
        return None
    args = positional(node)
    name = torch_name(ctx, node.func)
    if name is not None:
        short = name.split(".")[-1]
        if name.startswith("nn.functional.") or "." not in name:
            if short in ops.UNARY_SAVES and args:
                return short, args[0], None
            if short in ops.BINARY_SAVES and len(args) >= 2:
                return short, args[0], args[1]
        return None
    call = method_call(node)
    if call is None:
        return None
    receiver, method = call
    if method in ops.UNARY_SAVES:
        return method, receiver, None
    if method in ops.BINARY_SAVES and args:
        return method, receiver, args[0]
    return None


def records_in(ctx, graph: FunctionGraph, expr: cst.BaseExpression, result: Optional[Binding]) -> set[int]:
    """Add the save records of every tabled op inside ``expr``; return their indices.

    ``result`` is the binding that receives the value of ``expr`` itself (for ops that save
    their output). Operands whose grad state is unknown make the op's saves unknown: skipped.
    """
    added: set[int] = set()
    for node in [expr, *walk(expr)]:
        found = saving_op(ctx, node)
        if found is None:
            continue
        op, self_expr, other_expr = found
        self_grad = ctx.fact(self_expr).requires_grad if self_expr is not None else None
        if other_expr is None:
            roles = ops.saved_roles(op, self_grad, None)
        elif is_number(other_expr):
            roles = ops.saved_roles(op, self_grad, None, other_is_number=True)
        elif is_number(self_expr):
            other_grad = ctx.fact(other_expr).requires_grad
            roles = ops.saved_roles(op, other_grad, None, other_is_number=True)
            roles = None if roles is None else frozenset(
                ops.OTHER if r == ops.SELF else r for r in roles
            )
        else:
            roles = ops.saved_roles(op, self_grad, ctx.fact(other_expr).requires_grad)
        if not roles:
            continue
        text = " ".join(ctx.source(node).split())
        for role in sorted(roles):
            target: Optional[Binding] = None
            if role == ops.RESULT:
                target = result if node is expr else None
            else:
                operand = self_expr if role == ops.SELF else other_expr
                dotted = dotted_name(operand) if operand is not None else None
                target = graph.binding(dotted) if dotted is not None else None
            if target is None:
                continue
            graph.records.append(SaveRecord(text, target, role))
            added.add(len(graph.records) - 1)
    return added
