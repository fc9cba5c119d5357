"""The value a name of the function being checked holds at one place, read from straight-line code.

Rules that recognise a pattern across two statements (``out = self.conv(x)`` then ``out +
self.bias``; ``mean = x.mean(1, keepdim=True)`` then ``x - mean``) read the value the latest
plain assignment before that place gave the name, and nothing when control flow could have
given it another.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, repeat
from typing import Any, Iterable, Iterator, Optional, Sequence

import libcst as cst

from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.syntax import all_params, sub_blocks, target_names, with_targets
from shapecheck.semantic.walk import child_nodes, walk
from shapecheck.semantic.node_memo import NodeMemo

__all__ = [
    "branch_values", "call_bound_names", "declared_globals", "module_value", "side_assignments",
    "unchanged_between", "value_before",
]


#: per statement (kept alive with it): the names it binds; per function body: the path of every
#: node in it. Rules ask for many names at many places of one function, so each is built once.
_BOUND: NodeMemo[frozenset[str]] = NodeMemo(limit=50_000)
_PATHS: NodeMemo[dict[int, list[tuple[Sequence[cst.CSTNode], int]]]] = NodeMemo(limit=4096)


def _bound_names(stmt: cst.CSTNode) -> frozenset[str]:
    """The names ``stmt`` (or a statement inside it) binds."""
    cached = _BOUND.get(stmt)
    if cached is not None:
        return cached
    names: set[str] = set()
    inner = sub_blocks(stmt)
    nested = {id(s) for sub in inner for s in sub}
    _add_bound(stmt, names)
    for node in _walk_outside(stmt, nested) if nested else walk(stmt):
        if type(node) in _BINDING_KINDS:
            _add_bound(node, names)
    return _BOUND.put(stmt, _with_inner(names, inner))


def _with_inner(names: set[str], inner: list) -> frozenset[str]:
    """``names`` with those the statements of the blocks ``inner`` bind."""
    for sub in inner:
        for s in sub:
            if type(s) is cst.FunctionDef or type(s) is cst.ClassDef:
                _add_bound(s, names)  # the walk of a block does not enter a nested definition
            else:
                names.update(_bound_names(s))
    return frozenset(names)


#: the nodes that bind names (see :func:`_add_bound`)
_BINDING_KINDS = frozenset({cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr,
                            cst.FunctionDef, cst.ClassDef, cst.With})


def _add_bound(node: Any, names: set[str]) -> None:
    """Add to ``names`` those ``node`` itself binds."""
    kind = type(node)
    if kind is cst.Assign:
        for t in node.targets:
            names.update(target_names(t.target))
    elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr):
        names.update(target_names(node.target))
    elif kind in (cst.FunctionDef, cst.ClassDef):
        names.add(node.name.value)
    for t in with_targets(node):
        names.update(target_names(t))


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """``stmt`` (or a statement inside it) binds ``name``."""
    return name in _bound_names(stmt)


def _plain_value(stmt: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """The value of ``stmt`` when it is the one-statement line ``name = value``."""
    if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Assign:
        assign = stmt.body[0]
        if len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name \
                and assign.targets[0].target.value == name:
            return assign.value
    return None


def value_before(ctx, name: str, node: cst.CSTNode, at_module: bool = False) -> Optional[cst.BaseExpression]:
    """The value ``name`` holds where ``node`` (an expression of the function being checked)
    runs, read from straight-line code: the latest statement before ``node``'s, in its block or
    an enclosing one, that binds ``name``, when that is a plain ``name = value`` line. ``None``
    when that binding is anything else, when a loop, ``try`` or ``with`` around ``node`` binds
    ``name`` (the value may come from a later iteration or a part that ran before), or when
    nothing binds it before (a parameter). With ``at_module``, a ``node`` outside any function
    is read in the module's own statements."""
    func = ctx.function
    if func is None and not at_module:
        return None
    body = ctx.module.body if func is None else func.body.body if type(func.body) is cst.IndentedBlock else []
    path = _path(body, node)
    if path is None:
        return None
    if at_module and func is not None and name not in _binders(body):
        return module_value(ctx, name)
    prior = _reaching_binder(path, name)
    return _plain_value(prior, name) if prior is not None else None


