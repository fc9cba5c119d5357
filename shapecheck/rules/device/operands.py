"""Operators, torch functions and methods whose tensor operands must share a device."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import method_call, positional, torch_name
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS
from shapecheck.semantic.torch_api import CONCAT_FUNCTIONS, DEVICE_MATCHING_FUNCTIONS, DEVICE_MATCHING_METHODS

#: Arithmetic operators whose operands must share a device.
_DEVICE_OPERATORS = ARITHMETIC_OPERATORS + (cst.MatrixMultiply, cst.BitAnd, cst.BitOr, cst.BitXor)


def same_device_operands(ctx, node: cst.CSTNode) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    """``(what, tensor operands)`` for an op whose operands must share a device."""
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, _DEVICE_OPERATORS):
            return ctx.source(node.operator).strip(), [node.left, node.right]
        return None
    if not isinstance(node, cst.Call):
        return None
    name = torch_name(ctx, node.func)
    args = positional(node)
    if name in CONCAT_FUNCTIONS and args and isinstance(args[0], (cst.List, cst.Tuple)):
        return f"torch.{name}", [e.value for e in args[0].elements if isinstance(e, cst.Element)]
    if name in DEVICE_MATCHING_FUNCTIONS:
        if name == "einsum":
            args = args[1:]
        return f"torch.{name}", args
    call = method_call(node)
    if name is None and call is not None and call[1] in DEVICE_MATCHING_METHODS and len(args) == 1:
        return f".{call[1]}()", [call[0], args[0]]
    return None
