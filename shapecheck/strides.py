"""Memory layout arithmetic for the inference: exact strides, and dim moves when sizes are unknown.

With a fully known shape the inference carries the exact strides and answers "can this view
happen" with torch's own stride rule. With unknown sizes it carries a *perm* (see
:mod:`shapecheck.semantic.facts`): for each dim, its position in the plain tensor it came from, ``-1`` for
a dim broadcast by ``expand`` (stride 0) and ``-2`` for a dim known to have size 1.
"""

from __future__ import annotations

from itertools import combinations
from typing import Iterable, Optional, Sequence, cast

from shapecheck.shapes import Dim, Monomial, monomial, monomial_quotient, split_top, unwrap_parens

BROADCAST = -1
SIZE_ONE = -2


def contiguous_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides of a plain tensor of these sizes."""
    strides = [1] * len(sizes)
    acc = 1
    for i in range(len(sizes) - 1, -1, -1):
        strides[i] = acc
        acc *= max(sizes[i], 1)
    return tuple(strides)


def is_contiguous(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's ``is_contiguous``: size-1 dims are ignored, empty tensors are contiguous."""
    if any(s == 0 for s in sizes):
        return True
    return _packed((size, stride) for size, stride in zip(reversed(sizes), reversed(strides)) if size != 1)


