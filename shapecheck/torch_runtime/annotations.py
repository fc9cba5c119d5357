"""Reading jaxtyping annotations into what ``@check`` compiles: dims, dtypes, optionality.

jaxtyping parses its dim strings when the annotation is built (``Float[Tensor, "b c"]`` carries
``.dim_str``, ``.dims`` and ``.dtypes``), so this module reads that parse rather than parsing
again: the checker then means exactly what jaxtyping means by the annotation. Annotations that
are not jaxtyping arrays of torch tensors give ``None`` and are left to beartype.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import Any, Optional

import torch

FIXED = "fixed"
NAMED = "named"
ANONYMOUS = "anonymous"
VARIADIC = "variadic"
SYMBOLIC = "symbolic"

_SYMBOL_BUILTINS = {"__builtins__": {"min": min, "max": max, "abs": abs}}


class DimSpec:
    """One dim of an annotation: ``kind`` (fixed, named, anonymous, variadic, symbolic),
    ``name`` (named and named variadic dims), ``size`` (fixed), ``broadcastable`` (``#``),
    ``expr`` and ``code`` (symbolic: the expression text and its compiled form)."""

    __slots__ = ("kind", "name", "size", "broadcastable", "expr", "code")

    def __init__(self, kind: str, name: Optional[str] = None, size: Optional[int] = None,
                 broadcastable: bool = False, expr: Optional[str] = None) -> None:
        self.kind = kind
        self.name = name
        self.size = size
        self.broadcastable = broadcastable
        self.expr = expr
        self.code = compile(expr, "<dim %s>" % expr, "eval") if expr is not None else None

    def text(self) -> str:
        """The dim as written in a jaxtyping string."""
        mark = "#" if self.broadcastable else ""
        if self.kind == FIXED:
            return mark + str(self.size)
        if self.kind == NAMED:
            return mark + str(self.name)
        if self.kind == SYMBOLIC:
            return mark + str(self.expr)
        if self.kind == VARIADIC:
            return "*" + mark + self.name if self.name else "..."
        return "_"


class TensorSpec:
    """What one annotation asks of a tensor.

    ``text`` (the annotation as written, e.g. ``Float[Tensor, 'b c']``), ``dims``,
    ``variadic`` (index of the ``*name``/``...`` dim or ``None``), ``dtypes`` (a frozenset of
    torch dtypes, or ``None`` for any), ``dtype_text`` (``Float`` and its dtype names, for
    messages), ``optional`` (``None`` is accepted too).
    """

    __slots__ = ("text", "dims", "variadic", "dtypes", "dtype_text", "optional", "array_type")

    def __init__(self, text: str, dims: list, dtypes: Optional[frozenset], dtype_text: str,
                 optional: bool = False, array_type: type[torch.Tensor] = torch.Tensor) -> None:
        self.text = text
        self.dims = dims
        self.variadic = next((i for i, d in enumerate(dims) if d.kind == VARIADIC), None)
        self.dtypes = dtypes
        self.dtype_text = dtype_text
        self.optional = optional
        self.array_type = array_type

    @property
    def prefix(self) -> list:
        """The dims before the variadic one (all dims when there is none)."""
        return self.dims if self.variadic is None else self.dims[: self.variadic]

    @property
    def suffix(self) -> list:
        """The dims after the variadic one."""
        return [] if self.variadic is None else self.dims[self.variadic + 1:]

    @property
    def min_rank(self) -> int:
        """The fewest dims a fitting tensor has (its exact rank without a variadic dim)."""
        return len(self.dims) - (0 if self.variadic is None else 1)

    def may_be_scalar(self) -> bool:
        """True when a 0-d tensor can fit."""
        return self.min_rank == 0

    def pattern(self) -> str:
        """The dims as a shape: ``(b, c)``, ``(*batch, 3)``."""
        parts = [d.text() for d in self.dims]
        if len(parts) == 1 and self.variadic is None:
            return "(" + parts[0] + ",)"
        return "(" + ", ".join(parts) + ")"


def _convert_dim(dim: Any) -> Optional[DimSpec]:
    """jaxtyping's parsed dim object to a DimSpec; ``None`` for kinds the checker leaves alone
    (pytree paths)."""
    kind = type(dim).__name__
    broadcastable = bool(getattr(dim, "broadcastable", False))
    if getattr(dim, "treepath", False):
        return None
    if kind == "_FixedDim":
        return DimSpec(FIXED, size=int(dim.size), broadcastable=broadcastable)
    if kind == "_NamedDim":
        return DimSpec(NAMED, name=dim.name, broadcastable=broadcastable)
    if kind == "_NamedVariadicDim":
        return DimSpec(VARIADIC, name=dim.name, broadcastable=broadcastable)
    if kind == "_SymbolicDim":
        if not isinstance(dim.elem, str) or "{" in dim.elem:
            return None
        try:
            return DimSpec(SYMBOLIC, broadcastable=broadcastable, expr=dim.elem)
        except SyntaxError:
            return None
    if kind == "_AnonymousDim":
        return DimSpec(ANONYMOUS)
    if kind == "_AnonymousVariadicDim":
        return DimSpec(VARIADIC)
    return None


@functools.lru_cache(maxsize=None)
def _torch_dtypes() -> tuple:
    """Every torch dtype, once each."""
    seen = []
    for name in dir(torch):
        value = getattr(torch, name, None)
        if isinstance(value, torch.dtype) and value not in seen:
            seen.append(value)
    return tuple(seen)


def dtype_name(dtype: Any) -> str:
    """A torch dtype's name the way jaxtyping reads it: ``float32``."""
    return repr(dtype).rsplit(".", 1)[-1]


def _allowed_dtypes(wanted: Any) -> Optional[frozenset]:
    """The torch dtypes matching jaxtyping's ``.dtypes`` (names or regex patterns)."""
    if not isinstance(wanted, (tuple, list)):
        return None
    allowed = set()
    for dtype in _torch_dtypes():
        name = dtype_name(dtype)
        for item in wanted:
            if (isinstance(item, str) and item == name) or (
                isinstance(item, re.Pattern) and item.match(name)
            ):
                allowed.add(dtype)
                break
    return frozenset(allowed)


def is_array_annotation(hint: Any) -> bool:
    """True for a jaxtyping array annotation (``Float[Tensor, "b c"]``), whatever the array type."""
    return isinstance(hint, type) and hasattr(hint, "dim_str") and hasattr(hint, "array_type") \
        and hasattr(hint, "dims")


def tensor_spec(hint: Any) -> Optional[TensorSpec]:
    """The :class:`TensorSpec` of a jaxtyping annotation of torch tensors, also under
    ``Optional[...]``/``X | None``; ``None`` for anything else."""
    optional = False
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(hint)) != 2:
            return None
        hint = args[0]
        optional = True
    if not is_array_annotation(hint):
        return None
    array_type = hint.array_type
    if not (isinstance(array_type, type) and issubclass(array_type, torch.Tensor)):
        return None
    dims = []
    for dim in hint.dims:
        spec = _convert_dim(dim)
        if spec is None:
            return None
        dims.append(spec)
    if sum(1 for d in dims if d.kind == VARIADIC) > 1:
        return None
    kind = getattr(getattr(hint, "dtype", None), "__name__", "Shaped")
    allowed = _allowed_dtypes(hint.dtypes)
    if allowed is None:
        dtype_text = kind
    else:
        names = sorted(dtype_name(d) for d in allowed)
        dtype_text = "%s: one of %s" % (kind, ", ".join(names)) if len(names) > 1 else \
            "%s: %s" % (kind, names[0] if names else "no torch dtype")
    text = getattr(hint, "__name__", repr(hint))
    if optional:
        text += " | None"
    return TensorSpec(text, dims, allowed, dtype_text, optional, array_type)


