"""Pairwise contraction orders for einsums of several operands, and their FLOPs.

An exhaustive search for up to four operands, a greedy one beyond; FLOPs are counted as
opt_einsum counts them, so the runtime can use either planner and the CLI can print the cost.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional, Sequence

from shapecheck.einsum_parser import (
    ELLIPSIS,
    EinsumSpec,
    ShapeLike,
    _assign,
    _bind,
    _count_error,
    _ellipsis_dims,
    _join_term,
)
from shapecheck.shapes import as_shape


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




_NOMINAL = 16


_PLANS: dict = {}


def contraction_order(spec: EinsumSpec, shapes: Sequence[ShapeLike]) -> ContractionPlan:
    """The cached :class:`ContractionPlan` of ``spec`` for ``shapes`` (see
    :meth:`EinsumSpec.contraction_order`)."""
    try:
        key = (spec, spec.form, tuple(shapes))
        hit = _PLANS.get(key)
    except TypeError:  # a list among the shapes: no caching
        key, hit = None, None
    if hit is not None:
        return hit
    plan = _plan(spec, shapes)
    if key is not None:
        if len(_PLANS) >= 1024:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _plan(spec: EinsumSpec, shapes: Sequence[ShapeLike]) -> ContractionPlan:
    if len(shapes) != len(spec.inputs):
        raise _count_error(spec, len(shapes))
    norm = [as_shape(s) for s in shapes]
    _, sizes = _bind(spec, norm)
    ell, _ = _ellipsis_dims(spec, norm, [_assign(t, s) for t, s in zip(spec.inputs, norm)])
    sizes = dict(sizes)
    exact = (
        all(type(v) is int for v in sizes.values())
        and all(type(v) is int for v in ell)
        and all(s.rest_at is None for s in norm)
    )
    ell_labels = [f"...{j}" for j in range(len(ell), 0, -1)]
    for lab, d in zip(ell_labels, ell):
        sizes[lab] = d
    cost_sizes = {k: (v if type(v) is int else _NOMINAL) for k, v in sizes.items()}
    terms = []
    for k, t in enumerate(spec.inputs):
        labs = set(x for x in t if x != ELLIPSIS)
        if ELLIPSIS in t:
            n = len(norm[k].dims) - (len(t) - 1) if norm[k].rest_at is None else len(ell)
            labs |= set(ell_labels[len(ell_labels) - n:]) if n > 0 else set()
        terms.append(frozenset(labs))
    out: set = set()
    for x in spec.output:
        out |= set(ell_labels) if x == ELLIPSIS else {x}
    output = frozenset(out)
    union = frozenset().union(*terms) if terms else frozenset()
    naive = _size_of(union, cost_sizes) * max(1, len(terms) - 1)
    if sum(len(t) for t in terms) > len(union):  # opt_einsum's test for an inner product
        naive += _size_of(union, cost_sizes)
    if len(terms) <= 1:
        path = [(0,)] if terms else []
        steps = (ContractionStep(0, 0, spec.canonical(), naive if exact else None),) if terms else ()
        return ContractionPlan(path, naive if exact else None, steps, naive if exact else None)
    if len(terms) <= 4:
        path = _optimal(terms, output, cost_sizes)
    else:
        path = _greedy(terms, output, cost_sizes)
    steps = []
    total = 0
    current = list(terms)
    for i, j in path:
        a, b = current[i], current[j]
        others = [t for n, t in enumerate(current) if n not in (i, j)]
        keep = (a | b) & (output.union(*others) if others else output)
        flops = _step_flops(a | b, keep, 2, cost_sizes)
        total += flops
        steps.append(ContractionStep(i, j, _step_equation(spec, a, b, keep, sizes), flops if exact else None))
        current = others + [keep]
    return ContractionPlan([tuple(p) for p in path], total if exact else None, tuple(steps), naive if exact else None)


def _step_flops(union: frozenset, keep: frozenset, num_terms: int, sizes: dict) -> int:
    size = 1
    for lab in union:
        size *= sizes[lab]
    factor = max(1, num_terms - 1) + (1 if union - keep else 0)
    return size * factor


def _result(a: frozenset, b: frozenset, others: list, output: frozenset) -> frozenset:
    return (a | b) & (output.union(*others) if others else output)


def _optimal(terms: list, output: frozenset, sizes: dict) -> list:
    best: list = [None, None]

    def search(current: list, path: list, cost: int) -> None:
        if best[0] is not None and cost >= best[0]:
            return
        if len(current) == 1:
            best[0], best[1] = cost, list(path)
            return
        for i, j in itertools.combinations(range(len(current)), 2):
            others = [t for n, t in enumerate(current) if n not in (i, j)]
            keep = _result(current[i], current[j], others, output)
            step = _step_flops(current[i] | current[j], keep, 2, sizes)
            path.append((i, j))
            search(others + [keep], path, cost + step)
            path.pop()

    search(list(terms), [], 0)
    return best[1]


def _size_of(labels: frozenset, sizes: dict) -> int:
    n = 1
    for lab in labels:
        n *= sizes[lab]
    return n


def _greedy(terms: list, output: frozenset, sizes: dict) -> list:
    current = list(terms)
    path = []
    while len(current) > 1:
        pairs = [(i, j) for i, j in itertools.combinations(range(len(current)), 2) if current[i] & current[j]]
        if not pairs:
            pairs = list(itertools.combinations(range(len(current)), 2))
        best = None
        for i, j in pairs:
            others = [t for n, t in enumerate(current) if n not in (i, j)]
            keep = _result(current[i], current[j], others, output)
            score = (
                _size_of(keep, sizes) - _size_of(current[i], sizes) - _size_of(current[j], sizes),
                _step_flops(current[i] | current[j], keep, 2, sizes),
            )
            if best is None or score < best[0]:
                best = (score, i, j, others, keep)
        _, i, j, others, keep = best
        path.append((i, j))
        current = others + [keep]
    return path


def _step_equation(spec: EinsumSpec, a: frozenset, b: frozenset, keep: frozenset, sizes: dict) -> str:
    order = list(spec.labels) + sorted(x for x in sizes if x.startswith("..."))

    def term(s: frozenset) -> str:
        labs = [x for x in order if x in s]
        ell = any(x.startswith("...") for x in labs)
        named = [x for x in labs if not x.startswith("...")]
        body = _join_term(named, spec.form)
        if ell:
            body = ELLIPSIS + ((" " if spec.form == "named" and body else "") + body)
        return body

    sep = "," if spec.form == "letters" else ", "
    arrow = "->" if spec.form == "letters" else " -> "
    return term(a) + sep + term(b) + arrow + term(keep)
