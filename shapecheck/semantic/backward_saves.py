"""What autograd saved for backward, per scope: the state behind SC302 and SC308.

Each assignment starts a new *binding* of its target (``(name, version)``). The state records
which binding each op saved for its backward pass (a :class:`SaveRecord`), which records the value
of each binding depends on, the first in-place change of each saved binding, what each binding was
assigned from, and the first ``backward()`` (that did not retain the graph) run on each binding
and through each record (a second backward pass through a freed record raises).

The interpreter updates it after the hooks of a statement ran, in statement order, and joins it at
``if``/``try``/``match`` and loops as it joins the bindings. A save record stays changed after a
join when it is changed on every path that made it: a loop body that saves ``tanh``'s output and
then changes it (``h = torch.tanh(...); h += b``) breaks backward whenever it runs, while a change
on one path of a record that another path also holds is dropped. A name bound differently on the
paths depends on what it depends on along each. Records, dependencies and assigned values belong to
one binding each (a binding is never reused), so the paths of a scope share them; the current
version of each name, the records made, the in-place changes and the backward calls are per path.

A list of tensors holds its elements' records (``hs = [torch.sigmoid(a), ...]``,
``hs.append(h)``): ``hs[0] += 1`` and ``hs[0][:, 0] = 0`` change them in place, while
``hs[0] = v`` only replaces an element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Union

import libcst as cst

from shapecheck.semantic.backward_targets import WRAPPER_ONLY, method_backward_start
from shapecheck.semantic.facts import INT, LEAF_REQUIRES_GRAD, MODULE, NON_LEAF, OPTIMIZER, TENSOR, Fact
from shapecheck.semantic.graph_reads import graph_names_read
from shapecheck.semantic.inplace import (
    augassign_target, inplace_call_targets, subscript_writes, view_base, written_base,
)
from shapecheck.semantic.imports import torch_name
from shapecheck.semantic.optimizer_params import covers
from shapecheck.semantic.saved_tensors import Resolve, below, saved_roles, saving_op
from shapecheck.semantic.syntax import dotted_name, is_number, positional
from shapecheck.semantic.torch_api import OTHER, RESULT, SELF, WEIGHTS
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo

Binding = tuple[str, int]

#: A backward pass is written `.backward(`, `torch.autograd.backward/grad` (however imported) or
#: reads `.grad`: files with none of these words keep no save records.
BACKWARD_WORDS = ("backward", "autograd", ".grad")
FactOf = Callable[[cst.BaseExpression], Fact]
#: what calling a module saves, given the module and whether its input requires grad (see
#: :func:`shapecheck.semantic.layer_saves.module_saves`)
ModuleSaves = Callable[[Fact, Optional[bool]], frozenset[str]]
#: whether calling a module saves its own parameters, given the module and whether any of its
#: inputs requires grad (see :func:`shapecheck.semantic.layer_saves.saves_weights`)
ModuleWeights = Callable[[Fact, Optional[bool]], bool]


class SaveRecord:
    """``op`` (its source text) saved ``binding`` (as its ``role``: self, other or result)."""

    __slots__ = ("_op", "binding", "role", "serial", "node")

    def __init__(self, op: Union[str, Callable[[], str]], binding: Binding, role: str, serial: int = 0,
                 node: Optional[cst.CSTNode] = None) -> None:
        #: the op's source text, or what makes it (read by reports only: made on first use)
        self._op = op
        self.binding = binding
        self.role = role
        #: creation order in the scope: reports list records in this order
        self.serial = serial
        #: the op's node, for the related line of a finding (``None`` when unknown)
        self.node = node

    @property
    def op(self) -> str:
        """The op's source text, on one line."""
        op = self._op
        if not isinstance(op, str):
            op = self._op = op()
        return op


