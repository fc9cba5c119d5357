"""Calls: who is called (an imported name, a method, a module, a class or function of this
file, a builtin) and the facts of the result; calls of annotated functions bind their dims."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.data_loading import holds_data
from shapecheck.semantic.eval.einops_patterns import mapped
from shapecheck.semantic.eval.layout import unknown_result_order
from shapecheck.semantic.eval.nn_modules import local_module, module_call
from shapecheck.semantic.eval.registry import Eval, expression
from shapecheck.semantic.eval.tensor_methods import method_call
from shapecheck.semantic.eval.torch_functions import qualified_call
from shapecheck.semantic.facts import BOOL, FLOAT, INT, MODULE, NO_GRAD, NON_LEAF, STR, TENSOR, UNKNOWN, Fact, Grad
from shapecheck.semantic.model import Signature
from shapecheck.semantic.summaries import (
    ClassInfo, autograd_function, imported_module_class, is_self, reanalyse, resolve_call,
)
from shapecheck.semantic.syntax import CallArgs, dotted_name, target_names
from shapecheck.semantic.walk import walk
from shapecheck.shapes import Dim, Shape

#: what a call of an annotated function binds: dim name -> dim, ``*rest`` name -> dims
Binding = dict[str, object]


@expression(cst.Call)
def call(ev: Eval, expr: cst.Call) -> Fact:
    """The facts of a call's result (a result the linter knows nothing about may keep the dim
    order of a tensor passed to it: see :func:`~shapecheck.semantic.eval.layout.unknown_result_order`)."""
    return unknown_result_order(ev, expr, _call(ev, expr))


def _call(ev: Eval, expr: cst.Call) -> Fact:
    """The facts of a call's result, as the callee tells."""
    func = expr.func
    qual = ev.model.imports.resolve(func)
    if qual is not None:
        handled = qualified_call(ev, qual, expr)
        if handled is not None:
            return handled
    if type(func) is cst.Attribute:
        bound = ev.model.scopes.top.env.get(dotted_name(func) or "")
        if bound is not None and bound.kind == MODULE:
            return module_call(ev, bound, expr)
        recv = ev.fact(func.value)
        if recv.kind == MODULE and bound is None:
            layer = ev.fact(func)  # `model.embed(x)`: a submodule of a module of the file
            if layer.kind == MODULE:
                return module_call(ev, layer, expr)
        reanalysed = _reanalysed(ev, expr, recv)
        if reanalysed is not None:
            return reanalysed
        if recv.kind is None and _own_object(ev, func.value):
            return UNKNOWN  # `self.norm(x)`: a method of the class, not `Tensor.norm`
        if func.attr.value == "apply" and type(func.value) is cst.Name and recv.kind is None:
            function = autograd_function(ev.model, func.value.value)
            if function is not None:
                return _function_result(ev, function, expr)
        return method_call(ev, recv, func.attr.value, expr, recv_expr=func.value)
    if type(func) is cst.Name:
        reanalysed = _reanalysed(ev, expr, None)
        if reanalysed is not None and (reanalysed.kind is not None or holds_data(reanalysed) or reanalysed.mapped):
            return _with_signature(ev, reanalysed, func.value, expr)
        return _local_call(ev, func.value, expr)
    if type(func) is cst.Call:
        built = ev.fact(func)
        if built.kind == MODULE:
            return module_call(ev, built, expr)  # `nn.Linear(3, 2)(x)`
    return UNKNOWN


def _reanalysed(ev: Eval, expr: cst.Call, receiver: Optional[Fact]) -> Optional[Fact]:
    """What a call of a function or method of this file (or of another file of the run)
    returns, from a re-analysis of the callee with the facts of this call site."""
    callee = resolve_call(ev.model, expr)
    return reanalyse(ev, callee, expr, receiver) if callee is not None else None


def _function_result(ev: Eval, function: ClassInfo, expr: cst.Call) -> Fact:
    """``F.apply(...)`` of a ``torch.autograd.Function``: a tensor when every ``return`` of its
    ``forward`` gives one value (no tuple, and no name bound to one there); it requires grad when
    grad mode is on and a tensor argument does, and not with grad mode off."""
    forward = function.methods.get("forward")
    if forward is None:
        return UNKNOWN
    returns = [node for node in walk(forward.body) if type(node) is cst.Return]
    tuples = {name for node in walk(forward.body)
              if type(node) is cst.Assign and isinstance(node.value, (cst.Tuple, cst.List))
              for t in node.targets for name in target_names(t.target)}
    if not returns or any(r.value is None or isinstance(r.value, (cst.Tuple, cst.List))
                          or type(r.value) is cst.Name and r.value.value in tuples for r in returns):
        return UNKNOWN
    grad: Optional[Grad] = None
    enabled = ev.model.grad_enabled
    if enabled is False:
        grad = NO_GRAD
    elif enabled is True and any(f.kind == TENSOR and f.requires_grad is True
                                 for f in (ev.fact(a.value) for a in expr.args if a.keyword is None and not a.star)):
        grad = NON_LEAF
    return Fact(kind=TENSOR, grad=grad)


