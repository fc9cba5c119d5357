"""Module state: where the file puts the instances of its ``nn.Module`` classes, and which
tensors a class holds move with it.

``module.to(device)``/``module.cuda()`` move what the module registered (parameters, buffers,
submodules) and nothing else: a plain tensor attribute (``self.mask = torch.ones(n, n)`` in
``__init__``) stays where it was made. Before the walk, :func:`scan_placements` reads the whole
file for the moves of instances of its module classes (``Emb(10, 16).cuda()``, ``model =
Net(); model.to(device)``, ``nn.DataParallel(Net()).cuda()``, and through a function of the file
that moves the module it is given: :mod:`~shapecheck.semantic.module_moves`) with the device each
names (a string, ``torch.device(...)``, a name bound to one in the same function or at module level).
A class is *placed* on a device when an instance of it is moved there, when it is a submodule
(``self.x = Block()`` in ``__init__``, also inside ``nn.Sequential``/``ModuleList``/``ModuleDict``)
of a placed class, or a base of one. Its methods other than ``__init__`` (and those ``__init__``
calls) then see ``self``, its parameters, buffers and submodules on that device, and its plain
tensor attributes where ``__init__`` made them. A class with a method that moves ``self`` or
that overrides ``to``/``cuda``/``_apply`` is never placed.
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable, Iterator, Optional, Sequence

import libcst as cst

from shapecheck.semantic.eval.devices import device_string
from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, META, MODULE, MPS, NO_GRAD, TENSOR, Device, Fact, Noted
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.module_moves import moves_through_calls
from shapecheck.semantic.syntax import CallArgs, all_params, dotted_name, is_name, method_def, sub_blocks
from shapecheck.semantic.torch_api import MODULE_DEVICE_METHODS, MODULE_METHODS_RETURNING_SELF
from shapecheck.semantic.version_memo import carried, carry
from shapecheck.semantic.walk import walk

#: wrappers whose first argument is the module they run (moving the wrapper moves it)
_WRAPPERS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.compile",
})
#: containers that register the modules they are given
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
#: methods whose override changes what moving a module does
_MOVE_OVERRIDES = frozenset({"to", "cuda", "cpu", "_apply"})
#: how notes name a device
_WORDS = {CUDA: "CUDA", MPS: "MPS", META: "the meta device", MAYBE_CUDA: "CUDA when it is available"}
#: constructions that register what they hold with the module they are assigned to
_REGISTERING = frozenset({
    "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer", "torch.nn.parameter.Buffer",
    "torch.nn.UninitializedParameter", "torch.nn.UninitializedBuffer",
})


class _Scope:
    """The statements of one function body (or of the module), without nested ``def``/``class``."""

    def __init__(self, stmts: Sequence[cst.CSTNode], params: frozenset[str]) -> None:
        self.params = params
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        self.smalls: list[cst.CSTNode] = []
        for small in _smalls(stmts):
            self.smalls.append(small)
            if type(small) is cst.Assign:
                for t in small.targets:
                    if type(t.target) is cst.Name:
                        self.assigned.setdefault(t.target.value, []).append(small.value)
                    elif isinstance(t.target, (cst.Tuple, cst.List)):
                        for e in t.target.elements:
                            if type(e.value) is cst.Name:  # unpacked: an unknown value
                                self.assigned.setdefault(e.value.value, []).append(cst.Name("None"))
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and type(small.target) is cst.Name:
                value = small.value if type(small) is cst.AnnAssign else None
                self.assigned.setdefault(small.target.value, []).append(value or cst.Name("None"))


    @cached_property
    def calls(self) -> list[cst.Call]:
        """Every call in ``smalls``, in the order :func:`walk` finds them (found once)."""
        return [node for small in self.smalls for node in walk(small) if type(node) is cst.Call]

    @cached_property
    def external(self) -> set[str]:
        """The attributes ``smalls`` assign on an object other than ``self`` (found once)."""
        found: set[str] = set()
        for small in self.smalls:
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else \
                [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
            for t in targets:
                if type(t) is cst.Attribute and not (type(t.value) is cst.Name and t.value.value == "self"):
                    found.add(t.attr.value)
        return found

    @cached_property
    def name_moves(self) -> list[tuple[cst.Call, str, str]]:
        """``(call, name, method)`` for the calls ``name.to(...)``/``name.cuda()``... of
        ``calls`` (found once)."""
        moves = []
        for node in self.calls:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in MODULE_DEVICE_METHODS \
                    and type(func.value) is cst.Name:
                moves.append((node, func.value.value, func.attr.value))
        return moves

    @cached_property
    def given(self) -> set[str]:
        """The names the calls of ``calls`` are given (``train(model)``, ``wrap(m=model)``; found once)."""
        return {a.value.value for node in self.calls for a in node.args if type(a.value) is cst.Name}


def _function_scope(stmts: Sequence[cst.CSTNode], params: frozenset[str]) -> _Scope:
    """The :class:`_Scope` of a function body (kept from the last version of the document while
    the body is the same node, :mod:`~shapecheck.semantic.version_memo`)."""
    kept = carried("scope", stmts)
    if kept is not None and kept.params == params:
        return kept
    return carry("scope", stmts, _Scope(stmts, params))


def _defs_of(stmt: cst.CSTNode) -> list[cst.FunctionDef]:
    """:func:`_defs` of one top-level statement (kept from the last version while it is the same node)."""
    kept = carried("defs", stmt)
    return kept if kept is not None else carry("defs", stmt, list(_defs((stmt,))))


def _smalls(stmts: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The small statements of ``stmts`` and of their nested blocks (not of nested defs)."""
    for stmt in stmts:
        if type(stmt) is cst.SimpleStatementLine:
            yield from stmt.body
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            if type(stmt) is cst.For and type(stmt.target) is cst.Name:
                yield cst.Assign(targets=[cst.AssignTarget(stmt.target)], value=cst.Name("None"))
            for block in sub_blocks(stmt):
                yield from _smalls(block)


