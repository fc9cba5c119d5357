"""Module moves that the file's functions make on the instances they are given.

``def train(model, loader, device): model = model.to(device)`` moves whatever module it is
given: a call ``train(GPT(cfg), loader, "cuda")`` (or ``model = GPT(cfg); train(model, ...)``)
moves a ``GPT`` to CUDA, as ``GPT(cfg).to("cuda")`` would. Before the walk,
:func:`moves_through_calls` reads a summary of each module-level function (and of ``__init__``
of each module-level class: ``Trainer(model, device)``): which of its parameters it moves, to
a device it names or to the one a parameter of it names. A function that passes its parameter
on to such a function moves it too (``main(model)`` calling ``train(model, "cuda")``). Each call
of the file that gives such a function an instance of one of its module classes, with a device
the call site names, is a move of that class. A name bound twice at module level, a call whose
device is unknown (``train(model, args.device)``), and an argument that is not surely one
instance of one class move nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import libcst as cst

from shapecheck.semantic.facts import CUDA, Device
from shapecheck.semantic.syntax import CallArgs, all_params
from shapecheck.semantic.torch_api import MODULE_DEVICE_METHODS, MODULE_METHODS_RETURNING_SELF

#: the scan of :mod:`~shapecheck.semantic.module_state` (it calls this module: not imported), with
#: ``qual``, ``device``, ``instance_class``, ``where``, ``top`` and ``wrappers``
_Scan = Any
#: the statements of one function body, with ``params``, ``assigned`` and ``smalls``
_Scope = Any
#: builds a :data:`_Scope` from a body and the names of its parameters
ScopeMaker = Callable[[Sequence[cst.CSTNode], frozenset[str]], _Scope]

#: how many times the summaries are widened through the helpers that pass a parameter on
_ROUNDS = 4


@dataclass(frozen=True)
class _Move:
    """A parameter a function moves: to ``device``, or to the device its parameter
    ``device_param`` names; ``call`` is the move itself and ``where`` the function it is in."""

    device: Optional[Device]
    device_param: Optional[str]
    call: cst.Call
    where: str


class _Function:
    """A function (or ``__init__`` of a class, called through the class) that calls may reach."""

    def __init__(self, name: str, node: cst.FunctionDef, skip: int, new_scope: ScopeMaker) -> None:
        self.name = name
        #: how messages name it
        self.label = f"{name}.__init__" if skip else name
        self.node = node
        params = all_params(node.params)
        positional = list(node.params.posonly_params) + list(node.params.params)
        self.positional = [p.name.value for p in positional[skip:]]
        self.defaults = {p.name.value: p.default for p in params if p.default is not None}
        #: the parameters an instance can be given through (not ``self``, ``*args``, ``**kwargs``)
        self.names = frozenset(self.positional + [p.name.value for p in node.params.kwonly_params])
        self.scope = new_scope(node.body.body, frozenset(p.name.value for p in params))
        self.moves: dict[str, _Move] = {}
        #: parameters it moves to the CPU or to a device it does not name (no placement, but
        #: the instance given there is not surely where the file's other moves put it)
        self.unsettled: set[str] = set()

    def argument(self, args: CallArgs, param: str) -> Optional[cst.BaseExpression]:
        """The expression a call gives ``param``."""
        index = self.positional.index(param) if param in self.positional else None
        return args.get(index if index is not None else -1, param)


def _callables(module: cst.Module, new_scope: ScopeMaker) -> dict[str, _Function]:
    """The module-level functions and classes with an ``__init__``, by the name each is bound to once."""
    count: dict[str, int] = {}
    found: dict[str, _Function] = {}
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            name = stmt.name.value
            count[name] = count.get(name, 0) + 1
            if type(stmt) is cst.FunctionDef and not stmt.decorators:
                found[name] = _Function(name, stmt, 0, new_scope)
            elif type(stmt) is cst.ClassDef:
                init = next((s for s in stmt.body.body if type(s) is cst.FunctionDef
                             and s.name.value == "__init__" and not s.decorators), None)
                if init is not None:
                    found[name] = _Function(name, init, 1, new_scope)
    return {name: f for name, f in found.items() if count[name] == 1}


def _root_param(expr: cst.BaseExpression, scope: _Scope, seen: frozenset[str] = frozenset(),
                depth: int = 0) -> Optional[str]:
    """The parameter of the function of ``scope`` whose module ``expr`` surely is (through
    ``.to()``/``.eval()`` chains, ``nn.DataParallel(...)`` and local names), ``""`` for a name
    being resolved, else ``None``."""
    if depth > 8:
        return None
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in MODULE_METHODS_RETURNING_SELF:
            return _root_param(func.value, scope, seen, depth + 1)
        return None
    if type(expr) is not cst.Name:
        return None
    name = expr.value
    if name in seen:
        return ""
    roots = {_root_param(v, scope, seen | {name}, depth + 1) for v in scope.assigned.get(name, [])}
    if name in scope.params:
        roots.add(name)
    roots.discard("")
    return roots.pop() if len(roots) == 1 and None not in roots else None


def _wrapped(scan: _Scan, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The module a wrapper call (``nn.DataParallel(m)``) runs, else ``expr``."""
    while type(expr) is cst.Call and scan.qual(expr.func) in scan.wrappers:
        args = CallArgs(expr)
        first = args.get(0, "module") or args.get(0, "model")
        if first is None:
            break
        expr = first
    return expr


