"""What a small statement does to the bindings: assignments (to names, attributes, unpacked
targets, subscripts), augmented assignments, in-place method calls, imports, ``del``,
``global``, and modules passed to functions that may change them."""

from __future__ import annotations

import builtins
from typing import Optional

import libcst as cst

from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.dict_values import stored, tracked_dicts, unheld
from shapecheck.semantic.eval.data_loading import batch_fields
from shapecheck.semantic.eval.sizes import named_sizes
from shapecheck.semantic.eval.unpacking import unpacked_rows
from shapecheck.semantic.evaluator import Evaluator
from shapecheck.semantic.facts import (
    BOOL, DEVICE, FLOAT, INT, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, SIZE, STR, TENSOR, UNKNOWN, Fact,
    fresh,
)
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.module_state import registered
from shapecheck.semantic.summaries import argument_effects
from shapecheck.semantic.syntax import CallArgs, dotted_name, import_binding, sizes_of, target_names
from shapecheck.semantic.torch_api import INPLACE_SHAPE_KEEPING_METHODS, MODULE_DEVICE_METHODS

_BUILTINS = frozenset(dir(builtins))


class Binder:
    """Applies small statements to the bindings of the current scope of ``model``."""

    def __init__(self, model: SemanticModel, evaluator: Evaluator) -> None:
        self.model = model
        self.evaluator = evaluator
        self.fact = evaluator.fact

    def small_statement(self, small: cst.CSTNode) -> None:
        """Bind what ``small`` binds (its expressions' hooks have run)."""
        # exact classes: isinstance on libcst nodes goes through ABC checks, and this runs per statement
        tp = type(small)
        model = self.model
        if type(small) is cst.Assign:
            value = self.fact(small.value)
            for t in small.targets:
                if value.kind == SIZE and (type(t.target) is cst.Tuple or type(t.target) is cst.List):
                    value = self._refine_rank(small.value, t.target) or value
                self.bind(t.target, value)
            if type(small.value) is cst.Call:
                self._modules_passed(small.value)
        elif type(small) is cst.AnnAssign:
            f = self.fact(small.value) if small.value is not None else None
            ann = annotation_fact(small.annotation.annotation, model.imports)
            if ann is not None and (f is None or f.shape is None):
                f = ann if f is None else f.with_(kind=TENSOR, shape=ann.shape)
            if f is not None:
                self.bind(small.target, f)
        elif type(small) is cst.AugAssign:
            self._aug_assign(small)
        elif type(small) is cst.Expr:
            self._expr_statement(small.value)
            if type(small.value) is cst.Call:
                self._modules_passed(small.value)
        elif type(small) is cst.Import:
            model.imports.add_import(small)
            for alias in small.names:
                model.env.pop(import_binding(alias), None)
        elif type(small) is cst.ImportFrom:
            model.imports.add_import_from(small)
            if not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    model.env.pop(import_binding(alias), None)
        elif type(small) is cst.Del:
            for name in target_names(small.target):
                model.env.pop(name, None)
        elif tp is cst.Global or tp is cst.Nonlocal:
            for n in small.names:  # type: ignore[attr-defined]
                model.env.pop(n.name.value, None)

    def bind(self, target: cst.BaseExpression, value: Fact) -> None:
        """Bind ``target`` (a name, attribute, tuple/list, subscript or starred target) to ``value``."""
        tp = type(target)
        if type(target) is cst.Name:
            if value.kind == STR and value.device is not None:
                value = Fact(kind=DEVICE, device=value.device, value=value.value)
            if value.mapped is not None:
                scope = self.model.function or self.model.tree
                if scope is None or target.value not in tracked_dicts(scope):
                    value = value.with_(mapped=None)
            self.set(target.value, value)
            return
        if type(target) is cst.Attribute:
            self._bind_attribute(target, unheld(value))  # `self.d[k] = v` elsewhere updates no fact
            return
        if type(target) is cst.Tuple or type(target) is cst.List:
            self._bind_unpacked(target, value)
            return
        if type(target) is cst.Subscript:
            owner = dotted_name(target.value)
            if owner is not None:
                cur = self.fact(target.value)
                if cur.mapped is not None and type(target.value) is cst.Name:
                    self.set(owner, cur.with_(mapped=stored(cur.mapped, value)))  # `out[k] = v`
                    return
                if cur.kind == TENSOR and cur.grad == NO_GRAD and value.kind in (TENSOR, None) \
                        and self.model.grad_enabled is not False:
                    # `outputs[t] = output`: the tensor written joins the graph of what is written in
                    if value.grad in (LEAF_REQUIRES_GRAD, NON_LEAF) and self.model.grad_enabled:
                        self.set(owner, cur.with_(grad=NON_LEAF))
                    elif value.grad != NO_GRAD:
                        self.set(owner, cur.with_(grad=None))
            return
        if tp is cst.StarredElement:
            self.bind(target.value, fresh())  # type: ignore[attr-defined]

    def _bind_attribute(self, target: cst.Attribute, value: Fact) -> None:
        dotted = dotted_name(target)
        if dotted is None:
            return
        if target.attr.value == "requires_grad":
            owner = dotted_name(target.value)
            if owner is not None:
                cur = self.fact(target.value)
                if value.value is True:
                    self.set(owner, cur.with_(grad=LEAF_REQUIRES_GRAD))
                elif value.value is False:
                    self.set(owner, cur.with_(grad=NO_GRAD))
                else:
                    self.set(owner, cur.with_(grad=None))
            return
        if target.attr.value == "data":
            owner = dotted_name(target.value)
            if owner is not None:
                cur = self.fact(target.value)
                self.set(owner, cur.with_(shape=value.shape, layout=value.layout,
                                          strides=value.strides, perm=value.perm))
            return
        self.set(dotted, value)

    def _bind_unpacked(self, target: cst.Tuple | cst.List, value: Fact) -> None:
        elements = target.elements
        elems = value.elems
        if value.kind == SIZE and value.shape is not None and value.shape.rank is not None:
            elems = tuple(Fact(kind=INT, dim=d, value=d if isinstance(d, int) else None)
                          for d in value.shape.dims)
        elif value.kind == SIZE:
            elems = tuple(Fact(kind=INT) for _ in elements)
        elif elems is None and value.kind == TENSOR:
            elems = unpacked_rows(self.evaluator, value, len(elements))  # `q, k, v = qkv`: its rows
        elif elems is None:
            elems = batch_fields(value, len(elements))  # `data, target = batch` of a DataLoader
        if any(type(e) is cst.StarredElement for e in elements) or elems is None \
                or len(elems) != len(elements):
            for e in elements:
                self.bind(e.value, fresh())
            return
        for e, f in zip(elements, elems):
            self.bind(e.value, f)

    def set(self, key: str, value: Fact) -> None:
        """Bind ``key`` (a name or dotted name) and forget what was bound below it (``key.x``)."""
        env = self.model.scopes.top.env
        env[key] = value
        prefix = key + "."
        stale = [k for k in env if k.startswith(prefix)] if _has_dotted(env) else ()
        for k in stale:
            del env[k]

    def _refine_rank(self, size_expr: cst.BaseExpression, target: cst.Tuple | cst.List) -> Optional[Fact]:
        """``b, t, c = x.shape`` proves that ``x`` has rank 3 (when its rank was unknown), and
        names its unknown sizes by the names they are unpacked to (generic symbols); returns
        the sizes so named, or ``None`` when nothing changed."""
        if any(type(e) is cst.StarredElement for e in target.elements):
            return None
        owner_expr = sizes_of(size_expr)
        owner = dotted_name(owner_expr) if owner_expr is not None else None
        if owner is None or owner_expr is None:
            return None
        cur = self.fact(owner_expr)
        if cur.kind not in (TENSOR, None):
            return None
        if cur.shape is not None and (cur.shape.rank != len(target.elements) or cur.strides is not None):
            return None
        shape = named_sizes(cur.shape, target.elements, self.model.scopes.top.env.get)
        if shape is None:
            return None
        self.set(owner, cur.with_(shape=shape))
        return Fact(kind=SIZE, shape=shape)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        owner = dotted_name(node.target)
        if owner is None:
            return
        cur = self.fact(node.target)
        other = self.fact(node.value)
        if cur.kind in (INT, FLOAT) and other.kind in (INT, FLOAT):
            self.set(owner, Fact(kind=cur.kind if cur.kind == other.kind else FLOAT))
            return
        if cur.kind != TENSOR:
            self.set(owner, fresh() if cur.kind is None else Fact(kind=cur.kind))
            return
        grad = cur.grad
        if grad == NO_GRAD and other.kind == TENSOR and other.grad in (LEAF_REQUIRES_GRAD, NON_LEAF) \
                and self.model.grad_enabled:
            grad = NON_LEAF
        elif grad == NO_GRAD and other.kind not in (TENSOR, INT, FLOAT, BOOL):
            grad = None
        self.set(owner, cur.with_(grad=grad, reduction=None))

    def _modules_passed(self, call: cst.Call) -> None:
        """A module passed to a function may come back changed (``weight_norm(layer)``,
        ``prune.l1_unstructured(layer, ...)`` make ``layer.weight`` a computed tensor,
        ``accelerator.prepare(model)`` moves it): forget what it holds and where it is. A call
        of a function or method that the analysis re-analyses leaves what the callee did instead."""
        model = self.model
        func = call.func
        env = model.env
        changed = argument_effects(self.evaluator, call)
        if changed is not None:
            for passed, after in changed.items():
                changed_name = dotted_name(passed)
                if changed_name is not None:
                    self.set(changed_name, after)
            return
        if type(func) is cst.Name and func.value in _BUILTINS and func.value not in env \
                and func.value not in model.module_names and model.imports.resolve(func) is None:
            return  # a builtin (`print`, `isinstance`): it only reads what it is given
        for arg in call.args:
            value = arg.value
            if type(value) is cst.Name:
                key: Optional[str] = value.value
            elif type(value) is cst.Attribute:
                key = dotted_name(value)
            else:
                continue
            f = env.get(key) if key is not None else None
            if f is None or f.kind != MODULE or (f.device is None and f.params is None and f.trainable is None):
                continue
            qual = model.imports.resolve(func)
            if qual is not None and qual.startswith("torch.nn.") and qual.count(".") == 2:
                return  # `nn.Sequential(layer, ...)`: a container keeps the layer as it is
            self.set(key, Fact(kind=MODULE, qual=f.qual, features=f.features))  # type: ignore[arg-type]

    def _expr_statement(self, value: cst.BaseExpression) -> None:
        """``x.add_(1)``, ``model.cuda()``, ``x.requires_grad_()``: calls that change their receiver."""
        if type(value) is not cst.Call or type(value.func) is not cst.Attribute:
            return
        func = value.func
        owner = dotted_name(func.value)
        if owner is None:
            return
        model = self.model
        method = func.attr.value
        cur = self.fact(func.value)
        if cur.kind == MODULE:
            if method in ("to", "cuda", "cpu", "requires_grad_", "to_empty"):
                self.set(owner, self.fact(value))
            elif method == "load_state_dict" and any(
                    a.keyword is not None and a.keyword.value == "assign" for a in value.args):
                self.set(owner, cur.with_(device=None))  # `assign=True`: the tensors of the state dict
            held = registered(model, self.fact, value)
            if held is not None:
                self.set(*held)  # `self.register_buffer("mask", t)`
            class_def = model.class_def
            if owner == "self" and method in MODULE_DEVICE_METHODS and class_def is not None:
                model.class_moves.add(class_def.name.value)  # `self.cuda()` in `__init__`
            return
        if cur.kind not in (TENSOR, None):
            return
        if method in ("requires_grad_", "detach_"):
            result = self.fact(value)
            if result is not UNKNOWN:
                self.set(owner, result)
            return
        if method.endswith("_") and not method.startswith("_"):
            if method in INPLACE_SHAPE_KEEPING_METHODS:
                if cur.reduction is not None:
                    self.set(owner, cur.with_(reduction=None))
                if cur.kind == TENSOR and cur.grad == NO_GRAD and model.grad_enabled:
                    args = CallArgs(value)
                    for a in args.pos:
                        f = self.fact(a)
                        if f.kind == TENSOR and f.grad in (LEAF_REQUIRES_GRAD, NON_LEAF):
                            self.set(owner, cur.with_(grad=NON_LEAF))
                            break
                return
            if cur is not UNKNOWN or owner in model.env:
                self.set(owner, cur.with_(shape=None, layout=None, strides=None, perm=None,
                                          moved_by=None, reduction=None))


def _has_dotted(env: dict[str, Fact]) -> bool:
    for k in env:
        if "." in k:
            return True
    return False