def _defs(stmts: Sequence[cst.CSTNode]) -> Iterator[cst.FunctionDef]:
    """Every function defined in ``stmts``, nested ones included."""
    for stmt in stmts:
        if type(stmt) is cst.FunctionDef:
            yield stmt
            yield from _defs(stmt.body.body)
        elif type(stmt) is cst.ClassDef:
            yield from _defs(stmt.body.body)
        elif type(stmt) is not cst.SimpleStatementLine:
            for block in sub_blocks(stmt):
                yield from _defs(block)


class _Scan:
    """The moves of the file's module classes (see :func:`scan_placements`)."""

    def __init__(self, model: SemanticModel, module: cst.Module, text: str,
                 classes: dict[str, cst.ClassDef], top: _Scope) -> None:
        self.model = model
        self.module = module
        self.text = text
        self.classes = classes
        self.top = top
        self.wrappers = _WRAPPERS

    def qual(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.model.imports.resolve(expr)

    def instance_class(self, expr: cst.BaseExpression, scope: _Scope, depth: int = 0,
                       seen: frozenset[str] = frozenset()) -> Optional[str]:
        """The module class of this file that ``expr`` is an instance of (or wraps), if known
        (``""`` for a name being resolved: ``model = model.to(d)`` keeps what ``model`` was)."""
        if depth > 8:
            return None
        if type(expr) is cst.Call:
            func = expr.func
            if type(func) is cst.Name and func.value in self.classes and func.value not in scope.assigned:
                return func.value
            if self.qual(func) in _WRAPPERS:
                args = CallArgs(expr)
                first = args.get(0, "module") or args.get(0, "model")
                return self.instance_class(first, scope, depth + 1, seen) if first is not None else None
            if type(func) is cst.Attribute and func.attr.value in MODULE_METHODS_RETURNING_SELF:
                return self.instance_class(func.value, scope, depth + 1, seen)
            return None
        if type(expr) is cst.Name:
            if expr.value in seen:
                return ""
            values, where = self._values(expr.value, scope)
            found = {self.instance_class(v, where, depth + 1, seen | {expr.value}) for v in values} - {""}
            return found.pop() if len(found) == 1 else None
        return None

    def _values(self, name: str, scope: _Scope) -> tuple[list[cst.BaseExpression], _Scope]:
        """What ``name`` is assigned in ``scope`` (or at module level when the scope does not
        bind it), and the scope of those assignments."""
        if name in scope.params:
            return [], scope
        if name in scope.assigned or scope is self.top:
            return scope.assigned.get(name, []), scope
        return self.top.assigned.get(name, []), self.top

    def device(self, expr: cst.BaseExpression, scope: _Scope, depth: int = 0) -> Optional[Device]:
        """The device ``expr`` names, when every value it may hold names the same one."""
        if depth > 8:
            return None
        if type(expr) is cst.Name:
            values, where = self._values(expr.value, scope)
            return _either([self.device(v, where, depth + 1) for v in values])
        if type(expr) is cst.IfExp:
            return _either([self.device(expr.body, scope, depth + 1), self.device(expr.orelse, scope, depth + 1)])
        if type(expr) is cst.SimpleString:
            value = expr.evaluated_value
            return device_string(value) if isinstance(value, str) else None
        if type(expr) is cst.FormattedString:  # f"cuda:{rank}"
            head = expr.parts[0] if expr.parts else None
            return CUDA if type(head) is cst.FormattedStringText and head.value.startswith("cuda") else None
        if type(expr) is cst.Call:
            qual = self.qual(expr.func)
            if qual == "torch.accelerator.current_accelerator":
                return MAYBE_CUDA
            kind = CallArgs(expr).get(0, "type")
            if qual == "torch.device" and kind is not None:
                return self.device(kind, scope, depth + 1)
        return None

    def move_device(self, call: cst.Call, method: str, scope: _Scope) -> Optional[Device]:
        """Where ``module.<method>(...)`` puts the module (``None`` when unknown or no move)."""
        if method == "cuda":
            return CUDA
        if method == "cpu":
            return CPU
        args = CallArgs(call)
        target = args.kw.get("device")
        if target is None and method == "to" and args.pos:
            target = args.pos[0]
        return self.device(target, scope) if target is not None else None

    def moves(self, scope: _Scope) -> Iterator[tuple[str, Device, cst.Call]]:
        """``(class, device, call)`` for each move of an instance of a module class in ``scope``."""
        for cls, dev, call in self.any_moves(scope):
            if dev is not None:
                yield cls, dev, call

    def any_moves(self, scope: _Scope) -> Iterator[tuple[str, Optional[Device], cst.Call]]:
        """``(class, device or None when unknown, call)`` for each move of an instance of a module
        class in ``scope``."""
        for small in scope.smalls:
            value = getattr(small, "value", None)
            while type(value) is cst.Call and type(value.func) is cst.Attribute:
                method = value.func.attr.value
                receiver = value.func.value
                if method in MODULE_DEVICE_METHODS:
                    cls = self.instance_class(receiver, scope)
                    held = {cls} if cls is not None else self.contained_classes(receiver, scope)
                    if held:
                        dev = self.move_device(value, method, scope)
                        for one in sorted(held):
                            yield one, dev, value
                value = receiver

    def contained_classes(self, expr: cst.BaseExpression, scope: _Scope, depth: int = 0,
                          seen: frozenset[str] = frozenset()) -> set[str]:
        """The module classes of this file that a container ``expr`` registers
        (``nn.Sequential(Normalize(), net)``, also through a name bound to one container, or
        rebound to a ``.to()``/``.eval()`` chain on itself)."""
        found: set[str] = set()
        if depth > 8:
            return found
        if type(expr) is cst.Call:
            func = expr.func
            if self.qual(func) in _CONTAINERS:
                self._held(expr, found, 0)
            elif type(func) is cst.Attribute and func.attr.value in MODULE_METHODS_RETURNING_SELF:
                found = self.contained_classes(func.value, scope, depth + 1, seen)
        elif type(expr) is cst.Name and expr.value not in seen:
            values, where = self._values(expr.value, scope)
            inner = seen | {expr.value}
            made = [v for v in values if not self._on_itself(v, expr.value)]
            if len(made) == 1:
                found = self.contained_classes(made[0], where, depth + 1, inner)
        return found

    @staticmethod
    def _on_itself(value: cst.BaseExpression, name: str) -> bool:
        """``value`` is ``name.to(...)``/``name.cuda()``...: the same module."""
        while type(value) is cst.Call and type(value.func) is cst.Attribute \
                and value.func.attr.value in MODULE_METHODS_RETURNING_SELF:
            value = value.func.value
        return is_name(value, name)

    def children(self, class_def: cst.ClassDef) -> set[str]:
        """The module classes of this file that ``__init__`` of ``class_def`` makes submodules."""
        init = method_def(class_def, "__init__")
        if init is None:
            return set()
        found: set[str] = set()
        for small in _smalls(init.body.body):
            if type(small) is cst.Assign and any(
                    (dotted_name(t.target) or "").startswith("self.") for t in small.targets):
                self._held(small.value, found, 0)
        return found

    def _held(self, expr: cst.BaseExpression, found: set[str], depth: int, contained: bool = False) -> None:
        """The module classes ``expr`` registers when assigned to ``self.x`` (a plain list does
        not register what it holds; an ``nn.ModuleList`` does)."""
        if depth > 6:
            return
        if type(expr) is cst.Call:
            if type(expr.func) is cst.Name and expr.func.value in self.classes:
                found.add(expr.func.value)
            elif self.qual(expr.func) in _CONTAINERS or (contained and is_name(expr.func, "dict")):
                for arg in expr.args:
                    self._held(arg.value, found, depth + 1, True)
        elif not contained:
            return
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for el in expr.elements:
                self._held(el.value, found, depth + 1, True)
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            self._held(expr.elt, found, depth + 1, True)
        elif type(expr) is cst.Dict:
            for item in expr.elements:
                if type(item) is cst.DictElement:
                    self._held(item.value, found, depth + 1, True)
        elif type(expr) is cst.DictComp:
            self._held(expr.value, found, depth + 1, True)

    def where(self, call: cst.Call) -> str:
        """`` at line N`` for a move whose code occurs once in the file, else the code itself."""
        code = self.module.code_for_node(call)
        at = self.text.find(code)
        if at >= 0 and self.text.find(code, at + 1) < 0:
            return f" at line {self.text.count(chr(10), 0, at) + 1}"
        return f" (`{code}`)"


def _either(devices: list[Optional[Device]]) -> Optional[Device]:
    """The device a value that is one of ``devices`` names: the same on every path, or
    ``maybe-cuda`` for CUDA (or maybe-cuda) on some paths and the CPU on the others."""
    found = set(devices)
    if not found or None in found:
        return None
    if len(found) == 1:
        return found.pop()
    return MAYBE_CUDA if found in ({CPU, CUDA}, {CPU, MAYBE_CUDA}, {CPU, CUDA, MAYBE_CUDA}) else None


def _steady(moves: list[tuple[str, Optional[Device], cst.Call, str]]) -> dict[str, Device]:
    """The classes whose every move of the file names one device (not the CPU): an instance is
    on it once moved, whatever runs between (a move to an unknown device unsettles it)."""
    seen: dict[str, set[Optional[Device]]] = {}
    for cls, dev, _, _ in moves:
        seen.setdefault(cls, set()).add(dev)
    return {cls: dev for cls, devs in seen.items() if len(devs) == 1
            for dev in devs if dev is not None and dev != CPU}


def global_bindings(model: SemanticModel) -> dict[str, Fact]:
    """The module-level names (bound once) a function starts with, seen through
    :func:`~shapecheck.semantic.scopes.global_view`, except that a module keeps its device when
    the file moves it (the name itself, or every instance of its class) to that one device only
    and never gives it to a call: bound once at module level and already moved there, it stays
    there at every call (``model.steady_devices``)."""
    from shapecheck.semantic.scopes import global_view

    module_env = model.scopes.module.env
    env: dict[str, Fact] = {}
    for name in model.module_globals:
        f = module_env.get(name)
        if f is None:
            continue
        seen = global_view(f)
        steady = _steady_device(model, name) if f.kind == MODULE and f.device is not None else None
        if steady is not None and f.device == steady:
            # a module never moved nor given away also keeps the weights it was built with
            seen = seen.with_(device=f.device, params=f.params if steady == CPU else None)
        env[name] = seen
    return env


def _steady_names(scan: _Scan, scopes: list[_Scope]) -> dict[str, Device]:
    """The module-level names every move of the file (``netG.to(device)``, also in a function
    that does not bind the name) sends to one device (not the CPU), and that no call is given
    (a helper or a wrapper may move what it is given)."""
    top = scopes[0]
    seen: dict[str, set[Optional[Device]]] = {}
    for small in top.smalls:  # `netG = Generator().to(device)`
        value = getattr(small, "value", None)
        if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                and type(value) is cst.Call and type(value.func) is cst.Attribute \
                and value.func.attr.value in MODULE_DEVICE_METHODS:
            name = small.targets[0].target.value
            seen.setdefault(name, set()).add(scan.move_device(value, value.func.attr.value, top))
    for scope in scopes:
        for node, name, method in scope.name_moves:
            if scope is not top and (name in scope.assigned or name in scope.params):
                continue
            seen.setdefault(name, set()).add(scan.move_device(node, method, scope))
    given = _given(scopes) if seen else set()
    return {name: dev for name, devs in seen.items() if len(devs) == 1 and name in top.assigned
            and name not in given for dev in devs if dev is not None and dev != CPU}


def _steady_device(model: SemanticModel, name: str) -> Optional[Device]:
    """The device ``model.steady_devices`` gives ``name``, or the CPU for a module-level name the
    file only runs (:func:`_only_run`, found on the first question of a file, as few files bind
    a module at module level)."""
    found = model.steady_devices.get(name)
    if found is not None or model.tree is None or name not in model.top_assigned:
        return found
    if model.only_run is None:
        model.only_run = frozenset(_only_run(model.tree))
    return CPU if name in model.only_run else None


def _given(scopes: list[_Scope]) -> set[str]:
    """The names some call of the file is given (``train(model)``, ``wrap(m=model)``)."""
    given: set[str] = set()
    for scope in scopes:
        given.update(scope.given)
    return given


#: what reading these attributes of a module leaves it where it is
_KEEPING_ATTRIBUTES = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "eval", "train", "state_dict", "load_state_dict", "zero_grad", "forward",
})


