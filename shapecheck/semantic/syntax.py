"""Reading libcst nodes: dotted names, int literals, call arguments, parameters, binding targets."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import libcst as cst


def dotted_name(expr: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    tp = type(expr)  # exact types: isinstance on libcst's abstract classes is slow
    if tp is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if tp is not cst.Attribute:
        return None
    owner = expr.value  # type: ignore[attr-defined]
    if type(owner) is cst.Name:  # `self.fc`, `torch.cat`: most chains
        return owner.value + "." + expr.attr.value  # type: ignore[attr-defined]
    parts = []
    while tp is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
        tp = type(expr)
    if tp is cst.Name:
        parts.append(expr.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


def string_value(node: cst.SimpleString) -> Union[str, bytes]:
    """``node.evaluated_value`` (which runs ``ast.literal_eval``), read directly for a literal
    without prefix, backslash, carriage return or NUL: the text between its quotes."""
    raw = node.value
    if raw[0] in "'\"" and "\\" not in raw and "\r" not in raw and "\0" not in raw:
        quotes = 3 if raw[:3] in ('"""', "'''") and len(raw) >= 6 else 1
        return raw[quotes:-quotes]
    return node.evaluated_value


def int_literal(expr: cst.CSTNode) -> Optional[int]:
    """The value of an int literal, also negative (``-1``), else ``None``."""
    if type(expr) is cst.Integer:
        try:
            return int(expr.value, 0)
        except ValueError:
            return int(expr.value.replace("_", ""), 0)
    if (
        type(expr) is cst.UnaryOperation
        and type(expr.operator) is cst.Minus
        and type(expr.expression) is cst.Integer
    ):
        v = int_literal(expr.expression)
        return -v if v is not None else None
    return None


def index_value(element: cst.SubscriptElement) -> Optional[int]:
    """The int literal of a subscript element (``x[0]``, ``x[-1]``), else ``None``."""
    s = element.slice
    if type(s) is cst.Index:
        return int_literal(s.value)
    return None


class CallArgs:
    """The positional and keyword arguments of a call, split once."""

    __slots__ = ("pos", "kw", "starred")

    def __init__(self, call: cst.Call) -> None:
        self.pos: list[cst.BaseExpression] = []
        self.kw: dict[str, cst.BaseExpression] = {}
        self.starred = False
        for a in call.args:
            if a.star:
                self.starred = True
            elif a.keyword is not None:
                self.kw[a.keyword.value] = a.value
            else:
                self.pos.append(a.value)

    def get(self, index: int, keyword: Optional[str] = None) -> Optional[cst.BaseExpression]:
        """Positional ``index`` or keyword ``keyword``."""
        if keyword is not None and keyword in self.kw:
            return self.kw[keyword]
        if index is not None and 0 <= index < len(self.pos):
            return self.pos[index]
        return None


def all_params(params: cst.Parameters) -> list[cst.Param]:
    """Every parameter of a signature, in order: positional-only, plain, keyword-only, ``*a``, ``**k``."""
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if type(params.star_arg) is cst.Param:
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def self_attribute_targets(target: cst.CSTNode, self_name: str) -> list[str]:
    """The ``<self_name>.<attr>`` names a binding target assigns (``self.a, self.b = ...``: both)."""
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == self_name:
        return [target.attr.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [a for e in target.elements for a in self_attribute_targets(e.value, self_name)]
    if type(target) is cst.StarredElement:
        return self_attribute_targets(target.value, self_name)
    return []


def with_targets(stmt: cst.CSTNode) -> list[cst.BaseExpression]:
    """The ``as`` targets of a ``with`` statement (none for any other node). The fast walk
    (:func:`~shapecheck.semantic.walk.walk`) yields a ``with``'s item expressions, never its
    ``WithItem`` nodes: binding checks ask the ``With`` itself."""
    if type(stmt) is not cst.With:
        return []
    return [i.asname.name for i in stmt.items if i.asname is not None]


def target_names(target: cst.CSTNode) -> list[str]:
    """The plain names a binding target binds (``a, (b, *c)`` -> ``a b c``; attributes bind none)."""
    if type(target) is cst.Name:
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = []
        for e in target.elements:
            names.extend(target_names(e.value))
        return names
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    if type(target) is cst.Del:
        return target_names(target.target)
    return []


def import_binding(alias: cst.ImportAlias) -> str:
    """The local name an import alias binds (``import a.b`` binds ``a``)."""
    if alias.asname is not None and type(alias.asname.name) is cst.Name:
        return alias.asname.name.value
    name = dotted_name(alias.name) or ""
    return name.split(".")[0]


Block = Sequence[cst.CSTNode]


def sub_blocks(stmt: cst.CSTNode) -> list[Block]:
    """The statement lists a compound statement holds: body, ``else``/``elif``, handlers, ``finally``."""
    blocks: list[Block] = []
    body = getattr(stmt, "body", None)
    if type(body) is cst.IndentedBlock or type(body) is cst.SimpleStatementSuite:
        blocks.append(body.body)
    orelse = getattr(stmt, "orelse", None)
    if type(orelse) is cst.If:
        blocks.append([orelse])
    elif orelse is not None and hasattr(orelse, "body"):
        blocks.append(orelse.body.body)
    for h in getattr(stmt, "handlers", ()) or ():
        blocks.append(h.body.body)
    fin = getattr(stmt, "finalbody", None)
    if fin is not None:
        blocks.append(fin.body.body)
    return blocks


def method_def(class_def: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The first ``def name`` of the body of ``class_def``, or ``None``."""
    for stmt in class_def.body.body:
        if type(stmt) is cst.FunctionDef and stmt.name.value == name:
            return stmt
    return None


def method_call(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, str]]:
    """``(receiver, method name)`` for a call ``receiver.method(...)``, else ``None``."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.value, node.func.attr.value
    return None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    """The argument passed as ``name=...`` to ``call``, or ``None``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    """The positional argument expressions of ``call`` (stops at the first ``*args``)."""
    values = []
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if arg.star:
            break
        values.append(arg.value)
    return values


def is_name(expr: Optional[cst.BaseExpression], value: str) -> bool:
    """True when ``expr`` is the bare name ``value`` (``True``, ``None``...)."""
    return type(expr) is cst.Name and expr.value == value


def is_number(expr: Optional[cst.BaseExpression]) -> bool:
    """True for a number literal, signed or not (``2``, ``1e-9``, ``-1``)."""
    tp = type(expr)  # exact types: isinstance on libcst's abstract classes is slow
    if tp is cst.Integer or tp is cst.Float:
        return True
    if tp is not cst.UnaryOperation:
        return False
    inner = type(expr.expression)  # type: ignore[union-attr]
    return inner is cst.Integer or inner is cst.Float


def sizes_of(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``x`` when ``expr`` lists all the sizes of ``x`` (``x.shape`` or ``x.size()``), else ``None``."""
    if type(expr) is cst.Attribute and expr.attr.value == "shape":
        return expr.value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" \
            and not expr.args:
        return expr.func.value
    return None
