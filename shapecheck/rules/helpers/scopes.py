"""Where the node being visited sits: its function, class, loop and grad mode.

A thin reading of the inference context (see the docstring of :mod:`shapecheck.semantic.interpreter`): the
rules of this package ask through :func:`scope_of` and :func:`grad_enabled` so that they read the
context the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst


@dataclass(frozen=True)
class Scope:
    """The surroundings of the node whose hook is running.

    ``grad``: True/False when grad mode is known there, ``None`` when it is not. ``loop``: the
    innermost For/While around the node inside its function. ``module_class``: the enclosing
    class is known to subclass ``nn.Module``.
    """

    function: Optional[cst.FunctionDef]
    class_def: Optional[cst.ClassDef]
    loop: Optional[cst.CSTNode]
    grad: Optional[bool]
    module_class: bool


def scope_of(ctx, node: cst.CSTNode) -> Scope:
    """The :class:`Scope` of ``node``, which must be the node whose hook is running."""
    return Scope(
        function=ctx.function,
        class_def=ctx.class_def,
        loop=ctx.loop,
        grad=ctx.grad_enabled,
        module_class=ctx.in_module_class is True,
    )


def grad_enabled(ctx, node: cst.CSTNode) -> Optional[bool]:
    """Grad mode where ``node`` (the node whose hook is running) executes."""
    return ctx.grad_enabled
