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
        n = 1
        for d in self.dims:
            n *= d  # type: ignore[operator]
        return n

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
