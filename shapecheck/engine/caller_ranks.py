"""Findings of a call-site walk that the caller caused by passing a tensor of the wrong rank.

A function whose own code fixes the rank of a parameter (``torch.einsum("bnd,de->bne", x, w)``
needs ``x`` with three dims) is right for its own inputs. When its call sites give that parameter
another rank (``project_tokens(x[0], w)`` passes two dims), a finding of the walk with their facts
at a node that reads the parameter is the caller's bug: it is said at each call, naming the line
inside the callee where it shows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from shapecheck.rules.base import Finding
from shapecheck.semantic.call_sites import Context
from shapecheck.semantic.syntax import all_params
from shapecheck.semantic.walk import walk

__all__ = ["declared_ranks", "at_the_callers"]


def _einsum_ranks(call: cst.Call) -> Optional[list[Optional[int]]]:
    """The rank each operand of ``torch.einsum("<spec>", a, b, ...)`` must have (``None`` for an
    operand whose subscripts hold ``...``); ``None`` when the spec is not a literal."""
    if not call.args or type(call.args[0].value) is not cst.SimpleString:
        return None
    spec = call.args[0].value.evaluated_value
    if not isinstance(spec, str):
        return None
    inputs = spec.split("->")[0].replace(" ", "").split(",")
    return [None if "..." in s else len(s) for s in inputs]


def declared_ranks(ctx_qualname, function: cst.FunctionDef) -> dict[str, int]:
    """Parameter -> the rank the code of ``function`` requires of it: an operand passed by name
    to an einsum with a literal spec (one rank for every such use, else none)."""
    params = {p.name.value for p in all_params(function.params)}
    seen: dict[str, set[int]] = {}
    for node in walk(function.body):
        if type(node) is not cst.Call or ctx_qualname(node.func) not in ("torch.einsum", "torch.functional.einsum"):
            continue
        ranks = _einsum_ranks(node)
        operands = [a.value for a in node.args[1:]]
        if ranks is None or len(ranks) != len(operands) or any(a.star or a.keyword for a in node.args):
            continue
        for operand, rank in zip(operands, ranks):
            if type(operand) is cst.Name and operand.value in params and rank is not None:
                seen.setdefault(operand.value, set()).add(rank)
    return {name: next(iter(r)) for name, r in seen.items() if len(r) == 1}


def _reads(function: cst.FunctionDef, node: cst.CSTNode, name: str) -> bool:
    """``node``, or the innermost call around it (an einsum's spec is reported inside its call),
    reads ``name``."""
    around = [c for c in walk(function.body) if type(c) is cst.Call and any(n is node for n in walk(c))]
    inner = min(around, key=lambda c: sum(1 for _ in walk(c)), default=node)
    return any(type(n) is cst.Name and n.value == name for n in walk(inner))


def at_the_callers(findings: list[Finding], context: Context, ranks: dict[str, int],
                   line_of) -> list[tuple[Finding, tuple[cst.Call, ...]]]:
    """Each finding with the calls it comes from: moved to those calls (its message naming the
    callee's line) when its node reads a parameter whose rank the callee's code fixes and the
    call sites give another one; else kept where it is."""
    wrong = {name: (ranks[name], f.shape.rank) for name, f in context.facts.items()
             if name in ranks and f.shape is not None and f.shape.rank is not None and f.shape.rank != ranks[name]}
    out: list[tuple[Finding, tuple[cst.Call, ...]]] = []
    callee = context.callee.node.name.value
    for f in findings:
        name = next((n for n in wrong if _reads(context.callee.node, f.node, n)), None)
        if name is None:
            out.append((f, context.calls))
            continue
        need, got = wrong[name]
        for call in context.calls:
            message = (f"the call passes `{name}` with {got} dims, but `{callee}` needs {need} (line "
                       f"{line_of(f.node)}: {f.message})")
            out.append((replace(f, node=call, message=message, fix=None, offset=None), (call,)))
    return out
