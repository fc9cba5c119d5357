"""The call sites of a file's functions and methods, with the facts of their arguments.

While a file is walked, every call that :func:`~shapecheck.semantic.summaries.resolve_call` (or
``module(x)`` as ``forward``) resolves to a function or method of the same file is recorded with
the facts its parameters start with (:func:`record`); a later record of the same call replaces
the earlier one (the second pass over a loop body sees the facts of the loop). :func:`context_of`
joins the records of one callee into the facts that every call site agrees on: what the engine
re-walks the callee's body with, so that the rules see it with the facts of its callers.

A call made at module level (a script's ``train()``, ``main()`` under ``if __name__ ==
"__main__":``) runs the callee right then, so the module-level names the callee reads hold what
the module scope holds at the call. Those that a function does not otherwise see (bound more
than once at module level, ``data = batchify(data, 20)``, or bound only after its ``def``) are
recorded with the site (:func:`script_globals`): when every call site of the callee is at module
level, its walk with the facts of its callers binds them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, Device, MODULE, NON_CONTIGUOUS, UNKNOWN, Fact, join
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.node_memo import NodeMemo
from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.scopes import without_symbols
from shapecheck.semantic.summaries import Callee
from shapecheck.semantic.syntax import all_params
from shapecheck.semantic.walk import walk


@dataclass(frozen=True)
class Site:
    """One call of a callee: the call, the facts each parameter starts with, the grad mode there."""

    callee: Callee
    call: cst.Call
    bound: dict[str, Fact]
    grad: Optional[bool]
    #: for a call at module level: the module-level names the callee reads that a function does
    #: not otherwise see, with their facts at the call (:func:`script_globals`)
    script: Optional[dict[str, Fact]] = None


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
    #: module-level names and their facts at the calls, when every call is at module level
    script: dict[str, Fact] = field(default_factory=dict)

    def same(self, other: Optional["Context"]) -> bool:
        """The same parameter and module-level facts and grad mode (the calls may differ)."""
        if other is None or self.grad != other.grad or self.facts.keys() != other.facts.keys() \
                or self.script.keys() != other.script.keys():
            return False
        if (self.receiver is None) != (other.receiver is None) or (
                self.receiver is not None and other.receiver is not None and not self.receiver.same(other.receiver)):
            return False
        return all(f.same(other.facts[name]) for name, f in self.facts.items()) \
            and all(f.same(other.script[name]) for name, f in self.script.items())


#: id of a callee's FunctionDef -> (id of a call -> its site)
Sites = dict[int, dict[int, Site]]


def record(sites: Sites, callee: Callee, call: cst.Call, bound: dict[str, Fact], grad: Optional[bool],
           model: Optional[SemanticModel] = None) -> None:
    """Remember that ``call`` runs ``callee`` with its parameters bound to ``bound`` (``model``:
    the caller's, for the module-level names of a call made at module level)."""
    if callee.home is not None:
        return  # a function of another file: its own file has its call sites
    script = script_globals(model, callee.node) if model is not None else None
    sites.setdefault(id(callee.node), {})[id(call)] = Site(callee, call, dict(bound), grad, script)


#: id of a function -> the names its body reads and never binds, its parameters excluded
_FREE_NAMES: NodeMemo[frozenset[str]] = NodeMemo()


def _free_names(fn: cst.FunctionDef) -> frozenset[str]:
    """The names ``fn``'s body reads that neither it (nor a function nested in it) binds nor its
    parameters are: the module-level names it may read."""
    found = _FREE_NAMES.get(fn)
    if found is None:
        read = {node.value for node in walk(fn.body, into_defs=True) if type(node) is cst.Name}
        read -= rebound_names(fn)
        read.difference_update(p.name.value for p in all_params(fn.params))
        found = _FREE_NAMES.put(fn, frozenset(read))
    return found


def script_globals(model: SemanticModel, fn: cst.FunctionDef) -> Optional[dict[str, Fact]]:
    """For a call of ``fn`` made at module level: the module-level names ``fn`` reads that a
    function does not see from its ``def`` on (bound more than once there, or only after the
    ``def``), with their facts now; ``None`` for a call made anywhere else. A name some
    function declares ``global`` is left out: a call may rebind it."""
    scopes = model.scopes
    if scopes.top is not scopes.module:
        return None
    env = scopes.module.env
    once = model.module_globals
    out: dict[str, Fact] = {}
    for name in _free_names(fn):
        if name in once and name in model.globals_at_def.get(id(fn), ()):
            continue  # the function sees it from its ``def`` on
        if name not in model.module_names or name in model.declared_globals:
            continue
        f = env.get(name)
        if f is not None:
            out[name] = without_symbols(f)
    return out


def context_of(found: dict[int, Site], skip: Optional[str]) -> Optional[Context]:
    """The join of the sites of one callee (``skip``: the receiver parameter, never rebound), or
    ``None`` when no parameter gets a fact from it."""
    sites = list(found.values())
    if not sites:
        return None
    facts: dict[str, Fact] = {}
    receiver: Optional[Fact] = None
    for name, joined in _joined([s.bound for s in sites]).items():
        if name == skip:
            receiver = joined
        elif not joined.same(UNKNOWN):
            facts[name] = joined
    script: dict[str, Fact] = {}
    if all(s.script is not None for s in sites):
        script = {name: f for name, f in _joined([s.script for s in sites]).items()  # type: ignore[misc]
                  if not f.same(UNKNOWN)}
    if not any(_worth_a_walk(f) for f in facts.values()) and not any(_worth_a_walk(f) for f in script.values()):
        return None
    grads = {s.grad for s in sites}
    grad = grads.pop() if len(grads) == 1 else None
    return Context(sites[0].callee, facts, receiver, grad, tuple(s.call for s in sites), script)


def _joined(bindings: list[dict[str, Fact]]) -> dict[str, Fact]:
    """The names every one of ``bindings`` binds, each to the join of its facts (by name)."""
    names = set(bindings[0])
    for b in bindings[1:]:
        names &= set(b)
    out: dict[str, Fact] = {}
    for name in sorted(names):
        joined = bindings[0][name]
        for b in bindings[1:]:
            joined = join(joined, b[name])
        out[name] = joined
    return out


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
