"""The call sites of a file's functions and methods, with the facts of their arguments.

While a file is walked, every call that :func:`~shapecheck.semantic.summaries.resolve_call` (or
``module(x)`` as ``forward``) resolves to a function or method of the same file is recorded with
the facts its parameters start with (:func:`record`); a later record of the same call replaces
the earlier one (the second pass over a loop body sees the facts of the loop). :func:`context_of`
joins the records of one callee into the facts that every call site agrees on: what the engine
re-walks the callee's body with, so that the rules see it with the facts of its callers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, Device, MODULE, NON_CONTIGUOUS, UNKNOWN, Fact, join
from shapecheck.semantic.summaries import Callee


@dataclass(frozen=True)
class Site:
    """One call of a callee: the call, the facts each parameter starts with, the grad mode there."""

    callee: Callee
    call: cst.Call
    bound: dict[str, Fact]
    grad: Optional[bool]


@dataclass(frozen=True)
class Context:
    """The join of the call sites of one callee: the facts its parameters start with (only the
    parameters whose join says something), the join of the receivers of a method (``self``),
    the grad mode every site agrees on (``None``: they disagree or do not know), and the calls
    it comes from."""

    callee: Callee
    facts: dict[str, Fact]
    receiver: Optional[Fact]
    grad: Optional[bool]
    calls: tuple[cst.Call, ...]

    def same(self, other: Optional["Context"]) -> bool:
        """The same parameter facts and grad mode (the calls may differ)."""
        if other is None or self.grad != other.grad or self.facts.keys() != other.facts.keys():
            return False
        if (self.receiver is None) != (other.receiver is None) or (
                self.receiver is not None and other.receiver is not None and not self.receiver.same(other.receiver)):
            return False
        return all(f.same(other.facts[name]) for name, f in self.facts.items())


#: id of a callee's FunctionDef -> (id of a call -> its site)
Sites = dict[int, dict[int, Site]]


def record(sites: Sites, callee: Callee, call: cst.Call, bound: dict[str, Fact], grad: Optional[bool]) -> None:
    """Remember that ``call`` runs ``callee`` with its parameters bound to ``bound``."""
    if callee.home is not None:
        return  # a function of another file: its own file has its call sites
    sites.setdefault(id(callee.node), {})[id(call)] = Site(callee, call, dict(bound), grad)


def context_of(found: dict[int, Site], skip: Optional[str]) -> Optional[Context]:
    """The join of the sites of one callee (``skip``: the receiver parameter, never rebound), or
    ``None`` when no parameter gets a fact from it."""
    sites = list(found.values())
    if not sites:
        return None
    names = set(sites[0].bound)
    for s in sites[1:]:
        names &= set(s.bound)
    facts: dict[str, Fact] = {}
    receiver: Optional[Fact] = None
    for name in sorted(names):
        joined = sites[0].bound[name]
        for s in sites[1:]:
            joined = join(joined, s.bound[name])
        if name == skip:
            receiver = joined
        elif not joined.same(UNKNOWN):
            facts[name] = joined
    if not any(_worth_a_walk(f) for f in facts.values()):
        return None
    grads = {s.grad for s in sites}
    grad = grads.pop() if len(grads) == 1 else None
    return Context(sites[0].callee, facts, receiver, grad, tuple(s.call for s in sites))


def _worth_a_walk(f: Fact) -> bool:
    """A fact that a rule may act on and that a parameter never has without its callers: a
    device, a module (its class, device or parameters), a leaf that requires grad, a concrete
    shape, a layout other than contiguous, or dims moved by a transpose or permute (or a list or
    tuple holding such a fact). Facts that only say "a tensor" or "an int" (the evidence of the
    body mostly says as much) are bound when another parameter starts the walk, but start none
    themselves: the walk costs a rule pass."""
    if isinstance(f.device, Device) or f.grad == LEAF_REQUIRES_GRAD:
        return True
    if f.kind is None and f.elems and not f.maybe_pair:
        return any(_worth_a_walk(e) for e in f.elems)  # `[(x, y)]`: a list of batches
    if f.kind == MODULE:
        return f.qual is not None or f.trainable is not None
    if f.layout == NON_CONTIGUOUS or f.moved_by is not None:
        return True
    shape = f.shape
    return shape is not None and shape.rest_at is None and all(isinstance(d, int) for d in shape.dims)
