"""Names, literals, sequences, conditional expressions, attributes (``x.shape``, ``x.T``,
``model.weight``) and subscripts (``x[0, :2]``, ``x.shape[-1]``)."""

from __future__ import annotations

from typing import Optional, Union, cast

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.arguments import opt_int
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.devices import device_string
from shapecheck.semantic.eval.index_bounds import leading_kept
from shapecheck.semantic.eval.module_lists import module_list_element
from shapecheck.semantic.eval.nn_modules import module_attr
from shapecheck.semantic.eval.data_loading import BATCH, PROGRESS_BARS, batch_item, loader_batch
from shapecheck.semantic.eval.registry import Eval, expression
from shapecheck.semantic.dict_values import held_values, unheld
from shapecheck.semantic.facts import (
    BOOL, CONTIGUOUS, CPU, DEVICE, FLOAT, INT, LEAF_REQUIRES_GRAD, MAYBE_CUDA, MODULE, NO_GRAD,
    SIZE, STR, TENSOR, TUPLE, UNKNOWN, DeviceValue, DtypeKind, Fact, SameDeviceAs, fresh, join,
)
from shapecheck.semantic.syntax import dotted_name, index_value, int_literal, string_value
from shapecheck.semantic.torch_api import TENSOR_BOOL_ATTRIBUTES
from shapecheck.shapes import Shape


@expression(cst.Name)
def name(ev: Eval, expr: cst.Name) -> Fact:
    """A bound name, ``True``/``False``, else unknown."""
    f = ev.model.scopes.top.env.get(expr.value)
    if f is not None:
        return f
    v = expr.value
    if v == "True" or v == "False":
        return Fact(kind=BOOL, value=(v == "True"))
    return UNKNOWN


@expression(cst.Integer)
def integer(ev: Eval, expr: cst.Integer) -> Fact:
    """An int literal: also a size."""
    v = int_literal(expr)
    return Fact(kind=INT, value=v, dim=v)


@expression(cst.Float)
def float_literal(ev: Eval, expr: cst.Float) -> Fact:
    """A float literal."""
    try:
        return Fact(kind=FLOAT, value=float(expr.value.replace("_", "")))
    except ValueError:
        return Fact(kind=FLOAT)


@expression(cst.SimpleString)
def string(ev: Eval, expr: cst.SimpleString) -> Fact:
    """A string literal, with the device it names (``"cuda:0"``)."""
    try:
        value = string_value(expr)
    except Exception:
        return Fact(kind=STR)
    if isinstance(value, bytes):
        return UNKNOWN
    dev = device_string(value)
    if dev is not None:
        return Fact(kind=STR, value=value, device=dev)
    return Fact(kind=STR, value=value)


@expression(cst.Tuple, cst.List)
def sequence(ev: Eval, expr: Union[cst.Tuple, cst.List]) -> Fact:
    """A tuple or list display: the facts of its elements (its value when all are constants)."""
    elems: list[Fact] = []
    for el in expr.elements:
        if type(el) is cst.StarredElement:
            starred = ev.fact(el.value)  # `(a, *b.chunk(2))`: the pieces of a known count
            inner = starred.elems
            if inner is None or starred.maybe_pair:
                return UNKNOWN
            elems.extend(inner)
            continue
        elems.append(unheld(ev.fact(el.value)))  # a dict in a sequence may change through it
    values = tuple(e.value for e in elems)
    if all(v is not None for v in values):
        return Fact(value=values, elems=tuple(elems))
    return Fact(elems=tuple(elems))


@expression(cst.IfExp)
def if_expression(ev: Eval, expr: cst.IfExp) -> Fact:
    """``a if c else b``: what both branches share (``"cuda" if ... else "cpu"`` is maybe-cuda)."""
    a, b = ev.fact(expr.body), ev.fact(expr.orelse)
    j = join(a, b)
    if a.kind == b.kind == STR and j.device == MAYBE_CUDA:
        return Fact(kind=STR, device=MAYBE_CUDA)
    return j


