"""Where a tensor lives, as the facts tell it, and how messages name it."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from shapecheck.rules.helpers.calls import keyword, method_call, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, META, MPS, Device, Fact, SameDeviceAs
from shapecheck.semantic.eval.data_loading import LOADER, PROGRESS_BARS
from shapecheck.semantic.syntax import is_name, sub_blocks, target_names
from shapecheck.semantic.torch_api import FACTORIES

# the device values of the facts, and how messages name them: not a table of torch
_CONCRETE = {CPU, CUDA, MPS, META, MAYBE_CUDA}
DEVICE_WORDS = {CPU: "the CPU", CUDA: "CUDA", MPS: "MPS", META: "the meta device",
                MAYBE_CUDA: "CUDA when it is available"}


def known_device(fact: Fact) -> Optional[Device]:
    """The device the facts place a tensor (or module) on: one of :data:`DEVICE_WORDS`, or ``None``."""
    device = fact.device
    if device is None or isinstance(device, SameDeviceAs):
        return None
    if device.startswith("cuda"):
        return CUDA
    return Device(device) if device in _CONCRETE else None


def _smalls(stmts: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    for stmt in stmts:
        if type(stmt) is cst.SimpleStatementLine:
            yield from stmt.body
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for block in sub_blocks(stmt):
                yield from _smalls(block)


def factory_root(ctx, expr: cst.BaseExpression) -> Optional[cst.Call]:
    """The torch factory call without ``device=`` that ``expr`` is (or a method chain on one)."""
    while True:
        if type(expr) is cst.Call and torch_name(ctx, expr.func) in FACTORIES | {"from_numpy"}:
            return expr if keyword(expr, "device") is None else None
        call = method_call(expr)
        if call is None or call[1] in ("to", "cuda", "type", "type_as", "new_tensor", "new_zeros", "new_ones",
                                       "new_empty", "new_full"):
            return None
        expr = call[0]


def _batch_of(ctx, name: str) -> Optional[cst.BaseExpression]:
    """The loader whose batches an enclosing ``for`` loop binds to ``name``
    (``for data, target in loader``, also through ``enumerate``/``tqdm``)."""
    for loop in reversed(ctx.loops):
        if type(loop) is not cst.For or name not in target_names(loop.target):
            continue
        source = loop.iter
        while type(source) is cst.Call and source.args and not source.args[0].keyword \
                and (is_name(source.func, "enumerate") or ctx.qualname(source.func) in PROGRESS_BARS):
            source = source.args[0].value
        return source if ctx.fact(source).qual == LOADER else None
    return None


#: how to fix each origin of a CPU tensor, for messages
_CREATE_ON_DEVICE = "pass `device=` (the device of the module's input or parameters) where it is created"


def _why(ctx, made: cst.Call) -> str:
    """Why the factory call ``made`` gives a CPU tensor, for messages."""
    if torch_name(ctx, made.func) == "from_numpy":
        return f"`{short(ctx, made)}` always returns a CPU tensor"
    return f"`{short(ctx, made)}` has no `device=`"


def _fix(ctx, made: cst.Call) -> str:
    if torch_name(ctx, made.func) == "from_numpy":
        return "move it with `.to(device)` (the device of the module's input or parameters)"
    return _CREATE_ON_DEVICE


def cpu_origin(ctx, expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """Why a tensor the facts place on the CPU is there, and how to fix it, said for messages:
    a factory without ``device=`` (written in the op, or the one assignment of a local name in
    this function), a batch of a ``DataLoader``, or a plain tensor attribute of a module the file
    moves (moving it left the tensor behind)."""
    function = ctx.function
    where = f" in `{function.name.value}`" if function is not None else ""
    made = factory_root(ctx, expr)
    if made is not None:
        return (f"`{short(ctx, expr)}` is created on the CPU{where} ({_why(ctx, made)})", _fix(ctx, made))
    if type(expr) is cst.Name:
        loader = _batch_of(ctx, expr.value)
        if loader is not None:
            return (f"`{expr.value}` is a batch of `{short(ctx, loader)}`, on the CPU (a DataLoader does not "
                    f"move it)", f"move it first: `{expr.value} = {expr.value}.to(device)`")
    if type(expr) is cst.Name and function is not None:
        values = [small.value for small in _smalls(function.body.body) if type(small) is cst.Assign
                  and any(type(t.target) is cst.Name and t.target.value == expr.value for t in small.targets)]
        made = factory_root(ctx, values[0]) if len(values) == 1 else None
        if made is not None:
            return (f"`{expr.value}` is created on the CPU{where} ({_why(ctx, made)})", _fix(ctx, made))
        helper = values[0] if len(values) == 1 and type(values[0]) is cst.Call else None
        if helper is not None and ctx.call_effects(helper) is not None:
            return (f"`{expr.value}` comes from `{short(ctx, helper)}`, whose result is made on the CPU",
                    "create it there with `device=` (the device of the module's input or parameters)")
        return None
    if type(expr) is cst.Attribute and is_name(expr.value, "self") and ctx.fact(expr.value).placed_by:
        attr = expr.attr.value
        return (f"`self.{attr}` is a plain tensor attribute, not a registered buffer, so moving the module "
                f"leaves it on the CPU", f"register it in `__init__` with `self.register_buffer(\"{attr}\", ...)` "
                f"so that it moves with the module")
    return None


def cpu_place(ctx, expr: cst.BaseExpression) -> list[tuple[cst.CSTNode, str]]:
    """Where :func:`cpu_origin` finds a tensor made on the CPU: the factory call without
    ``device=`` (in ``expr``, or in the one assignment of the name ``expr`` in this function, or
    at module level), as a related place; empty when there is none."""
    made = factory_root(ctx, expr)
    function = ctx.function
    if made is None and type(expr) is cst.Name:
        body = function.body.body if function is not None else ctx.module.body
        values = [small.value for small in _smalls(body) if type(small) is cst.Assign
                  and any(type(t.target) is cst.Name and t.target.value == expr.value for t in small.targets)]
        made = factory_root(ctx, values[0]) if len(values) == 1 else None
    return [(made, "created on the CPU here")] if made is not None else []


def placed_place(fact: Fact) -> list[tuple[cst.CSTNode, str]]:
    """The move that :func:`placed_note` names (where the file moves the module), as a related
    place; empty when the fact does not hold it."""
    node = getattr(fact.placed_by, "node", None)
    return [(node, "moved to the device here")] if node is not None else []


def placed_note(fact: Fact) -> str:
    """`` (`Emb` is moved to CUDA at line 14)`` for a tensor or module placed by a move of the
    file, else nothing."""
    return f" ({fact.placed_by})" if fact.placed_by else ""
