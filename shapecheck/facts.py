"""What the linter knows about the value of one expression.

A :class:`Fact` is immutable. Every field may be unknown (``None``), and unknown never flags: a
rule acts only on facts it can stand behind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from shapecheck.shapes import Shape

# kind
TENSOR = "tensor"
MODULE = "module"  # an nn.Module instance: .cuda()/.to() on it work in place
DEVICE = "device"  # a torch.device value (or a device string bound to a name)
OPTIMIZER = "optimizer"
TUPLE = "tuple"  # a (values, indices) result of max/min/sort/topk...

# layout
CONTIGUOUS = "contiguous"
NON_CONTIGUOUS = "non-contiguous"

# device values: "cpu", "cuda", "mps", "maybe-cuda" (cuda when available, else cpu),
# or "same-as:NAME".

# grad
LEAF_REQUIRES_GRAD = "leaf-requiring-grad"
NON_LEAF = "non-leaf"
NO_GRAD = "no-grad"


@dataclass(frozen=True)
class Fact:
    """The facts about one value. ``None`` in any field means unknown."""

    kind: Optional[str] = None
    shape: Optional[Shape] = None
    layout: Optional[str] = None
    #: exact strides in elements, when the shape is fully known and the layout was simulated
    strides: Optional[tuple[int, ...]] = None
    device: Optional[str] = None
    grad: Optional[str] = None
    #: "float", "int", "bool", "complex", or None
    dtype_kind: Optional[str] = None

    def with_(self, **changes) -> "Fact":
        """A copy with some fields changed."""
        return replace(self, **changes)

    @property
    def is_tensor(self) -> bool:
        """True when the value is known to be a tensor."""
        return self.kind == TENSOR


UNKNOWN = Fact()


def join(a: Fact, b: Fact) -> Fact:
    """The facts that hold on both paths: fields that differ become unknown."""
    if a == b:
        return a
    return Fact(
        kind=a.kind if a.kind == b.kind else None,
        shape=a.shape if a.shape == b.shape else None,
        layout=a.layout if a.layout == b.layout else None,
        strides=a.strides if a.strides == b.strides else None,
        device=a.device if a.device == b.device else None,
        grad=a.grad if a.grad == b.grad else None,
        dtype_kind=a.dtype_kind if a.dtype_kind == b.dtype_kind else None,
    )
