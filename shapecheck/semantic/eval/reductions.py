"""Reductions (``sum``, ``mean``, ``max``, norms...), the ops that return a ``(values, indices)``
pair, and the provenance a reduction without ``keepdim`` records for the rules.

Every spelling reads the same: method or ``torch.*`` function, positional or keyword dims, a dim
held in a variable, or a dim left at the default value of a parameter of the function
(``def f(x, dim=-1)``: the provenance says so, and SC201 names the exception).
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.eval.rank_bounds import bounded_reduce_shape
from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.eval.dim_choices import dim_choices
from shapecheck.semantic.eval.elementwise import elementwise
from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import (
    CPU, FLOAT, INT, NO_GRAD, TENSOR, TUPLE, DtypeKind, Fact, Reduction,
)
from shapecheck.semantic.syntax import (
    CallArgs, all_params, dotted_name, int_literal, is_number,
)
from shapecheck.semantic.torch_api import (
    ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, MIN_MAX_PAIR_OPS, NO_GRAD_RESULT_OPS, REDUCING_PAIR_OPS,
    REDUCTION_PAIR_FUNCTIONS, REDUCTIONS, REDUCTIONS_DIM_SECOND, VALUES_INDICES_ALWAYS, VALUES_INDICES_WITH_DIM,
)
from shapecheck.shapes import Shape

#: the axes a dim argument names, and the parameter whose default gave them (``None``: written)
Axes = tuple[Optional[list[int]], Optional[str]]

# methods that keep their receiver's shape whatever their arguments: a reduction of their result
# reduces their receiver's shape (the rule's provenance looks through them)
_SAME_SHAPE_METHODS = frozenset({"float", "double", "half", "bfloat16", "detach", "clone", "contiguous", "to",
                                 "cpu", "cuda", "type_as"})


def _dim_axes(ev: Eval, dim_expr: cst.BaseExpression) -> Optional[Axes]:
    """The axes of a dim argument (an int, a tuple or list of ints), or ``None`` when unknown."""
    df = ev.fact(dim_expr)
    if isinstance(df.value, int) and not isinstance(df.value, bool):
        return [df.value], None
    if isinstance(df.value, tuple) and df.value and all(type(v) is int for v in df.value):
        return list(df.value), None
    if isinstance(dim_expr, (cst.Tuple, cst.List)) and dim_expr.elements:
        vals = [ev.fact(e.value).value for e in dim_expr.elements if type(e) is not cst.StarredElement]
        if len(vals) == len(dim_expr.elements) and all(type(v) is int for v in vals):
            return list(vals), None
        return None
    if type(dim_expr) is cst.Name and df.kind in (None, INT) and df.value is None:
        default = parameter_default(ev, dim_expr.value)
        if default is not None:
            return [default], dim_expr.value
    return None


def parameter_default(ev: Eval, name: str) -> Optional[int]:
    """The int literal default of parameter ``name`` of the function being analysed, when the
    function never binds ``name`` again (it holds what the call passed)."""
    func = ev.model.scopes.analysed_function()
    if func is None:
        return None
    for p in all_params(func.params):
        if p.name.value == name and p.default is not None:
            default = int_literal(p.default)
            if default is None or name in rebound_names(func):
                return None
            return default
    return None


@method(*REDUCTIONS)
def reduce(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """Reductions: shape with or without keepdim, the (values, indices) pair, provenance."""
    if name in REDUCTIONS_DIM_SECOND:
        dim_expr = args.get(1, "dim")
        keep_expr = args.get(2, "keepdim")
    else:
        dim_expr = args.get(0, "dim")
        if dim_expr is None:
            dim_expr = args.kw.get("axis")
        keep_expr = args.get(1, "keepdim")
        if name in ("std", "var") and len(args.pos) >= 2:
            keep_expr = args.get(2, "keepdim")
            if len(args.pos) == 2:
                keep_expr = args.kw.get("keepdim")
    if keep_expr is None:
        keep_expr = args.kw.get("keepdims")  # the numpy spelling, which torch accepts too
    if dim_expr is not None and name in ("max", "min"):
        df = ev.fact(dim_expr)
        if df.kind == TENSOR:
            return elementwise(ev, [x, df], op_name="maximum")
        if df.kind is None and df.value is None and not isinstance(dim_expr, (cst.Tuple, cst.List)) \
                and "dim" not in args.kw and parameter_default(ev, dotted_name(dim_expr) or "") is None:
            return Fact(kind=None)  # `max(x, y)` of two tensors, or a reduction: unknown
    return reduce_over(ev, x, name, dim_expr, keep_expr)


def reduce_over(ev: Eval, x: Fact, name: str, dim_expr: Optional[cst.BaseExpression],
                keep_expr: Optional[cst.BaseExpression], default_dim: Optional[int] = None) -> Fact:
    """``x`` reduced by ``name`` over the dims ``dim_expr`` names (``None``: ``default_dim``, or
    every dim), keeping them as size 1 when ``keep_expr`` is true."""
    keepdim: Optional[bool] = False
    if keep_expr is not None:
        v = ev.fact(keep_expr).value
        keepdim = v if isinstance(v, bool) else None
    axes: Optional[list[int]] = None
    default_of: Optional[str] = None
    if dim_expr is not None:
        read = _dim_axes(ev, dim_expr)
        if read is None:
            return _chosen_axes(ev, x, name, dim_expr, keepdim)
        axes, default_of = read
    elif default_dim is not None:
        axes = [default_dim]
    if keepdim is None:
        return _reduced(ev, x, name, None, None, axes_known=False)
    return _reduced(ev, x, name, axes, keepdim, axes_known=True, default_of=default_of)


def _chosen_axes(ev: Eval, x: Fact, name: str, dim_expr: cst.BaseExpression, keepdim: Optional[bool]) -> Fact:
    """A reduction whose dim is a local or ``self.<attr>`` set only from int literals
    (:mod:`~shapecheck.semantic.eval.dim_choices`): one value reads as written; several give an
    unknown shape and a provenance that lists each of them."""
    choices = dim_choices(ev, dim_expr) if keepdim is not None else None
    if choices is None:
        return _reduced(ev, x, name, None, None, axes_known=False)
    if len(choices) == 1:
        return _reduced(ev, x, name, list(choices[0]), keepdim, axes_known=True)
    out = _reduced(ev, x, name, None, None, axes_known=False)
    if keepdim is False and out.kind != TUPLE:
        out = out.with_(reduction=Reduction(x, None, choices[0], None, None, tuple(choices)))
    return out


def _reduced(ev: Eval, x: Fact, name: str, axes: Optional[list[int]], keepdim: Optional[bool],
             axes_known: bool, default_of: Optional[str] = None) -> Fact:
    dtype = x.dtype_kind
    if name in ("argmax", "argmin", "count_nonzero"):
        dtype = DtypeKind.INT
    elif name in ("any", "all"):
        dtype = DtypeKind.BOOL
    elif name in ("mean", "std", "var", "norm", "logsumexp", "nanmean", "std_mean", "var_mean") \
            and dtype in (DtypeKind.INT, DtypeKind.BOOL):
        dtype = DtypeKind.FLOAT
    elif name in ("sum", "prod", "nansum") and dtype == DtypeKind.BOOL:
        dtype = DtypeKind.INT
    differentiable = name not in NO_GRAD_RESULT_OPS
    shape = O.reduce_shape(x.shape, axes, bool(keepdim)) if axes_known else None
    if shape is None and axes and keepdim is not None and x.kind == TENSOR:
        shape = bounded_reduce_shape(x.shape, axes, keepdim, name)  # the rank bound the written axes prove
    fields: dict[str, Any] = {"device": x.device if x.kind == TENSOR else None,
                              "grad": grad_of(ev, [x], differentiable) if x.kind == TENSOR else None,
                              "dtype_kind": dtype}
    out = O.plain_tensor(shape, **fields)
    if shape is not None and shape.rank is not None and shape.rank > 1:
        out = out.with_(layout=None, strides=None)
    if shape is None or shape.rank is None:
        out = out.with_(layout=None)
    out = out.with_(is_scalar_cpu=shape is not None and shape.rank == 0 and fields["device"] == CPU)
    if x.kind is None:
        out = out.with_(kind=None)
    if axes_known and axes is not None and keepdim is False:
        out = out.with_(reduction=Reduction(x, None, tuple(axes), None, default_of))
    if name in VALUES_INDICES_WITH_DIM and axes is not None or name in REDUCING_PAIR_OPS:
        values = out.with_(dtype_kind=x.dtype_kind)
        indices = out.with_(dtype_kind=DtypeKind.INT, grad=NO_GRAD if x.kind == TENSOR else None)
        return Fact(kind=TUPLE, shape=shape, elems=(values, indices))
    if name in MIN_MAX_PAIR_OPS or name in REDUCTION_PAIR_FUNCTIONS:
        return Fact(kind=TUPLE, shape=shape, elems=(out, out))
    return out


@method(*VALUES_INDICES_ALWAYS, *MIN_MAX_PAIR_OPS, *REDUCTION_PAIR_FUNCTIONS)
def pair(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """sort/topk/kthvalue/mode...: always a (values, indices) pair; aminmax: a (min, max) pair;
    std_mean/var_mean: a (std or var, mean) pair."""
    if name in REDUCING_PAIR_OPS:  # mode(dim=-1, keepdim), kthvalue(k, dim=-1, keepdim)
        first = 1 if name == "kthvalue" else 0
        dim_expr = args.get(first, "dim")
        out = reduce_over(ev, x, name, dim_expr, args.get(first + 1, "keepdim"), default_dim=-1)
        if dim_expr is None and x.rank is None and out.elems:
            # no dim written, rank unknown: the code is most likely about a 1-D tensor
            out = out.with_(elems=tuple(e.with_(reduction=None) for e in out.elems))
        return out
    if name in MIN_MAX_PAIR_OPS:  # aminmax(*, dim=None, keepdim=False)
        return reduce_over(ev, x, name, args.kw.get("dim"), args.kw.get("keepdim"))
    if name in REDUCTION_PAIR_FUNCTIONS:  # std_mean(x, dim, unbiased, keepdim) or (x, dim, *, keepdim)
        keep = args.get(2, "keepdim") if len(args.pos) >= 3 else args.kw.get("keepdim")
        return reduce_over(ev, x, name, args.get(0, "dim"), keep)
    values = Fact(kind=TENSOR if x.kind == TENSOR else None, device=x.device, dtype_kind=x.dtype_kind,
                  grad=grad_of(ev, [x], True) if x.kind == TENSOR else None)
    indices = values.with_(dtype_kind=DtypeKind.INT, grad=NO_GRAD if x.kind == TENSOR else None)
    shape = x.shape if name in ("sort", "cummax", "cummin") else _topk_shape(ev, x.shape, args) \
        if name == "topk" else None
    if shape is not None:
        values = values.with_(shape=shape)
        indices = indices.with_(shape=shape)
    return Fact(kind=TUPLE, elems=(values, indices))


def _topk_shape(ev: Eval, shape: Optional[Shape], args: CallArgs) -> Optional[Shape]:
    """``topk(k, dim=-1)``: the shape with ``k`` in place of the dim's size."""
    k_expr, dim_expr = args.get(0, "k"), args.get(1, "dim")
    k = ev.fact(k_expr).value if k_expr is not None else None
    dim = ev.fact(dim_expr).value if dim_expr is not None else -1
    if shape is None or shape.rank is None:  # the input's rank bound and the dim's, the sizes unknown
        if shape is not None and shape.rest_at == 0:
            return Shape((None,) * len(shape.dims), rest_at=0)
        least = max(len(shape.dims) if shape is not None else 0, dim + 1 if type(dim) is int else 0)
        return Shape((None,) * least, rest_at=least) if least else None
    if type(k) is not int:
        k = None  # the rank is kept whatever k is
    if type(dim) is not int:
        return None
    axis = O.norm_axis(dim, shape.rank)
    if axis is None:
        return None
    return Shape(tuple(k if i == axis else d for i, d in enumerate(shape.dims)))