@expression(cst.Attribute)
def attribute(ev: Eval, expr: cst.Attribute) -> Fact:
    """A bound dotted name, or an attribute of a value: ``x.shape``, ``x.T``, ``model.weight``..."""
    dotted = dotted_name(expr)
    if dotted is not None:
        f = ev.model.scopes.top.env.get(dotted)
        if f is not None:
            return f
    attr = expr.attr.value
    base = ev.fact(expr.value)
    kind = base.kind
    if kind == TUPLE:
        if attr == "values" and base.elems:
            return base.elems[0]
        if attr == "indices" and base.elems:
            return base.elems[1]
        return UNKNOWN
    if kind is None and base.maybe_pair and base.elems:
        if attr == "values":
            return base.elems[0]
        if attr == "indices":
            return base.elems[1]
        return UNKNOWN
    if kind == MODULE:
        return module_attr(ev, base, attr)
    tensorish = kind == TENSOR
    if attr in ("T", "mT", "H", "mH") and (tensorish or kind is None):
        rank = base.rank
        if attr in ("T", "H"):
            order = list(range(rank - 1, -1, -1)) if rank is not None else None
        else:
            order = O.transpose_order(rank, -2, -1) if rank is not None and rank >= 2 else None
        if rank is not None and rank < 2 and attr in ("T", "H"):
            return base.with_(reduction=None)
        out = O.moved(base, O.permute_shape(base.shape, order) if order else None, order, "." + attr)
        return out.with_(kind=TENSOR) if tensorish else out.with_(kind=None, grad=None, device=None)
    if not tensorish:
        if attr == "shape" and kind is None:
            return Fact(kind=SIZE, shape=base.shape)
        if attr == "device" and kind is None and dotted is not None:
            return Fact(kind=DEVICE, device=_same_device_as(dotted[: -len(".device")]))
        return UNKNOWN
    if attr == "shape":
        return Fact(kind=SIZE, shape=base.shape)
    if attr == "device":
        dev = base.device
        if dev is None and dotted is not None:
            dev = _same_device_as(dotted[: -len(".device")])
        return Fact(kind=DEVICE, device=dev)
    if attr == "data":
        return base.with_(grad=NO_GRAD, reduction=None)
    if attr == "grad":
        return O.plain_tensor(base.shape, device=base.device, grad=NO_GRAD, dtype_kind=base.dtype_kind)
    if attr in ("real", "imag"):
        return base.with_(dtype_kind=DtypeKind.FLOAT, layout=None, strides=None, reduction=None)
    if attr in TENSOR_BOOL_ATTRIBUTES:
        return Fact(kind=BOOL)
    if attr == "ndim":
        r = base.rank
        return Fact(kind=INT, value=r, dim=r)
    return UNKNOWN


@expression(cst.Subscript)
def subscript(ev: Eval, expr: cst.Subscript) -> Fact:
    """Indexing a tensor (basic indexing: ints, slices, ``None``, ``...``), a size or a sequence."""
    base = ev.fact(expr.value)
    kind = base.kind
    held = held_values(ev.model, base, expr.value)
    if held is not None:
        return held  # `out[k]` of a dict filled by item assignment only
    item = batch_item(base, index_value(expr.slice[0])) if base.qual == BATCH and len(expr.slice) == 1 else None
    if item is not None:
        return item  # `batch[0]` of a DataLoader's batch
    if kind == TUPLE and base.elems and len(expr.slice) == 1:
        i = index_value(expr.slice[0])
        if i in (0, 1, -1, -2):
            return base.elems[i]
        return UNKNOWN
    if kind == SIZE or (kind is None and base.elems is not None and not base.maybe_pair):
        return _index_sequence(ev, base, expr)
    if kind != TENSOR and not (kind is None and base.rank is not None):
        return UNKNOWN
    items: list[tuple[str, object]] = []
    for el in expr.slice:
        s = el.slice
        if type(s) is cst.Slice:
            if s.lower is None and s.upper is None and s.step is None:
                items.append(("full", None))
            else:
                items.append(("slice", (opt_int(ev, s.lower), opt_int(ev, s.upper), opt_int(ev, s.step))))
            continue
        v = cast(cst.Index, s).value
        if type(v) is cst.Name and v.value == "None":
            items.append(("new", None))
            continue
        if type(v) is cst.Ellipsis:
            items.append(("ellipsis", None))
            continue
        f = ev.fact(v)
        if f.kind == INT:
            items.append(("int", None))
            continue
        return Fact(kind=TENSOR if base.kind == TENSOR else None,
                    device=base.device if base.kind == TENSOR else None,
                    dtype_kind=base.dtype_kind, shape=leading_kept(base, items) if base.kind == TENSOR else None,
                    layout=None, grad=grad_of(ev, [base], True))
    out = O.index_fact(base, items)
    if out is None:
        lead = next((j for j, (k, _) in enumerate(items) if k not in ("full", "slice")), len(items))
        shape = leading_kept(base, items[:lead]) if kind == TENSOR else None
        return base.with_(shape=shape, layout=None, strides=None, perm=None, reduction=None)
    if out.rank == 0:
        out = out.with_(layout=CONTIGUOUS)
    return out.with_(grad=grad_of(ev, [base], True), is_scalar_cpu=out.rank == 0 and base.device == CPU)


