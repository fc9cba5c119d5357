"""What a fix's rewrite could change: the scope of a name, read from CPython's own symbol table.

A fix that assigns a name (SC402: ``x.cuda()`` becomes ``x = x.cuda()``) or reads one (SC403:
``device=x.device``, SC605: ``torch.linalg.solve``) is safe only when that name means at the
rewritten statement what the rule assumed. Python decides it per scope: assigning ``x`` anywhere
in a function makes ``x`` local to the whole function, so ``x = x.cuda()`` on a module-level ``x``
raises ``UnboundLocalError`` at the first read of ``x`` in that function. Rather than re-deriving
those rules, :func:`name_scope` renders the innermost function or class around the statement and
asks :mod:`symtable`. All of this runs only for a finding that carries such a fix.
"""

from __future__ import annotations

import functools
import symtable
from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

#: the name is bound in the statement's own scope (a parameter, an assignment, an import...),
#: or the statement is at module level: assigning it there rebinds the name every line reads
LOCAL = "local"
#: the scope declares it ``global`` or ``nonlocal``: assigning it changes another scope's name
SHARED = "shared"
#: the scope only reads it (a module-level or enclosing function's name): assigning it there
#: would make it local to the scope, and every read of it there would raise UnboundLocalError
FREE = "free"

_SCOPES = (cst.FunctionDef, cst.ClassDef)
#: expressions with a scope of their own (their targets or parameters are not the function's)
_INNER_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class Place:
    """Where a node sits: its innermost function or class (``None`` at module level), and
    whether a lambda or comprehension lies between that scope and the node."""

    scope: Optional[Union[cst.FunctionDef, cst.ClassDef]]
    in_inner_scope: bool


def place_of(ctx, node: cst.CSTNode) -> Optional[Place]:
    """The :class:`Place` of ``node``: a node inside the current function or class body (any
    statement of it), or at module level the node whose hook is running. ``None`` when it cannot
    be found (then no fix should rely on it)."""
    roots = [r for r in (ctx.function, ctx.class_def) if r is not None]
    if not roots:
        return Place(None, _has_inner_scope(ctx.ancestors, node))
    for root in roots:
        path = _path_to(root, node)
        if path is not None:
            scope_at = max(i for i, n in enumerate(path) if isinstance(n, _SCOPES))
            scope = path[scope_at]
            assert isinstance(scope, _SCOPES)
            inner = any(isinstance(n, _INNER_SCOPES) for n in path[scope_at + 1:])
            return Place(scope, inner)
    return None


def _has_inner_scope(ancestors, node: cst.CSTNode) -> bool:
    return any(isinstance(n, _INNER_SCOPES) for n in (*ancestors, node))


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> Optional[list[cst.CSTNode]]:
    """The nodes from ``root`` down to ``target`` (both included), found by identity."""
    stack: list[tuple[cst.CSTNode, int]] = [(root, 0)]
    path: list[cst.CSTNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node is target:
            return path
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return None


@functools.lru_cache(maxsize=32)  # several findings in one function share its table
def scope_table(scope: Union[cst.FunctionDef, cst.ClassDef]) -> Optional[symtable.SymbolTable]:
    """CPython's symbol table of ``scope`` rendered on its own, or ``None`` when CPython rejects
    the rendering (syntax this Python does not have, say)."""
    nonlocals = sorted({
        name.name.value
        for stmt in _walk(scope) if type(stmt) is cst.Nonlocal
        for name in stmt.names
    })
    code = cst.Module(body=[scope]).code
    if nonlocals:  # `nonlocal x` needs an enclosing function that binds x
        body = "".join("    " + line + "\n" for line in code.splitlines())
        code = f"def _shapecheck_enclosing_():\n    {' = '.join(nonlocals)} = None\n{body}"
    try:
        table = symtable.symtable(code, "<fix>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if nonlocals:
        table = table.get_children()[0]
    name = scope.name.value
    for child in table.get_children():
        while child.get_name() == name and child.get_type() not in ("function", "class"):
            nested = child.get_children()  # the annotation scope of a generic `def f[T]()`
            if len(nested) != 1:
                break
            child = nested[0]
        if child.get_name() == name and child.get_type() in ("function", "class"):
            return child
    return None


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def name_scope(place: Place, name: str) -> Optional[str]:
    """:data:`LOCAL`, :data:`SHARED` or :data:`FREE` for ``name`` in ``place``'s scope;
    ``None`` when that cannot be told."""
    if place.scope is None:
        return LOCAL
    symbol = _symbol(place.scope, name)
    if symbol is None:
        return None
    if symbol.is_declared_global() or symbol.is_nonlocal():
        return SHARED
    return LOCAL if symbol.is_local() else FREE


def rebound(place: Place, name: str) -> Optional[bool]:
    """Whether ``name`` is bound in ``place``'s scope other than as a parameter (assigned,
    deleted, a loop target...); ``None`` when that cannot be told."""
    symbol = _symbol(place.scope, name) if place.scope is not None else None
    return symbol.is_assigned() if symbol is not None else None


def _symbol(scope: Union[cst.FunctionDef, cst.ClassDef], name: str) -> Optional[symtable.Symbol]:
    """``name``'s entry in the symbol table of ``scope``; ``None`` when that cannot be told."""
    table = scope_table(scope)
    if table is None:
        return None
    try:
        return table.lookup(name)
    except KeyError:  # a mangled private name in a class body, say
        return None


__all__ = ["FREE", "LOCAL", "SHARED", "Place", "name_scope", "place_of", "rebound", "scope_table"]
