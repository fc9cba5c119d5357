"""Where a tensor was made non-contiguous: the node of the ``transpose``, ``permute``, ``.T``,
``expand``, one-operand ``einsum`` or slice that a finding of SC101 comes from, for the related
line under the finding.

Looked for only when a finding is made, never during the walk. Inside the statement of the
finding the facts decide: the move is the innermost call of the op whose fact carries the very
``moved_by`` text the receiver's fact holds (propagation passes that string object on, a new
move makes a new one). Where the facts cannot tell (the side of an ``if`` the
finding is about), the move whose code says what the ``moved_by`` text says (``.transpose(1, 2)``
for ``x.transpose(1, 2)``) is taken. When the receiver comes from a name bound earlier, the last
assignment to it before the statement (in source order, in the same function) is searched for
the move written as the text says it, followed through the names that value is computed from
(``z = y * 2``), at most four of them; a slice (no ``moved_by`` text) counts only where it is the
whole value and its tensor, not rebound since, is laid out plainly. A parameter, a binding in a
loop or ``with`` target, or a move written with names for its dims gives no origin.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.semantic.facts import NON_CONTIGUOUS, Fact
from shapecheck.semantic.syntax import dotted_name

#: the ops named in ``moved_by`` texts, and the method or attribute names that spell them
_SPELLINGS = {
    "transpose": ("transpose", "swapaxes", "swapdims"),
    "swapaxes": ("swapaxes",),
    "swapdims": ("swapdims",),
    "t": ("t",),
    "permute": ("permute",),
    "movedim": ("movedim",),
    "moveaxis": ("moveaxis",),
    "T": ("T",), "mT": ("mT",), "H": ("H",), "mH": ("mH",),
    "expand": ("expand",),
    "expand_as": ("expand_as",),
    "einsum": ("einsum",),
}


def _op_name(moved_by: str) -> str:
    """``transpose`` of ``.transpose(1, 2)``, ``T`` of ``.T``, ``einsum`` of ``einsum('ij->ji')``."""
    text = moved_by.lstrip(".")
    return text.split("(", 1)[0]


def _spelled(node: cst.CSTNode, names: tuple[str, ...]) -> bool:
    """``node`` is a call of one of ``names`` (method or function form) or the attribute ``.T``..."""
    if type(node) is cst.Call:
        func = node.func
        if type(func) is cst.Attribute:
            return func.attr.value in names
        return type(func) is cst.Name and func.value in names
    if type(node) is cst.Attribute:
        return node.attr.value in names and node.attr.value[0] in "TmH"
    return False


def _sliced(node: cst.CSTNode) -> bool:
    """A subscript with a slice (``x[:, :3]``, ``x[::2]``)."""
    return type(node) is cst.Subscript and any(type(e.slice) is cst.Slice for e in node.slice)


def _nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``expr`` and the expressions inside it, outermost first (lambdas and comprehensions left out)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if type(node) in (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp):
            continue
        stack.extend(reversed(node.children))


def _root(expr: cst.CSTNode) -> cst.CSTNode:
    """The value a chain of method calls, attributes and subscripts starts from."""
    while True:
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
            expr = expr.func.value
        elif type(expr) is cst.Call and expr.args:
            expr = expr.args[0].value
        elif type(expr) is cst.Subscript:
            expr = expr.value
        elif type(expr) is cst.Attribute and dotted_name(expr) is None:
            expr = expr.value
        else:
            return expr


def _spelling(ctx, node: cst.CSTNode) -> Optional[str]:
    """How a ``moved_by`` text would say the move ``node`` spells, when its arguments are
    written as numbers: ``.transpose(1, 2)`` for ``x.transpose(1, 2)`` or
    ``torch.transpose(x, 1, 2)``, ``.T`` for ``x.T``, ``einsum('ij->ji')``."""
    if type(node) is cst.Attribute:
        return "." + node.attr.value
    if type(node) is not cst.Call:
        return None
    func = node.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
    if name is None or any(a.star or a.keyword is not None for a in node.args):
        return None
    args = [" ".join(ctx.source(a.value).split()) for a in node.args]
    if name == "einsum":
        return f"einsum({args[0]})" if args else None
    function_form = (ctx.qualname(func) or "").startswith("torch.")  # `torch.transpose(x, 1, 2)`
    return f".{name}({', '.join(args[1:] if function_form else args)})"


def _says(ctx, node: cst.CSTNode, moved_by: str) -> bool:
    """``node`` spells the move that the ``moved_by`` text names, as written."""
    said = _spelling(ctx, node)
    if said is None:
        return False
    if said.startswith("einsum("):
        return moved_by.replace('"', "'") == said.replace('"', "'")
    return said == moved_by or said.replace("torch.", "") == moved_by


def _plain_slice(ctx, node: cst.CSTNode) -> bool:
    """A slice (``x[:, :3]``) of a tensor not known to be out of order: the slice made the gaps."""
    if not _sliced(node):
        return False
    base = ctx.fact(node.value)  # type: ignore[attr-defined]
    return base.layout != NON_CONTIGUOUS and base.perm is None


def _in_statement(ctx, expr: cst.CSTNode, recv: Fact, names: Optional[tuple[str, ...]]) -> Optional[cst.CSTNode]:
    """The node of ``expr`` that made ``recv``'s layout: decided by the facts (the very text
    object), else by the text of the move as written."""
    by_fact = by_text = None
    for node in _nodes(expr):
        if names is not None:
            if _spelled(node, names):
                if ctx.fact(node).moved_by is recv.moved_by:
                    by_fact = node  # the innermost wins: outer ones only passed the text on
                elif by_text is None and _says(ctx, node, recv.moved_by):  # type: ignore[arg-type]
                    by_text = node
        elif ctx.fact(node).layout == NON_CONTIGUOUS and _plain_slice(ctx, node):
            by_fact = node
    return by_fact or by_text


def _in_assignment(ctx, value: cst.CSTNode, recv: Fact, names: Optional[tuple[str, ...]],
                   rebound: set[str]) -> Optional[cst.CSTNode]:
    """The node of an earlier assigned ``value`` that spells the move as the ``moved_by`` text
    says it (the outermost such); without a text, the slice that ``value`` is, of a tensor no
    statement since has rebound (``rebound``) and that is laid out plainly."""
    if names is not None and recv.moved_by:
        moved_by = recv.moved_by
        return next((n for n in _nodes(value) if _spelled(n, names) and _says(ctx, n, moved_by)), None)
    if isinstance(value, cst.Subscript) and _sliced(value) and dotted_name(value.value) not in rebound \
            and _plain_slice(ctx, value):
        return value
    return None


def _operands(expr: cst.CSTNode) -> list[str]:
    """The dotted names a value is computed from along its layout: the start of a chain of calls,
    or the operands of an arithmetic operator."""
    expr = _root(expr)
    if type(expr) is cst.BinaryOperation:
        return _operands(expr.left) + _operands(expr.right)
    if type(expr) is cst.UnaryOperation:
        return _operands(expr.expression)
    name = dotted_name(expr)
    return [name] if name is not None else []


def _bindings(ctx) -> list[tuple[str, cst.BaseExpression]]:
    """``(dotted name, value)`` of the assignments of the scope of the hook before the statement
    being analysed, in source order: the function's body, or the module's (nested functions and
    classes left out)."""
    scope = ctx.function if ctx.function is not None else ctx.module
    stop = ctx.statement
    found: list[tuple[str, cst.BaseExpression]] = []
    body = scope.body.body if isinstance(scope, cst.FunctionDef) else scope.body
    stack: list[cst.CSTNode] = list(reversed(body))
    while stack:
        node = stack.pop()
        if node is stop:
            break
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if small is stop:
                    return found
                target = small.targets[0].target if type(small) is cst.Assign and len(small.targets) == 1 \
                    else small.target if type(small) is cst.AnnAssign and small.value is not None else None
                name = dotted_name(target) if target is not None else None
                if name is not None:
                    found.append((name, small.value))  # type: ignore[attr-defined]
            continue
        stack.extend(reversed([c for c in node.children if isinstance(c, (cst.BaseStatement, cst.BaseSuite,
                                                                           cst.Else, cst.ExceptHandler,
                                                                           cst.Finally))]))
    return found


def _in_earlier_binding(ctx, expr: cst.CSTNode, recv: Fact, names: Optional[tuple[str, ...]]) -> Optional[cst.CSTNode]:
    """The node that spells the move in the assignments that ``expr``'s names were last bound
    by, followed through at most four assignments (``z = y * 2`` after ``y = x.transpose(1, 2)``)."""
    pending = _operands(expr)
    if not pending:
        return None
    bindings = _bindings(ctx)
    last = {name: index for index, (name, _value) in enumerate(bindings)}
    seen: set[str] = set()
    while pending and len(seen) < 4:
        name = pending.pop(0)
        index = last.get(name)
        if name in seen or index is None:
            continue
        seen.add(name)
        value = bindings[index][1]
        rebound = {other for other, at in last.items() if at > index}
        node = _in_assignment(ctx, value, recv, names, rebound)
        if node is not None:
            return node
        pending.extend(_operands(value))
    return None


def move_origin(ctx, expr: cst.BaseExpression, recv: Fact) -> Optional[tuple[cst.CSTNode, str]]:
    """The op that laid out ``expr`` (whose fact is ``recv``) out of order, with the label of
    the related line: ``(node, "made non-contiguous here by `transpose(1, 2)`")``; ``None``
    when it cannot be told."""
    names: Optional[tuple[str, ...]] = None
    if recv.moved_by:
        names = _SPELLINGS.get(_op_name(recv.moved_by))
        if names is None:
            return None
    node = _in_statement(ctx, expr, recv, names)
    if node is None:
        node = _in_earlier_binding(ctx, expr, recv, names)
    if node is None:
        return None
    if recv.moved_by:
        how = recv.moved_by.lstrip(".") if "(" in recv.moved_by else recv.moved_by  # `transpose(1, 2)`, `.T`
    else:
        text = ctx.source(node)
        how = text if len(text) <= 40 else text[:37] + "..."
    return node, f"made non-contiguous here by `{how}`"