def _same_device_as(name: str) -> DeviceValue:
    """The device of ``name``, itself unknown (``x.device``)."""
    return SameDeviceAs(name)


def _index_sequence(ev: Eval, base: Fact, expr: cst.Subscript) -> Fact:
    """``x.shape[i]``, ``x.shape[1:]``, ``pair[0]``."""
    if len(expr.slice) != 1:
        return UNKNOWN
    s = expr.slice[0].slice
    if base.kind == SIZE:
        if base.shape is None or base.shape.rank is None:
            if type(s) is cst.Index:
                return Fact(kind=INT)
            return Fact(kind=SIZE)
        dims = base.shape.dims
        if type(s) is cst.Index:
            i = index_value(expr.slice[0])
            if i is None or not -len(dims) <= i < len(dims):
                return Fact(kind=INT)
            d = dims[i]
            return Fact(kind=INT, dim=d, value=d if isinstance(d, int) else None)
        bounds = cast(cst.Slice, s)
        lo, hi, st = opt_int(ev, bounds.lower), opt_int(ev, bounds.upper), opt_int(ev, bounds.step)
        if "?" in (lo, hi, st):
            return Fact(kind=SIZE)
        known = cast(tuple[Optional[int], Optional[int], Optional[int]], (lo, hi, st))
        return Fact(kind=SIZE, shape=Shape(tuple(dims[slice(*known)])))
    elems = base.elems
    if type(s) is cst.Index and elems is not None:
        i = index_value(expr.slice[0])
        if i is not None and -len(elems) <= i < len(elems):
            return elems[i]
    return UNKNOWN


def _tensor_items(f: Fact) -> bool:
    if f.kind == TENSOR:
        return True
    return f.kind is None and not f.maybe_pair and bool(f.elems) \
        and any(e.kind == TENSOR for e in cast(tuple[Fact, ...], f.elems))


def literal_batches(f: Fact) -> Optional[Fact]:
    """The element of a loop over a list or tuple display whose items are all tensors or tuples
    holding a tensor (``loader = [(x, y)]``): the join of the items; ``None`` otherwise."""
    if f.kind is not None or f.maybe_pair or not f.elems or not all(_tensor_items(e) for e in f.elems):
        return None
    joined = f.elems[0]
    for e in f.elems[1:]:
        joined = join(joined, e)
    return joined


def loop_element(ev: Eval, iter_expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of each element a for-loop over ``iter_expr`` binds: ints of ``range``, pairs of
    ``enumerate``, the parameters of a module, the rows of a tensor; ``None`` when unknown."""
    if type(iter_expr) is cst.Call:
        func = iter_expr.func
        if type(func) is cst.Name and func.value == "range":
            return Fact(kind=INT)
        if type(func) is cst.Name and func.value == "enumerate" and iter_expr.args:
            inner = loop_element(ev, iter_expr.args[0].value) or fresh()
            return Fact(elems=(Fact(kind=INT), inner))
        if iter_expr.args and not iter_expr.args[0].keyword and ev.model.imports.resolve(func) in PROGRESS_BARS:
            return loop_element(ev, iter_expr.args[0].value)  # `tqdm(loader)` yields what `loader` yields
        if type(func) is cst.Attribute and func.attr.value in ("parameters", "named_parameters"):
            owner = ev.fact(func.value)
            if owner.kind == MODULE or func.attr.value == "parameters" and owner.kind is None:
                param = Fact(kind=TENSOR, grad=LEAF_REQUIRES_GRAD, device=owner.device)
                if func.attr.value == "named_parameters":
                    return Fact(elems=(Fact(kind=STR), param))
                return param
    listed = module_list_element(ev, iter_expr)
    if listed is not None:
        return listed  # `for blk in self.blocks`: the module class `__init__` filled the list with
    f = ev.fact(iter_expr)
    batch = loader_batch(f)
    if batch is not None:
        return batch
    listed_batches = literal_batches(f)
    if listed_batches is not None:
        return listed_batches
    if f.kind == TENSOR and f.shape is not None and f.shape.rank:
        return f.with_(shape=Shape(f.shape.dims[1:]), layout=None, strides=None, perm=None,
                       reduction=None, is_scalar_cpu=f.shape.rank == 1 and f.device == CPU)
    if f.kind == TENSOR:
        return Fact(kind=TENSOR, device=f.device, grad=f.grad, dtype_kind=f.dtype_kind)
    return None
