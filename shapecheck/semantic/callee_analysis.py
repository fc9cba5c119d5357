"""Re-analysis of a callee with the facts of a call site: what the call returns.

A call of a function or method that :func:`~shapecheck.semantic.summaries.resolve_call` resolves
(``helper(x)``, ``self.helper(x)``, ``model(x)`` as ``forward``) runs a silent walk over the
callee's body (no rule sees it) in a model of its own: the callee's file's imports and classes,
the module-level names as the caller's module scope holds them now, the class's ``self.x`` facts
for a method, and the parameters bound to the facts of the arguments (defaults that are literals
when no argument is given; ``*args``/``**kwargs`` unknown). Grad mode is the caller's, unless a
decorator of the callee switches it. The result is the join of the facts of every ``return``
(a path that falls off the end returns ``None``: the result is then unknown), with what means
nothing to the caller removed: size symbols that no argument carries, ``SameDeviceAs`` names,
a reduction whose source is not one of the arguments (the reduction of an argument names the
caller's expression). A generator, an ``async`` function or a callee that needs an argument the
call does not give returns unknown.

Bounds: :data:`~shapecheck.semantic.summaries.MAX_DEPTH` nested re-analyses, no re-entry of a
callee being re-analysed (recursion), a statement budget per file, and a memo per call, callee and
argument facts (facts are immutable: the same objects give the same result).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.call_sites import record
from shapecheck.semantic.eval.autograd import NOT_A_GRAD_MODE, grad_mode_of
from shapecheck.semantic.eval.nn_modules import module_attr
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.evaluator import INFERENCE_GAPS, Evaluator
from shapecheck.semantic.facts import MODULE, UNKNOWN, Fact, SameDeviceAs, fresh, join, value_key
from shapecheck.semantic.interpreter import NORMAL, Interpreter
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.prescan import prescan_module
from shapecheck.semantic.module_state import global_bindings
from shapecheck.semantic.scopes import Env, merge
from shapecheck.semantic.summaries import (
    MAX_DEPTH, STATEMENT_BUDGET, Callee, Definitions, ForeignModule, forward_of, register_call_noter,
    register_reanalysis, resolve_call,
)
from shapecheck.semantic.syntax import CallArgs, all_params, dotted_name, target_names, with_targets
from shapecheck.semantic.walk import walk
from shapecheck.shapes import Shape

_SYMBOL_ATOM = re.compile(r"[A-Za-z_]\w*")
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


class _CalleeWalk(Interpreter):
    """The interpreter over one callee body: no observer, no expression walk, and the facts of
    each ``return`` of the callee itself (not of a function nested in it) collected."""

    def __init__(self, model: SemanticModel, evaluator: Evaluator, target: cst.FunctionDef) -> None:
        super().__init__(model, evaluator, None)
        self.target = target
        self.returns: list[Fact] = []
        #: the bindings at each ``return``
        self.exits: list[Env] = []

    def _walk(self, node: cst.CSTNode) -> None:
        """Nothing watches the walk: only statements move the model."""

    def _smalls(self, smalls: Sequence[cst.BaseSmallStatement]) -> int:
        for small in smalls:
            if type(small) is cst.Return and self.model.scopes.top.function is self.target:
                self._forget()
                if self._silent:
                    pass  # the first pass over a loop body: its facts are not those of the loop
                else:
                    self.returns.append(self.fact(small.value) if small.value is not None else UNKNOWN)
                    self.exits.append(self.model.env)
            ended = super()._smalls([small])
            if ended:
                return ended
        return NORMAL


def callee_result(ev: Eval, callee: Callee, call: cst.Call, receiver: Optional[Fact]) -> Optional[Fact]:
    """The facts of what ``call`` returns when it runs ``callee`` (``receiver``: the fact of
    ``self`` for a method), or ``None`` when they cannot be computed."""
    found = call_outcome(ev, callee, call, receiver)
    return found[0] if found is not None else None


#: what a re-analysed call returns, and the facts each argument expression has after it
Outcome = tuple[Optional[Fact], dict[cst.BaseExpression, Fact]]


def call_outcome(ev: Eval, callee: Callee, call: cst.Call, receiver: Optional[Fact]) -> Optional[Outcome]:
    """What ``call`` returns when it runs ``callee``, and what it leaves in the arguments it
    changed (moved, mutated in place, zero-grad'ed) that the callee never rebinds; ``None``
    when the call cannot be re-analysed."""
    caller = ev.model
    defs = caller.callees
    if defs is None:
        return None
    if len(defs.active) >= MAX_DEPTH or callee.node in defs.active or defs.spent > STATEMENT_BUDGET:
        return None
    shape = defs.bodies.get(id(callee.node))
    if shape is None:
        shape = defs.bodies[id(callee.node)] = _body_shape(callee.node)
    if shape[0]:
        return None
    args = CallArgs(call)
    bound = _bind_arguments(ev, callee, args, receiver)
    if bound is None:
        return None
    if not defs.active:
        record(defs.sites, callee, call, bound, caller.grad_enabled, caller)
    key = (id(call), id(callee.node), callee.class_name, tuple(id(f) for f in bound.values()), caller.grad_enabled)
    if key in defs.memo:
        return defs.memo[key][1]
    # the same callee with arguments that say the same things is walked once: nothing else the
    # walk reads changes while one module is walked, but the module's own names
    run_key = (id(callee.node), callee.class_name, tuple((n, value_key(f)) for n, f in bound.items()),
               caller.grad_enabled, len(caller.scopes.module.env))
    earlier = defs.runs.get(run_key)
    ran: Optional[tuple[Fact, Env]]
    if earlier is not None:
        ran_bound, ran = earlier
    else:
        defs.spent += shape[1]
        defs.active.append(callee.node)
        try:
            ran = _run(caller, callee, bound)
        except INFERENCE_GAPS:
            ran = None
        finally:
            defs.active.pop()
        ran_bound = bound
        defs.runs[run_key] = (bound, ran)
    outcome: Optional[Outcome] = None
    if ran is not None:
        result, exit_env = ran
        arg_exprs = _argument_expressions(callee, args)
        foreign = callee.home is not None
        changed: dict[cst.BaseExpression, Fact] = {}
        kept = shape[2]
        for name, expr in arg_exprs.items():
            after = exit_env.get(name)
            if after is not None and after is not ran_bound.get(name) and name in kept:
                changed[expr] = _for_caller(after, ran_bound, arg_exprs, call, foreign)
        outcome = (_for_caller(_own(result, ran_bound, bound), ran_bound, arg_exprs, call, foreign), changed)
    defs.memo[key] = (tuple(bound.values()), outcome)  # the facts stay alive: their ids stay theirs
    return outcome


def _own(result: Fact, ran_bound: dict[str, Fact], bound: dict[str, Fact]) -> Fact:
    """``result`` of a walk with the arguments ``ran_bound``, for a call with ``bound``: a parameter
    returned as it came in is this call's argument."""
    if ran_bound is bound:
        return result
    for name, f in ran_bound.items():
        if f is result:
            return bound.get(name, result)
    return result


def note_call(ev: Eval, call: cst.Call) -> None:
    """Record the call site of ``call`` when it runs a function or method of this file
    (``module(x)``: ``forward``), with the facts its parameters start with."""
    defs = ev.model.callees
    if defs is None or defs.active:
        return
    callee = resolve_call(ev.model, call)
    receiver: Optional[Fact] = None
    if callee is None:
        owner = ev.model.scopes.top.env.get(dotted_name(call.func) or "")
        if owner is None or owner.kind != MODULE:
            return
        callee = forward_of(ev.model, owner.qual)
        receiver = owner
    elif type(call.func) is cst.Attribute:
        receiver = ev.fact(call.func.value)
    if callee is None or callee.home is not None:
        return
    bound = _bind_arguments(ev, callee, CallArgs(call), receiver)
    if bound is not None:
        record(defs.sites, callee, call, bound, ev.model.grad_enabled, ev.model)


#: node class -> it is a statement (small or compound); cached: the classes are abstract, and slow
_STATEMENTS: dict[type, bool] = {}


def _body_shape(fn: cst.FunctionDef) -> tuple[bool, int, frozenset[str]]:
    """Whether ``fn`` is a generator (or ``async``: an ``await`` in it), its number of statements,
    and the parameters its body never binds to another value (plain, annotated, unpacking, loop,
    ``with``, walrus and ``del`` targets; ``global``/``nonlocal``); nested definitions aside."""
    generator = False
    size = 0
    rebound: set[str] = set()
    for node in walk(fn.body):
        tp = type(node)  # exact classes: libcst has no subclasses of these
        statement = _STATEMENTS.get(tp)
        if statement is None:
            statement = _STATEMENTS[tp] = issubclass(tp, (cst.BaseSmallStatement, cst.BaseCompoundStatement))
        if statement:
            size += 1
        targets: list[cst.CSTNode] = []
        if tp is cst.Yield or tp is cst.Await:
            generator = True
        elif tp is cst.Assign:
            targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
        elif tp is cst.AnnAssign or tp is cst.For or tp is cst.CompFor or tp is cst.NamedExpr:
            targets = [node.target]  # type: ignore[attr-defined]
        elif tp is cst.With:
            targets.extend(with_targets(node))
        elif tp is cst.Del:
            targets = [node.target]  # type: ignore[attr-defined]
        elif tp is cst.Global or tp is cst.Nonlocal:
            rebound.update(n.name.value for n in node.names)  # type: ignore[attr-defined]
        for t in targets:
            rebound.update(target_names(t))
    return generator, size, frozenset(p.name.value for p in all_params(fn.params)) - rebound


def _parameters(callee: Callee) -> list[cst.Param]:
    params = list(callee.node.params.posonly_params) + list(callee.node.params.params)
    if callee.class_name is not None and not callee.is_static:
        return params[1:] if params else params
    return params


def _bind_arguments(ev: Eval, callee: Callee, args: CallArgs,
                    receiver: Optional[Fact]) -> Optional[dict[str, Fact]]:
    """Parameter name -> the fact it starts with; ``None`` when the call cannot be matched."""
    node = callee.node
    positional = _parameters(callee)
    bound: dict[str, Fact] = {}
    if callee.class_name is not None and not callee.is_static:
        first = (list(node.params.posonly_params) + list(node.params.params))[:1]
        if not first:
            return None
        bound[first[0].name.value] = receiver if receiver is not None else fresh()
    star = node.params.star_arg
    if args.starred:
        for p in all_params(node.params):
            bound.setdefault(p.name.value, fresh())
        return bound
    if len(args.pos) > len(positional) and type(star) is not cst.Param:
        return None
    for p, a in zip(positional, args.pos):
        bound[p.name.value] = ev.fact(a)
    keyword_params = {p.name.value: p for p in positional[len(args.pos):] + list(node.params.kwonly_params)}
    for name, a in args.kw.items():
        if name in keyword_params:
            bound[name] = ev.fact(a)
        elif node.params.star_kwarg is None:
            return None
    for p in all_params(node.params):
        name = p.name.value
        if name in bound:
            continue
        if p is star or p is node.params.star_kwarg:
            bound[name] = fresh()
        elif p.default is None:
            return None  # the call raises TypeError: nothing to say about its result
        else:
            bound[name] = _default(ev, p.default)
    return bound


def _default(ev: Eval, expr: cst.BaseExpression) -> Fact:
    """The fact of a parameter's default: literals only (any other default is evaluated in the
    callee's module when the ``def`` runs)."""
    literal = expr.expression if type(expr) is cst.UnaryOperation else expr
    if isinstance(literal, _LITERALS) or (type(literal) is cst.Name and literal.value in ("True", "False", "None")):
        return ev.fact(expr)
    return fresh()


def _argument_expressions(callee: Callee, args: CallArgs) -> dict[str, cst.BaseExpression]:
    """Parameter name -> the caller's expression bound to it."""
    out: dict[str, cst.BaseExpression] = {}
    if args.starred:
        return out
    for p, a in zip(_parameters(callee), args.pos):
        out[p.name.value] = a
    out.update(args.kw)
    return out


def _run(caller: SemanticModel, callee: Callee, bound: dict[str, Fact]) -> tuple[Fact, Env]:
    """Walk the callee body with its parameters bound: the join of its returns, and the
    bindings that hold at its end (joined over every ``return`` and the end of the body)."""
    model = SemanticModel()
    defs: Definitions = caller.callees  # type: ignore[assignment]
    home = callee.home
    if home is None:
        model.imports = caller.imports
        model.classes = caller.classes
        model.class_attrs = caller.class_attrs
        model.class_moves = caller.class_moves
        model.signatures = caller.signatures
        model.module_globals = caller.module_globals
        model.module_names = caller.module_names
        model.default_device_set = caller.default_device_set
        model.params_frozen = caller.params_frozen
        model.custom_collate = caller.custom_collate
        model.custom_transform = caller.custom_transform
        model.steady_devices = caller.steady_devices
        model.scopes.module.env = caller.scopes.module.env
    else:
        aliases, model.signatures, model.module_globals, model.module_names = _home_scan(home)
        model.imports.aliases.update(aliases)  # the walk adds a callee's own imports to its table
        model.default_device_set = caller.default_device_set
        model.params_frozen = caller.params_frozen
    model.callees = defs if home is None else home.definitions
    evaluator = Evaluator(model)
    walker = _CalleeWalk(model, evaluator, callee.node)
    env: Env = global_bindings(model)
    scopes = model.scopes
    if callee.class_name is not None:
        class_node = (home.definitions if home is not None else defs).classes[callee.class_name].node
        receiver = bound.get(_first_name(callee.node) or "")
        if receiver is not None and receiver.kind == MODULE and home is None:
            for key in model.class_attrs.get(callee.class_name, {}):
                env[key] = module_attr(evaluator, receiver, key[len("self."):])
        else:
            env.update(model.class_attrs.get(callee.class_name, {}))
        scopes.push_class(class_node, model.classes.get(callee.class_name), set(), caller.grad_enabled)
    for p in all_params(callee.node.params):
        f = bound.get(p.name.value)
        if f is None or (f.kind is None and p.annotation is not None):
            ann = annotation_fact(p.annotation.annotation if p.annotation else None, model.imports)
            f = ann if ann is not None else (f if f is not None else fresh())
        env[p.name.value] = f
    mode = caller.grad_enabled
    for d in callee.node.decorators:
        m = grad_mode_of(evaluator, d.decorator)
        if m is not NOT_A_GRAD_MODE:
            mode = m  # type: ignore[assignment]
    scopes.push_function(callee.node, env, mode)
    ended = walker._body(callee.node.body)
    returns = walker.returns
    exits = walker.exits
    if ended == NORMAL or not returns:
        returns.append(UNKNOWN)  # falls off the end: returns None
        exits.append(model.env)
    result = returns[0]
    for f in returns[1:]:
        result = join(result, f)
    return result, merge(exits)


def _home_scan(home: ForeignModule) -> tuple[dict[str, str], dict, set[str], set[str]]:
    """What :func:`prescan_module` reads from the whole file ``home`` (its import aliases, its
    signatures, the names it binds once and at all), read once for every importer of the file
    and never changed after."""
    shared = home.shared
    if shared.scan is None:
        scratch = SemanticModel()
        prescan_module(scratch, shared.module.body)
        shared.scan = (dict(scratch.imports.aliases), scratch.signatures, scratch.module_globals,
                       scratch.module_names)
    return shared.scan


def _first_name(fn: cst.FunctionDef) -> Optional[str]:
    params = list(fn.params.posonly_params) + list(fn.params.params)
    return params[0].name.value if params else None


# ---------------------------------------------------------------------------- what the caller may see
def _for_caller(f: Fact, bound: dict[str, Fact], arg_exprs: dict[str, cst.BaseExpression],
                call: cst.Call, foreign: bool, depth: int = 0) -> Fact:
    """``f`` without what means nothing outside the callee; the reduction of an argument is
    said as the caller wrote it (the argument's name, the call)."""
    if f is UNKNOWN:
        return f
    changes: dict[str, object] = {}
    symbols = _argument_symbols(bound)
    if f.shape is not None:
        shape = _shape_for_caller(f.shape, symbols)
        if shape is not f.shape:
            changes["shape"] = shape
    if isinstance(f.dim, str) and not _known_symbol(f.dim, symbols):
        changes["dim"] = None
    if isinstance(f.device, SameDeviceAs):
        changes["device"] = None
    if f.reduction is not None:
        owner = next((name for name, g in bound.items() if g is f.reduction.source), None)
        expr = arg_exprs.get(owner) if owner is not None else None
        if expr is None:
            changes["reduction"] = None
        else:
            changes["reduction"] = type(f.reduction)(f.reduction.source, dotted_name(expr),
                                                     f.reduction.axes, call, alternatives=f.reduction.alternatives)
    if foreign and f.kind == MODULE and f.qual is not None and not f.qual.startswith("torch."):
        changes["qual"] = None
    if f.mapped:
        kept = _for_caller(f.mapped[0], bound, arg_exprs, call, foreign, depth + 1) if depth < 2 else None
        changes["mapped"] = (kept,) if kept is not None else None
    if f.elems is not None:
        if depth >= 2:
            changes["elems"] = None
        else:
            changes["elems"] = tuple(_for_caller(e, bound, arg_exprs, call, foreign, depth + 1) for e in f.elems)
    return f.with_(**changes) if changes else f


def _argument_symbols(bound: dict[str, Fact]) -> set[str]:
    out: set[str] = set()
    for f in bound.values():
        if f.shape is not None:
            out.update(d for d in f.shape.dims if isinstance(d, str))
            if f.shape.rest_name:
                out.add("*" + f.shape.rest_name)
        if isinstance(f.dim, str):
            out.add(f.dim)
    return out


def _known_symbol(dim: str, symbols: set[str]) -> bool:
    """A size symbol the caller knows: one of the arguments', or built from them (``B*T``)."""
    if dim in symbols:
        return True
    atoms = _SYMBOL_ATOM.findall(dim)
    return bool(atoms) and all(a in symbols for a in atoms)


def _shape_for_caller(shape: Shape, symbols: set[str]) -> Shape:
    dims = tuple(d if not isinstance(d, str) or _known_symbol(d, symbols) else None for d in shape.dims)
    rest_name = shape.rest_name if shape.rest_name is None or "*" + shape.rest_name in symbols else None
    if dims == shape.dims and rest_name == shape.rest_name:
        return shape
    return Shape(dims, shape.rest_at, rest_name)


register_reanalysis(callee_result, call_outcome)
register_call_noter(note_call)
