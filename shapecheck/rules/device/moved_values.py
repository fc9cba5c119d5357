"""Tensors a function moves to a device it names: ``real = data[0].to(device)``, ``x.cuda()``, and
what is computed from them where the result stays on their device (or the op raises): a slice, a
device-keeping method, arithmetic, a torch function, a module run on it (``netD(real)``).

Moving a tensor says that the device may be a GPU: a tensor made on the CPU that meets it fails
whenever it is one.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.annotations import unwrap_optional
from shapecheck.rules.helpers.calls import method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import CPU, DEVICE, MODULE, STR
from shapecheck.semantic.syntax import CallArgs, all_params
from shapecheck.semantic.torch_api import (
    ALL_FACTORIES, DTYPE_KINDS, LEGACY_TENSOR_CLASSES, NEW_TENSOR_METHODS, TENSOR_DEVICE_METHODS,
    TENSOR_METADATA_METHODS, TENSOR_TO_PYTHON_METHODS,
)
from shapecheck.semantic.walk import walk

#: methods whose result is not on the receiver's device, or no tensor
_ELSEWHERE = TENSOR_DEVICE_METHODS | TENSOR_METADATA_METHODS | TENSOR_TO_PYTHON_METHODS | NEW_TENSOR_METHODS \
    | frozenset({"type", "type_as", "size", "dim"})

#: local name (by function) -> how the device it was moved to is written
Moved = dict[tuple[int, str], str]

#: torch calls whose result is a new tensor wherever their input is
_FRESH = ALL_FACTORIES | LEGACY_TENSOR_CLASSES


def _dtype_parameter(ctx, name: str) -> bool:
    """``name`` is a parameter of the enclosing function annotated ``torch.dtype`` (or
    ``Optional[torch.dtype]``): ``x.to(name)`` casts."""
    function = ctx.function
    if function is None:
        return False
    for param in all_params(function.params):
        if param.name.value == name and param.annotation is not None:
            return ctx.qualname(unwrap_optional(param.annotation.annotation)) == "torch.dtype"
    return False


def _move_target(ctx, call: cst.Call, facts: bool = True) -> Optional[str]:
    """How ``x.to(device)`` / ``x.cuda()`` writes the device it moves ``x`` to; ``None`` for
    another call, a cast, or a move to the CPU (that ``facts`` show: without them, the syntax
    alone decides)."""
    method = method_call(call)
    if method is None or method[1] not in ("to", "cuda") or torch_name(ctx, call.func) is not None:
        return None
    if facts and ctx.fact(call).device == CPU:
        return None
    if method[1] == "cuda":
        return "cuda" if not call.args else short(ctx, call.args[0].value)
    args = CallArgs(call)
    target = args.kw.get("device") or (args.pos[0] if args.pos else None)
    if target is None or args.starred:
        return None
    if type(target) is cst.Attribute and target.attr.value == "dtype":
        return None
    qual = ctx.qualname(target) or ""
    if qual.startswith("torch.") and qual[len("torch."):] in DTYPE_KINDS:
        return None
    if type(target) is cst.SimpleString and "cpu" in target.value:
        return None
    if type(target) is cst.Name and _dtype_parameter(ctx, target.value):
        return None
    if facts:
        fact = ctx.fact(target)
        if fact.device == CPU or fact.kind not in (None, DEVICE, STR):
            return None
    return short(ctx, target)


def moved_to(ctx, expr: cst.BaseExpression, moved: Moved, fid: int, depth: int = 0) -> Optional[str]:
    """The device (as written) that ``expr`` was moved to in this function, if it was."""
    if depth > 8:
        return None
    if type(expr) is cst.Name:
        return moved.get((fid, expr.value))
    if type(expr) is cst.Subscript:
        return moved_to(ctx, expr.value, moved, fid, depth + 1)
    if type(expr) is cst.BinaryOperation:
        return moved_to(ctx, expr.left, moved, fid, depth + 1) or moved_to(ctx, expr.right, moved, fid, depth + 1)
    if type(expr) is not cst.Call:
        return None
    target = _move_target(ctx, expr)
    if target is not None:
        return target
    method = method_call(expr)
    name = torch_name(ctx, expr.func)
    module = ctx.fact(expr.func).kind == MODULE
    if method is not None and name is None and not module:
        if method[1] in _ELSEWHERE:
            return None
        return moved_to(ctx, method[0], moved, fid, depth + 1)
    args = positional(expr)
    if name is not None and name not in _FRESH and not name.startswith("nn.init"):
        for arg in args:
            found = moved_to(ctx, arg, moved, fid, depth + 1)
            if found is not None:
                return found
        return None
    if args and module:  # `netD(real)`, `model(x)` of a moved `model`: it runs where its input is
        return moved_to(ctx, expr.func, moved, fid, depth + 1) or moved_to(ctx, args[0], moved, fid, depth + 1)
    return None


def moved_module(ctx, call: cst.Call, moved: Moved, fid: int) -> Optional[str]:
    """For a call of a module moved in this function (``model = Net().to(device)``), the device
    it was moved to."""
    if not positional(call) or ctx.fact(call.func).kind != MODULE:
        return None
    return moved_to(ctx, call.func, moved, fid)


def moves_to_device(ctx, function: cst.FunctionDef) -> bool:
    """``function`` moves a tensor to a device it names somewhere in its body (not in a nested
    definition)."""
    for node in walk(function.body):
        if type(node) is cst.Call and moves_by_syntax(ctx, node):
            return True
    return False


def moves_by_syntax(ctx, call: cst.Call) -> bool:
    """``call`` moves a tensor to a device it names, as far as its syntax shows (no facts)."""
    return _move_target(ctx, call, facts=False) is not None
