"""The names a function's body binds again (assignments, loops, ``with``, ``:=``, imports,
``global``/``nonlocal``, ``del``, nested definitions): a parameter among them may not hold the
value it was given."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.syntax import import_binding, target_names, with_targets
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo

__all__ = ["rebound_names"]

_REBOUND: NodeMemo[frozenset[str]] = NodeMemo()
#: the statements and expressions that bind the names of their ``target`` (exact classes: libcst
#: has no subclasses of them)
_TARGETED = frozenset({cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del})


def rebound_names(func: cst.FunctionDef) -> frozenset[str]:
    """The names that a statement of ``func``'s body binds (assignments, loop and ``with``
    targets, ``:=``, imports, ``global``/``nonlocal``, ``del``, nested definitions)."""
    cached = _REBOUND.get(func)
    if cached is not None:
        return cached
    names: set[str] = set()
    for node in walk(func.body, into_defs=True):
        tp = type(node)
        if tp is cst.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                names.update(target_names(t.target))
        elif tp in _TARGETED:
            names.update(target_names(node.target))  # type: ignore[attr-defined]
        elif tp is cst.With:
            for bound in with_targets(node):
                names.update(target_names(bound))
        elif tp is cst.Global or tp is cst.Nonlocal:
            names.update(n.name.value for n in node.names)  # type: ignore[attr-defined]
        elif tp is cst.FunctionDef or tp is cst.ClassDef:
            names.add(node.name.value)  # type: ignore[attr-defined]
        elif (tp is cst.Import or tp is cst.ImportFrom) and type(node.names) is not cst.ImportStar:  # type: ignore[attr-defined]
            names.update(import_binding(a) for a in node.names)  # type: ignore[attr-defined]
    return _REBOUND.put(func, frozenset(names))
