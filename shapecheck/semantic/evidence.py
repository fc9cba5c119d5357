"""Tensor-ness and rank from evidence: what the uses of a name say about the value bound to it.

A value of unknown origin (an unannotated parameter, a loop variable, the result of calling an
unknown object) is a tensor when the code uses it as only a tensor can be used: a method that
``numpy.ndarray``, ``nn.Module``, ``str``, ``list`` and ``dict`` lack (``permute``,
``contiguous``, ``unsqueeze`` ...), ``view`` with int sizes, ``transpose`` with two dims that
are not a matrix transpose (numpy's ``a.transpose(1, 0)`` is valid), ``size(d)``, a method given
``dim=``/``keepdim=`` (numpy says ``axis``/``keepdims``), ``backward()`` without a gradient,
or being passed to a ``torch``/``F`` function that takes tensors. Uses bound its rank:
``transpose(1, 2)`` at least 3, ``permute(0, 2, 1)`` exactly 3, ``x[:, :, 0]`` at least 3,
``b, t, c = x.size()`` exactly 3; uses numpy also has (``x.sum(1)``, ``x[0]``) bound the rank of
a value known to be a tensor but are no evidence of it.

:func:`scan_function` reads a function body once, before it is analysed: in source order, for
each parameter and each binding of a name (an assignment, a loop variable), the uses up to the
next binding of that name. A name that is compared with ``None``, given to ``isinstance``,
``type``, ``hasattr``, ``getattr`` or ``callable``, called, given to a ``numpy`` function or
``torch.from_numpy``/``torch.tensor``, or used with ``.astype`` keeps no evidence; neither does a
binding of a value that comes from ``numpy``, ``.numpy()``, ``.tolist()`` or ``.astype(...)``.
Conflicting rank evidence keeps the tensor-ness and drops the rank. Names (``model``, ``loss``)
are never evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Union

import libcst as cst

from shapecheck.semantic.facts import NON_LEAF, TENSOR, Fact
from shapecheck.semantic.frozen_init import fill_directly
from shapecheck.semantic.piece_layouts import piece_layout
from shapecheck.semantic.rank_reads import rank_read
from shapecheck.semantic.syntax import CallArgs, dotted_name, int_literal, sizes_of
from shapecheck.semantic.walk import child_nodes, walk_once
from shapecheck.semantic.torch_api import (
    DIM_PERMUTING_METHODS, ELEMENTWISE_BINARY, FUNCTIONAL_LOSSES, FUNCTIONAL_RANK_ADDING, FUNCTIONAL_RANK_KEEPING,
    INDEX_ARGUMENT_OPS, INPLACE_RESHAPING_METHODS, MATRIX_PRODUCTS, REDUCTIONS, SHAPE_KEEPING_UNARY,
    TENSOR_EVIDENCE_METHODS,
)
from shapecheck.shapes import Shape

#: resolves a name or attribute chain through the imports (``F.relu`` -> ``torch.nn.functional.relu``)
Resolver = Callable[[cst.CSTNode], Optional[str]]

#: the key of the parameters' evidence in :attr:`FunctionEvidence.sites`
PARAMETERS = 0


@dataclass(frozen=True)
class Evidence:
    """What the uses of one binding say: ``tensor`` (some use only a tensor allows), the rank
    bounds (``exact``; ``front``: at least that many dims, counted from the first;
    ``back``: at least that many, counted from the last), ``conflict`` (rank uses disagree),
    ``poisoned`` (a use that a non-tensor would explain: ``is None``, ``isinstance``, numpy),
    ``differentiated`` (``backward()`` runs on it: a correct program gives it a gradient, so it
    requires grad)."""

    tensor: bool = False
    exact: Optional[int] = None
    front: int = 0
    back: int = 0
    conflict: bool = False
    poisoned: bool = False
    differentiated: bool = False

    def __add__(self, other: "Evidence") -> "Evidence":
        exact = self.exact
        conflict = self.conflict or other.conflict
        if other.exact is not None:
            if exact is not None and exact != other.exact:
                conflict = True
            exact = other.exact
        return Evidence(self.tensor or other.tensor, exact, max(self.front, other.front),
                        max(self.back, other.back), conflict, self.poisoned or other.poisoned,
                        self.differentiated or other.differentiated)

    def shape(self) -> Optional[Shape]:
        """The rank bound as a :class:`Shape` of unknown dims, or ``None`` when there is none."""
        if self.conflict:
            return None
        least = max(self.front, self.back)
        if self.exact is not None:
            return Shape((None,) * self.exact) if self.exact >= least else None
        if least == 0:
            return None
        if self.front >= self.back:
            return Shape((None,) * self.front, rest_at=self.front)
        return Shape((None,) * self.back, rest_at=0)


fill_directly(Evidence)
TENSOR_USE = Evidence(tensor=True)
#: tensor methods whose one argument torch accepts only as a tensor (numpy has none of them)
_TENSOR_ARGUMENT_METHODS = frozenset({"expand_as", "view_as", "reshape_as", "type_as"})
_NO_EVIDENCE = Evidence()
POISON = Evidence(poisoned=True)
RANK_TESTED = Evidence(conflict=True)
BACKWARD_USE = Evidence(tensor=True, differentiated=True)


def refine(current: Fact, evidence: Optional[Evidence]) -> Fact:
    """``current`` with what ``evidence`` adds: a value of unknown kind becomes a tensor, and a
    tensor of unknown rank gets the rank bound. Anything else is returned as it is."""
    if evidence is None or evidence.poisoned:
        return current
    kind = current.kind
    if kind is None:
        if not evidence.tensor or current.elems is not None or current.maybe_pair or current.value is not None:
            return current
        out = current.with_(kind=TENSOR)
    elif kind == TENSOR:
        out = current
    else:
        return current
    bound = evidence.shape()
    if bound is not None and (out.shape is None or _looser(out.shape, bound)):
        out = out.with_(shape=bound)
    if evidence.differentiated and out.grad is None:
        out = out.with_(grad=NON_LEAF)  # backward() on a tensor that needs no grad raises
    return out


def _looser(shape: Shape, bound: Shape) -> bool:
    """``shape`` says less than ``bound`` about the rank (and nothing about the sizes)."""
    if shape.rank is not None or any(d is not None for d in shape.dims):
        return False
    if bound.rank is not None:
        return True
    return len(shape.dims) < len(bound.dims)


# --------------------------------------------------------------------------------- one use


def _dim_bound(d: Optional[int]) -> Evidence:
    """The rank that a valid dim index ``d`` needs."""
    if d is None:
        return Evidence()
    return Evidence(front=d + 1) if d >= 0 else Evidence(back=-d)


def _is_int_like(expr: cst.BaseExpression) -> bool:
    """An int literal, or an expression of ints that cannot be a dtype (``c // h``, ``-1``)."""
    if int_literal(expr) is not None:
        return True
    return type(expr) is cst.BinaryOperation and isinstance(
        expr.operator, (cst.Multiply, cst.FloorDivide, cst.Add, cst.Subtract))


def method_use(name: str, call: cst.Call) -> Evidence:
    """What ``x.<name>(...)`` says about ``x``."""
    args = CallArgs(call)
    ints = [int_literal(a) for a in args.pos]
    ev = TENSOR_USE if name in TENSOR_EVIDENCE_METHODS else _NO_EVIDENCE
    dim = args.kw.get("dim")
    if "keepdim" in args.kw or (dim is not None and int_literal(dim) is not None):
        ev = ev + TENSOR_USE
    if name == "permute":
        if args.pos and all(i is not None for i in ints):
            return ev + Evidence(exact=len(ints))
        only = args.pos[0] if len(args.pos) == 1 else args.kw.get("dims")
        if isinstance(only, (cst.Tuple, cst.List)) and all(int_literal(e.value) is not None for e in only.elements):
            return ev + Evidence(exact=len(only.elements))
        return ev
    if name == "transpose" and len(args.pos) == 2 and None not in ints:
        a, b = ints
        bound = _dim_bound(a) + _dim_bound(b)
        matrix = {a % 2, b % 2} == {0, 1} and all(-2 <= i <= 1 for i in (a, b))  # type: ignore[operator]
        return ev + bound + (Evidence() if matrix else TENSOR_USE)
    if name == "size" and args.pos:
        return ev + TENSOR_USE + _dim_bound(ints[0])
    if name == "dim" and not args.pos and not args.kw:
        return ev + TENSOR_USE
    if name == "backward" and not args.pos:
        return ev + BACKWARD_USE
    if name == "view" and not args.kw and not args.starred and args.pos:
        # numpy's view takes a dtype and a type: three sizes, or an int, are a tensor's view
        if len(args.pos) >= 3 or any(_is_int_like(a) for a in args.pos):
            return ev + TENSOR_USE
        return ev
    if name == "split" and ("dim" in args.kw or (args.pos and ints[0] is not None)):
        return ev + TENSOR_USE + _dim_bound(int_literal(args.kw["dim"]) if "dim" in args.kw else None)
    if name == "flatten" and args.pos and all(i is not None for i in ints):
        return ev + TENSOR_USE + _dim_bound(ints[0]) + (_dim_bound(ints[1]) if len(ints) > 1 else Evidence())
    if name in ("unsqueeze", "unsqueeze_") and ints and ints[0] is not None:
        d = ints[0]
        return ev + (Evidence(front=d) if d >= 0 else Evidence(back=-d - 1))
    if name == "topk":  # topk(k, dim=-1): numpy arrays have no topk
        dim = args.kw.get("dim", args.pos[1] if len(args.pos) > 1 else None)
        return ev + TENSOR_USE + _dim_bound(int_literal(dim) if dim is not None else None)
    if name in ("mm", "mv"):
        return ev + Evidence(exact=2)
    if name == "bmm":
        return ev + Evidence(exact=3)
    if name == "matmul":
        return ev + Evidence(front=1)
    if name in ("softmax", "log_softmax", "narrow", "gather", "index_select", "chunk", "cumsum", "cumprod",
                "squeeze") or name in REDUCTIONS:
        dim = args.kw.get("dim")
        if dim is None and args.pos and name not in ("chunk", "norm"):
            dim = args.pos[0]
        elif dim is None and name == "chunk" and len(args.pos) > 1:
            dim = args.pos[1]
        if name in REDUCTIONS and isinstance(dim, (cst.Tuple, cst.List)):
            for e in dim.elements:  # `x.mean((2, 3))`: each axis needs its rank
                ev = ev + _dim_bound(int_literal(e.value))
            return ev
        return ev + _dim_bound(int_literal(dim) if dim is not None else None)
    return ev


def subscript_use(node: cst.Subscript) -> Evidence:
    """What ``x[...]`` says about the rank of ``x`` (each index other than ``None``, ``...`` and
    a bool consumes at least one dim)."""
    consumed = 0
    for el in node.slice:
        s = el.slice
        if type(s) is cst.Index:
            v = s.value
            if type(v) is cst.Ellipsis or (type(v) is cst.Name and v.value in ("None", "True", "False")):
                continue
            if isinstance(v, (cst.Tuple, cst.List)):
                return Evidence()
        consumed += 1
    return Evidence(front=consumed)


def _sliced(node: cst.Subscript) -> bool:
    """``x[...]`` slices a dim (``x[:, :2]``): only an array or a tensor is indexed so."""
    return len(node.slice) > 1 and any(type(el.slice) is cst.Slice for el in node.slice)


def _function_use(qual: str, position: int, call: cst.Call) -> Evidence:
    """What passing ``x`` as the argument at ``position`` of ``qual(...)`` says about ``x``."""
    if qual.startswith(("numpy.", "np.")) or qual in _NOT_YET_TENSORS:
        return POISON
    if qual.startswith("torch.nn.functional."):
        name = qual[20:]
        if name in FUNCTIONAL_LOSSES and position <= 1:
            least = 1 if position == 0 and name in ("nll_loss", "cross_entropy") else 0
            return TENSOR_USE + Evidence(front=least)
        if position == 0 and (name in SHAPE_KEEPING_UNARY or name in FUNCTIONAL_RANK_KEEPING
                              or name in FUNCTIONAL_RANK_ADDING):
            args = CallArgs(call)
            dim = args.kw.get("dim")
            return TENSOR_USE + _dim_bound(int_literal(dim) if dim is not None else None)
        return Evidence()
    if not qual.startswith("torch.") or qual.count(".") != 1:
        return Evidence()
    name = qual[6:]
    if name in MATRIX_PRODUCTS and position <= 1:
        exact = {"mm": 2, "bmm": 3, "dot": 1}.get(name)
        if name == "mv":
            exact = 2 if position == 0 else 1
        return TENSOR_USE + (Evidence(exact=exact) if exact is not None else Evidence(front=1))
    if position == 0 and (name in ELEMENTWISE_BINARY or name in SHAPE_KEEPING_UNARY or name in REDUCTIONS
                          or name in DIM_PERMUTING_METHODS or name in ("unsqueeze", "squeeze", "flatten")
                          or name in INDEX_ARGUMENT_OPS):
        if name in ("transpose", "permute", "unsqueeze", "flatten"):
            return method_use(name, call.with_changes(args=call.args[1:])) + TENSOR_USE
        return TENSOR_USE
    return Evidence()


#: functions whose argument is not a tensor yet (or may not be): a value given to them keeps no evidence
_NOT_YET_TENSORS = frozenset({
    "torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor",
    "torch.LongTensor", "torch.is_tensor", "torch.utils.data.DataLoader",
})
#: builtins that ask what a value is: its kind is open
_TYPE_QUESTIONS = frozenset({"isinstance", "type", "hasattr", "getattr", "callable", "issubclass"})


# --------------------------------------------------------------------------------- the scan


@dataclass
class FunctionEvidence:
    """The evidence of one function body: ``sites[id(binding node)][name]`` for each binding
    (``sites[PARAMETERS]`` for the parameters)."""

    sites: dict[int, dict[str, Evidence]]

    def at(self, node: Union[cst.CSTNode, int]) -> dict[str, Evidence]:
        """The evidence of the names ``node`` binds (``PARAMETERS`` for the parameters)."""
        key = node if isinstance(node, int) else id(node)
        return self.sites.get(key, {})


class _Scanner:
    """Walks a function body in source order and files each use under the binding it reads."""

    def __init__(self, resolve: Resolver) -> None:
        self.resolve = resolve
        #: name -> the key of the binding its uses read now
        self.open: dict[str, int] = {}
        self.sites: dict[int, dict[str, Evidence]] = {}

    def use(self, name: str, ev: Evidence) -> None:
        key = self.open.get(name)
        if key is None:
            return
        table = self.sites.setdefault(key, {})
        table[name] = table.get(name, _NO_EVIDENCE) + ev

    def bind(self, names: Iterable[str], site: Optional[cst.CSTNode]) -> None:
        """``names`` are bound at ``site`` (``None``: a binding whose evidence is not kept)."""
        for n in names:
            if site is None:
                self.open.pop(n, None)
            else:
                self.open[n] = id(site)
                self.sites.setdefault(id(site), {}).setdefault(n, _NO_EVIDENCE)

    # ---------------------------------------------------------------- expressions
    def expr(self, node: Optional[cst.CSTNode]) -> None:
        if node is None:
            return
        tp = type(node)  # exact types: isinstance on libcst's abstract classes is slow
        if tp in _LEAVES:
            return
        if tp in _SCOPED:
            return  # names bound inside may shadow the outer ones
        if tp is cst.Call:
            self._call(node)  # type: ignore[arg-type]
        elif tp is cst.Attribute:
            if type(node.value) is cst.Name and node.attr.value in ("grad_fn", "is_leaf"):  # type: ignore[attr-defined]
                self.use(node.value.value, TENSOR_USE)  # type: ignore[attr-defined]
        elif tp is cst.Subscript:
            self._subscript(node)  # type: ignore[arg-type]
        elif tp is cst.Comparison:
            self._comparison(node)  # type: ignore[arg-type]
        elif tp is cst.BinaryOperation and type(node.operator) is cst.MatrixMultiply:  # type: ignore[attr-defined]
            for side in (node.left, node.right):  # type: ignore[attr-defined]
                if type(side) is cst.Name:
                    self.use(side.value, Evidence(front=1))
        for child in child_nodes(node):
            self.expr(child)
        if tp is cst.NamedExpr and type(node.target) is cst.Name:  # type: ignore[attr-defined]
            self.bind((node.target.value,), None)  # type: ignore[attr-defined]

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Name:
            if func.value in _TYPE_QUESTIONS or func.value in ("len",):
                for a in node.args:
                    if type(a.value) is cst.Name:
                        self.use(a.value.value, POISON if func.value != "len" else Evidence(front=1))
                return
            self.use(func.value, POISON)  # a tensor is not callable
        qual = self.resolve(func)
        if type(func) is cst.Attribute and type(func.value) is cst.Name:
            method = func.attr.value
            if method == "astype":
                self.use(func.value.value, POISON)
            elif qual is None:
                self.use(func.value.value, method_use(method, node))
        if qual is None and type(func) is cst.Attribute and func.attr.value in _TENSOR_ARGUMENT_METHODS \
                and len(node.args) == 1 and type(node.args[0].value) is cst.Name and node.args[0].keyword is None:
            self.use(node.args[0].value.value, TENSOR_USE)  # `y.expand_as(x)`: torch takes only a tensor
        if qual is None:
            dotted = dotted_name(func)
            if dotted is None or not dotted.startswith(("np.", "numpy.")):
                return
            qual = "numpy." + dotted.partition(".")[2]  # numpy used without its import in sight
        position = 0
        for a in node.args:
            if a.keyword is not None or a.star:
                if type(a.value) is cst.Name and (qual.startswith(("numpy.", "np.")) or qual in _NOT_YET_TENSORS):
                    self.use(a.value.value, POISON)
                continue
            if type(a.value) is cst.Name:
                self.use(a.value.value, _function_use(qual, position, node))
            elif type(a.value) is cst.Subscript and type(a.value.value) is cst.Name and _sliced(a.value):
                found = _function_use(qual, position, node)  # `torch.min(x[:, :2], y)`: a slice of a tensor
                if found.tensor or found.poisoned:
                    self.use(a.value.value.value, subscript_use(a.value) + (POISON if found.poisoned else TENSOR_USE))
            elif isinstance(a.value, (cst.List, cst.Tuple)) and qual in ("torch.cat", "torch.stack") and position == 0:
                for e in a.value.elements:
                    if type(e.value) is cst.Name:
                        self.use(e.value.value, TENSOR_USE)
            position += 1

    def _subscript(self, node: cst.Subscript) -> None:
        value = node.value
        if type(value) is cst.Name:
            self.use(value.value, subscript_use(node))
        elif type(value) is cst.Attribute and value.attr.value == "shape" and type(value.value) is cst.Name \
                and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
            self.use(value.value.value, _dim_bound(int_literal(node.slice[0].slice.value)))

    def _comparison(self, node: cst.Comparison) -> None:
        operands = [node.left] + [c.comparator for c in node.comparisons]
        for o in operands:
            tested = rank_read(o)
            if tested is not None:  # `if x.ndim == 2:`: the code takes several ranks, uses bound none
                self.use(tested, RANK_TESTED)
        if any(type(o) is cst.Name and o.value == "None" for o in operands):
            for o in operands:
                if type(o) is cst.Name:
                    self.use(o.value, POISON)

    # ---------------------------------------------------------------- statements
    def block(self, stmts: Iterable[cst.CSTNode]) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def suite(self, suite: Optional[cst.CSTNode]) -> None:
        if suite is None:
            return
        body = getattr(suite, "body", ())
        self.block(body if isinstance(body, (list, tuple)) else (body,))

    def statement(self, stmt: cst.CSTNode) -> None:
        if type(stmt) is cst.SimpleStatementLine:
            self.block(stmt.body)
        elif type(stmt) is cst.Assign:
            self.expr(stmt.value)
            self._unpacked_size(stmt)
            tracked = not _from_numpy(stmt.value, self.resolve)
            for t in stmt.targets:
                self._target(t.target, stmt if tracked else None)
        elif type(stmt) is cst.AnnAssign:
            self.expr(stmt.value)
            self._target(stmt.target, None)
        elif type(stmt) is cst.AugAssign:
            self.expr(stmt.value)
            self._target(stmt.target, None)
        elif type(stmt) is cst.Expr:
            self.expr(stmt.value)
            self._inplace_reshape(stmt.value)
        elif type(stmt) is cst.Return or type(stmt) is cst.Raise:
            self.expr(getattr(stmt, "value", None) if isinstance(stmt, cst.Return) else stmt.exc)
        elif type(stmt) is cst.Assert:
            self.expr(stmt.test)
            self.expr(stmt.msg)
        elif type(stmt) is cst.Del:
            self._target(stmt.target, None)
        elif type(stmt) is cst.Global or type(stmt) is cst.Nonlocal:
            self.bind((n.name.value for n in stmt.names), None)
        elif type(stmt) is cst.Import or type(stmt) is cst.ImportFrom:
            names = stmt.names if not isinstance(stmt.names, cst.ImportStar) else ()
            for alias in names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if type(bound) is cst.Name:
                    self.bind((bound.value,), None)
                elif type(bound) is cst.Attribute:
                    self.bind((_head(bound),), None)
        elif type(stmt) is cst.If:
            self.expr(stmt.test)
            self.suite(stmt.body)
            orelse = stmt.orelse
            if type(orelse) is cst.If:
                self.statement(orelse)
            elif orelse is not None:
                self.suite(orelse.body)
        elif type(stmt) is cst.For:
            self.expr(stmt.iter)
            self._target(stmt.target, None if _from_numpy(stmt.iter, self.resolve) else stmt)
            self.suite(stmt.body)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body)
        elif type(stmt) is cst.While:
            self.expr(stmt.test)
            self.suite(stmt.body)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body)
        elif type(stmt) is cst.With:
            for item in stmt.items:
                self.expr(item.item)
                if item.asname is not None:
                    self._target(item.asname.name, None)
            self.suite(stmt.body)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.suite(stmt.body)
            for h in stmt.handlers:
                self.expr(h.type)
                if h.name is not None:
                    self._target(h.name.name, None)
                self.suite(h.body)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body)
            if stmt.finalbody is not None:
                self.suite(stmt.finalbody.body)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.bind((stmt.name.value,), None)
        elif type(stmt) is cst.Match:
            self.expr(stmt.subject)
            for case in stmt.cases:
                self._match_bindings(case.pattern)
                self.suite(case.body)

    def _match_bindings(self, pattern: cst.CSTNode) -> None:
        for node in _all_nodes(pattern):
            if type(node) is cst.MatchAs and node.name is not None:
                self.bind((node.name.value,), None)
            elif type(node) is cst.MatchStar and node.name is not None:
                self.bind((node.name.value,), None)

    def _target(self, target: cst.CSTNode, site: Optional[cst.CSTNode]) -> None:
        if type(target) is cst.Name:
            self.bind((target.value,), site)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._target(e.value, site)
        elif type(target) is cst.StarredElement:
            self._target(target.value, None)
        elif type(target) is cst.Subscript:
            self.expr(target)
        elif type(target) is cst.Attribute:
            self.expr(target.value)
            if type(target.value) is cst.Name and target.attr.value == "data":
                self.bind((target.value.value,), None)

    def _unpacked_size(self, stmt: cst.Assign) -> None:
        """``b, t, c = x.size()`` (or ``x.shape``): ``x`` has exactly that many dims."""
        owner = sizes_of(stmt.value)
        if type(owner) is not cst.Name:
            return
        for t in stmt.targets:
            target = t.target
            if isinstance(target, (cst.Tuple, cst.List)) and not any(
                    type(e) is cst.StarredElement for e in target.elements):
                self.use(owner.value, Evidence(exact=len(target.elements)))

    def _inplace_reshape(self, value: cst.BaseExpression) -> None:
        """``x.unsqueeze_(0)`` changes the rank of ``x``: later uses say nothing of the binding."""
        if type(value) is cst.Call and type(value.func) is cst.Attribute \
                and type(value.func.value) is cst.Name and value.func.attr.value in INPLACE_RESHAPING_METHODS:
            self.bind((value.func.value.value,), None)


