"""What autograd saved for backward, per scope: the state behind SC302 and SC308.

Each assignment starts a new *binding* of its target (``(name, version)``). The state records
which binding each op saved for its backward pass (a :class:`SaveRecord`), which records the value
of each binding depends on, the first in-place change of each saved binding, what each binding was
assigned from, and the first ``backward()`` (that did not retain the graph) run on each binding.

The interpreter updates it after the hooks of a statement ran, in statement order, and joins it at
``if``/``try``/``match`` and loops as it joins the bindings: what is not the same on every path is
dropped, so it never flags. Records, dependencies and assigned values belong to one binding each
(a binding is never reused), so the paths of a scope share them; the current version of each name,
the in-place changes and the backward calls are per path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, Fact
from shapecheck.semantic.inplace import augassign_target, inplace_call_targets, subscript_targets
from shapecheck.semantic.saved_tensors import (
    Resolve, below, names_read, saved_roles, saving_op, torch_name,
)
from shapecheck.semantic.syntax import dotted_name, is_number
from shapecheck.semantic.torch_api import OTHER, RESULT, SELF
from shapecheck.semantic.walk import walk

Binding = tuple[str, int]

#: A backward pass is written `.backward(`, `torch.autograd.backward/grad` (however imported) or
#: reads `.grad`: files with none of these words keep no save records.
BACKWARD_WORDS = ("backward", "autograd", ".grad")
FactOf = Callable[[cst.BaseExpression], Fact]


@dataclass(eq=False)
class SaveRecord:
    """``op`` (its source text) saved ``binding`` (as its ``role``: self, other or result)."""

    op: str
    binding: Binding
    role: str
    #: creation order in the scope: reports list records in this order
    serial: int = 0


@dataclass
class _Shared:
    """What the paths of one scope share: it only grows, keyed by bindings that are never reused."""

    counter: int = 0
    #: the scope mentions a backward pass (``.backward``/``.grad``): only then are saves recorded
    records: bool = True
    deps: dict[Binding, frozenset[SaveRecord]] = field(default_factory=dict)
    saved: dict[Binding, list[SaveRecord]] = field(default_factory=dict)
    assigned_from: dict[Binding, tuple[cst.BaseExpression, ...]] = field(default_factory=dict)

    def next(self) -> int:
        """A number not used before in this scope."""
        self.counter += 1
        return self.counter


class BackwardSaves:
    """The save records of one scope along the path the walk is on."""

    __slots__ = ("versions", "changed", "backwards", "shared")

    def __init__(self, shared: Optional[_Shared] = None) -> None:
        #: name -> version of its current binding (0: the binding the scope started with)
        self.versions: dict[str, int] = {}
        #: save record -> the first statement that changed its tensor in place
        self.changed: dict[SaveRecord, cst.CSTNode] = {}
        #: binding -> the first ``backward()`` on it that did not retain the graph
        self.backwards: dict[Binding, cst.Call] = {}
        self.shared = shared if shared is not None else _Shared()

    def copy(self) -> BackwardSaves:
        """The state for another path from here."""
        other = BackwardSaves(self.shared)
        other.versions = dict(self.versions)
        other.changed = dict(self.changed)
        other.backwards = dict(self.backwards)
        return other

    # ------------------------------------------------------------------ queries
    def binding(self, name: str) -> Binding:
        """The current binding of ``name``."""
        return name, self.versions.get(name, 0)

    def deps_of(self, expr: cst.BaseExpression) -> set[SaveRecord]:
        """The save records that the value of ``expr`` depends on (through the names it reads)."""
        found: set[SaveRecord] = set()
        deps = self.shared.deps
        for name in names_read(expr):
            found |= deps.get(self.binding(name), frozenset())
        return found

    def changed_saves(self, expr: cst.BaseExpression) -> list[tuple[SaveRecord, cst.CSTNode]]:
        """The records ``expr`` depends on whose tensor was changed in place since, in save order."""
        out = [(r, self.changed[r]) for r in self.deps_of(expr) if r in self.changed]
        out.sort(key=lambda pair: pair[0].serial)
        return out

    def assigned_values(self, name: str) -> tuple[cst.BaseExpression, ...]:
        """The expressions the current binding of ``name`` was assigned from, one per path that
        bound it differently (empty: unknown on some path)."""
        return self.shared.assigned_from.get(self.binding(name), ())

    def freed_by(self, name: str) -> Optional[cst.Call]:
        """The ``backward()`` that already ran on the current binding of ``name`` on every path."""
        return self.backwards.get(self.binding(name))

    # ------------------------------------------------------------------ updates
    def rebind(self, name: str, deps: Iterable[SaveRecord], values: tuple[cst.BaseExpression, ...],
               version: Optional[int] = None) -> Binding:
        """Start a new binding of ``name`` whose value depends on ``deps``, assigned from
        ``values`` (empty: unknown)."""
        shared = self.shared
        self.versions[name] = version if version is not None else shared.next()
        binding = self.binding(name)
        shared.deps[binding] = frozenset(deps)
        if values:
            shared.assigned_from[binding] = values
        return binding

    def change(self, name: str, node: cst.CSTNode) -> None:
        """``node`` changes the current binding of ``name`` in place."""
        changed = self.changed
        for record in self.shared.saved.get(self.binding(name), ()):
            if record not in changed:
                changed[record] = node

    def add_record(self, op: str, binding: Binding, role: str) -> SaveRecord:
        """``op`` saved ``binding`` for backward."""
        shared = self.shared
        record = SaveRecord(op, binding, role, shared.next())
        shared.saved.setdefault(binding, []).append(record)
        return record


def join_saves(states: list[BackwardSaves]) -> BackwardSaves:
    """The state after paths meet: what is not so on every path is dropped.

    A name bound differently on some path gets a new binding that depends on no save record (it
    keeps the values of every path, when all are known). A save record stays changed in place,
    and a binding stays freed by a backward pass, only when it is on every path (the statement
    kept is the first path's).
    """
    first = states[0]
    if len(states) == 1:
        return first
    rest = states[1:]
    out = BackwardSaves(first.shared)
    assigned = first.shared.assigned_from
    names = set(first.versions)
    for s in rest:
        names |= s.versions.keys()
    for name in names:
        version = first.versions.get(name, 0)
        if all(s.versions.get(name, 0) == version for s in rest):
            if version:
                out.versions[name] = version
            continue
        values: tuple[cst.BaseExpression, ...] = ()
        for s in states:
            path_values = assigned.get(s.binding(name), ())
            if not path_values:
                values = ()
                break
            values += tuple(v for v in path_values if v not in values)
        out.rebind(name, (), values)
    out.changed = {r: n for r, n in first.changed.items() if all(r in s.changed for s in rest)}
    out.backwards = {b: c for b, c in first.backwards.items() if all(b in s.backwards for s in rest)}
    return out


def record_saves(state: BackwardSaves, expr: cst.BaseExpression, result: Optional[Binding],
                 fact: FactOf, resolve: Resolve, source: Callable[[cst.CSTNode], str]) -> set[SaveRecord]:
    """Add the save records of every tabled op inside ``expr``; return them.

    ``result`` is the binding that receives the value of ``expr`` itself (for ops that save their
    output). Operands whose grad state is unknown make the op's saves unknown: skipped.
    """
    added: set[SaveRecord] = set()
    for node in [expr, *below(expr)]:
        found = saving_op(resolve, node)
        if found is None:
            continue
        op, self_expr, other_expr = found
        self_grad = fact(self_expr).requires_grad if self_expr is not None else None
        if other_expr is None:
            roles = saved_roles(op, self_grad, None)
        elif is_number(other_expr):
            roles = saved_roles(op, self_grad, None, other_is_number=True)
        elif is_number(self_expr):
            roles = saved_roles(op, fact(other_expr).requires_grad, None, other_is_number=True)
            roles = None if roles is None else frozenset(OTHER if r == SELF else r for r in roles)
        else:
            roles = saved_roles(op, self_grad, fact(other_expr).requires_grad)
        if not roles:
            continue
        text = " ".join(source(node).split())
        for role in sorted(roles):
            target: Optional[Binding] = None
            if role == RESULT:
                target = result if node is expr else None
            else:
                operand = self_expr if role == SELF else other_expr
                dotted = dotted_name(operand) if operand is not None else None
                target = state.binding(dotted) if dotted is not None else None
            if target is not None:
                added.add(state.add_record(text, target, role))
    return added


# ---------------------------------------------------------------------- statements
class SavesTracker:
    """Moves the :class:`BackwardSaves` of the current scope over a statement."""

    def __init__(self, fact: FactOf, resolve: Resolve, source: Callable[[cst.CSTNode], str]) -> None:
        self.fact = fact
        self.resolve = resolve
        self.source = source

    def statement(self, state: BackwardSaves, small: cst.CSTNode, calls: list[cst.Call],
                  grad_enabled: Optional[bool]) -> None:
        """``small`` ran (``calls``: the calls inside it, in source order)."""
        tp = type(small)
        if tp is cst.Assign:
            for target in subscript_targets(small):  # type: ignore[arg-type]
                self._changed(state, target, small, grad_enabled)
            self._assigned(state, [t.target for t in small.targets], small.value, grad_enabled)  # type: ignore[attr-defined]
        elif tp is cst.AnnAssign and small.value is not None:  # type: ignore[attr-defined]
            self._assigned(state, [small.target], small.value, grad_enabled)  # type: ignore[attr-defined]
        elif tp is cst.AugAssign:
            self._changed(state, augassign_target(small), small, grad_enabled)  # type: ignore[arg-type]
            dotted = dotted_name(small.target)  # type: ignore[attr-defined]
            if dotted is not None:
                old = state.shared.deps.get(state.binding(dotted), frozenset())
                state.rebind(dotted, old, ())
        self.calls(state, calls, grad_enabled)

    def calls(self, state: BackwardSaves, calls: list[cst.Call], grad_enabled: Optional[bool]) -> None:
        """The in-place changes and backward passes of ``calls``."""
        for call in calls:
            for target, _how in inplace_call_targets(self.resolve, call):
                self._changed(state, target, call, grad_enabled)
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "backward" \
                    and torch_name(self.resolve, func) is None and not retains_graph(call):
                dotted = dotted_name(func.value)
                if dotted is not None:
                    state.backwards.setdefault(state.binding(dotted), call)

    def _assigned(self, state: BackwardSaves, targets: list[cst.BaseExpression], value: cst.BaseExpression,
                  grad_enabled: Optional[bool]) -> None:
        single = dotted_name(targets[0]) if len(targets) == 1 else None
        records = state.shared.records
        deps = state.deps_of(value) if records else set()
        version = state.shared.next() if single is not None else None
        if records and grad_enabled is True:
            result = (single, version) if single is not None and version is not None else None
            deps |= record_saves(state, value, result, self.fact, self.resolve, self.source)
        for target in targets:
            for element in _flat_targets(target):
                dotted = dotted_name(element)
                if dotted is not None:
                    state.rebind(dotted, deps, (value,), version if dotted == single else None)

    def _changed(self, state: BackwardSaves, target: cst.BaseExpression, node: cst.CSTNode,
                 grad_enabled: Optional[bool]) -> None:
        dotted = dotted_name(target)
        if dotted is None:
            return
        if grad_enabled is True and self.fact(target).grad == LEAF_REQUIRES_GRAD:
            return  # torch raises at the change itself: a leaf that requires grad, changed in place
        state.change(dotted, node)


def mentions_backward(scope: cst.CSTNode) -> bool:
    """True when ``scope`` (a function body or the module, nested functions and classes aside)
    reads ``.backward`` or ``.grad``: a scope without a backward pass need not record saves."""
    for node in walk(scope):
        if type(node) is cst.Attribute and node.attr.value in ("backward", "grad"):
            return True
    return False


def retains_graph(call: cst.Call) -> bool:
    """``backward(retain_graph=...)`` or ``create_graph=...`` (not ``False``/``None``): the graph
    stays for another backward pass."""
    for arg in call.args:
        if arg.keyword is None:
            continue
        word = arg.keyword.value
        value = arg.value
        literal = value.value if isinstance(value, cst.Name) else None
        if word == "retain_graph" and literal not in ("False", "None"):
            return True
        if word == "create_graph" and literal != "False":
            return True
    return False


def _flat_targets(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flat_targets(element.value)
    else:
        yield target
