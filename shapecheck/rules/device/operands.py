"""Operators, torch functions and methods whose tensor operands must share a device."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import method_call, positional, torch_name
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, BINARY_TOKENS
from shapecheck.rules.helpers.visit_memo import LastVisit
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    CONCAT_FUNCTIONS,
    DEVICE_MATCHING_FUNCTIONS,
    DEVICE_MATCHING_METHODS,
    FUNCTIONAL_LOSS_WEIGHTS,
    FUNCTIONAL_LOSSES,
    INDEX_ARGUMENT_OPS,
    MASK_METHODS,
    NN_LOSS_MODULES,
)

#: Arithmetic operators whose operands must share a device.
_DEVICE_OPERATORS = ARITHMETIC_OPERATORS + (cst.MatrixMultiply, cst.BitAnd, cst.BitOr, cst.BitXor)
#: the same, as a set of exact classes (libcst's operator classes have no subclasses)
_DEVICE_OPERATOR_TYPES = frozenset(_DEVICE_OPERATORS)

#: the operands of the node being visited (SC401 and SC403 both ask)
_OPERANDS: LastVisit[Optional[tuple[str, list[cst.BaseExpression]]]] = LastVisit()


def same_device_operands(ctx, node: cst.CSTNode) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    """``(what, tensor operands)`` for an op whose operands must share a device (the list is shared
    by the rules that ask during one visit of ``node``: read it, never change it)."""
    return _OPERANDS.get(ctx, node, _same_device_operands)


def _same_device_operands(ctx, node: cst.CSTNode) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    if type(node) is cst.BinaryOperation:
        if type(node.operator) in _DEVICE_OPERATOR_TYPES:
            return BINARY_TOKENS[type(node.operator)], [node.left, node.right]
        return None
    if type(node) is not cst.Call:
        return None
    name = torch_name(ctx, node.func)
    args = positional(node)
    loss = _loss(ctx, node, name)
    if loss is not None:
        weights = [a.value for a in node.args if a.keyword is not None and a.keyword.value in FUNCTIONAL_LOSS_WEIGHTS]
        return loss, args + weights
    if name in CONCAT_FUNCTIONS and args and isinstance(args[0], (cst.List, cst.Tuple)):
        return f"torch.{name}", [e.value for e in args[0].elements if type(e) is cst.Element]
    if name in DEVICE_MATCHING_FUNCTIONS:
        if name == "einsum":
            args = args[1:]
        return f"torch.{name}", args
    call = method_call(node)
    indexed = _index_operands(ctx, node, name, call)
    if indexed is not None:
        return indexed
    if name is None and call is not None and call[1] in DEVICE_MATCHING_METHODS and len(args) == 1:
        return f".{call[1]}()", [call[0], args[0]]
    if name is None and call is not None and call[1] in MASK_METHODS and args:
        return f".{call[1]}()", [call[0], args[0]]
    return None


def _index_operands(ctx, node: cst.Call, name: Optional[str],
                    call: Optional[tuple[cst.BaseExpression, str]]) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    """``torch.gather(x, 1, idx)``, ``x.gather(1, idx)``, ``x.index_select(0, idx)``: the input and
    its index tensor."""
    function = name is not None and name in INDEX_ARGUMENT_OPS
    op = name if function else call[1] if name is None and call is not None else None
    if op is None or op not in INDEX_ARGUMENT_OPS or any(a.star for a in node.args):
        return None
    position, keyword = INDEX_ARGUMENT_OPS[op]
    args = CallArgs(node)
    if function:
        source, index = args.get(0, "input"), args.get(position, keyword)
    else:
        source, index = call[0] if call is not None else None, args.get(position - 1, keyword)
    if source is None or index is None:
        return None
    return (f"torch.{op}" if function else f".{op}()"), [source, index]


#: losses whose tensor arguments may sit on different devices (``ctc_loss`` takes CPU lengths
#: and, with cuDNN, CPU targets)
_MIXED_DEVICE_LOSSES = frozenset({"ctc_loss", "CTCLoss"})


def _loss(ctx, node: cst.Call, name: Optional[str]) -> Optional[str]:
    """How messages name a loss call (``F.cross_entropy(out, y)``, ``criterion(out, y)`` of a
    ``torch.nn`` loss): its input and target must share a device."""
    if name is not None and name.startswith("nn.functional."):
        short = name[len("nn.functional."):]
        if short in FUNCTIONAL_LOSSES and short not in _MIXED_DEVICE_LOSSES:
            return ctx.source(node.func).strip()
        return None
    if name is None and isinstance(node.func, (cst.Name, cst.Attribute)):
        module = ctx.fact(node.func)
        qual = module.qual or ""
        layer = qual[len("torch.nn."):]
        if module.kind == MODULE and qual.startswith("torch.nn.") and layer in NN_LOSS_MODULES \
                and layer not in _MIXED_DEVICE_LOSSES:
            return f"{ctx.source(node.func).strip()}(...)"
    return None
