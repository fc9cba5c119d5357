"""Which parameters a function only reads: never changed in place, rebound, or handed on.

A tensor passed to such a parameter leaves the call with the values it came with, whatever the
function computes from it. The test is on the text of the body: a parameter is read-only when
every use of its name is a read that cannot write to it — an operand, a subscript or attribute
that is read, the receiver of a method whose name does not end in ``_``, or an argument of a
``torch``/``F`` function (``out=`` aside). A use this cannot vouch for (a call of anything else,
``+=``, an assignment target, ``del``, ``global``) makes the parameter not read-only.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.syntax import all_params, with_targets
from shapecheck.semantic.walk import walk

Resolver = Callable[[cst.BaseExpression], Optional[str]]


def read_only_parameters(fn: cst.FunctionDef, resolve: Resolver) -> frozenset[str]:
    """The parameters of ``fn`` whose values its body only reads (``resolve``: the qualified
    name of a callee, through the module's imports)."""
    names = {p.name.value for p in all_params(fn.params)}
    spoiled: set[str] = set()
    for node in walk(fn.body, into_defs=True):
        tp = type(node)
        if tp is cst.Call:
            _call_uses(node, names, spoiled, resolve)  # type: ignore[arg-type]
        elif tp is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                spoiled.update(_names_in(target.target, names))
        elif tp is cst.With:
            for t in with_targets(node):
                spoiled.update(_names_in(t, names))
        elif tp in (cst.AugAssign, cst.AnnAssign, cst.Del, cst.For, cst.NamedExpr, cst.CompFor):
            spoiled.update(_names_in(_target_of(node), names))
        elif tp in (cst.Global, cst.Nonlocal):
            spoiled.update(n.name.value for n in node.names)  # type: ignore[attr-defined]
    return frozenset(names - spoiled)


def _target_of(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    return getattr(node, "target", None)


def _names_in(target: Optional[cst.CSTNode], names: set[str]) -> set[str]:
    """The parameter names a target writes to (``p``, ``p[i]``, ``p.x``, in tuples)."""
    if target is None:
        return set()
    found = set()
    for node in (target, *walk(target)):
        if type(node) is cst.Name and node.value in names:
            found.add(node.value)
    return found


def _call_uses(call: cst.Call, names: set[str], spoiled: set[str], resolve: Resolver) -> None:
    func = call.func
    if type(func) is cst.Attribute:
        recv = func.value
        if type(recv) is cst.Name and recv.value in names and func.attr.value.endswith("_"):
            spoiled.add(recv.value)  # `p.mul_(2)`, `p.copy_(q)`: in place
    qual = resolve(func)
    pure = qual is not None and qual.startswith(("torch.", "math.")) \
        and not any(a.keyword is not None and a.keyword.value == "out" for a in call.args)
    if pure or _is_method_of_parameter(func, names):
        return
    for arg in call.args:
        if type(arg.value) is cst.Name and arg.value.value in names:
            spoiled.add(arg.value.value)  # handed on to who knows what


def _is_method_of_parameter(func: cst.BaseExpression, names: set[str]) -> bool:
    """``p.topk(...)``, ``p.eq(q)``: the arguments of a method of a parameter that is not in
    place are read (the receiver's own ``_`` methods are caught above)."""
    return type(func) is cst.Attribute and type(func.value) is cst.Name \
        and func.value.value in names and not func.attr.value.endswith("_")
