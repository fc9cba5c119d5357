"""How a function uses one of its local names: whether every read of it is of one kind."""

from __future__ import annotations

from typing import Callable

import libcst as cst

from shapecheck.semantic.walk import walk


def read_only_as(function: cst.FunctionDef, name: str, use: Callable[[cst.CSTNode, str], bool]) -> bool:
    """``function`` binds the local ``name`` with plain assignments (``name = ...``) and reads it
    at least once, only inside nodes that ``use(node, name)`` accepts, each holding one read
    (``return loss``, ``val.item()``)."""
    reads = bound = accepted = 0
    for node in walk(function.body):
        if type(node) is cst.Name and node.value == name:
            reads += 1
        elif type(node) is cst.Assign:
            bound += sum(1 for t in node.targets if type(t.target) is cst.Name and t.target.value == name)
        elif use(node, name):
            accepted += 1
    return accepted > 0 and reads == bound + accepted
