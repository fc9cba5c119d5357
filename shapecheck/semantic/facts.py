"""What the linter knows about the value of one expression.

A :class:`Fact` is immutable. Every field may be unknown (``None``), and unknown never flags: a
rule acts only on facts it can stand behind.

Fields (all optional):

- ``kind``: ``"tensor"``, ``"module"`` (an ``nn.Module`` instance), ``"device"`` (a
  ``torch.device`` or a device string), ``"optimizer"``, ``"tuple"`` (the ``(values, indices)``
  pair of ``max``/``min``/``sort``/``topk``...), ``"size"`` (a ``torch.Size``: ``x.shape``,
  ``x.size()``; ``shape`` holds the sizes it lists), ``"int"``/``"float"``/``"str"``/``"bool"``
  (Python scalars).
- ``shape``: a :class:`shapecheck.shapes.Shape` (ints, jaxtyping symbols, ``None`` dims).
- ``layout``: ``"contiguous"``, ``"non-contiguous"``.
- ``strides``: exact strides in elements, when the shape is fully known and simulated.
- ``perm``: for a tensor of known rank reached from a plain tensor through transposes,
  permutes and expands: for each dim, its position in that base tensor (``-1`` for a dim that
  ``expand`` broadcast, stride 0). Two neighbouring dims ``i, i+1`` can be merged by ``view``
  when ``perm[i+1] == perm[i] + 1`` (or both are ``-1``), whatever the sizes.
- ``moved_by``: the op that moved the dims (``".transpose(1, 2)"``), for messages.
- ``device``: ``"cpu"``, ``"cuda"``, ``"mps"``, ``"maybe-cuda"`` (cuda when available, else cpu:
  ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``), or ``"same-as:NAME"``.
- ``grad``: ``"leaf-requiring-grad"``, ``"non-leaf"`` (computed from a tensor that requires
  grad, with grad mode on), ``"no-grad"`` (does not require grad).
- ``dtype_kind``: ``"float"``, ``"int"``, ``"bool"``, ``"complex"``.
- ``value``: a known Python constant (``int``, ``float``, ``str``, ``bool``, or a tuple of them).
- ``dim``: for a Python int that is a size: its value (``int``) or a jaxtyping symbol (``str``).
- ``qual``: for modules and optimizers, the qualified name of the class that built it
  (``"torch.nn.Linear"``, or a class of this file); ``"pair"`` on a value of unknown kind that
  holds a ``(values, indices)`` pair if it is a tensor's (``x.max(1)`` with ``x`` unknown: only
  ``.values``/``.indices`` read it).
- ``features``: for an ``nn.Linear``: ``(in_features, out_features)`` as dims.
- ``params``: for a module: the names of the parameters it holds directly that ``model.<name>``
  reads as tensors, when known (``("weight", "bias")`` for ``nn.Linear(3, 2)``, ``("weight",)``
  with ``bias=False``, ``()`` for ``nn.ReLU()``). A module's ``device`` is set only when it is
  known to hold parameters or buffers (a module that holds none has no device); its ``grad`` is
  always unknown (``grad`` is about tensors).
- ``trainable``: for a module: ``True`` when it holds parameters that require grad (calling it
  with grad mode on gives a ``NON_LEAF`` tensor), ``False`` when it holds none that does
  (``nn.ReLU()``, after ``model.requires_grad_(False)``), ``None`` when unknown.
- ``reduction``: for a reduction without ``keepdim``: a :class:`Reduction` saying what it reduced.
- ``is_scalar_cpu``: the tensor is 0-dim on the CPU (mixes legally with CUDA tensors).
- ``elems``: the facts of each element of a sequence of known length.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from shapecheck.shapes import Dim, Shape

# kind
TENSOR = "tensor"
MODULE = "module"  # an nn.Module instance: .cuda()/.to() on it work in place
DEVICE = "device"  # a torch.device value (or a device string bound to a name)
OPTIMIZER = "optimizer"
TUPLE = "tuple"  # a (values, indices) result of max/min/sort/topk...
SIZE = "size"  # a torch.Size (x.shape, x.size())
INT = "int"
FLOAT = "float"
STR = "str"
BOOL = "bool"

# layout
CONTIGUOUS = "contiguous"
NON_CONTIGUOUS = "non-contiguous"

# device values: "cpu", "cuda", "mps", "maybe-cuda" (cuda when available, else cpu),
# or "same-as:NAME".
CPU = "cpu"
CUDA = "cuda"
MPS = "mps"
MAYBE_CUDA = "maybe-cuda"

# grad
LEAF_REQUIRES_GRAD = "leaf-requiring-grad"
NON_LEAF = "non-leaf"
NO_GRAD = "no-grad"


@dataclass(frozen=True)
class Reduction:
    """What a reduction without ``keepdim`` did: which tensor, which axes, written how.

    ``source`` is the :class:`Fact` object of the reduced tensor at that point (compared by
    identity: a rebinding of the name makes a new object), ``source_name`` its dotted name
    (``x``, ``self.w``) or ``None``, ``axes`` the reduced axes as written (may be negative),
    ``node`` the reduction call (a libcst node: ``ctx.source(node)`` is ``x.mean(dim=1)``).
    """

    source: "Fact"
    source_name: Optional[str]
    axes: tuple[int, ...]
    node: Any


@dataclass(frozen=True, eq=False)
class Fact:
    """The facts about one value. ``None`` in any field means unknown.

    Equality is field by field (``same``); ``is`` tells two bindings apart.
    """

    kind: Optional[str] = None
    shape: Optional[Shape] = None
    layout: Optional[str] = None
    #: exact strides in elements, when the shape is fully known and the layout was simulated
    strides: Optional[tuple[int, ...]] = None
    perm: Optional[tuple[int, ...]] = None
    moved_by: Optional[str] = None
    device: Optional[str] = None
    grad: Optional[str] = None
    #: "float", "int", "bool", "complex", or None
    dtype_kind: Optional[str] = None
    value: Any = None
    dim: Dim = None
    qual: Optional[str] = None
    features: Optional[tuple[Dim, Dim]] = None
    #: for a module: the names of the parameters it holds directly, when known
    params: Optional[tuple[str, ...]] = None
    #: for a module: whether it holds parameters that require grad
    trainable: Optional[bool] = None
    reduction: Optional[Reduction] = None
    is_scalar_cpu: bool = False
    #: the facts of each element, for a sequence of known length (a tuple literal, the
    #: ``(values, indices)`` pair, the unpacked sizes of ``x.shape``)
    elems: Optional[tuple["Fact", ...]] = None

    def with_(self, **changes) -> "Fact":
        """A copy with some fields changed."""
        return replace(self, **changes)

    def same(self, other: "Fact") -> bool:
        """True when both facts say the same thing, field by field."""
        return self is other or _key(self) == _key(other)

    @property
    def is_tensor(self) -> bool:
        """True when the value is known to be a tensor."""
        return self.kind == TENSOR

    @property
    def rank(self) -> Optional[int]:
        """The number of dims when known."""
        return self.shape.rank if self.shape is not None else None

    @property
    def requires_grad(self) -> Optional[bool]:
        """True/False when the grad state is known, else ``None``."""
        if self.grad is None:
            return None
        return self.grad != NO_GRAD


def _key(f: Fact) -> tuple:
    return (
        f.kind, f.shape, f.layout, f.strides, f.perm, f.moved_by, f.device, f.grad,
        f.dtype_kind, f.value, f.dim, f.qual, f.features, f.params, f.trainable, id(f.reduction.source) if f.reduction else None,
        f.reduction.axes if f.reduction else None, f.is_scalar_cpu,
        tuple(id(e) for e in f.elems) if f.elems is not None else None,
    )


UNKNOWN = Fact()


def fresh() -> Fact:
    """A new unknown fact: unknown like :data:`UNKNOWN`, but a distinct binding."""
    return Fact()


def join(a: Fact, b: Fact) -> Fact:
    """The facts that hold on both paths: fields that differ become unknown."""
    if a is b:
        return a
    if a.same(b):
        return a
    device = a.device if a.device == b.device else _join_device(a.device, b.device)
    return Fact(
        kind=a.kind if a.kind == b.kind else None,
        shape=a.shape if a.shape == b.shape else None,
        layout=a.layout if a.layout == b.layout else None,
        strides=a.strides if a.strides == b.strides else None,
        perm=a.perm if a.perm == b.perm else None,
        moved_by=a.moved_by if a.perm == b.perm else None,
        device=device,
        grad=a.grad if a.grad == b.grad else None,
        dtype_kind=a.dtype_kind if a.dtype_kind == b.dtype_kind else None,
        value=a.value if a.value == b.value and type(a.value) is type(b.value) else None,
        dim=a.dim if a.dim == b.dim else None,
        qual=a.qual if a.qual == b.qual else None,
        features=a.features if a.features == b.features else None,
        params=a.params if a.params == b.params else None,
        trainable=a.trainable if a.trainable == b.trainable else None,
        reduction=a.reduction if a.reduction is not None and a.reduction == b.reduction else None,
        is_scalar_cpu=a.is_scalar_cpu and b.is_scalar_cpu,
        elems=_join_elems(a.elems, b.elems),
    )


def _join_elems(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(join(x, y) for x, y in zip(a, b))


def _join_device(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """``cuda`` on one path and ``cpu`` on the other is ``maybe-cuda``; else unknown."""
    if {a, b} in ({CUDA, CPU}, {MAYBE_CUDA, CPU}, {MAYBE_CUDA, CUDA}):
        return MAYBE_CUDA
    return None
