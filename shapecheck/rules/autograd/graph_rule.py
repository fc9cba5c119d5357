"""The base class of the rules that keep a per-function autograd graph (SC302, SC308)."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import calls_backward
from shapecheck.rules.autograd_graph import FunctionGraph, records_in
from shapecheck.rules.base import Rule
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.scopes import grad_enabled


class GraphRule(Rule):
    """Shared bookkeeping: one :class:`FunctionGraph` per function of the file."""

    #: whether assignments record what their ops save for backward (SC302 needs it)
    track_saves = True

    def __init__(self) -> None:
        self._graphs: dict[int, FunctionGraph] = {}

    def graph(self, ctx, node: cst.CSTNode) -> FunctionGraph:
        """The graph state of the function that contains ``node`` (the node being visited)."""
        function = getattr(ctx, "function", None)
        key = id(function) if function is not None else 0
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._graphs[key] = FunctionGraph()
            if self.track_saves:
                graph.has_backward = calls_backward(function if function is not None else ctx.module)
        return graph

    def assigned(self, node: cst.CSTNode, targets: list[cst.BaseExpression],
                 value: cst.BaseExpression, ctx) -> None:
        """Bind ``targets`` to ``value``: records the saves made by ``value`` and its deps."""
        graph = self.graph(ctx, node)
        deps: set[int] = set()
        if self.track_saves and graph.has_backward:
            single = dotted_name(targets[0]) if len(targets) == 1 else None
            deps = graph.deps_of(value)
            result = (single, graph.versions.get(single, 0) + 1) if single is not None else None
            if grad_enabled(ctx, node) is True:
                deps |= records_in(ctx, graph, value, result)
        for target in targets:
            for element in _flat_targets(target):
                dotted = dotted_name(element)
                if dotted is not None:
                    binding = graph.rebind(dotted)
                    graph.deps[binding] = set(deps)
                    graph.assigned_from[binding] = value


def _flat_targets(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flat_targets(element.value)
    else:
        yield target
