"""Where a tensor lives, as the facts tell it, and how messages name it."""

from __future__ import annotations

from typing import Optional

from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, MPS, Device, Fact, SameDeviceAs

# the device values of the facts, and how messages name them: not a table of torch
_CONCRETE = {CPU, CUDA, MPS, MAYBE_CUDA}
DEVICE_WORDS = {CPU: "the CPU", CUDA: "CUDA", MPS: "MPS", MAYBE_CUDA: "CUDA when it is available"}


def known_device(fact: Fact) -> Optional[Device]:
    """The device the facts place a tensor (or module) on: one of :data:`DEVICE_WORDS`, or ``None``."""
    device = fact.device
    if device is None or isinstance(device, SameDeviceAs):
        return None
    if device.startswith("cuda"):
        return CUDA
    return Device(device) if device in _CONCRETE else None
