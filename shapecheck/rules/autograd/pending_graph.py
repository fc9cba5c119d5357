"""Where a function holds a graph it has still to back-propagate.

A function that builds a loss and calls ``backward()`` on it holds, between the two, a graph
whose saved tensors autograd will read at the ``backward()``. A statement of that function sits
*inside the window* of one of its tensors when, in source order, a statement the loss depends
on (the loss's own assignment, and through the names it reads, theirs) used that tensor's owner
before it, and the ``backward()`` comes after it. The owner is the dotted name the tensor is
reached through (``self.fc`` for ``self.fc.weight``, ``model`` for the variable of ``for p in
model.parameters()``); a use is a read of that name, of a part of it or of what holds it.

Control flow is not followed: the order is the order of the text, which in a loop body is the
order of one iteration. A backward pass counts in every spelling the rules know:
``loss.backward()``, ``torch.autograd.backward(loss)``/``grad(loss, ...)``, and a wrapper's
``accelerator.backward(loss)`` (both its receiver and its argument are roots).
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.helpers.calls import dotted_name, method_call, positional
from shapecheck.semantic.saved_tensors import names_read
from shapecheck.semantic.syntax import sub_blocks, target_names
from shapecheck.semantic.walk import walk

#: how many assignments deep the loss's dependencies are followed
_DEPTH = 8


class _Scope:
    """The statements of one function (or of the module level) in source order, its assignments
    and its backward calls."""

    def __init__(self, ctx, body) -> None:
        self.order: dict[int, int] = {}
        self.reads: list[set[str]] = []
        self.assigned: dict[str, list[int]] = {}
        self.backwards: list[tuple[int, list[cst.BaseExpression]]] = []
        self.returns: list[tuple[int, list[cst.BaseExpression]]] = []
        self.loops: list[tuple[int, ...]] = []
        #: the assignments that bind a new leaf (see :func:`_new_leaf`)
        self.leaves: set[int] = set()
        for stmt, loops in _statements(body, ()):
            index = len(self.reads)
            self.order[id(stmt)] = index
            self.loops.append(loops)
            self.reads.append(_reads_of(stmt))
            if type(stmt) is cst.Assign and _new_leaf(stmt.value):
                self.leaves.add(index)
            for name in _targets_of(stmt):
                self.assigned.setdefault(name, []).append(index)
            if type(stmt) is cst.Return and stmt.value is not None:
                self.returns.append((index, [stmt.value]))
            for node in _header_nodes(stmt):
                if type(node) is cst.Call:
                    roots = _backward_roots(ctx, node)
                    if roots:
                        self.backwards.append((index, roots))

    def inside(self, index: int, owner: str) -> bool:
        """Statement ``index`` sits between a use of ``owner`` in a loss's dependencies and that
        loss's backward."""
        for back, roots in self.backwards:
            if back <= index or not self._same_pass(back, index):
                continue
            for used in self._dependencies(roots, back):
                if used < index and self._same_pass(back, used) \
                        and any(_related(name, owner) for name in self.reads[used]):
                    return True
        return False

    def _same_pass(self, back: int, index: int) -> bool:
        """Statement ``index`` runs in the same pass as the backward at ``back``: inside the
        innermost loop around the backward, when there is one (a statement before a training
        loop runs once, not between a forward pass and its backward)."""
        around = self.loops[back]
        return not around or around[-1] in self.loops[index]

    def feeds(self, index: int) -> bool:
        """Statement ``index`` is one a later backward's loss depends on."""
        return any(back > index and index in self._dependencies(roots, back) for back, roots in self.backwards)

    def returned(self, index: int) -> bool:
        """Statement ``index`` is a ``return`` or one a returned value depends on."""
        return any(end >= index and index in self._dependencies(values, end) for end, values in self.returns)

    def _dependencies(self, roots: list[cst.BaseExpression], back: int) -> set[int]:
        """The statements before ``back`` the roots' values come from (the backward's own
        statement included: ``criterion(model(x), y).backward()``)."""
        found = {back}
        reads = {(name, back) for r in roots for name in names_read(r)}
        seen: set[tuple[str, int]] = set()
        for _ in range(_DEPTH):
            fresh: set[tuple[str, int]] = set()
            for name, reader in reads - seen:
                seen.add((name, reader))
                for target, places in self.assigned.items():
                    if name != target and not name.startswith(target + "."):
                        continue
                    # a new leaf bound to the name before the read hides what the name held before it
                    start = max((p for p in places if p < reader and p in self.leaves), default=-1)
                    for place in places:
                        if start <= place < back and place not in found:
                            found.add(place)
                            fresh |= {(read, place) for read in self.reads[place]}
            if not fresh - seen:
                break
            reads = fresh
        return found


def _related(name: str, owner: str) -> bool:
    """``name`` is ``owner``, a part of it, or holds it (``self`` alone relates to nothing)."""
    if "self" in (name, owner):
        return False
    return name == owner or owner.startswith(name + ".") or name.startswith(owner + ".")