def is_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the tensor covers its memory with no gaps or overlap (a permuted plain tensor)."""
    return _packed((sz, st) for st, sz in sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1))


def _packed(dims: Iterable[tuple[int, int]]) -> bool:
    """Each ``(size, stride)`` of ``dims``, innermost first, starts where the ones before it end
    (the first at stride 1)."""
    expected = 1
    for size, stride in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def dense_like(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """The strides of a new tensor laid out like the input (``clone``, ``empty_like``).

    A dense input keeps its strides; otherwise the result is dense with the input's stride
    order (torch's ``preserve_format``).
    """
    if is_dense(sizes, strides):
        return tuple(strides)
    return iterator_strides(sizes, [strides])


def iterator_strides(sizes: Sequence[int], operands: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The strides torch's TensorIterator gives an elementwise result of shape ``sizes``.

    ``operands`` holds each input's strides aligned to ``sizes`` (0 for a broadcast dim). Dims
    are ordered fastest first by the first operand whose strides tell two dims apart (a
    broadcast dim tells nothing; equal strides put the smaller size first); the result is dense
    in that order.
    """
    n = len(sizes)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        """TensorIterator's comparison of two dims: 1 swap, -1 keep, 0 undecided."""
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if sizes[d0] > sizes[d1]:
                return 1
        return 0

    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= max(sizes[d], 1)
    return tuple(out)


def aligned_strides(out_sizes: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """An operand's strides seen from a broadcast result: 0 for new and broadcast dims."""
    lead = len(out_sizes) - len(sizes)
    out = [0] * lead
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        out.append(0 if size == 1 and out_sizes[lead + i] != 1 else stride)
    return tuple(out)


def view_strides(
    sizes: Sequence[int], strides: Sequence[int], new_sizes: Sequence[int]
) -> Optional[tuple[int, ...]]:
    """The strides of ``view(new_sizes)``, or ``None`` when view must fail (torch's stride rule).

    Walks the old dims from the right in chunks of dims that are laid out back to back
    (``stride[i] == stride[i+1] * size[i+1]``); the new dims must tile each chunk exactly.
    """
    if not sizes:
        return tuple(1 for _ in new_sizes)
    numel = 1
    for s in sizes:
        numel *= s
    if numel == 0:
        return contiguous_strides(new_sizes)
    out = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[tensor_d]
        chunk_ends = tensor_d == 0 or (
            sizes[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base
        )
        if chunk_ends:
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                out[view_d] = view_numel * chunk_base
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def can_merge(a: int, b: int) -> bool:
    """Can two neighbouring dims with perm entries ``a`` then ``b`` be merged by a view?"""
    if a == SIZE_ONE or b == SIZE_ONE:
        return True
    if a == BROADCAST and b == BROADCAST:
        return True
    return a >= 0 and b == a + 1


def view_possible_by_perm(perm: Sequence[int], sizes: Sequence, new_rank: int) -> bool:
    """With unknown sizes: can some grouping of the dims into ``new_rank`` runs be a legal view?

    A view to a lower rank merges ``rank - new_rank`` neighbouring pairs; it can succeed only if
    at least that many pairs are mergeable. Dims known to be 1 merge with anything. A view to the
    same or a higher rank may only split dims, which is always legal.
    """
    n = len(perm)
    need = n - new_rank
    if need <= 0:
        return True
    legal = 0
    for i in range(n - 1):
        a = SIZE_ONE if sizes[i] == 1 else perm[i]
        b = SIZE_ONE if sizes[i + 1] == 1 else perm[i + 1]
        if can_merge(a, b):
            legal += 1
    return legal >= need


def sliced_perm(perm: Sequence[int], positions: Sequence[int], sliced: Sequence[int]) -> list[int]:
    """``perm`` after slicing the dims at memory ``positions`` ``sliced`` (``positions``: those of
    the tensor before indexing): a cut dim no longer fills the stride of the dim laid out just
    outside it, so a gap (a dim of the base that indexing removed) opens there; cutting the
    outermost dim opens none."""
    out = list(perm)
    outermost = min(positions, default=0)
    for p in sorted(set(sliced), reverse=True):
        if p != outermost:
            out = [q + 1 if q >= p else q for q in out]
    return out


def is_identity(perm: Sequence[int]) -> bool:
    """True when no dim moved (size-one dims aside)."""
    last = -1
    for p in perm:
        if p == SIZE_ONE:
            continue
        if p != last + 1:
            return False
        last = p
    return True


# ---------------------------------------------------------------------------------------------
# the stride rule on generic sizes

def unknown_dim_atom(i: int) -> str:
    """The symbol :func:`generic_view` gives the unknown size of dim ``i`` of the tensor."""
    return f"#{i}"


def gap_atom(position: int) -> str:
    """The symbol of the size of a dim of the base tensor that indexing removed."""
    return f"#gap{position}"


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    return (a[0] * b[0], tuple(sorted(a[1] + b[1])))


def _without(m: Monomial, ones: frozenset) -> Monomial:
    return (m[0], tuple(a for a in m[1] if a not in ones))


def _smaller(a: Monomial, b: Monomial) -> Optional[bool]:
    """Generic comparison of two products: ``True`` when ``a`` properly divides ``b`` (so is
    smaller, every symbol being at least 2), ``False`` when ``a`` is the larger multiple or
    equal, ``None`` when the sizes do not tell."""
    if a == b:
        return False
    if monomial_quotient(b, a) is not None:
        return True
    if monomial_quotient(a, b) is not None:
        return False
    return None


def _view_layout(sizes: Sequence[Monomial], perm: Optional[Sequence[int]], ones: frozenset
                 ) -> Optional[tuple[list[Monomial], list[Optional[Monomial]]]]:
    """The sizes and strides (as products) of the dims of a tensor that is a permuted, expanded
    or indexed plain tensor (``perm`` as in the module docstring; ``None``: the plain tensor
    itself), with the symbols of ``ones`` taken to be 1; a stride is ``None`` for a size-1 dim."""
    n = len(sizes)
    mono = [_without(m, ones) for m in sizes]
    if perm is None:
        perm = []
        pos = 0
        for m in mono:
            perm.append(SIZE_ONE if m == (1, ()) else pos)
            pos += m != (1, ())
    if len(perm) != n:
        return None
    positions = [p for p in perm if p >= 0]
    if len(set(positions)) != len(positions):
        return None
    top = max(positions, default=-1) + 1
    base: list[Monomial] = [_without((1, (gap_atom(p),)), ones) for p in range(top)]
    for p, m in zip(perm, mono):
        if p >= 0:
            base[p] = m
    # the stride of base position p: the product of the sizes after it (a common factor of the
    # dims indexing removed after the last one cancels out of every comparison)
    after: list[Monomial] = [(1, ())] * (top + 1)
    for p in range(top - 1, -1, -1):
        after[p] = _mono_mul(after[p + 1], base[p])
    strides: list[Optional[Monomial]] = []
    for p, m in zip(perm, mono):
        if m == (1, ()) or p == SIZE_ONE:
            strides.append(None)
        elif p == BROADCAST:
            strides.append((0, ()))
        else:
            strides.append(after[p + 1])
    return mono, strides


def _chunks(mono: Sequence[Monomial], strides: Sequence[Optional[Monomial]]) -> list[Monomial]:
    """The element counts of the runs of dims laid out back to back, first to last."""
    chunks: list[Monomial] = []
    prev: Optional[Monomial] = None
    for m, st in zip(mono, strides):
        if st is None:
            continue  # a size-1 dim sits anywhere
        if prev is not None and chunks and (prev == _mono_mul(st, m) or prev[0] == 0 and st[0] == 0):
            chunks[-1] = _mono_mul(chunks[-1], m)
        else:
            chunks.append(m)
        prev = st
    return chunks


def generic_view(sizes: Sequence[Dim], perm: Optional[Sequence[int]], target: Sequence[Dim],
                 ones: frozenset = frozenset()) -> Optional[bool]:
    """Can ``view(target)`` work on a tensor of ``sizes`` (ints, symbols, products, unknown) laid
    out by ``perm``, for generic sizes (every unknown size at least 2 and independent)?

    ``True``: it works; ``False``: it raises; ``None``: the sizes do not tell. The symbols of
    ``ones`` are taken to be 1 (unknown dims are named by :func:`unknown_dim_atom`). Runs torch's
    stride rule on products: the dims are cut into runs laid out back to back
    (``stride[i] == stride[i+1] * size[i+1]``), and the new sizes must tile each run, from the
    right. When the new sizes cannot be matched to the old ones, the view still raises when it
    has fewer sizes other than 1 than there are runs (each run needs one of its own).
    """
    raw: list[Monomial] = []
    for i, d in enumerate(sizes):
        m = monomial(d) if d is not None else (1, (unknown_dim_atom(i),))
        if m is None:
            return None
        raw.append(m)
    traw: list[Optional[Monomial]] = []
    for j, t in enumerate(target):
        m = None if t == -1 else monomial(t) if t is not None else (1, (f"#target{j}",))
        if t != -1 and (m is None or m[0] < 0):
            return None
        traw.append(m)
    raw, traw = _expand_quotients(raw, traw)
    layout = _view_layout(raw, perm, ones)
    if layout is None:
        return None
    mono, strides = layout
    if any(m[0] == 0 for m in mono):
        return True
    chunks = _chunks(mono, strides)
    tmono = [None if m is None else _without(m, ones) for m in traw]
    numel: Monomial = (1, ())
    for m in mono:
        numel = _mono_mul(numel, m)
    tied = {a for m in mono for a in m[1]} | {gap_atom(p) for p in range(len(sizes) + len(perm or ()) + 1)}
    verdict = _tile(chunks, tmono, numel, tied)
    if verdict is not None:
        return verdict
    big = sum(1 for m in tmono if m != (1, ()))
    return False if len(chunks) > big else None


def generic_view_bounded(sizes: Sequence[Dim], perm: Sequence[int], target: Sequence[Dim],
                         ones: frozenset = frozenset()) -> Optional[bool]:
    """:func:`generic_view` for a tensor of at least ``len(sizes)`` dims whose further dims (if
    any) lie innermost and in order (a plain tensor's trailing dims): ``False`` only when the
    view raises both without them and with them, which as one run of dims laid out back to back
    behave as one more dim; ``True`` when it works in both cases; else ``None``."""
    without = generic_view(sizes, perm, target, ones)
    if without is None:
        return None
    top = max((p for p in perm if p >= 0), default=-1) + 1
    with_rest = generic_view([*sizes, None], [*perm, top], target, ones)
    return without if with_rest == without else None


def _expand_quotients(mono: list[Monomial], tmono: list[Optional[Monomial]]
                      ) -> tuple[list[Monomial], list[Optional[Monomial]]]:
    """Sizes with each numerator ``N`` of a quotient symbol ``N//D`` among them rewritten as
    ``(N//D)*D`` (``c`` as ``(c//g)*g``): a view to sizes that do not divide evenly raises on
    the element count anyway, so the stride rule may take the division to be exact."""
    quotients: list[tuple[str, Monomial, Monomial]] = []
    for m in [*mono, *tmono]:
        for atom in (m[1] if m is not None else ()):
            parts = split_top(atom, "//")
            if parts is not None and len(parts) == 2 and atom not in [q[0] for q in quotients]:
                num, den = monomial(unwrap_parens(parts[0])), monomial(unwrap_parens(parts[1]))
                if num is not None and den is not None and num[1] and den[0] > 0 \
                        and not set(num[1]) & set(den[1]) and atom not in num[1]:
                    quotients.append((atom, num, den))
    if not quotients:
        return mono, tmono

    def expand(m: Optional[Monomial]) -> Optional[Monomial]:
        if m is None:
            return None
        for atom, num, den in quotients:
            rest = monomial_quotient(m, num)
            while rest is not None:
                m = _mono_mul(rest, _mono_mul((1, (atom,)), den))
                rest = monomial_quotient(m, num)
        return m

    return [expand(m) or m for m in mono], [expand(m) for m in tmono]


def _tile(chunks: list[Monomial], tmono: list[Optional[Monomial]], numel: Monomial,
          tied: set) -> Optional[bool]:
    """The new sizes (``None``: the one ``-1``) tiling the runs, from the right (torch's walk).
    Two products over the ``tied`` symbols (the sizes of the tensor itself, independent) that
    neither divides the other differ, and one cannot tile the other."""
    if tmono.count(None) > 1:
        return None
    known: Monomial = (1, ())
    for m in tmono:
        if m is not None:
            known = _mono_mul(known, m)
    if None in tmono:
        rest = monomial_quotient(numel, known)
        if rest is None:
            return None
        tmono = [rest if m is None else m for m in tmono]
    elif known != numel:
        return None  # the element counts differ (or may): not the stride rule's finding
    sizes: list[Monomial] = [m for m in tmono if m is not None]
    j = len(sizes) - 1
    for chunk in reversed(chunks):
        acc: Monomial = (1, ())
        while j >= 0:
            m = sizes[j]
            if m == (1, ()):
                j -= 1
                continue
            if acc == chunk:
                break
            nxt = _mono_mul(acc, m)
            order = _smaller(nxt, chunk)
            if order is None and nxt != chunk:
                if nxt[0] == chunk[0] == 1 and set(nxt[1]) | set(chunk[1]) <= tied:
                    return False
                return None
            if nxt != chunk and not order:
                return False  # a new size straddles two runs
            acc = nxt
            j -= 1
        if acc != chunk:
            return None
    return True


def generic_view_exceptions(sizes: Sequence[Dim], perm: Optional[Sequence[int]],
                            target: Sequence[Dim], limit: int = 10) -> Optional[list[tuple[str, ...]]]:
    """When :func:`generic_view` says the view raises: the smallest sets of symbols whose being
    1 lets it work (or leaves it undecided), smallest first; ``[]`` when no size being 1
    helps; ``None`` when there are too many symbols to try (more than ``limit``)."""
    atoms: list[str] = []
    for i, d in enumerate(sizes):
        m = monomial(d) if d is not None else (1, (unknown_dim_atom(i),))
        for a in (m[1] if m is not None else ()):
            if a not in atoms:
                atoms.append(a)
    positions = sorted(p for p in (perm or ()) if p >= 0)
    for p in range(positions[-1] + 1 if positions else 0):
        if p not in positions:
            atoms.append(gap_atom(p))
    for t in target:
        m = monomial(t) if t is not None and t != -1 else None
        for a in (m[1] if m is not None else ()):
            if a not in atoms:
                atoms.append(a)
    if len(atoms) > limit:
        return None
    found: list[tuple[str, ...]] = []
    for size in range(1, len(atoms) + 1):
        for subset in combinations(atoms, size):
            if any(set(f) <= set(subset) for f in found):
                continue
            if generic_view(sizes, perm, target, frozenset(subset)) is not False:
                found.append(subset)
    return found


def generic_count_exception(sizes: Sequence[Dim], target: Sequence[Dim]) -> Optional[tuple[str, ...]]:
    """When ``view(target)`` of a tensor of ``sizes`` asks for another element count for generic
    sizes: the symbols that must all be 1 for the counts to agree (``(b, c, h, w)`` viewed as
    ``(b, c * h)``: ``("w",)``). ``None`` when the counts agree, or may: an unknown size, a
    ``-1``, a new size that is not a product of the tensor's own, or counts that differ by a
    constant factor (an empty tensor fits any shape with no ``-1``)."""
    if any(d is None for d in sizes) or any(t is None or t == -1 for t in target):
        return None
    mono = [monomial(d) for d in sizes]
    tmono = [monomial(t) for t in target]
    if any(m is None for m in mono) or any(m is None for m in tmono):
        return None
    expanded, texpanded = _expand_quotients(cast(list, mono), cast(list, tmono))
    numel: Monomial = (1, ())
    for m in expanded:
        numel = _mono_mul(numel, m)
    asked: Monomial = (1, ())
    for t in texpanded:
        asked = _mono_mul(asked, cast(Monomial, t))
    if numel == asked or numel[0] != asked[0] or numel[0] <= 0 or not set(asked[1]) <= set(numel[1]):
        return None
    extra = list(numel[1])
    for atom in asked[1]:
        if atom not in extra:
            return None
        extra.remove(atom)
    return tuple(dict.fromkeys(extra))