def linalg_norm(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    """``torch.linalg.norm(x, ord=None, dim=None, keepdim=False)`` and ``vector_norm`` (same
    arguments): a vector norm over ``dim``. Without ``dim`` the result is 0-dim."""
    args = CallArgs(expr)
    if args.starred or not args.pos:
        return None
    x = ev.fact(args.pos[0])
    if x.kind not in (TENSOR, None):
        return None
    dim_expr = args.get(2, "dim")
    if name == "norm" and dim_expr is not None and x.rank is None:
        read = _dim_axes(ev, dim_expr)
        if read is not None and read[0] is not None and len(read[0]) == 2:
            return Fact(kind=TENSOR)  # a matrix norm over two dims of a tensor of unknown rank
    out = reduce_over(ev, x, "norm", dim_expr, args.get(3, "keepdim"))
    out = out.with_(kind=TENSOR, dtype_kind=DtypeKind.FLOAT if out.dtype_kind != DtypeKind.COMPLEX else None)
    return name_reduction(out, args.pos[0], expr, ev)


def _scalar_like(ev: Eval, expr: cst.BaseExpression) -> bool:
    """A Python number: an operand that keeps the other operand's shape."""
    return is_number(expr) or ev.fact(expr).kind in (INT, FLOAT)


def shape_root(ev: Eval, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The named tensor whose shape ``expr`` has, looking through ops that keep it: ``x`` for
    ``x ** 2``, ``x * x``, ``-x``, ``x.abs()``, ``torch.exp(x)``, ``x.float()``; ``expr`` itself
    when there is none."""
    cur = expr
    while True:
        nxt: Optional[cst.BaseExpression] = None
        if type(cur) is cst.BinaryOperation and type(cur.operator) is not cst.MatrixMultiply:
            left, right = cur.left, cur.right
            if _scalar_like(ev, right):
                nxt = left
            elif _scalar_like(ev, left):
                nxt = right
            elif dotted_name(left) is not None and dotted_name(left) == dotted_name(right):
                nxt = left
        elif type(cur) is cst.UnaryOperation and type(cur.operator) is cst.Minus:
            nxt = cur.expression
        elif type(cur) is cst.Call:
            nxt = _same_shape_operand(ev, cur)
        if nxt is None:
            return cur
        cur = nxt


def _same_shape_operand(ev: Eval, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The tensor operand of a call whose result has its shape (``x.abs()``, ``x.pow(2)``,
    ``torch.exp(x)``, ``F.relu(x)``), else ``None``."""
    args = CallArgs(call)
    if args.starred:
        return None
    qual = ev.model.imports.resolve(call.func)
    if qual is not None:
        short = qual.rsplit(".", 1)[-1]
        if not qual.startswith(("torch.", "torch.nn.functional.")) or not args.pos:
            return None
        rest = args.pos[1:]
        operand = args.pos[0]
    elif type(call.func) is cst.Attribute:
        short = call.func.attr.value
        rest = args.pos
        operand = call.func.value
    else:
        return None
    if short in ELEMENTWISE_UNARY and all(_scalar_like(ev, a) for a in rest):
        return operand
    if short in ELEMENTWISE_BINARY and len(rest) == 1 and _scalar_like(ev, rest[0]) and not args.kw:
        return operand
    if short in _SAME_SHAPE_METHODS and qual is None:
        return operand
    return None


def name_reduction(out: Fact, recv_expr: Optional[cst.BaseExpression], call: cst.Call,
                   ev: Optional[Eval] = None) -> Fact:
    """Fill in the source name and the call node of a reduction's provenance. With ``ev``, the
    source is the fact bound to the name, and a reduction of an op that keeps the shape of a
    named tensor (``(x ** 2).sum(1)``) names that tensor (and its fact) as its source."""
    name = dotted_name(recv_expr) if recv_expr is not None else None
    root_fact: Optional[Fact] = None
    if recv_expr is not None and ev is not None:
        root = shape_root(ev, recv_expr) if name is None else recv_expr
        root_name = dotted_name(root)
        if root_name is not None:
            # the fact bound to the name (the handler may have seen a copy refined by evidence)
            root_fact = ev.fact(root)
            if root_fact.kind not in (TENSOR, None):
                root_fact = None
            else:
                name = root_name

    def fill(f: Fact) -> Fact:
        """One fact with the reduction's name and node filled in."""
        r = f.reduction
        if r is None:
            return f
        return f.with_(reduction=Reduction(root_fact if root_fact is not None else r.source, name, r.axes, call,
                                           r.default_of, r.alternatives))

    if out.kind == TUPLE and out.elems or out.maybe_pair and out.elems:
        return out.with_(elems=tuple(fill(e) for e in out.elems or ()))
    return fill(out)