@dataclass
class _Shared:
    """What the paths of one scope share: it only grows, keyed by bindings that are never reused."""

    counter: int = 0
    #: the scope mentions a backward pass (``.backward``/``.grad``): only then are saves recorded
    records: bool = True
    #: a save record was made in the scope (until then no binding depends on any)
    made_any: bool = False
    deps: dict[Binding, frozenset[SaveRecord]] = field(default_factory=dict)
    saved: dict[Binding, list[SaveRecord]] = field(default_factory=dict)
    assigned_from: dict[Binding, tuple[cst.BaseExpression, ...]] = field(default_factory=dict)
    #: the records a binding holds as elements of a list (``hs = [torch.sigmoid(a)]``, ``hs.append(h)``)
    elements: dict[Binding, set[SaveRecord]] = field(default_factory=dict)

    def next(self) -> int:
        """A number not used before in this scope."""
        self.counter += 1
        return self.counter


class BackwardSaves:
    """The save records of one scope along the path the walk is on."""

    __slots__ = ("versions", "changed", "backwards", "freed", "made", "shared")

    def __init__(self, shared: Optional[_Shared] = None) -> None:
        #: name -> version of its current binding (0: the binding the scope started with)
        self.versions: dict[str, int] = {}
        #: save record -> the first statement that changed its tensor in place
        self.changed: dict[SaveRecord, cst.CSTNode] = {}
        #: binding -> the first ``backward()`` on it that did not retain the graph
        self.backwards: dict[Binding, cst.Call] = {}
        #: save record -> the first ``backward()`` that went through it without retaining the graph
        self.freed: dict[SaveRecord, cst.Call] = {}
        #: the save records made on this path
        self.made: set[SaveRecord] = set()
        self.shared = shared if shared is not None else _Shared()

    def copy(self) -> BackwardSaves:
        """The state for another path from here."""
        other = BackwardSaves(self.shared)
        other.versions = dict(self.versions)
        other.changed = dict(self.changed)
        other.backwards = dict(self.backwards)
        other.freed = dict(self.freed)
        other.made = set(self.made)
        return other

    # ------------------------------------------------------------------ queries
    def binding(self, name: str) -> Binding:
        """The current binding of ``name``."""
        return name, self.versions.get(name, 0)

    def deps_of(self, expr: cst.BaseExpression) -> set[SaveRecord]:
        """The save records that the value of ``expr`` depends on (through the names it reads;
        a read through ``t.detach()``, ``t.data`` or ``t.item()`` carries none of ``t``'s)."""
        found: set[SaveRecord] = set()
        if not self.shared.made_any:
            return found  # the scope made no record yet: every binding depends on none
        deps = self.shared.deps
        for name in graph_names_read(expr):
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
        """The ``backward()`` that already ran on the current binding of ``name`` on every path,
        or through a save record its value depends on (the earliest such record's)."""
        binding = self.binding(name)
        found = self.backwards.get(binding)
        if found is not None or not self.freed:
            return found
        freed = [r for r in self.shared.deps.get(binding, ()) if r in self.freed]
        return self.freed[min(freed, key=lambda r: r.serial)] if freed else None

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

    def change(self, name: str, node: cst.CSTNode, replaces_element: bool = False) -> None:
        """``node`` changes the current binding of ``name`` in place; with ``replaces_element``
        it is ``name[i] = v``, which changes no tensor a list holds as an element."""
        changed = self.changed
        binding = self.binding(name)
        held = self.shared.elements.get(binding, set()) if replaces_element else set()
        for record in self.shared.saved.get(binding, ()):
            if record not in changed and record not in held:
                changed[record] = node

    def hold(self, name: str, records: Iterable[SaveRecord], deps: Iterable[SaveRecord]) -> None:
        """The list bound to ``name`` now also holds a tensor saved as ``records`` and whose
        value depends on ``deps`` (``name.append(h)``)."""
        binding = self.binding(name)
        shared = self.shared
        records = list(records)
        for record in records:
            saved = shared.saved.setdefault(binding, [])
            if record not in saved:
                saved.append(record)
        shared.elements.setdefault(binding, set()).update(records)
        shared.deps[binding] = shared.deps.get(binding, frozenset()) | frozenset(deps) | frozenset(records)

    def step(self, modules: frozenset[str], node: cst.Call) -> None:
        """``node`` (an optimizer's ``step()``) changes the parameters of ``modules`` in place:
        the weights that calls of those modules (or of their submodules) saved on this path are
        changed, unless a backward pass already freed them. A call of a module that holds an
        updated one is left alone: its backward may not reach the updated part."""
        changed, freed = self.changed, self.freed
        for record in self.made:
            if record.role == WEIGHTS and record not in changed and record not in freed \
                    and any(covers(m, record.binding[0]) for m in modules):
                changed[record] = node

    def add_record(self, op: Union[str, Callable[[], str]], binding: Binding, role: str,
                   node: Optional[cst.CSTNode] = None) -> SaveRecord:
        """``op`` (the code of ``node``) saved ``binding`` for backward."""
        shared = self.shared
        record = SaveRecord(op, binding, role, shared.next(), node)
        shared.made_any = True
        shared.saved.setdefault(binding, []).append(record)
        self.made.add(record)
        return record


