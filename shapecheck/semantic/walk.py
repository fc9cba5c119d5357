"""Walking a tree fast: every node below a node that can hold an expression."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Union

import libcst as cst

from shapecheck.semantic.node_memo import NodeMemo

_NODE_TYPES: dict[type, bool] = {}
#: class -> whether it is a libcst node, for the classes met so far (hot loops read it before
#: calling :func:`is_node_type`)
KNOWN_NODE_TYPES = _NODE_TYPES


def is_node_type(tp: type) -> bool:
    """``issubclass(tp, cst.CSTNode)``, cached: CSTNode is an ABC, and its checks are slow."""
    known = _NODE_TYPES.get(tp)
    if known is None:
        known = _NODE_TYPES[tp] = issubclass(tp, cst.CSTNode)
    return known


def _elements(node) -> list:
    return [e.value for e in node.elements]


def _subscript_parts(node: cst.Subscript) -> list:
    parts = [node.value]
    for element in node.slice:
        inner = element.slice
        if type(inner) is cst.Index:
            parts.append(inner.value)
        elif type(inner) is cst.Slice:
            parts.extend(p for p in (inner.lower, inner.upper, inner.step) if p is not None)
    return parts


def _function_parts(node: cst.FunctionDef) -> list:
    parts: list = [*node.decorators, node.name]
    if node.type_parameters is not None:
        parts.append(node.type_parameters)
    parts.append(node.params)
    if node.returns is not None:
        parts.append(node.returns)
    parts.append(node.body)
    return parts


def _class_parts(node: cst.ClassDef) -> list:
    parts: list = [*node.decorators, node.name]
    if node.type_parameters is not None:
        parts.append(node.type_parameters)
    parts.extend(node.bases)
    parts.extend(node.keywords)
    parts.append(node.body)
    return parts


#: The child nodes that matter for the common node types, read field by field: much faster than
#: libcst's generic ``children`` (which rebuilds every child list). Other types fall back to it.
_FIELDS: dict[type, Callable[[Any], Iterable[cst.CSTNode]]] = {
    cst.Name: lambda n: (),
    cst.Integer: lambda n: (),
    cst.Float: lambda n: (),
    cst.SimpleString: lambda n: (),
    cst.Attribute: lambda n: (n.value,),
    cst.Call: lambda n: [n.func, *[a.value for a in n.args]],
    cst.BinaryOperation: lambda n: (n.left, n.right),
    cst.BooleanOperation: lambda n: (n.left, n.right),
    cst.UnaryOperation: lambda n: (n.expression,),
    cst.Comparison: lambda n: [n.left, *(c.comparator for c in n.comparisons)],
    cst.Subscript: _subscript_parts,
    cst.Tuple: _elements,
    cst.List: _elements,
    cst.Set: _elements,
    cst.IfExp: lambda n: (n.test, n.body, n.orelse),
    cst.Await: lambda n: (n.expression,),
    cst.IndentedBlock: lambda n: n.body,
    cst.SimpleStatementLine: lambda n: n.body,
    cst.SimpleStatementSuite: lambda n: n.body,
    cst.Expr: lambda n: (n.value,),
    cst.Assign: lambda n: [*(t.target for t in n.targets), n.value],
    cst.AugAssign: lambda n: (n.target, n.value),
    cst.AnnAssign: lambda n: (n.target,) if n.value is None else (n.target, n.value),
    cst.Return: lambda n: () if n.value is None else (n.value,),
    cst.If: lambda n: (n.test, n.body) if n.orelse is None else (n.test, n.body, n.orelse),
    cst.Else: lambda n: (n.body,),
    cst.For: lambda n: (n.target, n.iter, n.body) if n.orelse is None else (n.target, n.iter, n.body, n.orelse),
    cst.While: lambda n: (n.test, n.body) if n.orelse is None else (n.test, n.body, n.orelse),
    cst.With: lambda n: [*(i.item for i in n.items), n.body],
    cst.Pass: lambda n: (),
    cst.Break: lambda n: (),
    cst.Continue: lambda n: (),
    cst.Ellipsis: lambda n: (),
    cst.Import: lambda n: (),
    cst.ImportFrom: lambda n: (),
    cst.Global: lambda n: (),
    cst.Nonlocal: lambda n: (),
    cst.Parameters: lambda n: (),
    cst.Decorator: lambda n: (n.decorator,),
    cst.Try: lambda n: [n.body, *n.handlers, *(x for x in (n.orelse, n.finalbody) if x is not None)],
    cst.ExceptHandler: lambda n: (n.body,),
    cst.Finally: lambda n: (n.body,),
    cst.Raise: lambda n: [x for x in (n.exc, n.cause) if x is not None],
    cst.Assert: lambda n: (n.test,) if n.msg is None else (n.test, n.msg),
    cst.Del: lambda n: (n.target,),
    cst.Dict: lambda n: [
        v for e in n.elements
        for v in ((e.key, e.value) if type(e) is cst.DictElement else (e.value,))
    ],
    cst.StarredElement: lambda n: (n.value,),
    cst.ConcatenatedString: lambda n: (n.left, n.right),
    cst.FormattedString: lambda n: [p.expression for p in n.parts if type(p) is cst.FormattedStringExpression],
    cst.NamedExpr: lambda n: (n.target, n.value),
    cst.Yield: lambda n: () if n.value is None or type(n.value) is cst.From else (n.value,),
    cst.ListComp: lambda n: (n.elt, n.for_in),
    cst.SetComp: lambda n: (n.elt, n.for_in),
    cst.GeneratorExp: lambda n: (n.elt, n.for_in),
    cst.DictComp: lambda n: (n.key, n.value, n.for_in),
    cst.CompFor: lambda n: [n.target, n.iter, *(i.test for i in n.ifs), *((n.inner_for_in,) if n.inner_for_in else ())],
    cst.FunctionDef: _function_parts,
    cst.ClassDef: _class_parts,
    cst.Lambda: lambda n: (n.params, n.body),
    cst.Module: lambda n: n.body,
    cst.Annotation: lambda n: (n.annotation,),
    cst.Arg: lambda n: (n.value,) if n.keyword is None else (n.keyword, n.value),
    cst.From: lambda n: (n.item,),
    cst.WithItem: lambda n: (n.item,) if n.asname is None else (n.item, n.asname),
    cst.AsName: lambda n: (n.name,),
    cst.EmptyLine: lambda n: (),
    cst.Comment: lambda n: (),
}


def child_nodes(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """The children of ``node`` that can hold an expression (for the common node types, without
    their tokens and whitespace)."""
    fields = _FIELDS.get(type(node))
    return fields(node) if fields is not None else node.children


#: node types :func:`walk` never looks into: no children worth producing
_LEAVES = frozenset({
    cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Pass, cst.Break, cst.Continue, cst.Ellipsis,
    cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.Parameters, cst.EmptyLine, cst.Comment,
})
_DEFS = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


#: for a walk without and one into nested definitions: each node walked so far -> the nodes below
#: it in walk order once it has been walked twice, else :data:`_ONCE` (the passes of the analysis
#: and the rules walk the same function bodies and statements again); emptied past 20,000 nodes
_WALKED: tuple[NodeMemo[Union[list[cst.CSTNode], object]], ...] = (NodeMemo(limit=20_000), NodeMemo(limit=20_000))
_ONCE = object()
#: the nodes whose walk is kept from the first one: the bodies that several passes walk
_BODIES = frozenset({cst.IndentedBlock, cst.Module, cst.FunctionDef, cst.ClassDef})


def walk(node: cst.CSTNode, *, into_defs: bool = False) -> Iterator[cst.CSTNode]:
    """Every node below ``node`` (not ``node`` itself) that can hold an expression.

    Nested function and class definitions and lambdas are skipped unless ``into_defs``. Tokens
    (operators, commas, whitespace) of the common node types are not produced. A node walked
    again gives the nodes found before (syntax trees never change): those of a body from its
    first walk, those of any other node from its second.
    """
    known = _WALKED[into_defs]
    below = known.get(node)
    if below is None and type(node) not in _BODIES:
        known.put(node, _ONCE)
        return _walk(node, into_defs)
    if below is None or below is _ONCE:
        below = known.put(node, _walk_list(node, into_defs))
    return iter(below)  # type: ignore[call-overload]


def walk_once(node: cst.CSTNode, *, into_defs: bool = False) -> list[cst.CSTNode]:
    """What :func:`walk` gives, for a node no other pass walks: nothing is remembered."""
    known = _WALKED[into_defs].get(node)
    if type(known) is list:
        return known
    return _walk_list(node, into_defs)


def _walk(node: cst.CSTNode, into_defs: bool) -> Iterator[cst.CSTNode]:
    get = _FIELDS.get
    leaves = _LEAVES
    defs = _DEFS
    fields = get(type(node))
    stack = list(fields(node) if fields is not None else node.children)
    pop = stack.pop
    extend = stack.extend
    while stack:
        current = pop()
        yield current
        tp = type(current)
        if tp in leaves or (tp in defs and not into_defs):
            continue
        fields = get(tp)
        extend(fields(current) if fields is not None else current.children)


def _walk_list(node: cst.CSTNode, into_defs: bool) -> list[cst.CSTNode]:
    """``list(_walk(node, into_defs))``, built without a generator."""
    get = _FIELDS.get
    leaves = _LEAVES
    defs = _DEFS
    fields = get(type(node))
    stack = list(fields(node) if fields is not None else node.children)
    pop = stack.pop
    extend = stack.extend
    found: list[cst.CSTNode] = []
    add = found.append
    while stack:
        current = pop()
        add(current)
        tp = type(current)
        if tp in leaves or (tp in defs and not into_defs):
            continue
        fields = get(tp)
        extend(fields(current) if fields is not None else current.children)
    return found
