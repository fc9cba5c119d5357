"""Which parameters of a method of a module class of the file go straight into a layer of the
module: ``def decode(self, z): h = F.relu(self.fc3(z))`` gives ``z``, as it was passed, to
``self.fc3``. A call ``model.decode(sample)`` on an instance the file moved to a GPU then runs
``self.fc3`` there on ``sample``: a CPU ``sample`` fails, as it would in ``model(sample)``.

Only a layer call that surely runs counts: in the straight-line statements that open the method
(before any compound statement, ``return`` or ``raise``), on a parameter that no statement before
it rebinds. Every positional argument of the layer counts (``self.rnn(emb, hidden)`` runs the
weights on ``hidden`` too), also as an element of a tuple (the ``(h0, c0)`` state of an LSTM).
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.rules.helpers.visit_memo import LastVisit
from shapecheck.semantic.facts import MODULE, Fact
from shapecheck.semantic.syntax import all_params, target_names
from shapecheck.semantic.walk import walk

#: (class name, method name) -> positional index (after ``self``) -> the layer it reaches first
Feeds = dict[tuple[str, str], dict[int, str]]

#: what the call being visited feeds (SC401 and SC403 both record it)
_FEEDS: LastVisit[Optional[tuple[tuple[str, str], list[tuple[int, str]]]]] = LastVisit()


def _rebound(nodes: Sequence[cst.CSTNode]) -> set[str]:
    """The names the statements ``nodes`` assign (nested defs included: conservative)."""
    names: set[str] = set()
    for node in (n for stmt in nodes for n in walk(stmt, into_defs=True)):
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
    found = _FEEDS.get(ctx, node, _feeds_of)
    if found is None:
        return
    key, entries = found
    table = feeds.setdefault(key, {})
    for index, layer in entries:
        table.setdefault(index, layer)


def _feeds_of(ctx, node: cst.Call) -> Optional[tuple[tuple[str, str], list[tuple[int, str]]]]:
    """What :func:`record_feed` notes for ``node``: the method's key and ``(index, layer)`` of each
    parameter given, in order; ``None`` when the call is no such layer call."""
    func = node.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Name or not node.args:
        return None
    function, class_def = ctx.function, ctx.class_def
    if function is None or class_def is None or not ctx.in_module_class:
        return None
    declared = function.params
    first = declared.posonly_params[0] if declared.posonly_params else declared.params[0] if declared.params else None
    if first is None or func.value.value != first.name.value:
        return None  # not a call on the receiver (checked before the parameters are listed)
    params = [p.name.value for p in list(declared.posonly_params) + list(declared.params)]
    if len(params) < 2:
        return None
    given = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    given += [e.value for arg in given[1:] if isinstance(arg, (cst.Tuple, cst.List))
              for e in arg.elements if type(e) is cst.Element]
    names = [e.value for e in given if type(e) is cst.Name and e.value in params[1:]]
    if not names:
        return None
    layer = ctx.fact(func)
    if layer.kind != MODULE or not (layer.qual or "").startswith("torch.nn.") or not layer.params:
        return None
    lines = _opening(function)
    at = next((i for i, line in enumerate(lines) if any(node is n for n in walk(line))), None)
    if at is None:
        return None
    rebound = _rebound(lines[:at]) | {t for n in walk(lines[at]) if type(n) is cst.NamedExpr
                                      for t in target_names(n.target)}
    starred = {p.name.value for p in all_params(function.params) if p.star}
    entries = [(params.index(name) - 1, f"self.{func.attr.value}") for name in names
               if name not in rebound and name not in starred]
    return (class_def.name.value, function.name.value), entries


def fed_layer(feeds: Feeds, receiver: Fact, method: str, index: int) -> Optional[str]:
    """The layer of ``receiver`` (an instance of a module class of the file) that its method
    ``method`` gives its positional argument ``index`` to, if it surely does."""
    if receiver.kind != MODULE or receiver.qual is None:
        return None
    return feeds.get((receiver.qual, method), {}).get(index)