def join_saves(states: list[BackwardSaves], stopped_early: bool = False) -> BackwardSaves:
    """The state after paths meet.

    A name bound differently on some path gets a new binding that depends on the records its
    binding on each path depends on (it keeps the values of every path, when all are known). A
    save record stays changed in place when it is changed on every path that made it (the
    statement kept is the first such path's); with ``stopped_early`` (the start of an ``except``:
    the ``try`` body may have stopped between the save and the change) only when it is changed on
    every path. A binding stays freed by a backward pass only when it is on every path.
    """
    first = states[0]
    if len(states) == 1:
        return first
    rest = states[1:]
    out = BackwardSaves(first.shared)
    assigned = first.shared.assigned_from
    deps = first.shared.deps
    names: set[str] = set()
    if all(s.versions == first.versions for s in rest):
        out.versions = {name: version for name, version in first.versions.items() if version}
    else:
        names.update(first.versions)
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
        path_deps: set[SaveRecord] = set()
        for s in states:
            path_deps |= deps.get(s.binding(name), frozenset())
        out.rebind(name, path_deps, values)
    for s in states:
        out.made |= s.made
        for r, n in s.changed.items():
            if r in out.changed:
                continue
            if all(r in t.changed or (r not in t.made and not stopped_early) for t in states):
                out.changed[r] = n
    out.backwards = {b: c for b, c in first.backwards.items() if all(b in s.backwards for s in rest)}
    out.freed = {r: c for r, c in first.freed.items() if all(r in s.freed for s in rest)}
    return out


