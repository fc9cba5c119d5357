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


def rebound_names(func: cst.FunctionDef) -> frozenset[str]:
    """The names that a statement of ``func``'s body binds (assignments, loop and ``with``
    targets, ``:=``, imports, ``global``/``nonlocal``, ``del``, nested definitions)."""
    cached = _REBOUND.get(func)
    if cached is not None:
        return cached
    names: set[str] = set()
    for node in walk(func.body, into_defs=True):
        if type(node) is cst.Assign:
            for t in node.targets:
                names.update(target_names(t.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            names.update(target_names(node.target))
        elif type(node) is cst.NamedExpr:
            names.update(target_names(node.target))
        elif type(node) is cst.With:
            for bound in with_targets(node):
                names.update(target_names(bound))
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(n.name.value for n in node.names)
        elif type(node) is cst.Del:
            names.update(target_names(node.target))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.add(node.name.value)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            names.update(import_binding(a) for a in node.names)
    return _REBOUND.put(func, frozenset(names))
