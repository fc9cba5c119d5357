"""Calls of qualified names: ``torch.*`` functions, ``torch.nn.functional``, ``torch.linalg``,
``cat``/``stack``, ``einsum`` (torch, einops, shapecheck), ``einops`` and ``torchvision`` models."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.arguments import py_dtype
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.conv_sizes import conv_function_output, function_output as pool_output
from shapecheck.semantic.eval.devices import current_accelerator, device_of, torch_device
from shapecheck.semantic.eval.einsum_layout import einsum_layout, unknown_order
from shapecheck.semantic.eval.fft_shapes import fft_call
from shapecheck.semantic.eval.comprehensions import comprehension_elements
from shapecheck.semantic.eval.listed_elements import unchanged_elements
from shapecheck.semantic.eval.einops_patterns import rearrange_shape
from shapecheck.semantic.eval.elementwise import elementwise, matmul
from shapecheck.semantic.eval.factories import factory, legacy_tensor
from shapecheck.semantic.eval.layer_ranks import kept_shape
from shapecheck.semantic.eval.layout import input_order_layout
from shapecheck.semantic.eval.nn_modules import nn_class, nn_pretrained
from shapecheck.semantic.eval.rank_bounds import bounded_join_shape
from shapecheck.semantic.eval.reductions import linalg_norm
from shapecheck.semantic.eval.data_loading import data_call, torchvision_dataset
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.eval.tensor_methods import method_call
from shapecheck.semantic.facts import (
    BOOL, CPU, FLOAT, INT, MODULE, NO_GRAD, OPTIMIZER, TENSOR, UNKNOWN, DtypeKind, Fact,
)
from shapecheck.semantic.optimizer_params import updated_modules
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    ALL_FACTORIES, CONCAT_FUNCTIONS, LEGACY_TENSOR_CLASSES, ELEMENTWISE_BINARY, FUNCTIONAL_KEPT_DIMS, FUNCTIONAL_LOSSES,
    FUNCTIONAL_RANK_ADDING,
    FUNCTIONAL_RANK_KEEPING, INPLACE_FILLING_METHODS, MATRIX_PRODUCTS,
    INT64_RESULT_FUNCTIONS,
    MIN_MAX_PAIR_OPS, PYTHON_BOOL_RESULTS, REDUCTION_PAIR_FUNCTIONS, REDUCTIONS, SHAPE_KEEPING_UNARY,
    TORCH_BOOL_FUNCTIONS,
    VALUES_INDICES_ALWAYS,
)
from shapecheck.shapes import Dim, Shape

# the ``torch.<name>(x, ...)`` computed as ``x.<name>(...)``: a dispatch choice, not a torch fact
_FORWARDED_METHODS = frozenset({
    "view", "reshape", "flatten", "transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis",
    "unsqueeze", "squeeze", "narrow", "expand", "contiguous", "masked_fill", "clone", "detach", "inverse",
    "argsort", "flip", "roll",
})

#: functions of Python's ``math`` module and the kind of number they return
_MATH_RESULTS = {
    **dict.fromkeys(("sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "tanh", "atan", "pow", "fabs",
                     "erf"), FLOAT),
    **dict.fromkeys(("ceil", "floor", "isqrt", "gcd", "comb", "factorial", "prod", "trunc"), INT),
}


def _optimizer_params(expr: cst.Call) -> Optional[cst.BaseExpression]:
    """The ``params`` argument of an optimizer's construction."""
    for arg in expr.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "params":
            return arg.value
    return None