#: per function (or module): the names some ``name = <call>`` assignment there binds
_CALL_BOUND: NodeMemo[frozenset[str]] = NodeMemo(limit=4096)


def call_bound_names(ctx) -> frozenset[str]:
    """The names that an assignment of a call's result (``name = f(...)``, one name target) binds
    anywhere in the function being checked (nested definitions included) or in a module-level
    statement; for code outside any function, anywhere in the module. Every call
    :func:`value_before` gives for a name is such an assignment's value, so a name not among
    these has none."""
    func = ctx.function
    owner = func if func is not None else ctx.module
    found = _CALL_BOUND.get(owner)
    if found is None:
        # the walk of a body without nested definitions is the one other passes share
        nodes = walk(func.body) if func is not None else walk(owner)
        names = _call_targets(n for node in nodes for n in (
            (node, *walk(node, into_defs=True)) if type(node) is cst.FunctionDef or type(node) is cst.ClassDef
            else (node,)))
        if func is not None:
            names |= _call_targets(small for stmt in ctx.module.body if type(stmt) is cst.SimpleStatementLine
                                   for small in stmt.body)
        found = _CALL_BOUND.put(owner, frozenset(names))
    return found


def _call_targets(nodes: Iterable[cst.CSTNode]) -> set[str]:
    """The names the one-name assignments of a call's result among ``nodes`` bind."""
    return {node.targets[0].target.value for node in nodes
            if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name
            and type(node.value) is cst.Call}


