"""Which two dims differ for generic sizes, and what would make them equal.

An unknown size is *generic*: at least 2, and independent of every other symbol (DESIGN.md,
"What the linter may stand behind"). Real code makes sizes equal by construction, though: a
hidden size read from a tensor equals ``config.n_embd``, two inputs share their batch size, a
parameter ``n`` is always passed equal to ``m``. So two dims count as independent only when that
is safe:

- both are made of the sizes of one read of a tensor's shape (a :class:`~shapecheck.shapes.Measured`
  size: ``B, T, C = x.size()``, views built from them, their products and quotients);
- each keeps a size of that read that the other lacks (``T`` against ``C // self.n_head``: a
  config value does not tie two sizes of one tensor together), or one is the other times more
  sizes of the read and nothing else (``B*T`` against ``B``: equal only when ``T`` is 1).

Never when a dim is an int literal, an annotation's name, a config value, an attribute, a
parameter or a call result alone, or when the sizes come from two reads: their relation is
unknown (``C`` against ``d_model``; ``T`` against ``S`` of another tensor).

One exception, where the code itself says what a config value is: a view that keeps the leading
sizes of one read and splits the last dim into parts (``k.view(B, T, self.n_head, C //
self.n_head)``, ``qkv.reshape(B, N, 3, self.num_heads, self.head_dim)``) makes each config value
among the parts a :class:`Part` of that read: a piece of the features, independent of the sizes
the view kept (``self.n_head`` against ``T``). Two parts stay unrelated (``num_heads`` and
``head_dim`` are equal in small configs), and so do a part and a size of the read the view did
not keep (a config may count the tokens a layer mixes).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Sequence

from shapecheck.shapes import Dim, Generic, Measured, Shape, monomial

__all__ = ["independent", "equal_condition", "broadcast_condition", "Part", "split_parts", "part_of"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*'*")


def _sizes(d: Measured) -> Counter[str]:
    """The sizes of its read that ``d`` is made of, with repeats (``B*B*T``: B twice, T once)."""
    return Counter(n for n in _NAME.findall(d) if n in d.names)


def _plain_product(d: Measured) -> Optional[int]:
    """The int coefficient of ``d`` when it is a product of sizes of its read and an int alone
    (no quotient, nothing else), else ``None``."""
    if not d.pure or "//" in d:
        return None
    m = monomial(d)
    return m[0] if m is not None else None


class Part(Generic):
    """A config value that a view made a part of the last dim of one read (see the module
    docstring): ``origin`` is that read, ``kept`` the sizes of it the view kept."""

    origin: object
    kept: frozenset[str]


def _part(text: str, origin: object, kept: frozenset[str]) -> Part:
    out = Part(text)
    out.origin, out.kept = origin, kept
    return out


def split_parts(source: Optional[Shape], target: list[Dim]) -> list[Dim]:
    """The sizes of a view of a tensor of shape ``source``, each config value among the parts
    a :class:`Part` when the view keeps the leading sizes of one read and splits the last dim
    (``(B, T, ?)`` viewed as ``(B, T, self.n_head, C // self.n_head)``); else ``target``."""
    if source is None or source.rank is None or source.rank < 2 or len(target) <= source.rank:
        return target
    kept = source.dims[:-1]
    if tuple(target[:len(kept)]) != kept:
        return target
    return list(kept) + [part_of(d, kept) for d in target[len(kept):]]


def part_of(d: Dim, kept: Sequence[Dim]) -> Dim:
    """``d`` as a :class:`Part` of the read whose sizes ``kept`` are, when ``d`` is a config
    value and ``kept`` sizes of one read alone; else ``d``."""
    if not isinstance(d, str) or not _config(d) or not kept:
        return d
    first = kept[0]
    if not isinstance(first, Measured) or not all(isinstance(k, Measured) and k.pure and k.origin is first.origin
                                                  for k in kept):
        return d
    return _part(d, first.origin, frozenset(str(k) for k in kept))


def _config(d: Dim) -> bool:
    """A size the code passed by name (``self.n_head``, ``head_dim``): a generic symbol that is
    not a measured size, a product or a quotient."""
    return isinstance(d, Generic) and not isinstance(d, (Measured, Part)) and _NAME.fullmatch(d) is not None


def _part_of(a: Dim, b: Dim) -> bool:
    """True when ``a`` is a :class:`Part` of a read and ``b`` a size of that read its view kept."""
    return isinstance(a, Part) and isinstance(b, Measured) and b.origin is a.origin and str(b) in a.kept


def _split(a: Dim, b: Dim) -> Optional[tuple[Counter[str], Counter[str]]]:
    """The sizes only ``a`` has and those only ``b`` has, when ``a`` and ``b`` are different
    dims of one read; else ``None``."""
    if not isinstance(a, Measured) or not isinstance(b, Measured) or a == b or a.origin is not b.origin:
        return None
    sa, sb = _sizes(a), _sizes(b)
    if not sa or not sb:
        return None
    return sa - sb, sb - sa


def _extra(a: Dim, b: Dim) -> Optional[tuple[Counter[str], Measured]]:
    """When one of ``a`` and ``b`` is the other times more sizes of their read (``B*T`` and
    ``B``): those sizes and the smaller dim; else ``None``."""
    split = _split(a, b)
    if split is None or (split[0] and split[1]) or not (split[0] or split[1]):
        return None
    big, small = (a, b) if split[0] else (b, a)
    assert isinstance(big, Measured) and isinstance(small, Measured)
    cb, cs = _plain_product(big), _plain_product(small)
    if cb is None or cs is None or cb != cs:
        return None  # `2*B` against `B*T`: equal when T is 2, a generic size
    return split[0] or split[1], small


def independent(a: Dim, b: Dim) -> bool:
    """True when ``a`` and ``b`` differ for generic sizes and the linter may say so (see the
    module docstring): their equality is an exception the message names."""
    if _part_of(a, b) or _part_of(b, a):
        return True
    split = _split(a, b)
    if split is None:
        return False
    if split[0] and split[1]:
        return True
    return _extra(a, b) is not None


def _names(sizes: Counter[str]) -> str:
    words = [f"`{n}`" for n in sorted(sizes)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _ones(sizes: Counter[str]) -> str:
    return f"{_names(sizes)} {'is' if len(sizes) == 1 else 'are'} 1"


def equal_condition(a: Dim, b: Dim) -> str:
    """What must hold for two :func:`independent` dims to be equal, for "raises unless ...":
    "`T` is 1" (``B*T`` against ``B``), else "`T` equals `C//nh`"."""
    extra = _extra(a, b)
    if extra is not None:
        return _ones(extra[0])
    return f"`{a}` equals `{b}`"


def broadcast_condition(a: Dim, b: Dim) -> str:
    """What must hold for two :func:`independent` dims to broadcast (equal, or one of them 1):
    "`T` is 1 or `B` is 1" (``B*T`` against ``B``; ``B*T`` is 1 only when ``B`` is), else
    "`T` equals `B` or one of them is 1"."""
    extra = _extra(a, b)
    if extra is not None:
        return f"{_ones(extra[0])} or `{extra[1]}` is 1"
    return f"`{a}` equals `{b}` or one of them is 1"
