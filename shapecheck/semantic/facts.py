"""What the linter knows about the value of one expression.

A :class:`Fact` is immutable. Every field may be unknown (``None``), and unknown never flags: a
rule acts only on facts it can stand behind.

Fields (all optional):

- ``kind``: a :class:`Kind`: ``TENSOR``, ``MODULE`` (an ``nn.Module`` instance), ``DEVICE`` (a
  ``torch.device`` or a device string), ``OPTIMIZER``, ``TUPLE`` (the ``(values, indices)``
  pair of ``max``/``min``/``sort``/``topk``...), ``SIZE`` (a ``torch.Size``: ``x.shape``,
  ``x.size()``; ``shape`` holds the sizes it lists), ``INT``/``FLOAT``/``STR``/``BOOL``
  (Python scalars).
- ``shape``: a :class:`shapecheck.shapes.Shape` (ints, jaxtyping symbols, ``None`` dims).
- ``layout``: a :class:`Layout`: ``CONTIGUOUS``, ``NON_CONTIGUOUS``.
- ``strides``: exact strides in elements, when the shape is fully known and simulated.
- ``perm``: for a tensor of known rank reached from a plain tensor through transposes,
  permutes and expands: for each dim, its position in that base tensor (``-1`` for a dim that
  ``expand`` broadcast, stride 0). Two neighbouring dims ``i, i+1`` can be merged by ``view``
  when ``perm[i+1] == perm[i] + 1`` (or both are ``-1``), whatever the sizes. For a tensor whose
  rank is only bounded from below (``Shape`` with its unknown run at the end), the positions of
  the leading dims; the run lies innermost, in order (see ``semantic.bounded_moves``).
- ``moved_by``: the op that moved the dims (``".transpose(1, 2)"``), for messages.
- ``device``: a :class:`Device` (``CPU``, ``CUDA``, ``MPS``, ``META``, ``MAYBE_CUDA``: cuda when
  available, else cpu, as ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``), or
  :class:`SameDeviceAs` (``x.device`` where ``x``'s device is unknown).
- ``grad``: a :class:`Grad`: ``LEAF_REQUIRES_GRAD``, ``NON_LEAF`` (computed from a tensor that
  requires grad, with grad mode on), ``NO_GRAD`` (does not require grad).
- ``dtype_kind``: a :class:`DtypeKind`: ``FLOAT``, ``INT``, ``BOOL``, ``COMPLEX``.
- ``value``: a known Python constant (``int``, ``float``, ``str``, ``bool``, or a tuple of them).
- ``dim``: for a Python int that is a size: its value (``int``) or a jaxtyping symbol (``str``).
- ``qual``: for modules and optimizers, the qualified name of the class that built it
  (``"torch.nn.Linear"``, or a class of this file).
- ``features``: for an ``nn.Linear``: ``(in_features, out_features)`` as dims; for an
  ``nn.RNN``/``LSTM``/``GRU`` built with ``batch_first=False``: ``(input_size, hidden_size)``.
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
- ``maybe_pair``: on a value of unknown kind, ``elems`` is the ``(values, indices)`` pair it holds
  if it is a tensor's (``x.max(1)`` with ``x`` unknown: only ``.values``/``.indices`` read it).
- ``no_gradient_from``: the value comes from an op that gives its input no useful gradient, said
  as messages say it (``"`torch.argmax`"``, ``"a comparison"``, ``"the indices of `max`"``),
  directly or through casts, moves and views (:mod:`~shapecheck.semantic.no_gradient`).
- ``parameter_loop``: a :class:`ParamLoop`: the variable of ``for p in m.parameters()`` (or of
  ``named_parameters()``): ``MODULE`` when ``m`` is known to be a module, ``GUESSED`` when only
  the method's name says ``p`` is a parameter.
- ``placed_by``: for a module that the file moves to a device (and its parameters, buffers and
  submodules, in its methods): where the file moves it, for messages
  (:mod:`~shapecheck.semantic.module_state`); a :class:`Noted` text whose ``node`` is the move.
- ``updates``: for an optimizer: the dotted names of the modules whose parameters it updates,
  when its construction names them (``optim.Adam(D.parameters())``: ``{"D"}``).
- ``layers``: for an ``nn.Sequential`` of ``torch.nn`` layers given one by one: the facts of
  its layers, in order (a call runs them one after the other).
- ``mapped``: for a dict the function fills by item assignment only
  (:mod:`~shapecheck.semantic.dict_values`): ``()`` while it is empty, else the one-element tuple
  of the join of every value stored in it (what any item read gives).

The words of each closed vocabulary are :class:`Word` enums that compare, hash, print and
serialise as their text (``Kind.TENSOR == "tensor"``, ``f"{CPU}"`` is ``cpu``).

How two paths join is declared with each field (``_fact(join_rule)``): :func:`join` and
:meth:`Fact.same` are derived from those declarations, so a new field is one line here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from operator import itemgetter
from typing import Any, Callable, Optional, Union

from shapecheck.semantic.frozen_init import fill_directly
from shapecheck.shapes import Dim, Shape


class Word(str, Enum):
    """A word of a closed vocabulary that is its text for ``==``, ``hash``, ``str()``,
    ``format()`` and JSON (what Python 3.11's ``StrEnum`` does; 3.10 has none)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class Kind(Word):
    """What a value is."""

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


class Layout(Word):
    """How a tensor's elements lie in memory."""

    CONTIGUOUS = "contiguous"
    NON_CONTIGUOUS = "non-contiguous"


class Device(Word):
    """Where a tensor (or a module's parameters) lives."""

    CPU = "cpu"
    CUDA = "cuda"
    MPS = "mps"
    MAYBE_CUDA = "maybe-cuda"  # cuda when available, else cpu
    META = "meta"  # shapes without data: mixing it with any other device raises


class Grad(Word):
    """Whether a tensor requires grad, and how."""

    LEAF_REQUIRES_GRAD = "leaf-requiring-grad"
    NON_LEAF = "non-leaf"
    NO_GRAD = "no-grad"


class DtypeKind(Word):
    """The family of a tensor's dtype."""

    FLOAT = "float"
    INT = "int"
    BOOL = "bool"
    COMPLEX = "complex"


class ParamLoop(Word):
    """How a loop variable is known to be a parameter: by a loop over ``.parameters()`` of..."""

    MODULE = "module"  # ... an object known to be a module
    GUESSED = "guessed"  # ... an object not known to be one (the method's name alone says it)


class Noted(str):
    """A text of a fact for messages (``placed_by``) that also holds ``node``, the code it
    names, for the related line of a finding. It compares, hashes, joins and pickles as its text
    alone, so two facts that differ only in the node are the same fact; where a join keeps the
    text of the first path, it keeps that path's node."""

    node: Any

    def __new__(cls, text: str, node: Any = None) -> "Noted":
        noted = super().__new__(cls, text)
        noted.node = node
        return noted

    def __reduce__(self) -> tuple:
        return (str, (str(self),))


@dataclass(frozen=True)
class SameDeviceAs:
    """The device of the value named ``name`` (``x.device``, ``self.w.device``), itself unknown:
    two values on ``SameDeviceAs("x")`` share a device, whatever it is."""

    name: str


#: what the ``device`` field holds
DeviceValue = Union[Device, SameDeviceAs]

# The names consumers import (each is the enum member, so it is also its text).
TENSOR = Kind.TENSOR
MODULE = Kind.MODULE
DEVICE = Kind.DEVICE
OPTIMIZER = Kind.OPTIMIZER
TUPLE = Kind.TUPLE
SIZE = Kind.SIZE
INT = Kind.INT
FLOAT = Kind.FLOAT
STR = Kind.STR
BOOL = Kind.BOOL
CONTIGUOUS = Layout.CONTIGUOUS
NON_CONTIGUOUS = Layout.NON_CONTIGUOUS
CPU = Device.CPU
CUDA = Device.CUDA
MPS = Device.MPS
MAYBE_CUDA = Device.MAYBE_CUDA
META = Device.META
LEAF_REQUIRES_GRAD = Grad.LEAF_REQUIRES_GRAD
NON_LEAF = Grad.NON_LEAF
NO_GRAD = Grad.NO_GRAD


@dataclass(frozen=True)
class Reduction:
    """What a reduction without ``keepdim`` did: which tensor, which axes, written how.

    ``source`` is the :class:`Fact` object of the reduced tensor at that point (compared by
    identity: a rebinding of the name makes a new object), ``source_name`` its dotted name
    (``x``, ``self.w``) or ``None``, ``axes`` the reduced axes as written (may be negative),
    ``node`` the reduction call (a libcst node: ``ctx.source(node)`` is ``x.mean(dim=1)``),
    ``default_of`` the parameter whose default value gave the axes (``def f(x, dim=-1)``), else
    ``None``. ``alternatives``: when the dim is a name the code sets to one of several literals
    (``dim = (1, 2) if c else (2, 3)``), every axes it may hold (``axes`` is the first); else ``()``.
    """

    source: "Fact"
    source_name: Optional[str]
    axes: tuple[int, ...]
    node: Any
    default_of: Optional[str] = None
    alternatives: tuple[tuple[int, ...], ...] = ()


# ---------------------------------------------------------------------------- join rules
#: how one field joins: (its value on one path, on the other) -> the value that holds on both
JoinRule = Callable[[Any, Any], Any]
#: what of a field's value :meth:`Fact.same` compares
KeyRule = Callable[[Any], Any]


def equal(x: Any, y: Any) -> Any:
    """Join rule: the value when both paths agree, else unknown."""
    return x if x == y else None


def equal_and_same_type(x: Any, y: Any) -> Any:
    """Join rule for constants: ``1``, ``1.0`` and ``True`` are equal but not the same value."""
    return x if x == y and type(x) is type(y) else None


def both(x: bool, y: bool) -> bool:
    """Join rule for a flag that holds only when it holds on both paths."""
    return x and y


def join_device(x: Optional[DeviceValue], y: Optional[DeviceValue]) -> Optional[DeviceValue]:
    """Join rule for devices: ``cuda`` on one path and ``cpu`` on the other is ``maybe-cuda``."""
    if x == y:
        return x
    if x in _CUDA_OR_CPU and y in _CUDA_OR_CPU:
        return MAYBE_CUDA
    return None


_CUDA_OR_CPU = frozenset({CPU, CUDA, MAYBE_CUDA})


def join_shape(x: Optional[Shape], y: Optional[Shape]) -> Optional[Shape]:
    """Join rule for shapes: two shapes of the same known rank keep it, and the sizes both
    paths agree on (``(n, 10)`` and ``(n, 20)`` join to ``(n, ?)``)."""
    if x == y:
        return x
    if x is None or y is None or x.rest_at is not None or y.rest_at is not None or len(x.dims) != len(y.dims):
        return None
    return Shape(tuple(a if a == b else None for a, b in zip(x.dims, y.dims)))


def join_mapped(xs: Optional[tuple[Fact, ...]], ys: Optional[tuple[Fact, ...]]) -> Optional[tuple[Fact, ...]]:
    """Join rule for the values of a dict: an empty dict (``()``) adds none; else the join of both."""
    if xs is None or ys is None:
        return None
    if not xs or not ys:
        return xs or ys
    return (join(xs[0], ys[0]),)


def join_each(xs: Optional[tuple[Fact, ...]], ys: Optional[tuple[Fact, ...]]) -> Optional[tuple[Fact, ...]]:
    """Join rule for sequences of facts of the same known length: element by element."""
    if xs is None or ys is None or len(xs) != len(ys):
        return None
    return tuple(join(x, y) for x, y in zip(xs, ys))


@dataclass(frozen=True)
class KeptWith:
    """Join rule for a field that describes another one (``moved_by`` tells how ``perm`` came
    about): the first path's value, kept while ``field_name`` is the same on both paths; with
    ``agreed``, only when the value itself is the same on both paths too (``strides`` hold only
    with the ``shape`` they were computed for)."""

    field_name: str
    agreed: bool = False


def _reduction_key(r: Optional[Reduction]) -> Optional[tuple[int, tuple[int, ...]]]:
    return (id(r.source), r.axes) if r is not None else None


def _layers_key(layers: Optional[tuple["Fact", ...]]) -> object:
    """What :meth:`Fact.same` compares of a ``Sequential``'s layers: what each one says."""
    return None if layers is None else tuple(value_key(f) for f in layers)


def join_layers(x: Optional[tuple["Fact", ...]], y: Optional[tuple["Fact", ...]]) -> Optional[tuple["Fact", ...]]:
    """Join rule for a ``Sequential``'s layers: the first path's when both say the same of each."""
    return x if _layers_key(x) == _layers_key(y) else None


def _fact(join: Union[JoinRule, KeptWith], same: Optional[KeyRule] = None, default: Any = None) -> Any:
    """A field of :class:`Fact` with how it joins and what :meth:`Fact.same` compares (the value
    itself when ``same`` is ``None``)."""
    return field(default=default, metadata={"join": join, "same": same})


@dataclass(frozen=True, eq=False)
class Fact:
    """The facts about one value. ``None`` in any field means unknown.

    ``==`` is identity, which tells two bindings apart; :meth:`same` compares field by field.
    """

    kind: Optional[Kind] = _fact(equal)
    shape: Optional[Shape] = _fact(join_shape)
    layout: Optional[Layout] = _fact(equal)
    #: exact strides in elements, when the shape is fully known and the layout was simulated
    strides: Optional[tuple[int, ...]] = _fact(KeptWith("shape", agreed=True))
    perm: Optional[tuple[int, ...]] = _fact(equal)
    moved_by: Optional[str] = _fact(KeptWith("perm"))
    device: Optional[DeviceValue] = _fact(join_device)
    grad: Optional[Grad] = _fact(equal)
    dtype_kind: Optional[DtypeKind] = _fact(equal)
    value: Any = _fact(equal_and_same_type)
    dim: Dim = _fact(equal)
    qual: Optional[str] = _fact(equal)
    features: Optional[tuple[Dim, Dim]] = _fact(equal)
    #: for a module: the names of the parameters it holds directly, when known
    params: Optional[tuple[str, ...]] = _fact(equal)
    #: for a module: whether it holds parameters that require grad
    trainable: Optional[bool] = _fact(equal)
    reduction: Optional[Reduction] = _fact(equal, same=_reduction_key)
    is_scalar_cpu: bool = _fact(both, default=False)
    #: the facts of each element, for a sequence of known length (a tuple literal, the
    #: ``(values, indices)`` pair, the unpacked sizes of ``x.shape``)
    elems: Optional[tuple["Fact", ...]] = _fact(join_each)
    #: ``elems`` is the ``(values, indices)`` pair of a value of unknown kind
    maybe_pair: bool = _fact(both, default=False)
    #: the op without useful gradient that the value comes from, as messages name it
    no_gradient_from: Optional[str] = _fact(equal)
    #: the variable of a loop over ``.parameters()``, and whether its owner is known to be a module
    parameter_loop: Optional[ParamLoop] = _fact(equal)
    #: for a module the file moves, and the tensors that move with it: why ``device`` says where
    #: it is, as messages say it (``"`Emb` is moved to CUDA at line 14"``)
    placed_by: Optional[str] = _fact(equal)
    #: for a dict filled by item assignment only: ``()`` when empty, else ``(the join of its values,)``
    mapped: Optional[tuple["Fact", ...]] = _fact(join_mapped)
    #: for a ``torch.nn`` loss module built with its reduction off: its construction as messages
    #: name it (``'nn.MSELoss(reduction="none")'``); its calls give one loss per element
    unreduced: Optional[str] = _fact(equal)
    #: for an optimizer: the dotted names of the modules whose parameters its ``step()`` changes
    #: in place, when its construction names them (``optim.Adam(D.parameters())``)
    updates: Optional[frozenset[str]] = _fact(equal)
    #: for an ``nn.Sequential`` built from ``torch.nn`` layers given one by one: their facts, in order
    layers: Optional[tuple["Fact", ...]] = _fact(join_layers, same=_layers_key)

    def with_(self, **changes: Any) -> "Fact":
        """A copy with some fields changed."""
        copy = object.__new__(Fact)
        # a frozen dataclass without __post_init__: copying its __dict__ is what replace() does
        state = copy.__dict__
        state.update(self.__dict__)
        state.update(changes)
        if len(state) != len(_FIELD_NAMES):
            raise TypeError(f"Fact has no field {sorted(changes.keys() - _FIELD_NAMES)[0]!r}")
        return copy

    def same(self, other: "Fact") -> bool:
        """True when both facts say the same thing, field by field."""
        if self is other:
            return True
        mine, theirs = self.__dict__, other.__dict__
        if not _same_as_they_are(mine) == _same_as_they_are(theirs):
            return False
        for name, key in _SAME_BY_KEY:
            if not key(mine[name]) == key(theirs[name]):
                return False
        return True

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


def _first(x: Any, y: Any) -> Any:
    """:class:`KeptWith` before the check of the field it is kept with."""
    return x


# Read once at import: the hot paths below loop over these tables, never over fields().
_FIELDS = fields(Fact)
_FIELD_NAMES = frozenset(f.name for f in _FIELDS)
#: a fact's fields, in field order, from its ``__dict__``
_all_values = itemgetter(*(f.name for f in _FIELDS))
#: the join rule of each field, in field order (``None`` for :func:`equal`)
_JOINS: tuple[Optional[JoinRule], ...] = tuple(
    None if f.metadata["join"] is equal
    else (None if f.metadata["join"].agreed else _first) if isinstance(f.metadata["join"], KeptWith)
    else f.metadata["join"]
    for f in _FIELDS
)
#: (position, the field it is kept with) of each field joined by :class:`KeptWith`
_KEPT_WITH: tuple[tuple[int, str], ...] = tuple(
    (i, f.metadata["join"].field_name) for i, f in enumerate(_FIELDS) if isinstance(f.metadata["join"], KeptWith)
)
#: the fields that :meth:`Fact.same` compares as they are
_same_as_they_are = itemgetter(*(f.name for f in _FIELDS if f.metadata["same"] is None))
#: (field name, key rule) of the fields that :meth:`Fact.same` compares through a key
_SAME_BY_KEY: tuple[tuple[str, KeyRule], ...] = tuple(
    (f.name, f.metadata["same"]) for f in _FIELDS if f.metadata["same"] is not None
)

# the generated signature stays what type checkers read
fill_directly(Fact)

UNKNOWN = Fact()


def value_key(f: Fact) -> object:
    """What ``f`` says, field by field, as a dict key (its identity when a field cannot be hashed)."""
    values = _all_values(f.__dict__)
    try:
        hash(values)
    except TypeError:
        return id(f)
    return values


def fresh() -> Fact:
    """A new unknown fact: unknown like :data:`UNKNOWN`, but a distinct binding."""
    return Fact()


def join(a: Fact, b: Fact) -> Fact:
    """The facts that hold on both paths: each field joined by the rule declared with it."""
    if a is b or a.same(b):
        return a
    mine, theirs = a.__dict__, b.__dict__
    values: list[Any] = [
        (x if x == y else None) if rule is None else rule(x, y)
        for x, y, rule in zip(_all_values(mine), _all_values(theirs), _JOINS)
    ]
    for i, other in _KEPT_WITH:
        if not mine[other] == theirs[other]:
            values[i] = None
    return Fact(*values)