def tuple_specs(hint: Any) -> Optional[list]:
    """For ``tuple[A, B, ...]`` whose items are all tensor annotations: their specs."""
    if typing.get_origin(hint) is not tuple:
        return None
    args = typing.get_args(hint)
    if not args or Ellipsis in args:
        return None
    specs = [tensor_spec(a) for a in args]
    if any(s is None for s in specs):
        return None
    return specs


@functools.lru_cache(maxsize=1024)
def dims_spec(text: str) -> TensorSpec:
    """A :class:`TensorSpec` (any dtype) for a dim string as ``assert_shape`` takes it."""
    from jaxtyping import Shaped

    try:
        hint = Shaped[torch.Tensor, text]
    except Exception as err:
        raise ValueError("shapecheck: cannot read the dims %r: %s" % (text, err)) from None
    spec = tensor_spec(hint)
    if spec is None:
        raise ValueError("shapecheck: the dims %r use a form assert_shape does not support" % text)
    spec.text = repr(text)
    return spec


def eval_symbolic(dim: DimSpec, bindings: dict) -> Optional[int]:
    """The value of a symbolic dim under ``bindings``; ``None`` when a name is not bound yet."""
    assert dim.code is not None, "only a symbolic dim has an expression"
    try:
        return eval(dim.code, _SYMBOL_BUILTINS, bindings)
    except NameError:
        return None
