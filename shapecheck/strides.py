"""Memory layout arithmetic for the inference: exact strides, and dim moves when sizes are unknown.

With a fully known shape the inference carries the exact strides and answers "can this view
happen" with torch's own stride rule. With unknown sizes it carries a *perm* (see
:mod:`shapecheck.semantic.facts`): for each dim, its position in the plain tensor it came from, ``-1`` for
a dim broadcast by ``expand`` (stride 0) and ``-2`` for a dim known to have size 1.
"""

from __future__ import annotations

from typing import Optional, Sequence

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
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def is_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the tensor covers its memory with no gaps or overlap (a permuted plain tensor)."""
    dims = sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1)
    expected = 1
    for stride, size in dims:
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
