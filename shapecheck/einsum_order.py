"""Pairwise contraction orders for einsums of several operands, and their FLOPs.

An exhaustive search for up to four operands, a greedy one beyond; FLOPs are counted as
opt_einsum counts them, so the runtime can use either planner and the CLI can print the cost.

This module knows labels and sizes only: :meth:`shapecheck.einsum_parser.EinsumSpec.contraction_order`
checks the shapes, turns each term into a set of labels, and calls :func:`order_contractions`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence


@dataclass(frozen=True)
class ContractionStep:
    """One pairwise contraction: positions ``i`` and ``j`` of the current operand list, the
    einsum of that step (``"ij,jk->ik"`` in the spec's labels), and its FLOPs."""

    i: int
    j: int
    equation: str
    flops: Optional[int]


@dataclass(frozen=True)
class ContractionPlan:
    """A pairwise contraction order in opt_einsum's format: ``path[k] = (i, j)`` contracts
    operands ``i`` and ``j`` of the current list, removes them and appends the result.

    ``flops`` counts as opt_einsum does (the size of all indices of a step, doubled when the
    step sums an index away); it is ``None`` when some size is a symbol or unknown.
    ``naive_flops`` is the cost of doing the whole einsum in one step."""

    path: list
    flops: Optional[int]
    steps: tuple = ()
    naive_flops: Optional[int] = None


def order_contractions(
    terms: Sequence[frozenset],
    output: frozenset,
    sizes: Mapping[str, int],
    exact: bool,
    describe: Callable[[frozenset, frozenset, frozenset], str],
    whole: str,
) -> ContractionPlan:
    """The :class:`ContractionPlan` of an einsum whose operands hold the label sets ``terms``
    and whose result holds ``output``; ``sizes`` gives every label's size (a stand-in where the
    real one is unknown, and then ``exact`` is False and no FLOPs are reported).
    ``describe(a, b, kept)`` spells one step's equation; ``whole`` is the equation of a
    single-operand einsum."""
    union: frozenset = frozenset().union(*terms) if terms else frozenset()
    naive = _size_of(union, sizes) * max(1, len(terms) - 1)
    if sum(len(t) for t in terms) > len(union):  # opt_einsum's test for an inner product
        naive += _size_of(union, sizes)
    naive_flops = naive if exact else None
    if len(terms) <= 1:
        if not terms:
            return ContractionPlan([], naive_flops, (), naive_flops)
        return ContractionPlan([(0,)], naive_flops, (ContractionStep(0, 0, whole, naive_flops),), naive_flops)
    path = _optimal(terms, output, sizes) if len(terms) <= 4 else _greedy(terms, output, sizes)
    steps = []
    total = 0
    current = list(terms)
    for i, j in path:
        a, b = current[i], current[j]
        others = [t for n, t in enumerate(current) if n not in (i, j)]
        keep = _result(a, b, others, output)
        flops = _step_flops(a | b, keep, 2, sizes)
        total += flops
        steps.append(ContractionStep(i, j, describe(a, b, keep), flops if exact else None))
        current = others + [keep]
    return ContractionPlan([tuple(p) for p in path], total if exact else None, tuple(steps), naive_flops)


def _step_flops(union: frozenset, keep: frozenset, num_terms: int, sizes: Mapping[str, int]) -> int:
    factor = max(1, num_terms - 1) + (1 if union - keep else 0)
    return _size_of(union, sizes) * factor


def _result(a: frozenset, b: frozenset, others: list, output: frozenset) -> frozenset:
    return (a | b) & (output.union(*others) if others else output)


def _optimal(terms: Sequence[frozenset], output: frozenset, sizes: Mapping[str, int]) -> list:
    best_cost: Optional[int] = None
    best_path: list = []

    def search(current: list, path: list, cost: int) -> None:
        nonlocal best_cost, best_path
        if best_cost is not None and cost >= best_cost:
            return
        if len(current) == 1:
            best_cost, best_path = cost, list(path)
            return
        for i, j in itertools.combinations(range(len(current)), 2):
            others = [t for n, t in enumerate(current) if n not in (i, j)]
            keep = _result(current[i], current[j], others, output)
            step = _step_flops(current[i] | current[j], keep, 2, sizes)
            path.append((i, j))
            search(others + [keep], path, cost + step)
            path.pop()

    search(list(terms), [], 0)
    return best_path


def _size_of(labels: frozenset, sizes: Mapping[str, int]) -> int:
    n = 1
    for lab in labels:
        n *= sizes[lab]
    return n


def _greedy(terms: Sequence[frozenset], output: frozenset, sizes: Mapping[str, int]) -> list:
    current = list(terms)
    path = []
    while len(current) > 1:
        pairs = [(i, j) for i, j in itertools.combinations(range(len(current)), 2) if current[i] & current[j]]
        if not pairs:
            pairs = list(itertools.combinations(range(len(current)), 2))
        best: Optional[tuple] = None
        for i, j in pairs:
            others = [t for n, t in enumerate(current) if n not in (i, j)]
            keep = _result(current[i], current[j], others, output)
            score = (
                _size_of(keep, sizes) - _size_of(current[i], sizes) - _size_of(current[j], sizes),
                _step_flops(current[i] | current[j], keep, 2, sizes),
            )
            if best is None or score < best[0]:
                best = (score, i, j, others, keep)
        assert best is not None  # two or more operands always make a pair
        _, i, j, others, keep = best
        path.append((i, j))
        current = others + [keep]
    return path
