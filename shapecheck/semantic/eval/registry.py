"""Where the evaluator's handlers register: one per libcst expression class, one per tensor method.

A module of :mod:`shapecheck.semantic.eval` defines a handler and registers it in place::

    @method("view", "reshape")
    def view(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]: ...

A name registered twice is an error at import time: every method has one handler.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, TypeVar

import libcst as cst

from shapecheck.semantic.facts import Fact
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.syntax import CallArgs


class Eval(Protocol):
    """What a handler may use: the facts of other expressions, and the model they are read from."""

    model: SemanticModel

    def fact(self, expr: cst.CSTNode) -> Fact:
        """The facts of ``expr`` at the current point of the analysis."""
        ...


#: computes the fact of one expression node
ExpressionHandler = Callable[[Eval, Any], Fact]
#: computes ``x.<name>(args)`` for a receiver of fact ``x``; ``None`` means unknown
MethodHandler = Callable[[Eval, Fact, str, CallArgs], Optional[Fact]]

#: libcst expression class -> its handler
EXPRESSIONS: dict[type, ExpressionHandler] = {}
#: tensor method name -> its handler
METHODS: dict[str, MethodHandler] = {}

E = TypeVar("E", bound=ExpressionHandler)
M = TypeVar("M", bound=MethodHandler)


def expression(*node_types: type) -> Callable[[E], E]:
    """Register the decorated function as the handler of these libcst expression classes."""
    def register(handler: E) -> E:
        for tp in node_types:
            if tp in EXPRESSIONS:
                raise ValueError(f"two handlers for {tp.__name__}")
            EXPRESSIONS[tp] = handler
        return handler
    return register


def method(*names: str) -> Callable[[M], M]:
    """Register the decorated function as the handler of these tensor methods."""
    def register(handler: M) -> M:
        for name in names:
            if name in METHODS:
                raise ValueError(f"two handlers for the tensor method {name!r}")
            METHODS[name] = handler
        return handler
    return register