def record_saves(state: BackwardSaves, expr: cst.BaseExpression, result: Optional[Binding],
                 fact: FactOf, resolve: Resolve, source: Callable[[cst.CSTNode], str],
                 module_roles: Optional[ModuleSaves] = None,
                 module_weights: Optional[ModuleWeights] = None) -> set[SaveRecord]:
    """Add the save records of every tabled op (and module call) inside ``expr``; return them.

    ``result`` is the binding that receives the value of ``expr`` itself (for ops that save their
    output). Operands whose grad state is unknown make the op's saves unknown: skipped. With
    ``module_weights``, a module call that saves the module's parameters gets a record of them.
    """
    added: set[SaveRecord] = set()
    for node in [expr, *below(expr)]:
        if type(node) is not cst.Call and type(node) is not cst.BinaryOperation:
            continue  # only calls and operators save anything
        found = saving_op(resolve, node)
        if found is None:
            found = _module_call(module_roles, node, fact)
            if found is None:
                continue
        op, self_expr, other_expr = found
        self_grad = fact(self_expr).requires_grad if self_expr is not None else None
        if op == _MODULE_CALL:
            module_fact = fact(node.func)  # type: ignore[union-attr]
            roles: Optional[frozenset[str]] = module_roles(module_fact, self_grad)  # type: ignore[misc]
            module = dotted_name(node.func) if module_weights is not None else None  # type: ignore[union-attr]
            if module is not None and module_weights(  # type: ignore[misc]
                    module_fact, self_grad if self_grad is True else _any_input_grad(node, fact)):  # type: ignore[arg-type]
                # a binding no name has: only an optimizer step over the module changes it
                weights = (module, -state.shared.next())
                added.add(state.add_record(_one_line(source, node), weights, WEIGHTS, node))
        elif other_expr is None:
            roles = saved_roles(op, self_grad, None)
        elif is_number(other_expr):
            roles = saved_roles(op, self_grad, None, other_is_number=True)
        elif is_number(self_expr):
            roles = saved_roles(op, fact(other_expr).requires_grad, None, other_is_number=True)
            roles = None if roles is None else frozenset(OTHER if r == SELF else r for r in roles)
        else:
            roles = saved_roles(op, self_grad, fact(other_expr).requires_grad)
        if not roles:
            if op == _MODULE_CALL and _builds_graph(node, fact):
                graph = ("<graph>", state.shared.next())  # a binding no name has: nothing changes it
                added.add(state.add_record(_one_line(source, node), graph, GRAPH, node))
            continue
        text = _one_line(source, node)
        element = _is_element(expr, node)
        for role in sorted(roles):
            target: Optional[Binding] = None
            if role == RESULT:
                target = result if node is expr or element else None
            else:
                operand = self_expr if role == SELF else other_expr
                dotted = dotted_name(operand) if operand is not None else None
                if dotted is None and operand is not None:
                    dotted = _viewed_tensor(operand, fact)  # `fc(out[:, t - 1])` saves a view of `out`
                target = state.binding(dotted) if dotted is not None else None
            if target is not None:
                record = state.add_record(text, target, role, node)
                added.add(record)
                if role == RESULT and element:
                    state.shared.elements.setdefault(target, set()).add(record)
    return added


def _any_input_grad(call: cst.Call, fact: FactOf) -> Optional[bool]:
    """Whether any positional argument of ``call`` requires grad (``None``: none is known to,
    and some are unknown)."""
    known = True
    for arg in positional(call):
        grad = fact(arg).requires_grad
        if grad is True:
            return True
        known = known and grad is False
    return False if known else None


def _one_line(source: Callable[[cst.CSTNode], str], node: cst.CSTNode) -> Callable[[], str]:
    """What makes the source text of ``node`` on one line (only a report needs it)."""
    return lambda: " ".join(source(node).split())


#: the role of a record that stands for the graph a call of a user's module built (saves unknown)
GRAPH = "graph"
#: the op name :func:`_module_call` gives a call of a module
_MODULE_CALL = "<module call>"


def _module_call(module_roles: Optional[ModuleSaves], node: cst.CSTNode,
                 fact: FactOf) -> Optional[tuple[str, Optional[cst.BaseExpression], None]]:
    """For ``layer(x, ...)`` where ``layer`` is a module: ``(_MODULE_CALL, x, None)``."""
    if module_roles is None or type(node) is not cst.Call or type(node.func) not in (cst.Attribute, cst.Name):
        return None
    args = positional(node)
    if not args or fact(node.func).kind != MODULE:
        return None
    return _MODULE_CALL, args[0], None


def _builds_graph(node: cst.CSTNode, fact: FactOf) -> bool:
    """``node`` calls a module class of the user (not an ``nn`` layer, whose saves the tables
    know) and its result requires grad: the call built a graph, with the tensors its layers
    saved, that a backward pass frees."""
    module = fact(node.func)  # type: ignore[attr-defined]
    qual = module.qual or ""
    return not qual.startswith("torch.") and fact(node).grad == NON_LEAF  # type: ignore[arg-type]


def _viewed_tensor(expr: cst.BaseExpression, fact: FactOf) -> Optional[str]:
    """``x`` for ``x[:, t - 1]``, a view of the tensor named ``x``: it shares ``x``'s version
    counter, so any later in-place write into ``x`` changes what an op saved of the view."""
    base = view_base(expr, lambda index: is_number(index) or fact(index).kind == INT)
    dotted = dotted_name(base) if base is not None else None
    return dotted if dotted is not None and fact(base).kind == TENSOR else None  # type: ignore[arg-type]