def _only_run(module: cst.Module) -> set[str]:
    """The names every occurrence of which in the file (but one assignment) calls them or reads
    a device-keeping attribute (``criterion(out, y)``, ``model.parameters()``): never moved, never
    given away, never aliased, so a module bound to one stays where it was built."""
    safe: set[int] = set()
    names: dict[str, list[cst.Name]] = {}
    bound: dict[str, int] = {}
    for node in walk(module, into_defs=True):
        if type(node) is cst.Name:
            names.setdefault(node.value, []).append(node)
        elif type(node) is cst.Call and type(node.func) is cst.Name:
            safe.add(id(node.func))
        elif type(node) is cst.Attribute and type(node.value) is cst.Name and node.attr.value in _KEEPING_ATTRIBUTES:
            safe.add(id(node.value))
        elif type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            safe.add(id(node.targets[0].target))
            name = node.targets[0].target.value
            bound[name] = bound.get(name, 0) + 1
    return {name for name, found in names.items() if bound.get(name) == 1 and all(id(n) in safe for n in found)}


def _self_calls(function: cst.FunctionDef, called_only: bool = True) -> set[str]:
    """The methods ``function`` calls on ``self`` (``self.reset()``); with ``called_only``
    false, every ``self.x`` it reads (``self.apply(self._init_weights)`` runs ``_init_weights``)."""
    found: set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
                found.add(func.attr.value)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if not called_only and type(node.value) is cst.Name and node.value.value == "self":
                found.add(node.attr.value)

    function.body.visit(Calls())
    return found


