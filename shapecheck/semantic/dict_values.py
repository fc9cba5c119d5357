"""The values of a dict that a function fills by item assignment only.

``out = {}`` then ``out[split] = losses.mean()`` in a loop, then ``return out``: every item read
of ``out`` (here, or at a caller of the function) gives a value stored by one of those
assignments, so its fact is the join of theirs (:data:`~shapecheck.semantic.facts.Fact.mapped`).
That holds only while nothing else can put a value in the dict. The values start at a dict
display (``{}``, ``{"a": x}``, no ``**`` unpacking) and reach a caller through ``return``; a name
keeps them when its scope (a function, or the module's top-level code) uses it only to store items
(``out[k] = v``), read them (``out[k]``), delete them, test membership, take its length, iterate
over it, call its reading methods, or return it. Any other use (``out.update(...)``,
``out[k] += v``, an alias ``d = out``, passing it to a function, a function or default value that
sees the name) keeps nothing, and so do parameters (the caller may change what it passes), attributes
and elements of sequences (changed through ``self.d[k] = v``, ``pair[0][k] = v``, which update no
fact). Item reads use the values only through such a name, a call's result or a display.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Union

import libcst as cst

from shapecheck.semantic.facts import Fact, join
from shapecheck.semantic.node_memo import NodeMemo
from shapecheck.semantic.walk import child_nodes, walk as walk_nodes

__all__ = ["dict_display", "held_values", "stored", "tracked_dicts", "unheld"]

#: dict methods that neither store a value nor let one escape to code that could store one
_READING_METHODS = frozenset({"get", "keys", "values", "items", "pop", "copy", "clear", "__contains__"})

Scope = Union[cst.FunctionDef, cst.Module]

_TRACKED: NodeMemo["_Tracked"] = NodeMemo()


def dict_display(expr: cst.BaseExpression) -> bool:
    """``{}`` or ``{k: v, ...}`` without ``**`` unpacking."""
    return type(expr) is cst.Dict and all(type(e) is cst.DictElement for e in expr.elements)


def stored(mapped: tuple[Fact, ...], value: Fact) -> tuple[Fact, ...]:
    """The ``mapped`` of a dict after storing ``value`` in it. A value of unknown kind (a list,
    whose elements a later ``out[k].append(x)`` changes) is kept as unknown."""
    kept = value.with_(mapped=None) if value.kind is not None else Fact()
    return (join(mapped[0], kept),) if mapped else (kept,)


def tracked_dicts(scope: Scope) -> _Tracked:
    """Which names of ``scope`` (a function, or the module for its top-level code) are used only
    as the module says: those may hold a dict's ``mapped`` values."""
    found = _TRACKED.get(scope)
    if found is None:
        found = _TRACKED.put(scope, _Tracked(_scan(scope)))
    return found


class _Tracked:
    """The names of a scope with some use that keeps nothing (``in`` answers the others)."""

    __slots__ = ("bad",)

    def __init__(self, bad: frozenset[str]) -> None:
        self.bad = bad

    def __contains__(self, name: object) -> bool:
        return name not in self.bad


_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_MEMBERSHIP = frozenset({cst.In, cst.NotIn})
_NESTED_TYPES = frozenset(_NESTED)
#: the node classes :func:`_allowed_children` may allow a name below (exact classes: libcst has no
#: subclasses of them, and a set lookup is much cheaper than a chain of isinstance tests)
_PARENTS = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Subscript, cst.Return, cst.For,
                      cst.Comparison, cst.Attribute, cst.Call})


def _scan(scope: Scope) -> frozenset[str]:
    """The names of ``scope`` with some use that is not allowed. Each use is judged at its parent
    (which :func:`walk_nodes` produces before its children): a name produced without a parent
    that allowed it is a use that keeps nothing."""
    allowed: set[int] = set()  # ids of the Name nodes in allowed places
    reading: set[int] = set()  # ids of the Attribute nodes that a reading method call calls
    aug: set[int] = set()  # ids of the Subscript nodes an augmented assignment writes
    bad: set[str] = set()
    for node in walk_nodes(scope if isinstance(scope, cst.Module) else scope.body):
        tp = type(node)
        if tp is cst.Name:
            if id(node) not in allowed:
                bad.add(node.value)  # type: ignore[attr-defined]
        elif tp in _NESTED_TYPES:
            bad.update(_outer_names(node))
        elif tp in _PARENTS:
            allowed.update(id(n) for n in _allowed_children(node, reading, aug))
    if isinstance(scope, cst.FunctionDef):
        p = scope.params
        bad.update(q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params))
    return frozenset(bad)


