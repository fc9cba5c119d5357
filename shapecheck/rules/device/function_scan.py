"""What SC403 reads from the syntax of a function, in one walk of its body: the parameters its body
places other tensors by (:func:`~shapecheck.rules.device.device_generic.placing_params`), whether
it moves a tensor to a device it names (:func:`~shapecheck.rules.device.moved_values.moves_to_device`)
and whether it may call a torch factory (:func:`~shapecheck.rules.device.factory_calls.may_call_factory`).
Each is what its own function gives; the walk is shared because SC403 asks all three of most
functions it meets.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from shapecheck.rules.device.device_generic import placing_param, plain_params, remember_placing, remembered_placing
from shapecheck.rules.device.factory_calls import definition_parts, may_make_here
from shapecheck.rules.device.moved_values import moves_by_syntax
from shapecheck.semantic.walk import walk

__all__ = ["FunctionSyntax", "scan_syntax"]


#: the nested definitions that :func:`walk` meets but does not enter
_DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


class FunctionSyntax(NamedTuple):
    """The three readings of one function (see the module)."""

    placing: frozenset[str]
    moves: bool
    may_make: bool


def scan_syntax(ctx, function: cst.FunctionDef, aliases: frozenset[str]) -> FunctionSyntax:
    """The :class:`FunctionSyntax` of ``function``; ``aliases``: the names imports bind to torch
    factories (:func:`~shapecheck.rules.device.factory_calls.factory_aliases`). The placing
    parameters are :func:`~shapecheck.rules.device.device_generic.placing_params`' own when it
    already holds them, and are given to it for a function outside a module class (where SC403
    asks it)."""
    known = remembered_placing(function)
    params = plain_params(function)
    placing: set[str] = set()
    moves = False
    may_make = False
    for node in walk(function.body):
        tp = type(node)
        if tp is cst.Call:
            if not moves and moves_by_syntax(ctx, node):  # type: ignore[arg-type]
                moves = True
            if not may_make and may_make_here(node, function, aliases):
                may_make = True
        elif tp is not cst.Attribute:
            if not may_make and tp in _DEFINITIONS and may_make_here(node, function, aliases):
                may_make = True
            continue  # only an attribute or a call places a tensor by a parameter
        name = placing_param(ctx, node, params)
        if name is not None:
            placing.add(name)
    if not may_make:  # the decorators, defaults and annotations, which the walk of the body leaves out
        may_make = any(may_make_here(node, function, aliases)
                       for part in definition_parts(function) if part is not function.body
                       for node in (part, *walk(part)))
    if known is None and ctx.in_module_class is not True:
        known = remember_placing(function, frozenset(placing))
    return FunctionSyntax(known if known is not None else frozenset(placing), moves, may_make)
