"""Local lists built by ``xs = []`` and ``xs.append(v)``: which appends always run, and whether
the list is only ever appended to."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.enclosing import node_path
from shapecheck.semantic.syntax import import_binding
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo


#: compound statements that run their body unconditionally (loops: once they run at all)
_PLAIN_BLOCKS = (cst.For, cst.While, cst.With, cst.IndentedBlock, cst.SimpleStatementLine, cst.Expr)


def local_append(node: cst.Call, ctx) -> Optional[tuple[str, cst.BaseExpression]]:
    """``(list name, item)`` for ``name.append(item)`` with one plain positional argument, in a
    function; else ``None``."""
    call = method_call(node)
    if call is None or call[1] != "append" or type(call[0]) is not cst.Name or ctx.function is None:
        return None
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    return call[0].value, node.args[0].value


def plain_append(function: cst.FunctionDef, append: cst.Call) -> bool:
    """``append`` runs whenever the loops around it run: only loops and ``with`` blocks lie
    between the function's body and its statement (no ``if``, ``try``, nested function)."""
    path = node_path(function.body, append)
    if path is None:
        return False
    for node in path[1:]:
        if node is append:
            return True
        if not isinstance(node, _PLAIN_BLOCKS):
            return False
    return False


#: statements and expressions that bind their ``target``
_REBINDINGS = (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del, cst.NamedExpr)


class _Uses:
    """How a function uses the local ``name``: the ``name = []`` statements, and whether anything
    else binds or changes it (another assignment, a loop or ``with`` target, ``del``, a method
    other than ``append``, an item or slice assignment, ``global``/``nonlocal``)."""

    def __init__(self, function: cst.FunctionDef, name: str) -> None:
        self.name = name
        self.empty_lists: list[cst.Assign] = []
        #: the ``name = [a, b]`` statements (a list display with elements)
        self.filled_lists: list[cst.Assign] = []
        #: the ``name = [elt for ...]`` statements
        self.comprehensions: list[cst.Assign] = []
        self.other = False
        for node in walk(function.body):
            tp = type(node)
            if tp is cst.Assign:
                self._assign(node)  # type: ignore[arg-type]
            elif tp in _REBINDINGS:
                self.other = self.other or self._targets(node.target)  # type: ignore[attr-defined]
            elif tp is cst.With:
                self.other = self.other or any(
                    i.asname is not None and self._targets(i.asname.name) for i in node.items)  # type: ignore[attr-defined]
            elif tp is cst.ExceptHandler:
                self.other = self.other or (node.name is not None and self._targets(node.name.name))  # type: ignore[attr-defined]
            elif tp in (cst.Import, cst.ImportFrom):
                self.other = self.other or _imports(node, name)
            elif tp in (cst.Global, cst.Nonlocal):
                self.other = True
            elif tp is cst.Attribute and self._is_name(node.value) and node.attr.value != "append":  # type: ignore[attr-defined]
                self.other = True

    def _is_name(self, node: cst.CSTNode) -> bool:
        return type(node) is cst.Name and node.value == self.name

    def _targets(self, target: cst.BaseExpression) -> bool:
        """``target`` binds or writes into ``name``."""
        if self._is_name(target):
            return True
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self._targets(e.value) for e in target.elements)
        if isinstance(target, (cst.Subscript, cst.Attribute, cst.StarredElement)):
            return self._targets(target.value)
        return False

    def _assign(self, node: cst.Assign) -> None:
        if not any(self._targets(t.target) for t in node.targets):
            return
        plain = len(node.targets) == 1 and self._is_name(node.targets[0].target)
        if plain and type(node.value) is cst.List and not node.value.elements:
            self.empty_lists.append(node)
        elif plain and type(node.value) is cst.List and all(type(e) is cst.Element for e in node.value.elements):
            self.filled_lists.append(node)
        elif plain and type(node.value) is cst.ListComp:
            self.comprehensions.append(node)
        else:
            self.other = True


def _imports(node: cst.CSTNode, name: str) -> bool:
    """``import``/``from ... import`` ``node`` binds ``name``."""
    names = node.names  # type: ignore[attr-defined]
    if isinstance(names, cst.ImportStar):
        return False
    return any(import_binding(alias) == name for alias in names)


def _uses(function: cst.FunctionDef, name: str) -> _Uses:
    """:class:`_Uses` of ``name`` in ``function``, read once per function and name."""
    cached = _USES.get(function, name)
    return cached if cached is not None else _USES.put(function, _Uses(function, name), name)


_USES: NodeMemo[_Uses] = NodeMemo(limit=64)


def only_appended(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is a local list of ``function`` made by one ``name = []`` that runs whenever
    the function does, and only ``append`` changes it."""
    uses = _uses(function, name)
    if uses.other or len(uses.empty_lists) != 1 or uses.comprehensions or uses.filled_lists:
        return False
    return _runs_always(function, uses.empty_lists[0])


def only_extended(function: cst.FunctionDef, name: str) -> Optional[cst.List]:
    """The list display (``[]`` or ``[a, b]``) that ``name``, a local of ``function``, is made
    from by one assignment that runs whenever the function does, when nothing else binds
    ``name`` and only ``append`` changes it (its first elements stay in the list)."""
    uses = _uses(function, name)
    made = uses.empty_lists + uses.filled_lists
    if uses.other or uses.comprehensions or len(made) != 1:
        return None
    return made[0].value if _runs_always(function, made[0]) else None  # type: ignore[return-value]


def only_comprehension(function: cst.FunctionDef, name: str) -> Optional[cst.ListComp]:
    """The list comprehension that ``name``, a local of ``function``, is made by: one ``name =
    [elt for ...]`` that runs whenever the function does; nothing else binds ``name`` and only
    ``append`` changes it (so every element of the comprehension is still in the list)."""
    uses = _uses(function, name)
    if uses.other or uses.empty_lists or uses.filled_lists or len(uses.comprehensions) != 1:
        return None
    made = uses.comprehensions[0]
    return made.value if _runs_always(function, made) else None  # type: ignore[return-value]


def _runs_always(function: cst.FunctionDef, stmt: cst.Assign) -> bool:
    """``stmt`` lies in the body of ``function`` itself (not under a compound statement)."""
    path = node_path(function.body, stmt)
    return path is not None and all(isinstance(n, (cst.IndentedBlock, cst.SimpleStatementLine)) for n in path[:-1])


def _ends_first_pass(loop: cst.CSTNode) -> bool:
    """The body of ``loop`` leaves it unconditionally (a ``break``, ``return`` or ``raise`` at its
    top level): it runs at most once."""
    body = getattr(loop, "body", None)
    if type(body) is cst.SimpleStatementSuite:
        return any(isinstance(small, (cst.Break, cst.Return, cst.Raise)) for small in body.body)
    if type(body) is not cst.IndentedBlock:
        return True
    for stmt in body.body:
        if type(stmt) is cst.SimpleStatementLine and any(
                isinstance(small, (cst.Break, cst.Return, cst.Raise)) for small in stmt.body):
            return True
    return False


def loop_append(function: cst.FunctionDef, name: str) -> Optional[cst.Call]:
    """A ``name.append(v)`` of ``function`` that runs on every pass of a loop that may pass more
    than once (``name`` a local list only appended to): the list holds one item per pass."""
    if not only_appended(function, name):
        return None
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "append" \
                and type(node.func.value) is cst.Name and node.func.value.value == name \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            path = node_path(function.body, node)
            loops = [n for n in path or () if isinstance(n, (cst.For, cst.While))]
            if loops and plain_append(function, node) and not any(_ends_first_pass(n) for n in loops):
                return node
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)
    return None