def _moves_itself(class_def: cst.ClassDef) -> bool:
    """A method of the class moves ``self`` or overrides how the module moves."""
    for stmt in class_def.body.body:
        if type(stmt) is not cst.FunctionDef:
            continue
        if stmt.name.value in _MOVE_OVERRIDES:
            return True
        if _self_calls(stmt) & MODULE_DEVICE_METHODS:
            return True
    return False


def scan_placements(model: SemanticModel, module: cst.Module, text: str) -> None:
    """Fill ``model.placements`` (the device each placed class is moved to, with a note for
    messages), ``model.init_methods`` (the methods ``__init__`` of a placed class runs) and
    ``model.external_attrs`` (attributes the file assigns on objects other than ``self``)."""
    from shapecheck.semantic.eval.nn_modules import is_module_class  # evaluator modules import this one

    top_defs = [d for stmt in module.body for d in _defs_of(stmt)]
    external: set[str] = set()
    scopes = [_Scope(module.body, frozenset())] + [
        _function_scope(d.body.body, frozenset(p.name.value for p in all_params(d.params))) for d in top_defs]
    for scope in scopes:
        external.update(scope.external)
    model.external_attrs = external if "setattr(" not in text else None
    model.custom_collate = "collate_fn" in text
    model.custom_transform = "Lambda(" in text
    model.steady_devices = _steady_names(_Scan(model, module, text, {}, scopes[0]), scopes)
    model.top_assigned = frozenset(scopes[0].assigned)
    model.only_run = None
    if ".cuda(" not in text and ".to(" not in text:
        return
    saved = model.classes
    model.classes = dict(saved)
    classes: dict[str, cst.ClassDef] = {}
    try:
        for stmt in module.body:
            if type(stmt) is cst.ClassDef:
                verdict = is_module_class(model, stmt)
                model.classes[stmt.name.value] = verdict
                if verdict:
                    classes[stmt.name.value] = stmt
    finally:
        model.classes = saved
    if not classes:
        return
    scan = _Scan(model, module, text, classes, scopes[0])
    direct: dict[str, tuple[Device, cst.Call, str]] = {}
    rank = {CUDA: 0, MPS: 1, META: 2, MAYBE_CUDA: 3}
    found = [(cls, dev, call, "") for scope in scopes for cls, dev, call in scan.any_moves(scope)]
    found += list(moves_through_calls(scan, module, scopes, _function_scope))
    for cls, dev, call, how in found:
        if dev is not None and dev in rank and (cls not in direct or rank[dev] < rank[direct[cls][0]]):
            direct[cls] = (dev, call, how)
    by_class = _steady(found)
    given = _given(scopes) if by_class else set()
    for name in scan.top.assigned:  # `model = Net()` bound once, its class moved to one device only
        held = scan.instance_class(cst.Name(name), scan.top) if name not in given else None
        if held and held in by_class and _steady_device(model, name) is None:
            model.steady_devices[name] = by_class[held]
    if not direct:
        return
    fixed = {name for name, c in classes.items() if _moves_itself(c)}
    placements: dict[str, tuple[Device, str]] = {}
    # (class, device, how it relates to the moved class, the moved class, where it is moved, the move)
    work: list[tuple[str, Device, str, str, str, cst.Call]] = []
    for cls, (dev, call, how) in direct.items():
        work.append((cls, dev, "", cls, f"moved to {_WORDS[dev]}{scan.where(call)}{how}", call))
    while work:
        cls, dev, relation, root, moved, call = work.pop(0)
        if cls in placements or cls in fixed:
            continue
        text = f"`{cls}` is {moved}" if not relation else f"`{cls}` is {relation} `{root}`, {moved}"
        placements[cls] = (dev, Noted(text, call))
        class_def = classes[cls]
        for child in scan.children(class_def):
            work.append((child, dev, "a submodule of", root, moved, call))
        for base in class_def.bases:
            if type(base.value) is cst.Name and base.value.value in classes:
                work.append((base.value.value, dev, f"a base class of `{cls}`, part of" if relation else
                             "a base class of", root, moved, call))
    model.placements = placements
    for cls in placements:
        init = method_def(classes[cls], "__init__")
        called = _self_calls(init, called_only=False) if init is not None else set()
        methods = {s.name.value: s for s in classes[cls].body.body if type(s) is cst.FunctionDef}
        todo = list(called)
        while todo:
            name = todo.pop()
            if name in methods:
                for more in _self_calls(methods[name], called_only=False) - called:
                    called.add(more)
                    todo.append(more)
        model.init_methods[cls] = called | {"__init__"}