def _allowed_children(node: cst.CSTNode, reading: set[int], aug: set[int]) -> list[cst.Name]:
    """The names directly below ``node`` that are allowed uses of a tracked dict or no use of a
    value at all (an attribute's name, a keyword); notes in ``reading`` and ``aug`` what the
    children of ``node`` need to know about it."""
    tp = type(node)  # exact classes (see _PARENTS)
    if tp is cst.Assign:
        return [t.target for t in node.targets if type(t.target) is cst.Name]  # type: ignore[attr-defined]
    if tp is cst.AnnAssign:
        return [node.target] if type(node.target) is cst.Name else []  # type: ignore[attr-defined]
    if tp is cst.AugAssign:
        aug.add(id(node.target))  # type: ignore[attr-defined]
        return []
    if tp is cst.Subscript:
        return [node.value] if type(node.value) is cst.Name and id(node) not in aug else []  # type: ignore[attr-defined]
    if tp is cst.Return:
        return [node.value] if type(node.value) is cst.Name else []  # type: ignore[attr-defined]
    if tp is cst.For:
        return [n for n in (node.target, node.iter) if type(n) is cst.Name]  # type: ignore[attr-defined]
    if tp is cst.Comparison:  # `k in out`
        return [c.comparator for c in node.comparisons  # type: ignore[attr-defined]
                if type(c.operator) in _MEMBERSHIP and type(c.comparator) is cst.Name]
    if tp is cst.Attribute:
        names = [node.attr]  # type: ignore[attr-defined]
        if type(node.value) is cst.Name and id(node) in reading:  # type: ignore[attr-defined]
            names.append(node.value)  # type: ignore[attr-defined]
        return names
    if tp is cst.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in _READING_METHODS:
            reading.add(id(func))
        names = [a.keyword for a in node.args if a.keyword is not None]  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value == "len":
            names += [a.value for a in node.args if type(a.value) is cst.Name]  # type: ignore[attr-defined]
        return names
    return []


#: each nested definition's :func:`_outer_names`, computed once per node (a module's scan and the
#: scans of its functions share the definitions nested in both)
_OUTER: NodeMemo[frozenset[str]] = NodeMemo(limit=4096)


def _outer_names(node: cst.CSTNode) -> frozenset[str]:
    """The names a nested function (or lambda, or class body) uses that it does not bind itself:
    the enclosing scope's, which it may change (a class body's own names are no scope of the
    methods it holds)."""
    found = _OUTER.get(node)
    if found is None:
        found = _OUTER.put(node, _free_names(node))
    return found


def _free_names(node: cst.CSTNode) -> frozenset[str]:
    """:func:`_outer_names` of ``node``, in one pass over its own code: what it uses, what it binds
    (unless it declares the name ``global`` or ``nonlocal``), and the outer names of the
    definitions nested in it."""
    bound: set[str] = set()
    declared: set[str] = set()
    used: set[str] = set()
    inner: set[str] = set()
    params = getattr(node, "params", None)
    if params is not None:
        bound.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                bound.add(star.name.value)
    for sub in _own_nodes(node):
        tp = type(sub)
        if tp is cst.Name:
            used.add(sub.value)  # type: ignore[attr-defined]
        elif tp in _NESTED_TYPES:
            inner |= _outer_names(sub)
        elif tp is cst.Assign:
            bound.update(t.target.value for t in sub.targets if type(t.target) is cst.Name)  # type: ignore[attr-defined]
        elif tp is cst.AugAssign or tp is cst.AnnAssign:
            target = sub.target  # type: ignore[attr-defined]
            if type(target) is cst.Name:
                bound.add(target.value)
        elif tp is cst.For and type(sub.target) is cst.Name:  # type: ignore[attr-defined]
            bound.add(sub.target.value)  # type: ignore[attr-defined]
        elif tp is cst.Global or tp is cst.Nonlocal:
            declared.update(n.name.value for n in sub.names)  # type: ignore[attr-defined]
    if params is not None:
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.default is not None:  # a default is evaluated in the enclosing scope
                used.update(n.value for n in (p.default, *walk_nodes(p.default)) if isinstance(n, cst.Name))
    local = bound - declared
    if isinstance(node, cst.ClassDef):
        return frozenset((used - local) | inner)
    return frozenset((used | inner) - local)


def _own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes :func:`walk_nodes` gives for ``node``; a function's body walked on its own, as
    the other scans of a function walk it (the walk of a body is kept for the next one)."""
    if type(node) is not cst.FunctionDef:
        yield from walk_nodes(node)
        return
    for part in child_nodes(node):
        yield part
        if type(part) is not cst.Name and type(part) is not cst.Parameters:
            yield from walk_nodes(part)


def held_values(model: Any, fact: Fact, owner: cst.BaseExpression) -> Optional[Fact]:
    """What the item read ``owner[k]`` gives, when ``owner`` (of fact ``fact``) is a dict whose
    values are known: a name of the scope being walked that the module tracks (not a parameter:
    the caller may change the dict it passes), a call's fresh result, or a display."""
    if fact.kind is not None or not fact.mapped:
        return None
    if type(owner) is cst.Name:
        scope = model.function or model.tree
        if scope is None or owner.value not in tracked_dicts(scope):
            return None
    elif type(owner) not in (cst.Call, cst.Dict):
        return None
    return fact.mapped[0]


def unheld(fact: Fact) -> Fact:
    """``fact`` without the values of a dict: for a place the dict may change through, where no
    item assignment updates them (an attribute, an element of a sequence)."""
    return fact.with_(mapped=None) if fact.mapped is not None else fact
