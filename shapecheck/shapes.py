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


# ---------------------------------------------------------------------------------------------
# generic sizes: symbols the code bound, and products and quotients of dims


class Generic(str):
    """A symbol for a size the code computed but the linter cannot know (``b`` of
    ``b, c, h, w = x.shape``), or a product or quotient of dims (``B*T``, ``C//4``).

    It is a ``str`` (a :data:`Dim` symbol: two equal ones are the same size) that reads as its
    text. Unlike an annotation's name, a generic size may equal any other size: nothing proves
    two of them different. Within one tensor it is *generic*: at least 2, and independent of
    the other symbols, which is what the view rule reasons with.
    """

    __slots__ = ()


def is_generic(d: Dim) -> bool:
    """True for a generic symbol (see :class:`Generic`), which may equal any size."""
    return isinstance(d, Generic)


class Measured(Generic):
    """A generic size read from a tensor's shape (``T`` of ``B, T, C = x.size()``), or a
    product or quotient with such sizes in it (``B*T``, ``C//self.n_head``).

    ``origin`` stands for the read (one unpacking of one tensor's shape): the sizes of one read
    are independent of one another, those of two reads may be equal by construction. ``names``
    are the sizes of that read it is made of; ``pure`` is False when something else enters it
    (a config value, an attribute: its relation to the sizes is unknown). Which two dims are
    independent is decided in :mod:`shapecheck.generic_dims`.
    """

    origin: object
    names: frozenset[str]
    pure: bool


def measured(text: str, origin: object, names: Optional[frozenset[str]] = None, pure: bool = True) -> Measured:
    """The :class:`Measured` size ``text`` of the read ``origin`` (by default a size of its own)."""
    out = Measured(text)
    out.origin, out.names, out.pure = origin, names if names is not None else frozenset((str(text),)), pure
    return out


def _of_one_read(out: Dim, a: Dim, b: Dim) -> Dim:
    """``out``, the product or quotient of ``a`` and ``b``, as a :class:`Measured` size when a
    size of one read enters it and no size of another read does; else ``out`` unchanged."""
    if not isinstance(out, str):
        return out
    parts = [d for d in (a, b) if not isinstance(d, int)]
    reads = [d for d in parts if isinstance(d, Measured)]
    if not reads or any(r.origin is not reads[0].origin for r in reads):
        return out
    names = frozenset().union(*(r.names for r in reads))
    pure = all(isinstance(d, Measured) and d.pure for d in parts)
    return measured(out, reads[0].origin, names, pure)


#: a product of dims: an int coefficient and the sorted symbols it multiplies (with repeats)
Monomial = tuple[int, tuple[str, ...]]

_PLAIN_ATOM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]")


def split_top(text: str, sep: str) -> Optional[list[str]]:
    """``text`` split on ``sep`` outside parentheses, or ``None`` when the parentheses do not pair."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and text.startswith(sep, i) and not (sep == "*" and text.startswith("**", i)) \
                and not (sep == "*" and i > 0 and text[i - 1] == "*"):
            parts.append(text[start:i])
            start = i + len(sep)
            i += len(sep)
            continue
        i += 1
    if depth != 0:
        return None
    parts.append(text[start:])
    return parts


def unwrap_parens(text: str) -> str:
    """``text`` without one pair of parentheses around all of it."""
    if text.startswith("(") and text.endswith(")") and split_top(text[1:-1], "*") is not None:
        inner = text[1:-1]
        depth = 0
        for c in inner:
            depth += 1 if c == "(" else -1 if c == ")" else 0
            if depth < 0:
                return text
        return inner
    return text


def monomial(d: Dim) -> Optional[Monomial]:
    """A dim as a product: ``6`` is ``(6, ())``, ``"2*B*T"`` is ``(2, ("B", "T"))``; a
    quotient or any other expression is one symbol; ``None`` for an unknown dim."""
    if d is None or isinstance(d, bool):
        return None
    if isinstance(d, int):
        return (d, ())
    parts = split_top(d, "*")
    if parts is None or any(not p for p in parts):
        return (1, (d,))
    coef = 1
    atoms: list[str] = []
    for part in parts:
        part = unwrap_parens(part)
        if part.isdigit():
            coef *= int(part)
        elif part != d and "*" in part and split_top(part, "//") == [part]:
            sub = monomial(part)
            if sub is None:
                return None
            coef *= sub[0]
            atoms.extend(sub[1])
        else:
            atoms.append(part)
    return (coef, tuple(sorted(atoms)))


def _atom_text(atom: str) -> str:
    return atom if all(c in _PLAIN_ATOM for c in atom) else "(" + atom + ")"


def from_monomial(m: Monomial) -> Dim:
    """The dim of a product: an int when no symbol is left, else its canonical text
    (``2*B*T``: the coefficient first, symbols sorted) as a :class:`Generic` symbol; a lone
    symbol comes back as it was written."""
    coef, atoms = m
    if not atoms:
        return coef
    if coef == 1 and len(atoms) == 1:
        return atoms[0] if isinstance(atoms[0], Generic) else Generic(atoms[0])
    parts = ([str(coef)] if coef != 1 else []) + [_atom_text(a) for a in atoms]
    return Generic("*".join(parts))


def dim_mul(a: Dim, b: Dim) -> Dim:
    """``a * b`` over dims: ints multiply, symbols make a product symbol (``B*T``); unknown
    when either is."""
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
        return a * b
    ma, mb = monomial(a), monomial(b)
    if ma is None or mb is None:
        return None
    if ma[0] == 0 or mb[0] == 0:
        return 0
    if ma == (1, ()):
        return b
    if mb == (1, ()):
        return a
    return _of_one_read(from_monomial((ma[0] * mb[0], tuple(sorted(ma[1] + mb[1])))), a, b)


def dims_product(dims: Iterable[Dim]) -> Dim:
    """The product of dims (see :func:`dim_mul`); ``1`` for none."""
    out: Dim = 1
    for d in dims:
        out = dim_mul(out, d)
        if out is None:
            return None
    return out


def monomial_quotient(a: Monomial, b: Monomial) -> Optional[Monomial]:
    """``a / b`` when ``b`` divides ``a`` exactly as a product (``B*T`` by ``T``), else ``None``."""
    if b[0] == 0 or a[0] % b[0]:
        return None
    rest = list(a[1])
    for atom in b[1]:
        if atom not in rest:
            return None
        rest.remove(atom)
    return (a[0] // b[0], tuple(rest))


def dim_floordiv(a: Dim, b: Dim) -> Dim:
    """``a // b`` over dims: exact division of products cancels (``B*T // T`` is ``B``,
    ``4*C // 2`` is ``2*C``); otherwise a quotient symbol (``C//4``); unknown when either is."""
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
        return a // b if b else None
    ma, mb = monomial(a), monomial(b)
    if ma is None or mb is None or mb[0] == 0:
        return None
    exact = monomial_quotient(ma, mb)
    if exact is not None:
        return _of_one_read(from_monomial(exact), a, b)
    return _of_one_read(Generic(_atom_text(str(a)) + "//" + _atom_text(str(b))), a, b)


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