def _own_object(ev: Eval, expr: cst.BaseExpression) -> bool:
    """``expr`` is ``self`` of the method being analysed, in a class whose bases are not a
    tensor class: what it calls are that class's methods."""
    if type(expr) is not cst.Name or expr.value != "self" or not is_self(ev.model):
        return False
    class_def = ev.model.class_def
    assert class_def is not None
    return not any((dotted_name(base.value) or "").endswith(("Tensor", "Parameter")) for base in class_def.bases)


def _with_signature(ev: Eval, f: Fact, name: str, expr: cst.Call) -> Fact:
    """``f`` with the shape the annotations of ``name`` promise, when it has none of its own."""
    sig = ev.model.signatures.get(name)
    if sig is None or f.shape is not None or f.kind != TENSOR:
        return f
    return f.with_(shape=_signature_call(ev, sig, expr).shape)


def _local_call(ev: Eval, name: str, expr: cst.Call) -> Fact:
    """A call of a plain name: a bound module, a class or annotated function of this file, a builtin."""
    model = ev.model
    bound = model.scopes.top.env.get(name)
    if bound is not None:
        if bound.kind == MODULE:
            return module_call(ev, bound, expr)
        return UNKNOWN
    if name in model.classes:
        if model.classes[name]:
            return local_module(ev, name)
        return UNKNOWN
    if imported_module_class(model, name):
        return Fact(kind=MODULE, qual=name)  # an instance of a module class of another file of the run
    sig = model.signatures.get(name)
    if sig is not None:
        return _signature_call(ev, sig, expr)
    if name in ("len", "int"):
        return Fact(kind=INT)
    if name == "float":
        return Fact(kind=FLOAT)
    if name in ("isinstance", "hasattr", "bool", "callable"):
        return Fact(kind=BOOL)
    if name in ("str", "repr"):
        return Fact(kind=STR)
    if name == "map":
        return mapped(ev, expr) or UNKNOWN
    return UNKNOWN


def _signature_call(ev: Eval, sig: Signature, expr: cst.Call) -> Fact:
    params, ret = sig
    if ret is None:
        return UNKNOWN
    args = CallArgs(expr)
    if args.starred:
        return Fact(kind=TENSOR)
    binding: Binding = {}
    for i, (pname, pshape) in enumerate(params):
        if pshape is None:
            continue
        a = args.get(i, pname)
        if a is None:
            continue
        _unify(pshape, ev.fact(a).shape, binding)
    return Fact(kind=TENSOR, shape=_substitute(ret, binding))


def _unify(pattern: Shape, actual: Optional[Shape], binding: Binding) -> None:
    """Bind the named dims of ``pattern`` (a parameter annotation) to the dims of ``actual``."""
    if actual is None or actual.rank is None:
        return
    pairs: list[tuple[Dim, Dim]]
    if pattern.rest_at is None:
        if len(pattern.dims) != actual.rank:
            return
        pairs = list(zip(pattern.dims, actual.dims))
    else:
        lead = pattern.dims[: pattern.rest_at]
        tail = pattern.dims[pattern.rest_at:]
        if len(lead) + len(tail) > actual.rank:
            return
        pairs = list(zip(lead, actual.dims[: len(lead)]))
        if tail:
            pairs += list(zip(tail, actual.dims[-len(tail):]))
        if pattern.rest_name:
            binding["*" + pattern.rest_name] = actual.dims[len(lead): actual.rank - len(tail)]
    for p, a in pairs:
        if isinstance(p, str) and p not in binding:
            binding[p] = a


def _substitute(ret: Shape, binding: Binding) -> Optional[Shape]:
    """The return annotation with the call site's dims in place of the names."""
    dims = [binding.get(d) if isinstance(d, str) else d for d in ret.dims]
    if ret.rest_at is None:
        return Shape(tuple(dims))  # type: ignore[arg-type]
    key = "*" + ret.rest_name if ret.rest_name else None
    if key is not None and key in binding:
        rest: tuple = binding[key]  # type: ignore[assignment]
        return Shape(tuple(dims[: ret.rest_at]) + tuple(rest) + tuple(dims[ret.rest_at:]))  # type: ignore[arg-type]
    return Shape(tuple(dims), ret.rest_at, None)  # type: ignore[arg-type]
