"""The runtime API: checked einsum, signature checks, shape assertions, broadcasting.

``import shapecheck`` does not import torch; this module does, and ``shapecheck.einsum`` and the
other names below reach it lazily through the package's ``__getattr__``.

- :func:`einsum` (``shapecheck.torch_runtime.einsum``): validates, then runs a cached plan;
- :func:`check` and :func:`assert_shape` (``shapecheck.torch_runtime.check``): jaxtyping annotations
  compiled into a per-call check that binds dims across arguments and the return value;
- :func:`broadcast_shapes`: ``torch.broadcast_shapes`` with the algebra's explanation.
"""

from __future__ import annotations

from typing import Any, cast

try:
    import torch
except ImportError as exc:  # the linter installs without torch; the runtime API needs it
    raise ImportError(
        "shapecheck's runtime API (shapecheck.einsum, check, assert_shape, broadcast_shapes) needs "
        "PyTorch, which is not installed: install the `runtime` extra, e.g. "
        "`pip install 'torch-shapecheck[runtime]'` (see docs/runtime.md for a CPU-only torch)",
        name=exc.name,
    ) from exc

from shapecheck import broadcast as _broadcast
from shapecheck.errors import (
    BroadcastError, DeviceMismatchError, DtypeMismatchError, EinsumOperandCountError,
    EinsumShapeError, EinsumSyntaxError, ShapeCheckError, SignatureShapeError,
)
from shapecheck.torch_runtime.check import (
    UnresolvedAnnotationWarning, assert_shape, check, current_bindings, disabled,
)
from shapecheck.torch_runtime.einsum import clear_cache, einsum, plan_source
from shapecheck.shapes import Shape

__all__ = [
    "einsum", "check", "assert_shape", "broadcast_shapes", "plan_source", "clear_cache",
    "current_bindings", "disabled", "UnresolvedAnnotationWarning",
    "ShapeCheckError", "EinsumSyntaxError", "EinsumOperandCountError", "EinsumShapeError",
    "BroadcastError", "DeviceMismatchError", "DtypeMismatchError", "SignatureShapeError",
]


def broadcast_shapes(*shapes: Any):
    """The shape that ``shapes`` broadcast to; each argument is a tensor, a ``torch.Size``, a
    tuple of dims, an int (a 1-d shape, as torch allows) or a :class:`~shapecheck.shapes.Shape`.

    Returns a ``torch.Size`` when every dim is a known int (as ``torch.broadcast_shapes`` does),
    else the algebra's :class:`~shapecheck.shapes.Shape`. Raises
    :class:`~shapecheck.errors.BroadcastError` (a ``RuntimeError``) with the shapes
    right-aligned in a table and the failing axis marked.
    """
    converted = []
    for shape in shapes:
        if isinstance(shape, torch.Tensor):
            converted.append(tuple(shape.shape))
        elif isinstance(shape, torch.Size):
            converted.append(tuple(shape))
        else:
            converted.append(shape)
    result = _broadcast.broadcast_shapes(*converted)
    if isinstance(result, Shape) and result.is_fully_known:
        return torch.Size(cast(tuple[int, ...], result.dims))
    return result