#: expressions that bind names of their own
_SCOPED = frozenset({cst.Lambda, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})
#: expressions without child expressions
_LEAVES = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis})


def _head(expr: cst.Attribute) -> str:
    node: cst.BaseExpression = expr
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else ""


def _all_nodes(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    return [node, *walk_once(node, into_defs=True)]


def may_be_numpy(value: cst.BaseExpression, resolve: Resolver) -> bool:
    """``value`` may be a NumPy array (or another non-tensor): see :func:`_from_numpy`."""
    return _from_numpy(value, resolve)


def _from_numpy(value: cst.BaseExpression, resolve: Resolver) -> bool:
    """``value`` may be a NumPy array (or another non-tensor): a ``numpy`` or ``pandas`` call,
    ``.numpy()``, ``.to_numpy()``, ``.tolist()``, ``.astype(...)`` anywhere in it."""
    for node in _all_nodes(value):
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in ("numpy", "to_numpy", "astype", "tolist"):
                return True
            qual = resolve(func)
            if qual is not None and qual.startswith(("numpy.", "np.", "pandas.")):
                return True
    return False


def refine_bindings(env: dict[str, Fact], table: dict[str, Evidence]) -> None:
    """Refine the facts bound in ``env`` to the names of ``table`` with their evidence."""
    for name, evidence in table.items():
        current = env.get(name)
        if current is not None:
            refined = refine(current, evidence)
            if refined is not current:
                env[name] = refined


def after_statement(fact: Callable[[cst.CSTNode], Fact], small: cst.CSTNode, env: dict[str, Fact],
                    found: FunctionEvidence) -> None:
    """After the bindings of ``small``: refine the names it bound with their evidence, and bind
    each name of ``a, b, c = x.split(...)`` (``chunk``, ``unbind``, ``tensor_split``) of a tensor
    ``x`` to a tensor of ``x``'s rank (one less for ``unbind``). ``fact`` reads the facts the
    statement's expressions had before the binding (the evaluator's memo of this statement)."""
    if type(small) is cst.Assign and len(small.targets) == 1:
        _unpacked_pieces(fact, small, env)
    refine_bindings(env, found.at(small))


def _unpacked_pieces(fact: Callable[[cst.CSTNode], Fact], small: cst.Assign, env: dict[str, Fact]) -> None:
    target, value = small.targets[0].target, small.value
    if (type(target) is not cst.Tuple and type(target) is not cst.List) or type(value) is not cst.Call \
            or type(value.func) is not cst.Attribute or value.func.attr.value not in _SPLITS:
        return
    names = [e.value.value for e in target.elements if type(e) is cst.Element and type(e.value) is cst.Name]
    if len(names) != len(target.elements):
        return
    recv = fact(value.func.value)
    shape = recv.shape
    if recv.kind != TENSOR or shape is None or shape.rank is None or shape.rank == 0:
        return
    method = value.func.attr.value
    args = CallArgs(value)
    where = args.kw.get("dim", args.pos[0] if method == "unbind" and args.pos else
                        args.pos[1] if method != "unbind" and len(args.pos) > 1 else None)
    d = int_literal(where) if where is not None else 0
    if d is None or not -shape.rank <= d < shape.rank:
        return
    d %= shape.rank
    dims = list(shape.dims)
    if method == "unbind":
        del dims[d]
    else:
        dims[d] = None
    piece = Fact(kind=TENSOR, shape=Shape(tuple(dims)), device=recv.device, grad=recv.grad,
                 dtype_kind=recv.dtype_kind, **piece_layout(recv, method, d))
    for name in names:
        env[name] = piece


#: tensor methods that return a tuple of pieces of their receiver
_SPLITS = frozenset({"split", "chunk", "unbind", "tensor_split"})


def scan_module(body: Iterable[cst.CSTNode], resolve: Resolver) -> FunctionEvidence:
    """The evidence of each binding of module-level code (functions and classes excluded)."""
    scanner = _Scanner(resolve)
    try:
        scanner.block(body)
    except RecursionError:
        return FunctionEvidence({})  # an expression nested too deep to read: no evidence
    return FunctionEvidence(scanner.sites)


#: id(function) -> (the function, the owner of the resolver, its evidence): the walk, each
#: callee re-analysis and SC403 read the same function's evidence, so it is scanned once
_SCANNED: dict[int, tuple[cst.FunctionDef, object, FunctionEvidence]] = {}


def scan_function(node: cst.FunctionDef, resolve: Resolver) -> FunctionEvidence:
    """The evidence of each parameter and binding of ``node``'s body (see the module docstring).

    Parameters with a default that is not a tensor (``None``, a number, a string), ``*args`` and
    ``**kwargs`` get none."""
    owner = getattr(resolve, "__self__", resolve)
    cached = _SCANNED.get(id(node))
    if cached is not None and cached[0] is node and cached[1] is owner:
        return cached[2]
    found = _scan(node, resolve)
    if len(_SCANNED) > 512:
        _SCANNED.clear()
    _SCANNED[id(node)] = (node, owner, found)
    return found


def forget_scans() -> None:
    """Drop the remembered evidence (and the syntax trees it keeps alive) once a file is done."""
    _SCANNED.clear()


def _scan(node: cst.FunctionDef, resolve: Resolver) -> FunctionEvidence:
    scanner = _Scanner(resolve)
    params = node.params
    for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
        if p.default is None or not isinstance(p.default, (cst.Name, cst.Integer, cst.Float, cst.SimpleString,
                                                           cst.UnaryOperation, cst.ConcatenatedString)):
            scanner.open[p.name.value] = PARAMETERS
    try:
        scanner.suite(node.body)
    except RecursionError:
        return FunctionEvidence({})  # an expression nested too deep to read: no evidence
    return FunctionEvidence(scanner.sites)