# ------------------------------------------------------------------ what a class holds
def registered(model: SemanticModel, fact: Callable[[cst.CSTNode], Fact],
               call: cst.Call) -> Optional[tuple[str, Fact]]:
    """For ``self.register_buffer("name", value)`` (or ``register_parameter``) in a method of a
    module class: ``("self.name", the tensor's fact)``, recorded as state that moves with the
    module; else ``None``."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("register_buffer", "register_parameter"):
        return None
    if not (type(func.value) is cst.Name and func.value.value == "self") or model.class_def is None:
        return None
    args = CallArgs(call)
    name, value = args.get(0, "name"), args.get(1, "tensor" if func.attr.value == "register_buffer" else "param")
    if type(name) is not cst.SimpleString or value is None:
        return None
    attr = name.evaluated_value
    if not isinstance(attr, str) or not attr.isidentifier():
        return None
    f = fact(value)
    if f.kind != TENSOR:
        return None
    model.class_registered.setdefault(model.class_def.name.value, set()).add("self." + attr)
    return "self." + attr, f.with_(reduction=None)


def held_tensors(model: SemanticModel, fact: Callable[[cst.CSTNode], Fact], class_def: cst.ClassDef,
                 env: dict[str, Fact], rebound: frozenset[str] | set[str]) -> dict[str, Fact]:
    """What ``__init__`` of ``class_def`` leaves in ``self`` beyond its parameters and
    submodules: registered buffers (they move with the module: no device), plain tensor
    attributes made on the CPU (they stay there: recorded in ``model.class_fixed``), and the
    members of an ``nn.ModuleDict`` built from a ``dict(...)`` or a dict display
    (``self.transformer.wte``), which ``fact`` evaluates."""
    from shapecheck.semantic.scopes import exported, without_symbols

    name = class_def.name.value
    out: dict[str, Fact] = _members(model, fact, class_def, rebound)
    moving = set(model.class_registered.get(name, ()))
    init = method_def(class_def, "__init__")
    plain: dict[str, bool] = {}
    if init is not None:
        made_registering: set[str] = set()
        for small in _smalls(init.body.body):
            slot = _registered_name(small)
            if slot is not None:  # `register_buffer("x", None)`: a later `self.x = t` fills the slot
                moving.add(slot)
            if type(small) is not cst.Assign:
                continue
            value = small.value
            registering = type(value) is cst.Call and model.imports.resolve(value.func) in _REGISTERING
            registering = registering or (type(value) is cst.Name and value.value in made_registering)
            for t in small.targets:
                if type(t.target) is cst.Name and registering:
                    made_registering.add(t.target.value)
                key = dotted_name(t.target)
                if key is None or not key.startswith("self.") or key.count(".") != 1:
                    continue
                if registering:
                    moving.add(key)
                plain[key] = plain.get(key, True) and not registering
    for key in moving:
        f = env.get(key)
        if f is not None and f.kind == TENSOR and key not in rebound:
            out[key] = exported(f)
    model.class_moving.setdefault(name, set()).update(moving)
    external = model.external_attrs
    if external is None:
        return out
    stay: dict[str, Fact] = {}
    for key, is_plain in plain.items():
        f = env.get(key)
        if not is_plain or key in moving or key in rebound or key[5:] in external or f is None:
            continue
        if f.kind == TENSOR and f.device == CPU and f.grad == NO_GRAD:
            stay[key] = without_symbols(f).with_(reduction=None)
    if stay and not _moves_itself(class_def):
        out.update(stay)
        model.class_fixed.setdefault(name, set()).update(stay)
    return out


def _registered_name(small: cst.CSTNode) -> Optional[str]:
    """``self.x`` for a statement ``self.register_buffer("x", ...)`` (or ``register_parameter``)."""
    call = getattr(small, "value", None) if type(small) is cst.Expr else None
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute \
            or call.func.attr.value not in ("register_buffer", "register_parameter") \
            or not is_name(call.func.value, "self"):
        return None
    name = CallArgs(call).get(0, "name")
    value = name.evaluated_value if type(name) is cst.SimpleString else None
    return "self." + value if isinstance(value, str) and value.isidentifier() else None


def _members(model: SemanticModel, fact: Callable[[cst.CSTNode], Fact], class_def: cst.ClassDef,
             rebound: frozenset[str] | set[str]) -> dict[str, Fact]:
    """``self.d.k`` for the modules of ``self.d = nn.ModuleDict(dict(k=...))`` in ``__init__``."""
    from shapecheck.semantic.scopes import exported

    init = method_def(class_def, "__init__")
    out: dict[str, Fact] = {}
    if init is None:
        return out
    for small in _smalls(init.body.body):
        if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.value) is not cst.Call:
            continue
        key = dotted_name(small.targets[0].target)
        args = small.value.args
        if key is None or not key.startswith("self.") or key.count(".") != 1 or key in rebound or len(args) != 1 \
                or model.imports.resolve(small.value.func) != "torch.nn.ModuleDict":
            continue
        inner = args[0].value
        items: list[tuple[str, cst.BaseExpression]] = []
        if type(inner) is cst.Call and is_name(inner.func, "dict"):
            items = [(a.keyword.value, a.value) for a in inner.args if a.keyword is not None]
        elif type(inner) is cst.Dict:
            items = [(el.key.evaluated_value, el.value) for el in inner.elements
                     if type(el) is cst.DictElement and type(el.key) is cst.SimpleString
                     and isinstance(el.key.evaluated_value, str)]
        for member, value in items:
            f = fact(value)
            if member.isidentifier() and f.kind == MODULE:
                out[f"{key}.{member}"] = exported(f)
    return out


def inherit_state(model: SemanticModel, name: str, base: str) -> None:
    """Class ``name`` starts with the moving and plain tensors of its base class ``base``."""
    for table in (model.class_moving, model.class_fixed, model.class_registered):
        if base in table:
            table.setdefault(name, set()).update(table[base])


# ------------------------------------------------------------------ what a method sees
def _placement(model: SemanticModel, class_name: str, function: cst.FunctionDef) -> Optional[tuple[Device, str]]:
    """Where the instance is when ``function`` (a method of ``class_name``) runs, if placed."""
    placed = model.placements.get(class_name)
    if placed is None or function.name.value in model.init_methods.get(class_name, ()):
        return None
    return placed


def method_attrs(model: SemanticModel, class_name: str, function: cst.FunctionDef) -> dict[str, Fact]:
    """The ``self.x`` facts a method starts with: what ``__init__`` exported, with the
    parameters, buffers and submodules on the device the class is placed on."""
    from shapecheck.semantic.eval.nn_modules import module_holds

    attrs = model.class_attrs.get(class_name, {})
    placed = _placement(model, class_name, function)
    if placed is None:
        return attrs
    device, note = placed
    moving = model.class_moving.get(class_name, set())
    out: dict[str, Fact] = {}
    for key, f in attrs.items():
        if (f.kind == TENSOR and key in moving) or (f.kind == MODULE and module_holds(f)):
            f = f.with_(device=device, placed_by=note)
        out[key] = f
    return out


def self_fact(model: SemanticModel, class_name: str, function: cst.FunctionDef) -> Fact:
    """The fact of ``self`` in a method of ``class_name``, a module class of this file."""
    placed = _placement(model, class_name, function)
    if placed is None:
        return Fact(kind=MODULE, qual=class_name)
    from shapecheck.semantic.eval.nn_modules import module_holds

    attrs = model.class_attrs.get(class_name, {})
    moving = model.class_moving.get(class_name, set())
    holds = any((f.kind == TENSOR and key in moving) or (f.kind == MODULE and module_holds(f))
                for key, f in attrs.items())
    if not holds:  # moved, but nothing it holds is known to move: where `self` is stays unknown
        return Fact(kind=MODULE, qual=class_name, placed_by=placed[1])
    return Fact(kind=MODULE, qual=class_name, device=placed[0], placed_by=placed[1])