def _is_element(expr: cst.BaseExpression, node: cst.CSTNode) -> bool:
    """``node`` is an element of the list or tuple display (or list comprehension) ``expr``."""
    if type(expr) is cst.ListComp:
        return expr.elt is node
    return isinstance(expr, (cst.List, cst.Tuple)) and any(e.value is node for e in expr.elements)


# ---------------------------------------------------------------------- statements
class SavesTracker:
    """Moves the :class:`BackwardSaves` of the current scope over a statement."""

    def __init__(self, fact: FactOf, resolve: Resolve, source: Callable[[cst.CSTNode], str],
                 module_roles: Optional[ModuleSaves] = None,
                 inplace_module: Optional[Callable[[cst.Call], bool]] = None,
                 module_weights: Optional[ModuleWeights] = None) -> None:
        self.fact = fact
        self.resolve = resolve
        self.source = source
        #: what a module call saves (``None``: module calls save nothing known)
        self.module_roles = module_roles
        #: a call of a layer built with ``inplace=True`` (it writes into its first argument)
        self.inplace_module = inplace_module
        #: whether a module call saves the module's parameters (``None``: not recorded)
        self.module_weights = module_weights
        #: the file steps an optimizer (``.step(``): only then are the parameters a call saved recorded
        self.steps = False

    def statement(self, state: BackwardSaves, small: cst.CSTNode, calls: list[cst.Call],
                  grad_enabled: Optional[bool]) -> None:
        """``small`` ran (``calls``: the calls inside it, in source order)."""
        tp = type(small)
        if tp is cst.Assign:
            # the calls of the value run before the store: `h = F.relu(h, inplace=True)` changes the old `h`
            self.calls(state, calls, grad_enabled)
            writes = list(subscript_writes(small))  # type: ignore[arg-type]
            value = small.value  # type: ignore[attr-defined]
            made: Optional[set[SaveRecord]] = None
            if writes and state.shared.records:
                # the value runs first: `out[:, t] = self.fc(out[:, t - 1])` saves a view of `out`, then writes it
                made = state.deps_of(value)
                if grad_enabled is True:
                    made |= record_saves(state, value, None, self.fact, self.resolve, self.source, self.module_roles,
                                   self._weights())
            for target, whole_element in writes:
                self._changed(state, target, small, grad_enabled, whole_element)
                dotted = dotted_name(target)
                if made is not None and dotted is not None and self.fact(target).kind == TENSOR:
                    # the tensor now holds the value written into it (and what that value needs)
                    old = state.shared.deps.get(state.binding(dotted), frozenset())
                    state.rebind(dotted, old | made, ())
            self._assigned(state, [t.target for t in small.targets], value, grad_enabled, made)  # type: ignore[attr-defined]
            return
        if tp is cst.AnnAssign and small.value is not None:  # type: ignore[attr-defined]
            self.calls(state, calls, grad_enabled)
            self._assigned(state, [small.target], small.value, grad_enabled)  # type: ignore[attr-defined]
            return
        if tp is cst.AugAssign:
            # the value runs first: `x += self.ln(x)` saves `x`, then changes it
            value = small.value  # type: ignore[attr-defined]
            added: set[SaveRecord] = set()
            if state.shared.records:
                added = state.deps_of(value)
                if grad_enabled is True:
                    added |= record_saves(state, value, None, self.fact, self.resolve, self.source, self.module_roles,
                                   self._weights())
            self._changed(state, augassign_target(small), small, grad_enabled)  # type: ignore[arg-type]
            dotted = dotted_name(small.target)  # type: ignore[attr-defined]
            if dotted is not None:
                old = state.shared.deps.get(state.binding(dotted), frozenset())
                state.rebind(dotted, old | added, ())
        self.calls(state, calls, grad_enabled)

    def calls(self, state: BackwardSaves, calls: list[cst.Call], grad_enabled: Optional[bool]) -> None:
        """The in-place changes and backward passes of ``calls``."""
        for call in calls:
            for target, _how in inplace_call_targets(self.resolve, call):
                if self._basic_index(target):
                    target = written_base(target)  # `h[0].add_(1)` writes `h`; `hs[-1].mul_(0)` what `hs` holds
                self._changed(state, target, call, grad_enabled)
            if self.inplace_module is not None and self.inplace_module(call):
                self._changed(state, positional(call)[0], call, grad_enabled)
            func = call.func
            if type(func) is cst.Attribute and func.attr.value == "step" and state.shared.made_any:
                updated = self._stepped(call)
                if updated:
                    state.step(updated, call)
            if type(func) is cst.Attribute and func.attr.value == "append" and len(call.args) == 1 \
                    and state.shared.records:
                self._appended(state, func.value, call.args[0].value, grad_enabled)
            if type(func) is cst.Attribute and func.attr.value in ("backward", *WRAPPER_ONLY) \
                    and torch_name(self.resolve, func) is None and not retains_graph(call):
                start = method_backward_start(call, self.fact)
                dotted = dotted_name(start) if start is not None else None
                if dotted is not None:
                    state.backwards.setdefault(state.binding(dotted), call)
                for record in state.deps_of(start) if start is not None else ():
                    state.freed.setdefault(record, call)

    def _weights(self) -> Optional[ModuleWeights]:
        """What tells the parameters a module call saves, in a file that steps an optimizer."""
        return self.module_weights if self.steps else None

    def _stepped(self, call: cst.Call) -> Optional[frozenset[str]]:
        """The modules whose parameters ``call`` changes: ``opt.step()`` (or ``opt.step(closure)``)
        of an optimizer built over them, ``scaler.step(opt)`` of AMP's grad scaler."""
        fact = self.fact(call.func.value)  # type: ignore[attr-defined]
        if fact.kind == OPTIMIZER:
            return fact.updates if len(call.args) <= 1 else None
        args = positional(call)
        if len(args) == 1 and len(call.args) == 1:
            stepped = self.fact(args[0])
            if stepped.kind == OPTIMIZER:
                return stepped.updates
        return None

    def _assigned(self, state: BackwardSaves, targets: list[cst.BaseExpression], value: cst.BaseExpression,
                  grad_enabled: Optional[bool], made: Optional[set[SaveRecord]] = None) -> None:
        """Bind the names of ``targets`` to ``value`` (``made``: the records ``value`` depends on,
        already recorded)."""
        single = dotted_name(targets[0]) if len(targets) == 1 else None
        records = state.shared.records
        deps = made if made is not None else state.deps_of(value) if records else set()
        version = state.shared.next() if single is not None else None
        if records and grad_enabled is True and made is None:
            result = (single, version) if single is not None and version is not None else None
            deps |= record_saves(state, value, result, self.fact, self.resolve, self.source, self.module_roles,
                                   self._weights())
        for target in targets:
            for element in _flat_targets(target):
                dotted = dotted_name(element)
                if dotted is not None:
                    state.rebind(dotted, deps, (value,), version if dotted == single else None)

    def _basic_index(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a subscript by ints and slices only: a view of a tensor (an index tensor
        would make a copy), or an element of a list."""
        if type(expr) is not cst.Subscript:
            return False
        while type(expr) is cst.Subscript:
            for element in expr.slice:
                inner = element.slice
                if type(inner) is cst.Index and not is_number(inner.value) \
                        and self.fact(inner.value).kind != INT:
                    return False
            expr = expr.value
        return True

    def loop_target(self, state: BackwardSaves, target: cst.BaseExpression, iter_expr: cst.BaseExpression) -> None:
        """``for target in iter_expr``: a new binding of each name of ``target``; a plain name
        looping over a list of tensors holds the records of its elements (``for h in hs: h += 1``
        changes them)."""
        deps = state.deps_of(iter_expr) if state.shared.records else set()
        held: list[SaveRecord] = []
        owner = dotted_name(iter_expr)
        if type(target) is cst.Name and owner is not None:
            held = sorted(state.shared.elements.get(state.binding(owner), ()), key=lambda r: r.serial)
        for element in _flat_targets(target):
            name = dotted_name(element)
            if name is None:
                continue
            binding = state.rebind(name, deps, ())
            if held and element is target:
                state.shared.saved.setdefault(binding, []).extend(held)

    def _appended(self, state: BackwardSaves, owner: cst.BaseExpression, value: cst.BaseExpression,
                  grad_enabled: Optional[bool]) -> None:
        """``owner.append(value)``: the list holds the tensor, and the records saved on it."""
        name = dotted_name(owner)
        if name is None:
            return
        held: list[SaveRecord] = []
        value_name = dotted_name(value)
        if value_name is not None:
            held = list(state.shared.saved.get(state.binding(value_name), ()))
        elif grad_enabled is True:
            result = state.binding(name)
            made = record_saves(state, value, result, self.fact, self.resolve, self.source, self.module_roles,
                                   self._weights())
            held = [r for r in made if r.binding == result and r.role == RESULT]
        state.hold(name, held, state.deps_of(value))

    def _changed(self, state: BackwardSaves, target: cst.BaseExpression, node: cst.CSTNode,
                 grad_enabled: Optional[bool], replaces_element: bool = False) -> None:
        dotted = dotted_name(target)
        if dotted is None:
            return
        if grad_enabled is True and self.fact(target).grad == LEAF_REQUIRES_GRAD:
            return  # torch raises at the change itself: a leaf that requires grad, changed in place
        state.change(dotted, node, replaces_element)


def differentiated(method: cst.FunctionDef, cls: cst.ClassDef) -> bool:
    """``method`` of ``cls`` is written to be differentiated: it is ``forward``, or a method that
    ``forward`` calls as ``self.<name>(...)`` (its saves matter without a backward call)."""
    name = method.name.value
    if name == "forward":
        return True
    receiver = method.params.params[0].name.value if method.params.params else None
    return receiver == "self" and name in _forward_helpers(cls)


#: id of a class -> (the class, the methods its forward calls); see :func:`_forward_helpers`
_HELPERS: NodeMemo[frozenset[str]] = NodeMemo()


def _forward_helpers(cls: cst.ClassDef) -> frozenset[str]:
    """The names ``forward`` of ``cls`` calls as ``self.<name>(...)``; none when ``forward`` has a
    ``with`` block (the call may run with grad mode off)."""
    cached = _HELPERS.get(cls)
    if cached is not None:
        return cached
    names: set[str] = set()
    for statement in cls.body.body:
        if type(statement) is cst.FunctionDef and statement.name.value == "forward":
            for node in walk(statement.body):
                if type(node) is cst.With:
                    names.clear()
                    break
                if type(node) is cst.Call:
                    dotted = dotted_name(node.func)
                    if dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
                        names.add(dotted[len("self."):])
    return _HELPERS.put(cls, frozenset(names))


#: id of a scope -> (the scope, whether it mentions a backward pass); see :func:`mentions_backward`
_MENTIONS: NodeMemo[bool] = NodeMemo(limit=4096)


def mentions_backward(scope: cst.CSTNode) -> bool:
    """True when ``scope`` (a function body or the module, nested functions and classes aside)
    reads ``.backward`` or ``.grad``: a scope without a backward pass need not record saves."""
    known = _MENTIONS.get(scope)
    if known is None:
        known = _MENTIONS.put(scope, any(type(node) is cst.Attribute and node.attr.value in ("backward", "grad")
                                         for node in walk(scope)))
    return known


def retains_graph(call: cst.Call) -> bool:
    """``backward(retain_graph=...)`` (or torch 0.3's ``retain_variables=...``) or
    ``create_graph=...`` (not ``False``/``None``): the graph stays for another backward pass."""
    for arg in call.args:
        if arg.keyword is None:
            continue
        word = arg.keyword.value
        value = arg.value
        literal = value.value if type(value) is cst.Name else None
        if word in ("retain_graph", "retain_variables") and literal not in ("False", "None"):
            return True
        if word == "create_graph" and literal != "False":
            return True
    return False


def _flat_targets(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        for element in target.elements:
            yield from _flat_targets(element.value)
    else:
        yield target
