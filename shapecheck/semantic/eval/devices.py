"""Devices: the device an argument names, and the device of an op's result."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import libcst as cst

from shapecheck.semantic.eval.arguments import dtype_value
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import (
    CPU, CUDA, DEVICE, MAYBE_CUDA, META, MPS, STR, TENSOR, Device, DeviceValue, Fact,
)
from shapecheck.semantic.syntax import CallArgs


def device_of(tensors: Sequence[Fact], has_unknown: bool = False) -> Optional[DeviceValue]:
    """The device of an op's result: that of its non-0-dim operands when they agree."""
    if has_unknown:
        return None
    devices = set()
    scalar_devices = set()
    for f in tensors:
        if f.is_scalar_cpu:
            scalar_devices.add(f.device)
            continue
        devices.add(f.device)
    if not devices:
        devices = scalar_devices
    if len(devices) == 1:
        return next(iter(devices))
    return None


def device_value(ev: Eval, expr: cst.BaseExpression) -> Optional[DeviceValue]:
    """The device an expression names (a string, ``torch.device``, ``x.device``, a device name)."""
    f = ev.fact(expr)
    if f.kind in (DEVICE, STR):
        return f.device
    return None


def device_kw(ev: Eval, args: CallArgs) -> Optional[DeviceValue]:
    """The device of a ``device=`` argument, or ``None``."""
    d = args.kw.get("device")
    if d is None:
        return None
    return device_value(ev, d)


def to_device(ev: Eval, args: CallArgs) -> Union[DeviceValue, None, bool]:
    """The device named by ``.to(...)`` args; ``False`` when no device is named."""
    if "device" in args.kw:
        return device_value(ev, args.kw["device"])
    for a in args.pos[:1]:
        if dtype_value(ev, a) is not None:
            return False
        f = ev.fact(a)
        if f.kind in (DEVICE, STR):
            return f.device
        if f.kind == TENSOR:
            return f.device
        return None
    return False


def device_string(value: str) -> Optional[Device]:
    """The device a string names (``"cuda:0"`` -> ``cuda``), or ``None``."""
    head = value.split(":", 1)[0].strip()
    if head in (CPU, CUDA, MPS, META):
        return Device(head)
    return None


def torch_device(ev: Eval, expr: cst.Call) -> Fact:
    """``torch.device(...)``."""
    args = CallArgs(expr)
    a = args.get(0, "type")
    dev = device_value(ev, a) if a is not None else None
    return Fact(kind=DEVICE, device=dev)


def current_accelerator() -> Fact:
    """``torch.accelerator.current_accelerator()``: the accelerator (CUDA on a GPU machine) when
    one is available, else ``None``; code uses it as ``device`` only when one is, and the CPU
    otherwise, so it stands for a device that is CUDA when it is available."""
    return Fact(kind=DEVICE, device=MAYBE_CUDA)
