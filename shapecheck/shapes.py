"""Dims and shapes shared by the linter and the runtime layer.

A *dim* is a plain Python value, so that shapes stay cheap to build and compare:

- an ``int``: a known size;
- a ``str``: a named symbol such as ``"batch"`` (two equal symbols are the same size);
- ``None``: unknown.

A :class:`Shape` is a tuple of dims, optionally with one run of an unknown number of dims
(jaxtyping's ``*batch`` or ``...``) at a known position. ``Shape.unknown()`` is a shape of
unknown rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional, Union

Dim = Union[int, str, None]


@dataclass(frozen=True)
class Shape:
    """A tensor shape: ``dims`` plus, when ``rest_at`` is set, an unknown-length run of dims.

    ``rest_at`` is the index in ``dims`` before which the run sits (0: leading dims unknown,
    ``len(dims)``: trailing dims unknown). ``rest_name`` names the run (``"batch"`` for
    ``*batch``) or is ``None`` for an anonymous ``...``.
    """

    dims: tuple[Dim, ...] = ()
    rest_at: Optional[int] = None
    rest_name: Optional[str] = None

    @classmethod
    def of(cls, dims: Iterable[Dim]) -> "Shape":
        """A shape of known rank with the given dims."""
        return cls(tuple(dims))

    @classmethod
    def unknown(cls) -> "Shape":
        """A shape of which nothing is known, not even the rank."""
        return cls((), 0)

    @property
    def rank(self) -> Optional[int]:
        """The number of dims, or ``None`` when an unknown-length run is present."""
        return None if self.rest_at is not None else len(self.dims)

    @property
    def is_fully_known(self) -> bool:
        """True when the rank is known and every dim is an int."""
        return self.rest_at is None and all(isinstance(d, int) for d in self.dims)

    def numel(self) -> Optional[int]:
        """The element count when every dim is a known int, else ``None``."""
        if not self.is_fully_known:
            return None
        return math.prod(d for d in self.dims if isinstance(d, int))  # every dim is one

    def trailing(self) -> tuple[Dim, ...]:
        """The dims known to sit at the end, in order (all dims when the rank is known)."""
        if self.rest_at is None:
            return self.dims
        return self.dims[self.rest_at:]

    def leading(self) -> tuple[Dim, ...]:
        """The dims known to sit at the start, in order (all dims when the rank is known)."""
        if self.rest_at is None:
            return self.dims
        return self.dims[: self.rest_at]

    def __str__(self) -> str:
        return format_shape(self)


def format_dim(d: Dim) -> str:
    """Render one dim: ``8``, ``batch`` or ``?``."""
    if d is None:
        return "?"
    return str(d)


def format_shape(shape: Union[Shape, tuple, list]) -> str:
    """Render a shape the way torch prints sizes, as a tuple: ``(16, 8)``, ``(batch, 3)``, ``(...)``."""
    if not isinstance(shape, Shape):
        shape = Shape.of(shape)
    parts = [format_dim(d) for d in shape.dims]
    if shape.rest_at is not None:
        rest = "*" + shape.rest_name if shape.rest_name else "..."
        parts.insert(shape.rest_at, rest)
    if len(parts) == 1 and shape.rest_at is None:
        return "(" + parts[0] + ",)"
    return "(" + ", ".join(parts) + ")"


def as_shape(value: Union[Shape, Iterable[Dim]]) -> Shape:
    """Accept a :class:`Shape` or any iterable of dims (a tuple, a ``torch.Size``)."""
    if isinstance(value, Shape):
        return value
    return Shape(tuple(value))


# ---------------------------------------------------------------------------------------------
# jaxtyping dimension strings

FIXED = "fixed"
NAMED = "named"
ANONYMOUS = "anonymous"
VARIADIC = "variadic"
SYMBOLIC = "symbolic"


@dataclass(frozen=True)
class DimItem:
    """One axis of a jaxtyping dimension string, as jaxtyping reads it.

    ``kind``: ``"fixed"`` (``3``, ``c=3``), ``"named"`` (``batch``), ``"anonymous"`` (``_``,
    ``_name``: matches any size, binds nothing), ``"variadic"`` (``*batch``, ``...``, ``*_``:
    any number of axes) or ``"symbolic"`` (an expression over names, ``dim+1``).
    ``name``: the name (``None`` for anonymous, fixed and ``...``); ``size``: the int of a fixed
    axis; ``expression``: the text of a symbolic axis; ``broadcastable``: the ``#`` prefix (the
    axis may also be 1); ``treepath``: the ``?`` prefix.
    """

    kind: str
    name: Optional[str] = None
    size: Optional[int] = None
    broadcastable: bool = False
    expression: Optional[str] = None
    treepath: bool = False
    text: str = ""


def parse_dims(text: str) -> tuple[DimItem, ...]:
    """Parse a jaxtyping dimension string (``"batch seq d"``, ``"*batch c"``, ``"... c"``,
    ``"#b c"``, ``"3 c"``, ``"_ c"``, ``"c=3"``, ``"dim+1"``) with jaxtyping's rules.

    Raises :class:`~shapecheck.errors.DimStringError` (a ``ValueError``) where jaxtyping
    raises, with the same reasons (commas between axes, ``#`` at the end, two variadic axes,
    ``**x``, ``_4``, ``*4``, ``#_`` ...)."""
    from shapecheck.errors import DimStringError

    if not isinstance(text, str):
        raise DimStringError(f"a dimension string must be a string, got {type(text).__name__}", repr(text))
    return _parse_dims_cached(text, DimStringError)


_DIM_CACHE: dict = {}


def _parse_dims_cached(text: str, error_cls) -> tuple:
    hit = _DIM_CACHE.get(text)
    if hit is not None:
        return hit
    items = []
    variadic_seen = False
    pos = 0
    for raw in text.split():
        start = text.index(raw, pos)
        pos = start + len(raw)

        def fail(message: str, at: int = start, width: int = len(raw)):
            return error_cls(f'dimension string "{text}": {message}', text, at, width)

        if "," in raw and "(" not in raw:
            raise fail("separate axes with spaces, not commas", start + raw.index(","), 1)
        if raw.endswith("#"):
            raise fail("'#' goes at the start of an axis (#b), not at the end")
        item = _parse_one(raw, fail)
        if item.kind == VARIADIC:
            if variadic_seen:
                raise fail("only one variadic axis ('*name' or '...') is allowed")
            variadic_seen = True
        items.append(item)
    result = tuple(items)
    if len(_DIM_CACHE) < 4096:
        _DIM_CACHE[text] = result
    return result


def _parse_one(raw: str, fail) -> DimItem:
    if "..." in raw:
        if raw != "...":
            raise fail("'...' must be an axis on its own")
        return DimItem(VARIADIC, None, text=raw)
    elem = raw
    prefixes = {"#": False, "*": False, "_": False, "?": False}
    while elem:
        c = elem[0]
        if c in prefixes:
            if prefixes[c]:
                raise fail(f"'{c}' used twice ({c}{c}x)")
            prefixes[c] = True
        elif elem.count("=") == 1:
            elem = elem.split("=")[1]
            continue
        else:
            break
        elem = elem[1:]
    broadcastable, variadic, anonymous, treepath = (prefixes[c] for c in "#*_?")
    if not elem or elem.isidentifier():
        kind = NAMED
    else:
        try:
            size = int(elem)
        except ValueError:
            kind = SYMBOLIC
        else:
            kind = FIXED
    if kind == FIXED:
        if variadic:
            raise fail("a fixed size cannot cover several axes (*4)")
        if anonymous:
            raise fail("a fixed size cannot be anonymous (_4)")
        if treepath:
            raise fail("a fixed size cannot depend on the tree path (?4)")
        return DimItem(FIXED, None, size, broadcastable, text=raw)
    if kind == NAMED:
        if anonymous:
            if broadcastable:
                raise fail("an axis cannot be both anonymous and broadcastable (#_)")
            if variadic:
                return DimItem(VARIADIC, None, text=raw)
            return DimItem(ANONYMOUS, None, text=raw)
        if variadic:
            return DimItem(VARIADIC, elem, None, broadcastable, treepath=treepath, text=raw)
        return DimItem(NAMED, elem, None, broadcastable, treepath=treepath, text=raw)
    if anonymous:
        raise fail("a symbolic axis cannot be anonymous (_foo+bar)")
    if variadic:
        raise fail("a symbolic axis cannot cover several axes (*foo+bar)")
    if treepath:
        raise fail("a symbolic axis cannot depend on the tree path (?foo+bar)")
    return DimItem(SYMBOLIC, None, None, broadcastable, expression=elem, text=raw)


def dims_to_shape(items: Iterable[DimItem]) -> Shape:
    """The :class:`Shape` a parsed dimension string promises: fixed axes are ints, named axes
    symbols, a symbolic axis the symbol of its expression text (``"dim+1"``); broadcastable
    and anonymous axes are unknown (``None``); a variadic axis becomes the shape's
    unknown-length run (named after ``*name``)."""
    dims: list[Dim] = []
    rest_at: Optional[int] = None
    rest_name: Optional[str] = None
    for item in items:
        if item.kind == VARIADIC:
            rest_at = len(dims)
            rest_name = None if item.broadcastable else item.name
        elif item.broadcastable or item.kind == ANONYMOUS:
            dims.append(None)
        elif item.kind == FIXED:
            dims.append(item.size)
        elif item.kind == NAMED:
            dims.append(item.name)
        else:
            dims.append(item.expression)
    return Shape(tuple(dims), rest_at, rest_name)