def _statements(block, loops: tuple[int, ...]) -> Iterator[tuple[cst.CSTNode, tuple[int, ...]]]:
    """Small statements and compound statement headers, in source order, without nested
    definitions, each with the loops it runs in (their ids, outermost first)."""
    for stmt in block:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                yield small, loops
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            yield stmt, loops
            inner = (*loops, id(stmt)) if type(stmt) in (cst.For, cst.While) else loops
            for sub in sub_blocks(stmt):
                yield from _statements(sub, inner)


_HEADER_FIELDS = ("test", "iter", "target", "items")


def _header_nodes(stmt: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of a small statement, or of a compound statement's header."""
    if isinstance(stmt, cst.BaseSmallStatement):
        yield from walk(stmt)
        return
    for field in _HEADER_FIELDS:
        part = getattr(stmt, field, None)
        for item in part if isinstance(part, (list, tuple)) else (part,):
            if isinstance(item, cst.CSTNode):
                yield item
                yield from walk(item)


def _reads_of(stmt: cst.CSTNode) -> set[str]:
    """The dotted names a statement (or header) reads: of an assignment, those its value reads."""
    names: set[str] = set()
    value = getattr(stmt, "value", None) if type(stmt) in (cst.Assign, cst.AnnAssign) else None
    if value is not None and _new_leaf(value):
        return names  # no gradient flows back into what a new leaf is made from
    for node in _header_nodes(stmt) if value is None else (value, *walk(value)):
        if type(node) in (cst.Name, cst.Attribute):
            dotted = dotted_name(node)
            if dotted is not None:
                names.add(dotted)
    return names


def _new_leaf(value: cst.BaseExpression) -> bool:
    """``value`` is a new leaf tensor that requires grad, made from the values it reads:
    ``Variable(x, requires_grad=True)`` (WGAN-GP's interpolate), ``x.requires_grad_()``,
    ``nn.Parameter(x)``."""
    if type(value) is not cst.Call:
        return False
    method = method_call(value)
    if method is not None and method[1] == "requires_grad_":
        return True
    name = (dotted_name(value.func) or "").split(".")[-1]
    if name == "Parameter":
        return True
    return name == "Variable" and any(
        a.keyword is not None and a.keyword.value == "requires_grad" and type(a.value) is cst.Name
        and a.value.value == "True" for a in value.args)


def _targets_of(stmt: cst.CSTNode) -> list[str]:
    """The dotted names a statement binds (``x = ...``, ``x += ...``, ``self.h: T = ...``)."""
    if type(stmt) is cst.Assign:
        return [n for t in stmt.targets for n in _target_dotted(t.target)]
    if type(stmt) in (cst.AugAssign, cst.AnnAssign):
        return _target_dotted(stmt.target)  # type: ignore[attr-defined]
    return []


def _target_dotted(target: cst.BaseExpression) -> list[str]:
    dotted = dotted_name(target)
    return [dotted] if dotted is not None else target_names(target)


def _backward_roots(ctx, call: cst.Call) -> list[cst.BaseExpression]:
    """The expressions a backward pass starts from: the receiver of ``.backward()`` and, for a
    wrapper's ``accelerator.backward(loss)``, its first argument; the tensors given to
    ``torch.autograd.backward``/``grad``."""
    root = backward_root(ctx, call)
    if root is None:
        return []
    mcall = method_call(call)
    if mcall is not None and mcall[1] == "backward":
        return [mcall[0], *positional(call)[:1]]  # either may be the loss
    return [root]


def _scope_of(ctx, cache: dict) -> tuple[_Scope, Optional[int]]:
    """The order of the current function (or module level), and the index of the statement
    being analysed in it; ``cache`` is the rule's, per scope."""
    scope = ctx.function or ctx.module
    held = cache.get(id(scope))
    if held is None or held[0] is not scope:
        body = scope.body.body if type(scope) is cst.FunctionDef else scope.body
        held = cache[id(scope)] = (scope, _Scope(ctx, body))
    stmt = ctx.statement
    return held[1], (held[1].order.get(id(stmt)) if stmt is not None else None)


def inside_pending_graph(ctx, owner: str, cache: dict) -> bool:
    """The statement being analysed sits, in its function (or at the module level), between a
    use of ``owner`` that a loss depends on and that loss's ``backward()``."""
    info, index = _scope_of(ctx, cache)
    return index is not None and info.inside(index, owner)


def feeds_return(ctx, cache: dict) -> bool:
    """The statement being analysed computes (part of) what its function returns."""
    info, index = _scope_of(ctx, cache)
    return index is not None and info.returned(index)


def feeds_backward(ctx, cache: dict) -> bool:
    """The statement being analysed computes something a later ``backward()`` of its function
    (or of the module level) starts from: the loss, or a value the loss is computed from."""
    info, index = _scope_of(ctx, cache)
    return index is not None and info.feeds(index)


def loop_owner(ctx, name: str) -> Optional[str]:
    """For the variable of an enclosing ``for p in M.parameters()`` (or ``for n, p in
    M.named_parameters()``): ``M``'s dotted name."""
    for loop in reversed(ctx.loops):
        if type(loop) is not cst.For or name not in target_names(loop.target):
            continue
        call = method_call(loop.iter)
        if call is not None and call[1] in ("parameters", "named_parameters"):
            return dotted_name(call[0])
        return None
    return None
