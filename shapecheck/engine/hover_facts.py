"""What the linter knows about the expression at a position of a source text (for hovers).

:func:`expression_at` finds the innermost expression under a line and column of a parsed module;
:func:`fact_at` runs the analysis of the module with one observer that records the
:class:`~shapecheck.semantic.facts.Fact` of that expression when the walk reaches it (the same fact
the rules read there; the walk stops there), and :func:`render_fact` writes a tensor's fact as
short Markdown. A name assigned by ``name = value`` shows the fact of ``value``; a method name
shows the call's result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.facts import TENSOR, Fact, Grad, SameDeviceAs

__all__ = ["HoverTarget", "expression_at", "fact_at", "render_fact", "hover_markdown"]

#: node classes that are parts of an expression's syntax, never an expression the walk evaluates
_NOT_EXPRESSIONS = (cst.Arg, cst.Param, cst.Parameters, cst.SubscriptElement, cst.Index, cst.Slice)


@dataclass(frozen=True)
class HoverTarget:
    """The expression a hover is about, what the reader pointed at (the name an assignment binds,
    or the expression itself) and its span (1-based lines, 0-based columns)."""

    node: cst.BaseExpression
    pointed: cst.BaseExpression
    span: tuple[int, int, int, int]


def _contains(span: tuple[int, int, int, int], line: int, column: int) -> bool:
    start, end = (span[0], span[1]), (span[2], span[3])
    return start <= (line, column) < end


def expression_at(module: cst.Module, line: int, column: int) -> Optional[HoverTarget]:
    """The innermost expression of ``module`` that covers ``line`` (1-based) and ``column``
    (0-based, in characters), moved out to what a reader means there: the call of a method
    name, the value of the name an assignment binds. ``None`` outside any expression."""
    from shapecheck.engine.positions import node_positions

    path: list[cst.CSTNode] = [module]
    node: cst.CSTNode = module
    while True:
        children = list(node.children)
        spans = node_positions(module, children)
        inner = next((c for c in children if c in spans and _contains(spans[c], line, column)), None)
        if inner is None:
            break
        path.append(inner)
        node = inner
    index = max((i for i, n in enumerate(path)
                 if isinstance(n, cst.BaseExpression) and not isinstance(n, _NOT_EXPRESSIONS)), default=None)
    if index is None:
        return None
    target: cst.CSTNode = path[index]
    pointed: cst.CSTNode = target
    parents = path[:index]
    while parents:
        parent = parents[-1]
        if isinstance(parent, cst.Attribute) and parent.attr is target:
            target = pointed = parents.pop()
        elif isinstance(parent, cst.Call) and parent.func is target:
            target = pointed = parents.pop()
        else:
            break
    if parents and isinstance(parents[-1], cst.AssignTarget) and len(parents) >= 2:
        assign = parents[-2]
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            target = assign.value
    elif parents and isinstance(parents[-1], cst.AnnAssign) and parents[-1].target is target:
        value = parents[-1].value
        if value is None:
            return None
        target = value
    assert isinstance(target, cst.BaseExpression) and isinstance(pointed, cst.BaseExpression)
    span = node_positions(module, [pointed]).get(pointed)
    return HoverTarget(target, pointed, span) if span is not None else None


_PROBES: dict[type, type] = {}


class _Reached(BaseException):
    """Raised by the hover's probe once it holds the fact: the rest of the walk cannot change
    what the walk found first, so it stops there (a ``BaseException``: the checker's guard
    against a crashing rule catches ``Exception`` only)."""


def _probe_class(node_type: type) -> type:
    """A rule-like class whose one hook watches nodes of ``node_type`` (one class per type, so
    the checker's table of hooks per class stays small)."""
    probe = _PROBES.get(node_type)
    if probe is None:
        def hook(self, node: cst.CSTNode, ctx) -> None:
            if node is self.target and self.fact is None:
                self.fact = ctx.fact(node)
                if self.fact is not None:
                    raise _Reached

        probe = type(f"HoverProbe{node_type.__name__}", (), {"code": "HOVER", f"visit_{node_type.__name__}": hook})
        _PROBES[node_type] = probe
    return probe


def fact_at(module: cst.Module, target: cst.CSTNode, text: Optional[str] = None) -> Optional[Fact]:
    """The fact of ``target`` (a node of ``module``) where the analysis of ``module`` reaches
    it first, or ``None`` when the walk never evaluates it (in a lambda, a decorator...).

    One analysis, as :func:`shapecheck.engine.checker.analyze` runs it (the walk, then the walks
    of callees with the facts of their call sites), with the probe as its one hook; it stops
    where the probe gets the fact."""
    from shapecheck.engine.checker import Checker
    from shapecheck.engine.contexts import context_findings

    probe = _probe_class(type(target))()
    probe.target = target
    probe.fact = None
    checker = Checker(module, [probe], text)
    try:
        checker.run()
        context_findings(checker, [probe])
    except _Reached:
        pass
    finally:
        checker.release()
    return probe.fact


def _grad_words(grad: Optional[Grad]) -> Optional[str]:
    return {
        Grad.LEAF_REQUIRES_GRAD: "requires grad (a leaf: it gets `.grad`)",
        Grad.NON_LEAF: "requires grad (not a leaf: computed from a tensor that requires grad)",
        Grad.NO_GRAD: "does not require grad",
    }.get(grad) if grad is not None else None


def render_fact(source: str, fact: Fact) -> Optional[str]:
    """Markdown for the fact of the expression ``source``; ``None`` when the fact says nothing
    about a tensor (not known to be one, and no tensor property known)."""
    from shapecheck.shapes import format_shape

    known = [fact.shape, fact.layout, fact.device, fact.grad, fact.dtype_kind]
    if fact.kind != TENSOR and (fact.kind is not None or all(v is None for v in known)):
        return None
    lines = []
    if fact.shape is not None:
        lines.append(f"- shape: `{format_shape(fact.shape)}`")
    if fact.layout is not None:
        layout = str(fact.layout)
        if fact.layout == "non-contiguous" and fact.moved_by:
            layout += f", made non-contiguous by `{fact.moved_by}`"
        if fact.strides is not None:
            layout += f" (strides `{tuple(fact.strides)}`)"
        lines.append(f"- layout: {layout}")
    if isinstance(fact.device, SameDeviceAs):
        lines.append(f"- device: the device of `{fact.device.name}`")
    elif fact.device is not None:
        lines.append(f"- device: {fact.device}" + (f" ({fact.placed_by})" if fact.placed_by else ""))
    grad = _grad_words(fact.grad)
    if grad is not None:
        lines.append(f"- grad: {grad}")
    if fact.dtype_kind is not None:
        lines.append(f"- dtype: {fact.dtype_kind}")
    shown = " ".join(source.split())
    if len(shown) > 60:
        shown = shown[:57] + "..."
    head = f"**tensor** `{shown.replace('`', '')}`" if fact.kind == TENSOR else f"`{shown.replace('`', '')}`"
    return "\n".join([head, ""] + lines) if lines else head + "\n\n- a tensor; nothing more is known"


def hover_markdown(
    module: cst.Module, line: int, column: int, text: Optional[str] = None,
    analyse: Optional[Callable[[cst.Module, cst.CSTNode], Optional[Fact]]] = None,
) -> Optional[tuple[str, tuple[int, int, int, int]]]:
    """The hover of ``line`` (1-based), ``column`` (0-based) in ``module``: ``(markdown, span)``,
    or ``None`` when nothing is known there. ``analyse`` replaces :func:`fact_at`."""
    target = expression_at(module, line, column)
    if target is None:
        return None
    fact = (analyse or (lambda m, n: fact_at(m, n, text)))(module, target.node)
    if fact is None:
        return None
    rendered = render_fact(module.code_for_node(target.pointed), fact)
    return (rendered, target.span) if rendered is not None else None