def branch_values(ctx, name: str, node: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
    """When the latest statement before ``node`` that binds ``name`` is an ``if``/``else`` whose
    sides end by binding it with a plain ``name = value`` line: each such value, with the side
    it holds on as messages say it (`` `do_sample` is false``). ``[]`` otherwise: the value
    comes from straight-line code (:func:`value_before`) or from anything else."""
    func = ctx.function
    if func is None or type(func.body) is not cst.IndentedBlock:
        return []
    path = _path(func.body.body, node)
    if path is None:
        return []
    prior = _reaching_binder(path, name)
    return _side_values(ctx, prior, name) if type(prior) is cst.If else []


_SIDES: NodeMemo[frozenset[int]] = NodeMemo(limit=4096)


def side_assignments(func: cst.FunctionDef) -> frozenset[int]:
    """The ids of the ``name = value`` assignments that are a whole line of one side of an ``if``
    of ``func`` (the values :func:`branch_values` may return)."""
    cached = _SIDES.get(func)
    if cached is not None:
        return cached
    found: set[int] = set()
    for node in _ifs(func.body.body) if type(func.body) is cst.IndentedBlock else walk(func.body):
        if type(node) is not cst.If:
            continue
        sides = [node.body.body]
        if type(node.orelse) is cst.Else:
            sides.append(node.orelse.body.body)
        for block in sides:
            for stmt in block:
                if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Assign:
                    found.add(id(stmt.body[0]))
    return _SIDES.put(func, frozenset(found))


#: the compound statements whose blocks :func:`~shapecheck.semantic.syntax.sub_blocks` gives in full
_BLOCK_STATEMENTS = frozenset({cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar})


def _ifs(block: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The ``if`` statements in ``block`` and the blocks inside it, not in nested definitions (what
    :func:`walk` finds, read statement by statement: an ``if`` is never inside an expression)."""
    for stmt in block:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine or tp is cst.FunctionDef or tp is cst.ClassDef:
            continue
        if tp is cst.If:
            yield stmt
        if tp in _BLOCK_STATEMENTS:
            for sub in sub_blocks(stmt):
                yield from _ifs(sub)
        else:  # `match` and anything newer: every node
            yield from (n for n in walk(stmt) if type(n) is cst.If)


def _side_values(ctx, stmt: cst.If, name: str) -> list[tuple[cst.BaseExpression, str]]:
    """The last plain binding of ``name`` in each side of ``stmt`` that ends with one."""
    test = ctx.source(stmt.test).strip()
    sides: list[tuple[Sequence[cst.CSTNode], str]] = [(stmt.body.body, f"`{test}` is true")]
    if type(stmt.orelse) is cst.Else:
        sides.append((stmt.orelse.body.body, f"`{test}` is false"))
    found: list[tuple[cst.BaseExpression, str]] = []
    for block, side in sides:
        binders = [s for s in block if _binds(s, name)]
        value = _plain_value(binders[-1], name) if binders else None
        if value is not None:
            found.append((value, side))
    return found


def value_at_call(ctx, name: str, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """:func:`value_before` for a ``node`` in a module statement or a module-level function other
    than the one being checked (the argument of a call site): read from that code's straight-line
    statements; ``None`` when it is anywhere else or not so bound."""
    for stmt in ctx.module.body:
        if not any(n is node for n in walk(stmt, into_defs=True)):
            continue
        if type(stmt) is cst.FunctionDef and type(stmt.body) is cst.IndentedBlock:
            body: Sequence[cst.CSTNode] = stmt.body.body
        elif type(stmt) is cst.ClassDef:
            return None
        else:
            body = ctx.module.body
        path = _path(body, node)
        prior = _reaching_binder(path, name) if path is not None else None
        return _plain_value(prior, name) if prior is not None else None
    return None


def module_value(ctx, name: str) -> Optional[cst.BaseExpression]:
    """The value of a module-level name that the function being checked reads without binding
    it: the one plain ``name = value`` line of the module that binds it, when no other
    statement of the module binds it and no function declares it ``global``."""
    func = ctx.function
    if func is not None and (name in rebound_names(func) or any(p.name.value == name for p in all_params(func.params))):
        return None
    binders = _binders(ctx.module.body).get(name, ())
    if len(binders) != 1 or name in _declared_global(ctx.module):
        return None
    return _plain_value(ctx.module.body[binders[0]], name)


_GLOBALS: NodeMemo[frozenset[str]] = NodeMemo()


def _declared_global(module: cst.Module) -> frozenset[str]:
    """The names some ``global`` statement of ``module`` declares (remembered per module)."""
    found = _GLOBALS.get(module)
    if found is None:
        found = _GLOBALS.put(module, declared_globals(module))
    return found


def declared_globals(node: cst.CSTNode) -> frozenset[str]:
    """The names the ``global`` statements inside ``node`` (nested definitions included) declare."""
    return frozenset(g.name.value for n in walk(node, into_defs=True) if type(n) is cst.Global for g in n.names)


def unchanged_between(ctx, name: str, earlier: cst.CSTNode, later: cst.CSTNode) -> bool:
    """``name`` holds the same value where ``later`` runs as where ``earlier`` ran: ``earlier``'s
    statement is a plain line of a block that holds ``later``'s statement after it, and no
    statement from it up to ``later``'s binds ``name`` (the line that holds ``later`` may bind it
    after ``later`` runs, when it is a plain line)."""
    func = ctx.function
    if func is None:
        return False
    body = func.body.body if type(func.body) is cst.IndentedBlock else []
    path = _path(body, later)
    if path is None:
        return False
    for depth, (block, index) in enumerate(path):
        first = next((i for i, stmt in enumerate(block[:index]) if stmt is earlier
                      or any(n is earlier for n in walk(stmt))), None)
        if first is None:
            continue
        if type(block[first]) is not cst.SimpleStatementLine:
            return False
        if any(_binds(stmt, name) for stmt in block[first:index]):
            return False
        inner = [blk[i] for blk, i in path[depth:]]
        return all(type(stmt) is cst.SimpleStatementLine or not _binds(stmt, name) for stmt in inner)
    return False


def _path(block: Sequence[cst.CSTNode], node: cst.CSTNode) -> Optional[list[tuple[Sequence[cst.CSTNode], int]]]:
    """The ``(block, index)`` of each statement that holds ``node``, outermost first."""
    paths = _PATHS.get(block)
    if paths is None:
        paths = {}
        _index(block, [], paths, 0)
        _PATHS.put(block, paths)
    return paths.get(id(node))


def _index(block: Sequence[cst.CSTNode], outer: list[tuple[Sequence[cst.CSTNode], int]],
           paths: dict[int, list[tuple[Sequence[cst.CSTNode], int]]], depth: int) -> None:
    """Record in ``paths`` the path of every node of ``block``: a node below a statement of an
    inner block gets that statement's (longer) path, read where its own block is indexed. The
    same walk gives each statement's bound names (:func:`_bound_names`)."""
    if depth > 30:
        return
    for i, stmt in enumerate(block):
        here = [*outer, (block, i)]
        paths[id(stmt)] = here
        names: set[str] = set()
        _add_bound(stmt, names)
        inner = sub_blocks(stmt) if depth < 30 else []
        nodes = list(walk(stmt)) if not inner else list(_walk_outside(stmt, {id(s) for sub in inner for s in sub}))
        paths.update(zip(map(id, nodes), repeat(here)))
        for n in compress(nodes, map(_BINDING_KINDS.__contains__, map(type, nodes))):
            _add_bound(n, names)
        if not inner:
            _BOUND.put(stmt, frozenset(names))
            continue
        for sub in inner:
            _index(sub, here, paths, depth + 1)
        _BOUND.put(stmt, _with_inner(names, inner))


def _walk_outside(stmt: cst.CSTNode, nested: set[int]) -> Iterator[cst.CSTNode]:
    """:func:`walk` of ``stmt`` without the nodes below the statements in ``nested`` (the
    statements themselves included): those get the path of their own block."""
    stack = list(child_nodes(stmt))
    while stack:
        current = stack.pop()
        if id(current) in nested:
            continue
        yield current
        tp = type(current)
        if tp is not cst.FunctionDef and tp is not cst.ClassDef and tp is not cst.Lambda:
            stack.extend(child_nodes(current))


#: per block: name -> the indices of its statements that bind it, in order
_BINDERS: NodeMemo[dict[str, list[int]]] = NodeMemo(limit=4096)


def _binders(block: Sequence[cst.CSTNode]) -> dict[str, list[int]]:
    """Each name a statement of ``block`` binds -> the indices of those statements, in order."""
    binders = _BINDERS.get(block)
    if binders is None:
        binders = {}
        for i, stmt in enumerate(block):
            for bound in _bound_names(stmt):
                binders.setdefault(bound, []).append(i)
        _BINDERS.put(block, binders)
    return binders


def _reaching_binder(path: list[tuple[Sequence[cst.CSTNode], int]], name: str) -> Optional[cst.CSTNode]:
    """The statement whose binding of ``name`` holds where the end of ``path`` (a :func:`_path`)
    runs: the latest statement that binds it before the path's, in its block or an enclosing one.
    ``None`` when nothing binds it before, or when a loop, ``try`` or ``with`` the path goes
    through binds it too (the value may come from a later iteration or a part that ran before)."""
    for block, index in reversed(path):
        stmt = block[index]
        if type(stmt) is not cst.SimpleStatementLine and type(stmt) is not cst.If and _binds(stmt, name):
            return None
        prior = _latest_binder(block, index, name)
        if prior is not None:
            return prior
    return None


def _latest_binder(block: Sequence[cst.CSTNode], index: int, name: str) -> Optional[cst.CSTNode]:
    """The last statement of ``block`` before ``block[index]`` that binds ``name``, if any."""
    found = _binders(block).get(name)
    if not found:
        return None
    at = bisect_left(found, index)
    return block[found[at - 1]] if at else None
