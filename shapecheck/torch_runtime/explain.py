"""The reference interpreter of ``@check``: binds dims with their sources and explains faults.

The compiled fast path (:mod:`shapecheck.torch_runtime.check`) only answers "fits or not". When it
says "not", the same values are walked again here, in the same order and with the same rules,
recording which argument bound each dim, so the error can name the function, the argument, the
expected and actual shape and the table of dims bound so far.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from shapecheck.errors import DeviceMismatchError, DtypeMismatchError, SignatureShapeError
from shapecheck.torch_runtime.annotations import (
    ANONYMOUS, FIXED, NAMED, SYMBOLIC, VARIADIC, TensorSpec, dtype_name, eval_symbolic,
)


def format_size(shape: Any) -> str:
    """A concrete shape as a tuple: ``(2, 3)``, ``(4,)``, ``()``."""
    dims = tuple(int(d) for d in shape)
    return str(dims)


def broadcast_variadic(old: tuple, new: tuple) -> Optional[tuple]:
    """The broadcast of two variadic bindings, or ``None`` when they do not broadcast."""
    width = max(len(old), len(new))
    a = (1,) * (width - len(old)) + tuple(old)
    b = (1,) * (width - len(new)) + tuple(new)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def merge_variadic(values: dict, key: str, covered: tuple, broadcastable: bool) -> Optional[str]:
    """Bind or compare the variadic dims ``key`` (``"*batch"``) as jaxtyping does.

    Returns ``None`` when they fit (``values`` updated) or the problem, worded to precede the
    earlier binding. A ``*#batch`` binding is remembered as broadcastable under the key
    ``("#", key)`` so later uses may broadcast against it.
    """
    covered = tuple(covered)
    flag = ("#", key)
    if key not in values:
        values[key] = covered
        values[flag] = broadcastable
        return None
    old = values[key]
    if values.get(flag, False):
        merged = broadcast_variadic(old, covered)
        if merged is None:
            return "which does not broadcast with"
        if not broadcastable and merged != covered:
            return "which does not broadcast from"
        values[key] = merged
        values[flag] = broadcastable
        return None
    if broadcastable:
        merged = broadcast_variadic(old, covered)
        if merged is None or merged != old:
            return "which does not broadcast to"
        return None
    if old != covered:
        return "but it is"
    return None


class Fault(Exception):
    """Internal: one value failed; carries the error to raise once the context is known."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class Binder:
    """Dims bound so far (``values``) and who bound them (``sources``); checks values in turn."""

    def __init__(self, function: str, location: str, devices: bool) -> None:
        self.function = function
        self.location = location
        self.devices = devices
        self.values: dict = {}
        self.sources: dict = {}
        self.device: Optional[torch.device] = None
        self.device_source: Optional[str] = None
        self.pending: list = []

    # --- rendering -------------------------------------------------------------------------
    def table(self) -> str:
        """The dims bound so far, one per line, with the value that bound each."""
        names = [name for name in self.values if isinstance(name, str)]
        if not names:
            return "    dims bound so far: none"
        width = max(len(name) for name in names)
        lines = ["    dims bound so far:"]
        for name in names:
            value = self.values[name]
            shown = format_size(value) if isinstance(value, tuple) else str(value)
            lines.append(
                "      %s = %s   from %s" % (name.ljust(width), shown, self.sources.get(name, "?"))
            )
        return "\n".join(lines)

    def expected(self, spec: TensorSpec) -> str:
        """The annotation's shape with bound dims filled in: ``(b=2, c, 3)``."""
        parts = []
        for dim in spec.dims:
            text = dim.text()
            if dim.kind == NAMED and dim.name in self.values:
                text += "=%s" % self.values[dim.name]
            elif dim.kind == VARIADIC and dim.name and "*" + dim.name in self.values:
                text += "=%s" % format_size(self.values["*" + dim.name])
            elif dim.kind == SYMBOLIC:
                value = eval_symbolic(dim, self.values)
                if value is not None:
                    text += "=%s" % value
            parts.append(text)
        if len(parts) == 1 and spec.variadic is None:
            return "(" + parts[0] + ",)"
        return "(" + ", ".join(parts) + ")"

    def _render(self, where: str, spec: TensorSpec, value: Any) -> str:
        lines = ["    in %s%s" % (self.function, " (" + self.location + ")" if self.location else "")]
        lines.append("    %s" % where if spec.text in where else "    %s: %s" % (where, spec.text))
        lines.append("      expected %s" % self.expected(spec))
        if isinstance(value, torch.Tensor):
            lines.append("      actual   %s  %s on %s" % (
                format_size(value.shape), dtype_name(value.dtype), value.device))
        lines.append(self.table())
        return "\n".join(lines)

    def _shape_fault(self, where: str, spec: TensorSpec, value: Any, problem: str) -> Fault:
        reason = "%s: %s has shape %s, expected %s: %s" % (
            self.function, where, format_size(value.shape), spec.pattern(), problem)
        err = SignatureShapeError(reason, self._render(where, spec, value))
        err.function = self.function
        err.argument = where
        err.expected = spec.pattern()
        err.actual = tuple(value.shape)
        err.bindings = {k: v for k, v in self.values.items() if isinstance(k, str)}
        return Fault(err)

    # --- checking ---------------------------------------------------------------------------
    def check_value(self, where: str, spec: TensorSpec, value: Any) -> None:
        """Check one value against one annotation, binding its dims; raises :class:`Fault`."""
        if value is None and spec.optional:
            return
        if not isinstance(value, spec.array_type):
            kind = "None" if value is None else "a " + type(value).__name__
            reason = "%s: %s is %s, expected a tensor %s" % (self.function, where, kind, spec.text)
            raise Fault(TypeError(reason + "\n" + "    in %s" % self.function))
        if spec.dtypes is not None and value.dtype not in spec.dtypes:
            reason = "%s: %s has dtype %s, expected %s" % (
                self.function, where, dtype_name(value.dtype), spec.dtype_text)
            err = DtypeMismatchError(reason, self._render(where, spec, value))
            err.function = self.function
            err.argument = where
            raise Fault(err)
        shape = tuple(value.shape)
        rank = len(shape)
        if spec.variadic is None and rank != len(spec.dims):
            raise self._shape_fault(where, spec, value, "%d dims, not %d" % (rank, len(spec.dims)))
        if spec.variadic is not None and rank < spec.min_rank:
            raise self._shape_fault(
                where, spec, value, "%d dims, fewer than the %d it needs" % (rank, spec.min_rank))
        for i, dim in enumerate(spec.prefix):
            self._check_dim(where, spec, value, dim, i, shape[i])
        suffix = spec.suffix
        for j, dim in enumerate(suffix):
            pos = rank - len(suffix) + j
            self._check_dim(where, spec, value, dim, pos, shape[pos])
        if spec.variadic is not None:
            dim = spec.dims[spec.variadic]
            covered = shape[spec.variadic: rank - len(suffix)]
            if dim.name:
                self._bind_variadic(where, spec, value, dim, covered)
        if self.devices and isinstance(value, torch.Tensor):
            self._check_device(where, value)

    def _check_dim(self, where, spec, value, dim, pos: int, size: int) -> None:
        if dim.kind == ANONYMOUS:
            return
        if dim.broadcastable and size == 1:
            return
        if dim.kind == FIXED:
            if size != dim.size:
                raise self._shape_fault(where, spec, value, "dim %d is %d, not %d" % (pos, size, dim.size))
            return
        if dim.kind == SYMBOLIC:
            self.pending.append((where, spec, value, dim, pos, size))
            return
        name = dim.name
        if name in self.values:
            if self.values[name] != size:
                raise self._shape_fault(
                    where, spec, value,
                    "dim %d (%s) is %d, but %s = %d from %s"
                    % (pos, name, size, name, self.values[name], self.sources[name]))
            return
        self.values[name] = size
        self.sources[name] = where

    def _bind_variadic(self, where, spec, value, dim, covered: tuple) -> None:
        key = "*" + dim.name
        first = key not in self.values
        old = self.values.get(key)
        problem = merge_variadic(self.values, key, covered, dim.broadcastable)
        if problem:
            raise self._shape_fault(
                where, spec, value, "*%s is %s here, %s %s from %s"
                % (dim.name, format_size(covered), problem, format_size(old), self.sources[key]))
        if first:
            self.sources[key] = where

    def _check_device(self, where: str, value: torch.Tensor) -> None:
        device = value.device
        if value.dim() == 0 and device.type == "cpu":
            return
        if self.device is None:
            self.device = device
            self.device_source = where
            return
        if device != self.device:
            reason = "%s: tensor arguments are on different devices: %s on %s, %s on %s" % (
                self.function, self.device_source, self.device, where, device)
            raise Fault(DeviceMismatchError(
                reason, [(self.device_source, str(self.device)), (where, str(device))]))

    def check_pending(self) -> None:
        """Check the symbolic dims seen so far, now that the named dims are bound."""
        pending, self.pending = self.pending, []
        for where, spec, value, dim, pos, size in pending:
            expected = eval_symbolic(dim, self.values)
            if expected is None:
                raise self._shape_fault(
                    where, spec, value,
                    "dim %d is %d, but %s uses a dim that is not bound" % (pos, size, dim.expr))
            if size != expected:
                raise self._shape_fault(
                    where, spec, value, "dim %d is %d, but %s = %s" % (pos, size, dim.expr, expected))