def qualified_call(ev: Eval, qual: str, expr: cst.Call) -> Optional[Fact]:
    """A call of an import-resolved name; ``None`` when the name is not one the evaluator knows."""
    model = ev.model
    if qual.startswith("torch."):
        rest = qual[6:]
        if rest.startswith("nn.functional."):
            return _functional(ev, rest[14:], expr)
        if rest.startswith("nn.") and rest.count(".") == 1:
            return nn_class(ev, qual, rest[3:], expr)
        if rest.startswith("nn.") and rest.endswith(".from_pretrained") and rest.count(".") == 2:
            return nn_pretrained(ev, rest[3:-16], expr)
        if rest.startswith(("nn.modules.", "nn.parameter.")):
            return nn_class(ev, qual, rest.split(".")[-1], expr)
        if rest.startswith("optim.") and rest.count(".") == 1 and rest[6:7].isupper():
            return Fact(kind=OPTIMIZER, qual=qual, updates=updated_modules(_optimizer_params(expr)))
        if rest == "device":
            return torch_device(ev, expr)
        if rest == "accelerator.current_accelerator":
            return current_accelerator()
        if rest.startswith("linalg."):
            return _linalg(ev, rest[7:], expr)
        if rest.startswith("fft."):
            return fft_call(ev, rest[4:], expr)
        if rest.startswith("functional."):
            rest = rest[11:]
        if rest == "sparse.mm":
            rest = "mm"  # a sparse or dense matrix times a dense one: a dense result, as `torch.mm` gives
        if rest in TORCH_BOOL_FUNCTIONS:
            return Fact(kind=BOOL)
        if rest.startswith("utils.data.") and rest.count(".") == 2:
            return data_call(ev, rest[11:], expr)
        if "." in rest:
            return None
        return _torch_function(ev, rest, expr)
    if qual.startswith("math.") and qual[5:] in _MATH_RESULTS:
        return Fact(kind=_MATH_RESULTS[qual[5:]])
    if qual in ("shapecheck.einsum", "einops.einsum"):
        return einsum_call(ev, expr, "named" if qual == "einops.einsum" else "auto", qual == "einops.einsum")
    if qual.startswith("torchvision.models.") and qual.count(".") == 2 \
            and not qual[19:].startswith(("get_", "list_")):
        return Fact(kind=MODULE, qual=qual, device=None if model.default_device_set else CPU,
                    trainable=None if model.params_frozen else True)
    if qual.startswith("torchvision.datasets."):
        return torchvision_dataset(ev, qual)
    if qual.startswith("einops.") and qual[7:] in ("rearrange", "reduce", "repeat"):
        args = CallArgs(expr)
        x = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        shape = rearrange_shape(ev, expr, x) if qual == "einops.rearrange" and x.kind in (TENSOR, None) else None
        if x.kind == TENSOR:
            # a pure reordering is a permuted view of x: the result's order is unknown, never plain
            return unknown_order(Fact(kind=TENSOR, device=x.device, grad=grad_of(ev, [x], True),
                                      dtype_kind=x.dtype_kind, shape=shape))
        return unknown_order(Fact(shape=shape))
    return None


