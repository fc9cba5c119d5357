"""Which parameters of a method of a module class of the file go straight into a layer of the
module: ``def decode(self, z): h = F.relu(self.fc3(z))`` gives ``z``, as it was passed, to
``self.fc3``. A call ``model.decode(sample)`` on an instance the file moved to a GPU then runs
``self.fc3`` there on ``sample``: a CPU ``sample`` fails, as it would in ``model(sample)``.

Only a layer call that surely runs counts: in the straight-line statements that open the method
(before any compound statement, ``return`` or ``raise``), on a parameter the method never rebinds.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import MODULE, Fact
from shapecheck.semantic.syntax import all_params, target_names
from shapecheck.semantic.walk import walk

#: (class name, method name) -> positional index (after ``self``) -> the layer it reaches first
Feeds = dict[tuple[str, str], dict[int, str]]


def _rebound(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` assigns anywhere in its body (nested defs included: conservative)."""
    names: set[str] = set()
    for node in walk(function.body, into_defs=True):
        if type(node) is cst.Assign:
            for t in node.targets:
                names.update(target_names(t.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            names.update(target_names(node.target))
        elif type(node) is cst.For:
            names.update(target_names(node.target))
        elif type(node) is cst.NamedExpr:
            names.update(target_names(node.target))
        elif type(node) is cst.WithItem and node.asname is not None:
            names.update(target_names(node.asname.name))
    return names


def _opening(function: cst.FunctionDef) -> list[cst.SimpleStatementLine]:
    """The simple statement lines that open ``function``'s body, up to the first compound
    statement or the first line holding a ``return``/``raise``."""
    out: list[cst.SimpleStatementLine] = []
    for stmt in function.body.body:
        if type(stmt) is not cst.SimpleStatementLine:
            break
        out.append(stmt)
        if any(isinstance(small, (cst.Return, cst.Raise)) for small in stmt.body):
            break
    return out


def record_feed(feeds: Feeds, ctx, node: cst.Call) -> None:
    """Note ``self.layer(p, ...)`` in a method of a module class when ``self.layer`` is a
    ``torch.nn`` layer holding parameters and ``p`` a parameter of the method (see the module)."""
    function, class_def = ctx.function, ctx.class_def
    func = node.func
    if function is None or class_def is None or not ctx.in_module_class or type(func) is not cst.Attribute \
            or type(func.value) is not cst.Name or not node.args or node.args[0].keyword or node.args[0].star:
        return
    params = [p.name.value for p in list(function.params.posonly_params) + list(function.params.params)]
    if len(params) < 2 or func.value.value != params[0] or type(node.args[0].value) is not cst.Name:
        return
    name = node.args[0].value.value
    if name not in params[1:] or any(p.star for p in all_params(function.params) if p.name.value == name):
        return
    layer = ctx.fact(func)
    if layer.kind != MODULE or not (layer.qual or "").startswith("torch.nn.") or not layer.params:
        return
    if not any(node is n for line in _opening(function) for n in walk(line)) or name in _rebound(function):
        return
    found = feeds.setdefault((class_def.name.value, function.name.value), {})
    found.setdefault(params.index(name) - 1, f"self.{func.attr.value}")


def fed_layer(feeds: Feeds, receiver: Fact, method: str, index: int) -> Optional[str]:
    """The layer of ``receiver`` (an instance of a module class of the file) that its method
    ``method`` gives its positional argument ``index`` to, if it surely does."""
    if receiver.kind != MODULE or receiver.qual is None:
        return None
    return feeds.get((receiver.qual, method), {}).get(index)