def _param_of(scan: _Scan, expr: cst.BaseExpression, scope: _Scope) -> Optional[str]:
    """The parameter whose module ``expr`` is, also inside a wrapper (``nn.DataParallel(model)``)."""
    root = _root_param(_wrapped(scan, expr), scope)
    if root:
        return root
    if type(expr) is cst.Name:  # `m = nn.DataParallel(model)`
        values = scope.assigned.get(expr.value, [])
        roots = {_param_of(scan, v, scope) for v in values if not (type(v) is cst.Name and v.value == expr.value)}
        return roots.pop() if len(values) == 1 and len(roots) == 1 else None
    return None


def _device_of(scan: _Scan, expr: Optional[cst.BaseExpression], scope: _Scope,
               where: _Scope) -> tuple[Optional[Device], Optional[str]]:
    """``(device, None)`` for a device ``expr`` names, ``(None, parameter)`` for a parameter of
    the function of ``scope`` that it is, ``(None, None)`` when unknown."""
    if expr is None:
        return None, None
    if type(expr) is cst.Name and expr.value in scope.params and expr.value not in scope.assigned:
        return None, expr.value
    return scan.device(expr, where), None


def _direct(scan: _Scan, fn: _Function) -> None:
    """The parameters ``fn`` moves itself (``model.to(device)``, ``self.m = model.cuda()``)."""
    for small in fn.scope.smalls:
        value = getattr(small, "value", None)
        while type(value) is cst.Call and type(value.func) is cst.Attribute:
            method = value.func.attr.value
            receiver = value.func.value
            param = _param_of(scan, receiver, fn.scope) if method in MODULE_DEVICE_METHODS else None
            if method == "cpu" and param and param in fn.names:
                fn.unsettled.add(param)
            elif param and param in fn.names and param not in fn.moves:
                args = CallArgs(value)
                target = args.kw.get("device") or (args.pos[0] if args.pos and method == "to" else None)
                device, by = (CUDA, None) if method == "cuda" else _device_of(scan, target, fn.scope, fn.scope)
                if device is not None or by is not None:
                    fn.moves[param] = _Move(device, by, value, fn.label)
                else:
                    fn.unsettled.add(param)
            value = receiver


def _calls(scope: _Scope) -> Iterator[cst.Call]:
    """Every call in the statements of ``scope``."""
    yield from scope.calls


def _resolve(scan: _Scan, move: _Move, callee: _Function, args: CallArgs,
             scope: _Scope) -> tuple[Optional[Device], Optional[str]]:
    """Where a call moves the instance it gives ``callee``: a device, or a parameter of the
    caller (``scope``) that names it."""
    if move.device_param is None:
        return move.device, None
    given = callee.argument(args, move.device_param)
    if given is not None:
        return _device_of(scan, given, scope, scope)
    default = callee.defaults.get(move.device_param)
    return (scan.device(default, scan.top), None) if default is not None else (None, None)


def moves_through_calls(scan: _Scan, module: cst.Module, scopes: list[_Scope],
                        new_scope: ScopeMaker) -> Iterator[tuple[str, Optional[Device], cst.Call, str]]:
    """``(class, device, move, how)`` for each instance of a module class of the file that a call
    (in one of ``scopes``) gives to a function that moves it (``how``: `` in `train`, called at
    line 25``); ``device`` is ``None`` when the call does not say where."""
    functions = _callables(module, new_scope)
    for fn in functions.values():
        _direct(scan, fn)
    yield from _unsettling(scan, functions, scopes)
    if not any(fn.moves for fn in functions.values()):
        return
    for _ in range(_ROUNDS):
        changed = False
        for fn in functions.values():
            for call, callee in _local_calls(functions, fn.scope):
                args = CallArgs(call)
                for param, move in list(callee.moves.items()):
                    given = callee.argument(args, param)
                    mine = _param_of(scan, given, fn.scope) if given is not None else None
                    if not mine or mine in fn.moves or mine not in fn.names:
                        continue
                    device, by = _resolve(scan, move, callee, args, fn.scope)
                    if device is not None or by is not None:
                        fn.moves[mine] = _Move(device, by, move.call, move.where)
                        changed = True
        if not changed:
            break
    for scope in scopes:
        for call, callee in _local_calls(functions, scope):
            args = CallArgs(call)
            for param, move in callee.moves.items():
                given = callee.argument(args, param)
                cls = scan.instance_class(given, scope) if given is not None else None
                device, _ = _resolve(scan, move, callee, args, scope)
                if cls:
                    yield cls, device, move.call, f" in `{move.where}`, called{scan.where(call)}"


def _unsettling(scan: _Scan, functions: dict[str, _Function],
                scopes: list[_Scope]) -> Iterator[tuple[str, Optional[Device], cst.Call, str]]:
    """``(class, None or the CPU, call, "")`` for each instance of a module class of the file
    given to a function that moves it to the CPU or to a device it does not name."""
    for scope in scopes:
        for call in _calls(scope):
            func = call.func
            callee = functions.get(func.value) if type(func) is cst.Name else None
            if callee is None or not callee.unsettled:
                continue
            args = CallArgs(call)
            for param in callee.unsettled:
                given = callee.argument(args, param)
                cls = scan.instance_class(given, scope) if given is not None else None
                if cls:
                    yield cls, None, call, ""


def _local_calls(functions: dict[str, _Function], scope: _Scope) -> Iterator[tuple[cst.Call, _Function]]:
    """The calls in ``scope`` of a function of :func:`_callables` that moves a parameter."""
    for call in _calls(scope):
        func = call.func
        if type(func) is cst.Name and func.value not in scope.assigned and func.value not in scope.params:
            callee = functions.get(func.value)
            if callee is not None and callee.moves and not CallArgs(call).starred:
                yield call, callee