def _torch_function(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    if name in PYTHON_BOOL_RESULTS:
        return Fact(kind=BOOL)
    args = CallArgs(expr)
    if name in ALL_FACTORIES:
        return factory(ev, name, args)
    if name in LEGACY_TENSOR_CLASSES:
        return legacy_tensor(ev, name, args)
    if name in ("set_default_device",):
        return UNKNOWN
    if name == "einsum":
        return einsum_call(ev, expr, "letters", False)
    if name in CONCAT_FUNCTIONS:
        return _cat(ev, name, args)
    if name == "where":
        if len(args.pos) == 3:
            ops = [ev.fact(a) for a in args.pos]
            out = elementwise(ev, ops[1:] + [ops[0]], op_name="where")
            return out.with_(dtype_kind=O.promote([
                ops[1].dtype_kind if ops[1].kind == TENSOR else py_dtype(ops[1]),
                ops[2].dtype_kind if ops[2].kind == TENSOR else py_dtype(ops[2])]))
        return Fact(kind=TENSOR, grad=NO_GRAD, dtype_kind=DtypeKind.INT)
    if name in INT64_RESULT_FUNCTIONS and "weights" not in args.kw \
            and len(args.pos) <= (2 if name != "bincount" else 1):
        first = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        return Fact(kind=TENSOR, grad=NO_GRAD, dtype_kind=DtypeKind.INT,
                    device=first.device if first.kind == TENSOR else None,
                    shape=Shape((None,)) if name == "bincount" else None)
    if name in MATRIX_PRODUCTS or name in ("inner", "vdot"):
        if len(args.pos) >= 2:
            return matmul(ev, ev.fact(args.pos[0]), ev.fact(args.pos[1]))
        return None
    if not args.pos:
        return None
    first = ev.fact(args.pos[0])
    if first.kind not in (TENSOR, None):
        return None
    if first.kind is None and first.elems is None and first.value is None and name not in ("where",):
        first = first.with_(kind=TENSOR)  # torch functions take a tensor first: the argument is one
    if name in ELEMENTWISE_BINARY or name in SHAPE_KEEPING_UNARY or name in INPLACE_FILLING_METHODS \
            or name in REDUCTIONS or name in VALUES_INDICES_ALWAYS or name in MIN_MAX_PAIR_OPS \
            or name in REDUCTION_PAIR_FUNCTIONS \
            or name in _FORWARDED_METHODS:
        return method_call(ev, first, name, expr, func_form=True, recv_expr=args.pos[0])
    return None


def _linalg(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    args = CallArgs(expr)
    if name in ("inv", "pinv") and args.pos:
        x = ev.fact(args.pos[0])
        if x.kind == TENSOR:
            return O.plain_tensor(x.shape, device=x.device, grad=grad_of(ev, [x], True),
                                  dtype_kind=x.dtype_kind)
    if name in ("norm", "vector_norm"):
        return linalg_norm(ev, name, expr) or Fact(kind=TENSOR)
    if name == "matrix_norm":
        return Fact(kind=TENSOR)
    return None


def _functional(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    args = CallArgs(expr)
    if not args.pos:
        return None
    x = ev.fact(args.pos[0])
    known = name in SHAPE_KEEPING_UNARY or name in FUNCTIONAL_LOSSES or name in FUNCTIONAL_RANK_KEEPING \
        or name in FUNCTIONAL_RANK_ADDING or name == "gumbel_softmax"
    if x.kind is None and known and x.elems is None and x.value is None:
        x = x.with_(kind=TENSOR)  # these functions take a tensor: the argument is one
    if x.kind not in (TENSOR,) and not (x.kind is None and x.perm is not None):
        return None
    if name in SHAPE_KEEPING_UNARY or name in ("normalize", "gumbel_softmax"):
        return x.with_(kind=x.kind, reduction=None, grad=grad_of(ev, [x], True), is_scalar_cpu=False)
    if name == "linear":
        weight = args.get(1, "weight")
        w = ev.fact(weight) if weight is not None else UNKNOWN
        shape = _same_rank(x.shape)
        if x.shape is not None and x.shape.rank and w.shape is not None and w.shape.rank == 2:
            shape = Shape(x.shape.dims[:-1] + (w.shape.dims[0],))
        elif x.shape is not None and x.shape.rank:
            shape = Shape(x.shape.dims[:-1] + (None,))
        return O.plain_tensor(shape, device=x.device if w.device == x.device else None,
                              grad=grad_of(ev, [x, w], True), dtype_kind=x.dtype_kind)
    if name in FUNCTIONAL_LOSSES:
        ops = [ev.fact(a) for a in args.pos[:2]]
        return O.plain_tensor(_loss_shape(ev, name, args), device=x.device, grad=grad_of(ev, ops, True),
                              dtype_kind=DtypeKind.FLOAT)
    if "return_indices" in args.kw:
        return None  # a (values, indices) pair when true
    if name in FUNCTIONAL_RANK_KEEPING:
        shape = pool_output(ev, name, args, x.shape) or conv_function_output(ev, name, args, x.shape) \
            or kept_shape(x.shape, FUNCTIONAL_KEPT_DIMS.get(name), name)
        return input_order_layout(name, x, O.plain_tensor(shape, device=x.device, grad=grad_of(ev, [x], True),
                                                          dtype_kind=x.dtype_kind).with_(layout=None, strides=None))
    if name in FUNCTIONAL_RANK_ADDING and x.shape is not None and x.shape.rest_at is None:
        shape = Shape(x.shape.dims + (None,))
        return O.plain_tensor(shape, device=x.device, grad=grad_of(ev, [x], True) if name == "embedding" else NO_GRAD)
    return Fact(kind=TENSOR, device=x.device, grad=grad_of(ev, [x], True))


#: losses with more tensor arguments than the prediction and the target (``weight``, a third
#: input): how many positional arguments leave the default reduction in place
_LOSS_POSITIONALS = {
    "nll_loss": 3, "cross_entropy": 3, "binary_cross_entropy": 3, "binary_cross_entropy_with_logits": 3,
    "triplet_margin_loss": 3, "margin_ranking_loss": 3, "cosine_embedding_loss": 3, "gaussian_nll_loss": 3,
    "ctc_loss": 4, "triplet_margin_with_distance_loss": 3,
}


def _loss_shape(ev: Eval, name: str, args: CallArgs) -> Optional[Shape]:
    """The shape of ``F.<loss>(...)``: 0-dim with the default reduction (or ``"mean"``/``"sum"``),
    else unknown."""
    if "reduce" in args.kw or "size_average" in args.kw or len(args.pos) > _LOSS_POSITIONALS.get(name, 2):
        return None
    red = args.kw.get("reduction")
    if red is None or ev.fact(red).value in ("mean", "sum"):
        return Shape(())
    return None


def _same_rank(shape: Optional[Shape]) -> Optional[Shape]:
    """A shape of the same rank (or rank bound) as ``shape``, every size unknown."""
    if shape is None:
        return None
    if shape.rest_at is None:
        return Shape((None,) * len(shape.dims))
    return Shape((None,) * len(shape.dims), rest_at=shape.rest_at)


def _cat(ev: Eval, name: str, args: CallArgs) -> Fact:
    seq = args.get(0, "tensors")
    if seq is None:
        return Fact(kind=TENSOR)
    dim_expr = args.get(1, "dim")
    if dim_expr is None:
        dim_expr = args.kw.get("axis")
    axis = ev.fact(dim_expr).value if dim_expr is not None else 0
    facts = comprehension_elements(ev, seq) or unchanged_elements(ev, seq)
    if facts is None:
        if not isinstance(seq, (cst.List, cst.Tuple)) or any(type(e) is cst.StarredElement for e in seq.elements):
            joined = name in ("cat", "concat", "concatenate", "stack") and type(axis) is int
            return Fact(kind=TENSOR, shape=bounded_join_shape(axis) if joined else None)
        facts = [ev.fact(e.value) for e in seq.elements]
    tensors = [f for f in facts if f.kind == TENSOR]
    fields: dict[str, Any] = {
        "kind": TENSOR, "device": device_of(tensors, len(tensors) != len(facts)), "grad": grad_of(ev, facts, True),
        "dtype_kind": O.promote([f.dtype_kind for f in facts]) if len(tensors) == len(facts) else None}
    if name not in ("cat", "concat", "concatenate", "stack") or not isinstance(axis, int) or not facts:
        return Fact(**fields)
    shapes = [f.shape for f in facts]
    if axis == -1 and name != "stack" and len(tensors) == len(facts) \
            and all(s is not None and s.rest_at == 0 and s.dims for s in shapes):
        last = _sum_dims([s.dims[-1] for s in shapes if s is not None])  # `(..., 64)` and `(..., 32)`: `(..., 96)`
        fields.pop("kind")
        return O.plain_tensor(Shape((last,), rest_at=0), **fields)
    if any(s is None or s.rank is None for s in shapes):
        bound = bounded_join_shape(axis, len(facts) if name == "stack" else None)
        return Fact(**fields, shape=bound if len(tensors) == len(facts) else None)
    known: list[Shape] = [s for s in shapes if s is not None]
    rank = known[0].rank
    if rank is None or any(s.rank != rank for s in known):
        return Fact(**fields)
    dims: list[Dim]
    if name == "stack":
        a = O.norm_axis(axis, rank + 1)
        if a is None:
            return Fact(**fields)
        dims = list(known[0].dims)
        for s in known[1:]:
            dims = [d if d == e else None for d, e in zip(dims, s.dims)]
        dims.insert(a, len(known))
    else:
        a = O.norm_axis(axis, rank)
        if a is None:
            return Fact(**fields)
        dims = []
        for i in range(rank):
            col = [s.dims[i] for s in known]
            if i == a:
                dims.append(_sum_dims(col))
            else:
                dims.append(col[0] if all(c == col[0] for c in col) else None)
    fields.pop("kind")
    return O.plain_tensor(Shape(tuple(dims)), **fields)


def _sum_dims(col: Sequence[Dim]) -> Dim:
    total = 0
    for c in col:
        if not isinstance(c, int):
            return None
        total += c
    return total


def einsum_call(ev: Eval, expr: cst.Call, form: str, spec_last: bool) -> Fact:
    """``torch.einsum(spec, *operands)``, ``einops.einsum(*operands, spec)``, ``shapecheck.einsum``."""
    from shapecheck.einsum_parser import parse
    from shapecheck.errors import ShapeCheckError

    args = CallArgs(expr)
    if args.starred or not args.pos:
        return unknown_order(Fact(kind=TENSOR))
    spec_node = args.pos[-1] if spec_last else args.pos[0]
    operands = args.pos[:-1] if spec_last else args.pos[1:]
    if len(operands) == 1:
        only = operands[0]
        if isinstance(only, (cst.List, cst.Tuple)):
            operands = [e.value for e in only.elements]
    facts = [ev.fact(o) for o in operands]
    fields: dict[str, Any] = {
        "kind": TENSOR, "device": device_of(facts, any(f.kind != TENSOR for f in facts)),
        "grad": grad_of(ev, facts, True), "dtype_kind": O.promote([f.dtype_kind for f in facts])}
    spec = ev.fact(spec_node).value
    if not isinstance(spec, str):
        return unknown_order(Fact(**fields))
    try:
        parsed = parse(spec, form)
        shapes = [f.shape if f.shape is not None else Shape.unknown() for f in facts]
        shape = parsed.output_shape(*shapes)
    except (ShapeCheckError, ValueError, RuntimeError):
        return unknown_order(Fact(**fields))
    out = Fact(shape=shape if shape.rank is not None else None, **fields)
    # shapecheck.einsum ("auto") lays its result out its own way: its order stays unknown
    return einsum_layout(parsed, facts, out) if form != "auto" else unknown_order(out)
