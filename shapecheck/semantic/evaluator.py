"""The expression evaluator of the inference: the facts of one expression, given the bindings.

:class:`Evaluator` is the half of the analysis that looks at expressions; :mod:`shapecheck.semantic.interpreter`
drives it statement by statement. Facts are computed lazily and memoised per node for the
statement being analysed.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.facts import (
    BOOL, CONTIGUOUS, CPU, CUDA, DEVICE, FLOAT, INT, LEAF_REQUIRES_GRAD, MAYBE_CUDA, MODULE, MPS,
    NO_GRAD, NON_LEAF, OPTIMIZER, SIZE, STR, TENSOR, TUPLE, UNKNOWN, Fact, Reduction, join,
)
from shapecheck.shapes import Dim, Shape

REDUCTIONS = {
    "sum", "mean", "prod", "std", "var", "norm", "logsumexp", "amax", "amin", "max", "min",
    "median", "nansum", "nanmean", "any", "all", "argmax", "argmin", "count_nonzero", "nanmedian",
}
#: reductions that return a (values, indices) pair when given a dim
PAIR_WITH_DIM = {"max", "min", "median", "nanmedian", "mode"}
#: ops that always return a (values, indices) pair
ALWAYS_PAIR = {"sort", "topk", "kthvalue", "mode", "cummax", "cummin", "aminmax"}
#: reductions whose first positional argument is not the dim
_DIM_NOT_FIRST = {"norm"}

ELEMENTWISE_UNARY = {
    "abs", "neg", "exp", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh",
    "relu", "gelu", "silu", "sin", "cos", "tan", "floor", "ceil", "round", "sign", "clamp", "clip",
    "reciprocal", "square", "erf", "erfc", "exp2", "expm1", "logical_not", "bitwise_not",
    "nan_to_num", "softmax", "log_softmax", "trunc", "frac", "sinh", "cosh", "asin", "acos",
    "atan", "clamp_min", "clamp_max", "masked_fill", "leaky_relu", "elu", "softplus", "mish",
    "hardtanh", "relu6", "selu", "celu", "hardswish", "hardsigmoid", "softsign", "logsigmoid",
    "dropout", "alpha_dropout", "silu", "tanhshrink", "cumsum", "cumprod", "isnan", "isinf",
    "isfinite", "sgn", "deg2rad", "rad2deg", "positive", "conj", "fill_", "zero_", "normal_",
    "uniform_", "bernoulli_", "glu_",
}
ELEMENTWISE_BINARY = {
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
    "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2", "hypot", "subtract",
    "multiply", "divide", "greater", "less", "not_equal", "fmax", "fmin", "xlogy",
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "not_equal",
               "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
               "logical_xor"}
#: ops whose result has no gradient (integer or boolean results, or detached)
NON_DIFFERENTIABLE = COMPARISONS | {"argmax", "argmin", "argsort", "sign", "floor", "ceil",
                                    "round", "trunc", "count_nonzero", "any", "all", "nonzero"}

FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace",
             "logspace", "eye", "tensor", "as_tensor", "scalar_tensor", "randperm", "from_numpy",
             "empty_strided", "normal", "zeros_like", "ones_like", "empty_like", "full_like",
             "rand_like", "randn_like", "randint_like", "tril_indices", "triu_indices"}
_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
         "randint_like"}
_MOVE_METHODS = {"transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis"}

#: torch functions and Tensor methods that return a Python ``bool``, not a tensor
PYTHON_BOOL_RESULTS = frozenset(
    {"equal", "allclose", "is_tensor", "is_storage", "is_floating_point", "is_complex",
     "is_nonzero", "is_same_size", "is_contiguous", "is_pinned", "is_shared", "is_signed",
     "is_inference", "is_set_to", "is_conj", "is_neg"}
)
#: other ``torch.*`` functions (dotted after ``torch.``) that return a Python ``bool``
_TORCH_BOOL_FUNCTIONS = frozenset(
    {"is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled",
     "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
     "is_anomaly_enabled", "is_warn_always_enabled", "cuda.is_available", "cuda.is_initialized",
     "backends.mps.is_available", "backends.cudnn.is_available", "distributed.is_available",
     "distributed.is_initialized", "jit.is_scripting", "jit.is_tracing", "compiler.is_compiling",
     "onnx.is_in_onnx_export"}
)
#: Tensor attributes that are Python bools
_BOOL_ATTRS = frozenset(
    {"is_cuda", "requires_grad", "is_leaf", "is_sparse", "is_quantized", "is_meta", "is_cpu",
     "is_mps", "is_nested", "is_xpu", "is_mkldnn"}
)

MODULE_METHODS_RETURNING_SELF = {"to", "cuda", "cpu", "train", "eval", "float", "double", "half",
                                 "bfloat16", "requires_grad_", "type", "apply", "share_memory",
                                 "to_empty", "zero_grad"}


def dotted_name(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def int_literal(expr: cst.BaseExpression) -> Optional[int]:
    """The value of an int literal, also negative (``-1``), else ``None``."""
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return int(expr.value.replace("_", ""), 0)
    if (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
    ):
        v = int_literal(expr.expression)
        return -v if v is not None else None
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


class Evaluator:
    """Computes facts of expressions against ``self.env`` (name -> Fact).

    Subclasses provide ``env``, ``imports`` (an import table with ``resolve``), ``memo``,
    ``grad_enabled``, ``classes`` (local class name -> is-nn.Module or None), ``signatures``
    (local function name -> ``(params, return shape)``), ``class_attrs`` (local class name ->
    the ``self.x`` facts its ``__init__`` exports), ``class_moves`` (local classes with a method
    that moves ``self``), ``default_device_set`` (the file changes torch's default device) and
    ``params_frozen`` (the file turns ``requires_grad`` off somewhere).
    """

    env: dict
    memo: dict
    #: exceptions raised inside the evaluator (each made its expression unknown)
    infer_errors: list
    grad_enabled: Optional[bool]
    classes: dict
    signatures: dict
    class_attrs: dict
    class_moves: set
    default_device_set: bool
    params_frozen: bool

    # ------------------------------------------------------------------ entry points
    def fact(self, expr: cst.CSTNode) -> Fact:
        """The facts of ``expr`` at the current point of the analysis."""
        key = id(expr)
        f = self.memo.get(key)
        if f is None:
            handler = _HANDLERS.get(type(expr))
            if handler is None:
                f = UNKNOWN
            else:
                try:
                    f = handler(self, expr)
                except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError,
                        AttributeError) as exc:
                    # an inference gap must never stop the analysis: the value is unknown
                    self.infer_errors.append(exc)
                    f = UNKNOWN
                f = O.without_impossible_sizes(f)
            self.memo[key] = f
        return f

    def qualname(self, expr: cst.BaseExpression) -> Optional[str]:
        """The import-resolved dotted name of ``expr``."""
        return self.imports.resolve(expr)

    # ------------------------------------------------------------------ simple nodes
    def _name(self, expr: cst.Name) -> Fact:
        f = self.env.get(expr.value)
        if f is not None:
            return f
        v = expr.value
        if v == "True" or v == "False":
            return Fact(kind=BOOL, value=(v == "True"))
        return UNKNOWN

    def _integer(self, expr: cst.Integer) -> Fact:
        v = int_literal(expr)
        return Fact(kind=INT, value=v, dim=v)

    def _float(self, expr: cst.Float) -> Fact:
        try:
            return Fact(kind=FLOAT, value=float(expr.value.replace("_", "")))
        except ValueError:
            return Fact(kind=FLOAT)

    def _string(self, expr: cst.SimpleString) -> Fact:
        try:
            value = expr.evaluated_value
        except Exception:
            return Fact(kind=STR)
        if isinstance(value, bytes):
            return UNKNOWN
        dev = _device_string(value)
        if dev is not None:
            return Fact(kind=STR, value=value, device=dev)
        return Fact(kind=STR, value=value)

    def _sequence(self, expr) -> Fact:
        elems = []
        for el in expr.elements:
            if isinstance(el, cst.StarredElement):
                return UNKNOWN
            elems.append(self.fact(el.value))
        values = tuple(e.value for e in elems)
        if all(v is not None for v in values):
            return Fact(value=values, elems=tuple(elems))
        return Fact(elems=tuple(elems))

    def _unary(self, expr: cst.UnaryOperation) -> Fact:
        f = self.fact(expr.expression)
        if isinstance(expr.operator, cst.Not):
            return Fact(kind=BOOL)
        if f.kind in (INT, FLOAT) and f.value is not None and isinstance(expr.operator, cst.Minus):
            v = -f.value
            return f.with_(value=v, dim=v if f.kind == INT else None)
        if f.kind == TENSOR or (f.kind is None and f.shape is not None):
            return f.with_(reduction=None)
        return UNKNOWN

    def _ifexp(self, expr: cst.IfExp) -> Fact:
        a, b = self.fact(expr.body), self.fact(expr.orelse)
        j = join(a, b)
        if a.kind == b.kind == STR and j.device == MAYBE_CUDA:
            return Fact(kind=STR, device=MAYBE_CUDA)
        return j

    # ------------------------------------------------------------------ attributes
    def _attribute(self, expr: cst.Attribute) -> Fact:
        dotted = dotted_name(expr)
        if dotted is not None:
            f = self.env.get(dotted)
            if f is not None:
                return f
        attr = expr.attr.value
        base = self.fact(expr.value)
        kind = base.kind
        if kind == TUPLE:
            if attr == "values" and base.elems:
                return base.elems[0]
            if attr == "indices" and base.elems:
                return base.elems[1]
            return UNKNOWN
        if kind is None and base.qual == "pair" and base.elems:
            if attr == "values":
                return base.elems[0]
            if attr == "indices":
                return base.elems[1]
            return UNKNOWN
        if kind == MODULE:
            return self._module_attr(base, attr)
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
                return Fact(kind=DEVICE, device="same-as:" + dotted[: -len(".device")])
            return UNKNOWN
        if attr == "shape":
            return Fact(kind=SIZE, shape=base.shape)
        if attr == "device":
            dev = base.device
            if dev is None and dotted is not None:
                dev = "same-as:" + dotted[: -len(".device")]
            return Fact(kind=DEVICE, device=dev)
        if attr == "data":
            return base.with_(grad=NO_GRAD, reduction=None)
        if attr == "grad":
            return O.plain_tensor(base.shape, device=base.device, grad=NO_GRAD, dtype_kind=base.dtype_kind)
        if attr in ("real", "imag"):
            return base.with_(dtype_kind="float", layout=None, strides=None, reduction=None)
        if attr in _BOOL_ATTRS:
            return Fact(kind=BOOL)
        if attr == "ndim":
            r = base.rank
            return Fact(kind=INT, value=r, dim=r)
        return UNKNOWN

    def _module_attr(self, module: Fact, attr: str) -> Fact:
        """``model.weight`` of a ``torch.nn`` layer; ``model.<x>`` that ``__init__`` of a class of
        this file assigned (a parameter, a submodule); else unknown."""
        qual = module.qual
        if qual is None:
            return UNKNOWN
        if qual.startswith("torch.nn."):
            if module.params is None or attr not in module.params:
                return UNKNOWN
            grad = {True: LEAF_REQUIRES_GRAD, False: NO_GRAD}.get(module.trainable)
            return Fact(kind=TENSOR, device=module.device, dtype_kind=FLOAT, grad=grad)
        table = self.class_attrs.get(qual)
        f = table.get("self." + attr) if table is not None else None
        if f is None:
            return UNKNOWN
        if f.kind == TENSOR:
            grad = None if self.params_frozen else f.grad
            return f.with_(device=module.device, grad=grad, is_scalar_cpu=False)
        if f.kind == MODULE:
            holds = module_holds(f)
            return f.with_(device=module.device if holds else None,
                           trainable=None if self.params_frozen else f.trainable)
        return f

    # ------------------------------------------------------------------ subscripts
    def _subscript(self, expr: cst.Subscript) -> Fact:
        base = self.fact(expr.value)
        kind = base.kind
        if kind == TUPLE and base.elems and len(expr.slice) == 1:
            i = _index_value(expr.slice[0])
            if i in (0, 1, -1, -2):
                return base.elems[i]
            return UNKNOWN
        if kind == SIZE or (kind is None and base.elems is not None and base.qual != "pair"):
            return self._index_sequence(base, expr)
        if kind != TENSOR and not (kind is None and base.rank is not None):
            return UNKNOWN
        items = []
        for el in expr.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                if s.lower is None and s.upper is None and s.step is None:
                    items.append(("full", None))
                else:
                    items.append(("slice", (self._opt_int(s.lower), self._opt_int(s.upper),
                                            self._opt_int(s.step))))
                continue
            v = s.value
            if isinstance(v, cst.Name) and v.value == "None":
                items.append(("new", None))
                continue
            if isinstance(v, cst.Ellipsis):
                items.append(("ellipsis", None))
                continue
            f = self.fact(v)
            if f.kind == INT:
                items.append(("int", None))
                continue
            return _tensor_result(base, shape=None, layout=None, grad=self._grad_of([base], True))
        out = O.index_fact(base, items)
        if out is None:
            return base.with_(shape=None, layout=None, strides=None, perm=None, reduction=None)
        if out.rank == 0:
            out = out.with_(layout=CONTIGUOUS)
        return out.with_(grad=self._grad_of([base], True), is_scalar_cpu=out.rank == 0 and base.device == CPU)

    def _opt_int(self, expr) -> object:
        if expr is None:
            return None
        f = self.fact(expr)
        if f.kind == INT and isinstance(f.value, int):
            return f.value
        return "?"

    def _index_sequence(self, base: Fact, expr: cst.Subscript) -> Fact:
        if len(expr.slice) != 1:
            return UNKNOWN
        s = expr.slice[0].slice
        if base.kind == SIZE:
            if base.shape is None or base.shape.rank is None:
                if isinstance(s, cst.Index):
                    return Fact(kind=INT)
                return Fact(kind=SIZE)
            dims = base.shape.dims
            if isinstance(s, cst.Index):
                i = _index_value(expr.slice[0])
                if i is None or not -len(dims) <= i < len(dims):
                    return Fact(kind=INT)
                d = dims[i]
                return Fact(kind=INT, dim=d, value=d if isinstance(d, int) else None)
            lo, hi, st = self._opt_int(s.lower), self._opt_int(s.upper), self._opt_int(s.step)
            if "?" in (lo, hi, st):
                return Fact(kind=SIZE)
            return Fact(kind=SIZE, shape=Shape(tuple(dims[slice(lo, hi, st)])))
        elems = base.elems
        if isinstance(s, cst.Index):
            i = _index_value(expr.slice[0])
            if i is not None and -len(elems) <= i < len(elems):
                return elems[i]
        return UNKNOWN

    # ------------------------------------------------------------------ operators
    def _binary(self, expr: cst.BinaryOperation) -> Fact:
        left, right = self.fact(expr.left), self.fact(expr.right)
        op = expr.operator
        if isinstance(op, cst.MatrixMultiply):
            return self._matmul(left, right)
        if left.kind in (INT, FLOAT) and right.kind in (INT, FLOAT):
            return _fold_numbers(op, left, right)
        if left.kind == SIZE and right.kind == SIZE and isinstance(op, cst.Add):
            if left.shape is not None and right.shape is not None and left.shape.rank is not None and right.shape.rank is not None:
                return Fact(kind=SIZE, shape=Shape(left.shape.dims + right.shape.dims))
            return Fact(kind=SIZE)
        if left.kind != TENSOR and right.kind != TENSOR:
            if left.kind is None and right.kind is None and (left.perm is not None or right.perm is not None):
                return self._elementwise([left, right], op_name=None, div=isinstance(op, cst.Divide), keep_kind=False)
            return UNKNOWN
        return self._elementwise([left, right], op_name=None, div=isinstance(op, cst.Divide))

    def _comparison(self, expr: cst.Comparison) -> Fact:
        if len(expr.comparisons) != 1:
            return UNKNOWN
        comp = expr.comparisons[0]
        if not isinstance(comp.operator, (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual,
                                          cst.GreaterThan, cst.GreaterThanEqual)):
            return Fact(kind=BOOL)
        left, right = self.fact(expr.left), self.fact(comp.comparator)
        if left.kind != TENSOR and right.kind != TENSOR:
            if left.kind in (INT, FLOAT, STR, BOOL) and right.kind in (INT, FLOAT, STR, BOOL):
                return Fact(kind=BOOL)
            return UNKNOWN
        return self._elementwise([left, right], op_name="eq")

    def _elementwise(self, operands: Sequence[Fact], op_name: Optional[str], div: bool = False,
                     keep_kind: bool = True) -> Fact:
        """An elementwise op over tensors and Python scalars (broadcast, layout, device, grad)."""
        tensors = [f for f in operands if f.kind == TENSOR or (f.kind is None and f.shape is not None)]
        unknown = [f for f in operands if f.kind is None and f.shape is None]
        shapes = [f.shape for f in tensors]
        if unknown:
            shape = None
        else:
            shape, _err = O.elementwise_shape(shapes)
        layout_src = None
        for f in operands:
            if f.kind in (INT, FLOAT, BOOL):
                continue
            if f.kind is None and f.shape is None:
                break
            if f.rank == 0 and (shape is None or shape.rank != 0):
                continue
            if shape is not None and f.shape == shape:
                layout_src = f
                break
            if shape is None and f.rank is not None and all(
                g.rank is None or g.rank < f.rank or g is f for g in tensors
            ) and not unknown and (f.shape is None or 1 not in f.shape.dims):
                layout_src = f
                break
            break
        fields: dict = {"kind": TENSOR if keep_kind else None, "shape": shape}
        exact = self._exact_elementwise_strides(operands, tensors, shape) if not unknown else None
        if exact is not None:
            fields.update(O.layout_fields(shape, exact))
            if fields["layout"] != CONTIGUOUS and layout_src is not None:
                fields.update(perm=O.compact_perm(layout_src.perm), moved_by=layout_src.moved_by)
        elif layout_src is not None:
            if layout_src.strides is not None and shape is not None and shape.is_fully_known:
                from shapecheck.strides import dense_like
                fields.update(O.layout_fields(shape, dense_like(shape.dims, layout_src.strides)))
                if fields["layout"] != CONTIGUOUS:
                    fields.update(perm=O.compact_perm(layout_src.perm), moved_by=layout_src.moved_by)
            elif layout_src.perm is not None:
                perm = O.compact_perm(layout_src.perm)
                if perm is None:
                    fields.update(layout=None, perm=None, moved_by=None)
                else:
                    fields.update(layout=layout_src.layout, perm=perm, moved_by=layout_src.moved_by)
            else:
                fields.update(layout=layout_src.layout, perm=layout_src.perm, moved_by=layout_src.moved_by)
                if layout_src.layout == CONTIGUOUS and shape is not None and shape.is_fully_known:
                    from shapecheck.strides import contiguous_strides
                    fields["strides"] = contiguous_strides(shape.dims)
        if op_name in COMPARISONS or op_name == "eq":
            dtype = "bool"
        else:
            kinds = [f.dtype_kind if f.kind == TENSOR else _py_dtype(f) for f in operands]
            dtype = O.promote(kinds)
            if div and dtype in ("int", "bool"):
                dtype = "float"
        fields["dtype_kind"] = dtype
        if keep_kind:
            fields["device"] = self._device_of(tensors, len(unknown) > 0)
            differentiable = op_name not in NON_DIFFERENTIABLE and op_name != "eq"
            fields["grad"] = self._grad_of(list(operands), differentiable)
            fields["is_scalar_cpu"] = bool(shape is not None and shape.rank == 0 and fields["device"] == CPU)
        return Fact(**fields)

    @staticmethod
    def _exact_elementwise_strides(operands, tensors, shape) -> Optional[tuple[int, ...]]:
        """TensorIterator's result strides when every operand's strides are known."""
        if shape is None or not shape.is_fully_known or not tensors:
            return None
        from shapecheck.strides import aligned_strides, iterator_strides

        aligned = []
        for f in operands:
            if f.kind in (INT, FLOAT, BOOL):
                continue
            if f.strides is None or f.shape is None or not f.shape.is_fully_known:
                return None
            aligned.append(aligned_strides(shape.dims, f.shape.dims, f.strides))
        return iterator_strides(shape.dims, aligned)

    def _device_of(self, tensors: Sequence[Fact], has_unknown: bool = False) -> Optional[str]:
        """The device of an op's result: that of its non-0-dim operands when they agree."""
        if has_unknown:
            return None
        devices = set()
        scalar_devices = set()
        for f in tensors:
            if f.is_scalar_cpu:
                scalar_devices.add(f.device)
                continue
            devices.add(f.device)
        if not devices:
            devices = scalar_devices
        if len(devices) == 1:
            return next(iter(devices))
        return None

    def _grad_of(self, inputs: Sequence[Fact], differentiable: bool) -> Optional[str]:
        """The grad state of a result computed from ``inputs``."""
        if not differentiable or self.grad_enabled is False:
            return NO_GRAD
        any_unknown = False
        for f in inputs:
            if f.kind in (INT, FLOAT, BOOL, STR):
                continue
            if f.kind == TENSOR and f.grad == NO_GRAD:
                continue
            if f.kind == TENSOR and f.grad in (LEAF_REQUIRES_GRAD, NON_LEAF):
                return NON_LEAF if self.grad_enabled else None
            any_unknown = True
        return None if any_unknown else NO_GRAD

    def _matmul(self, a: Fact, b: Fact) -> Fact:
        if a.kind not in (TENSOR, None) or b.kind not in (TENSOR, None):
            return UNKNOWN
        shape = O.matmul_shape(a.shape, b.shape)
        out = O.plain_tensor(shape)
        return out.with_(
            kind=TENSOR if TENSOR in (a.kind, b.kind) else None,
            device=self._device_of([a, b]) if a.kind == b.kind == TENSOR else None,
            grad=self._grad_of([a, b], True),
            dtype_kind=O.promote([a.dtype_kind, b.dtype_kind]),
        )

    # ------------------------------------------------------------------ calls
    def _call(self, expr: cst.Call) -> Fact:
        func = expr.func
        qual = self.imports.resolve(func)
        if qual is not None:
            handled = self._qualified_call(qual, expr)
            if handled is not None:
                return handled
        if isinstance(func, cst.Attribute):
            bound = self.env.get(dotted_name(func) or "")
            if bound is not None and bound.kind == MODULE:
                return self._module_call(bound, expr)
            recv = self.fact(func.value)
            return self._method_call(recv, func.attr.value, expr, recv_expr=func.value)
        if isinstance(func, cst.Name):
            return self._local_call(func.value, expr)
        if isinstance(func, cst.Call):
            built = self.fact(func)
            if built.kind == MODULE:
                return self._module_call(built, expr)  # `nn.Linear(3, 2)(x)`
        return UNKNOWN

    def _local_call(self, name: str, expr: cst.Call) -> Fact:
        bound = self.env.get(name)
        if bound is not None:
            if bound.kind == MODULE:
                return self._module_call(bound, expr)
            return UNKNOWN
        if name in self.classes:
            if self.classes[name]:
                return self._local_module(name)
            return UNKNOWN
        sig = self.signatures.get(name)
        if sig is not None:
            return self._signature_call(sig, expr)
        if name in ("len", "int"):
            return Fact(kind=INT)
        if name == "float":
            return Fact(kind=FLOAT)
        if name in ("isinstance", "hasattr", "bool", "callable"):
            return Fact(kind=BOOL)
        if name in ("str", "repr"):
            return Fact(kind=STR)
        return UNKNOWN

    def _local_module(self, name: str) -> Fact:
        """An instance of ``name``, an ``nn.Module`` class of this file.

        Its parameters require grad when ``__init__`` assigned one to ``self`` (directly, or as a
        layer); it is on the CPU when it holds one, unless a method of the class moves ``self``
        (``self.cuda()``, ``self.to(...)``) or the file changes the default device.
        """
        holds = False
        trainable = None
        for f in self.class_attrs.get(name, {}).values():
            if f.kind == TENSOR and f.grad == LEAF_REQUIRES_GRAD:
                holds = trainable = True
            elif f.kind == MODULE and module_holds(f):
                holds = True
                if f.trainable:
                    trainable = True
        placed = holds and not self.default_device_set and name not in self.class_moves
        return Fact(kind=MODULE, qual=name, device=CPU if placed else None,
                    trainable=None if self.params_frozen else trainable)

    def _signature_call(self, sig, expr: cst.Call) -> Fact:
        params, ret = sig
        if ret is None:
            return UNKNOWN
        args = CallArgs(expr)
        if args.starred:
            return Fact(kind=TENSOR)
        binding: dict = {}
        for i, (pname, pshape) in enumerate(params):
            if pshape is None:
                continue
            a = args.get(i, pname)
            if a is None:
                continue
            _unify(pshape, self.fact(a).shape, binding)
        return Fact(kind=TENSOR, shape=_substitute(ret, binding))

    def _module_call(self, module: Fact, expr: cst.Call) -> Fact:
        args = CallArgs(expr)
        x = self.fact(args.pos[0]) if args.pos else UNKNOWN
        shape = None
        if module.qual in ("torch.nn.Linear", "torch.nn.LazyLinear") and module.features is not None:
            if x.shape is not None and x.shape.rank is not None and x.shape.rank >= 1:
                shape = Shape(x.shape.dims[:-1] + (module.features[1],))
        elif module.qual is not None and module.qual.startswith("torch.nn.") and module.qual.split(".")[-1] in _SHAPE_KEEPING_MODULES:
            shape = x.shape if x.kind == TENSOR else None
        device = None
        if x.kind == TENSOR and module.params == ():
            device = x.device  # a module without parameters computes on its input's device
        elif x.kind == TENSOR and module.device is not None and x.device == module.device:
            device = module.device
        if self.grad_enabled is False:
            grad = NO_GRAD
        elif module.trainable:
            grad = NON_LEAF if self.grad_enabled else None
        elif module.trainable is False and module.qual is not None and module.qual.startswith("torch.nn."):
            grad = self._grad_of([self.fact(a) for a in args.pos] + [self.fact(a) for a in args.kw.values()],
                                 True) if not args.starred else None
        else:
            grad = None
        return Fact(kind=TENSOR, shape=shape, device=device, grad=grad,
                    layout=CONTIGUOUS if shape is not None and module.qual == "torch.nn.Linear" else None)

    def _qualified_call(self, qual: str, expr: cst.Call) -> Optional[Fact]:
        if qual.startswith("torch."):
            rest = qual[6:]
            if rest.startswith("nn.functional."):
                return self._functional(rest[14:], expr)
            if rest.startswith("nn.") and rest.count(".") == 1:
                return self._nn_class(qual, rest[3:], expr)
            if rest.startswith("nn.modules.") or rest.startswith("nn.parameter."):
                return self._nn_class(qual, rest.split(".")[-1], expr)
            if rest.startswith("optim.") and rest.count(".") == 1 and rest[6:7].isupper():
                return Fact(kind=OPTIMIZER, qual=qual)
            if rest == "device":
                return self._torch_device(expr)
            if rest.startswith("linalg."):
                return self._linalg(rest[7:], expr)
            if rest.startswith("functional."):
                rest = rest[11:]
            if rest in _TORCH_BOOL_FUNCTIONS:
                return Fact(kind=BOOL)
            if "." in rest:
                return None
            return self._torch_function(rest, expr)
        if qual in ("shapecheck.einsum", "einops.einsum"):
            return self._einsum_call(expr, "named" if qual == "einops.einsum" else "auto", qual == "einops.einsum")
        if qual.startswith("torchvision.models.") and qual.count(".") == 2 \
                and not qual[19:].startswith(("get_", "list_")):
            return Fact(kind=MODULE, qual=qual, device=None if self.default_device_set else CPU,
                        trainable=None if self.params_frozen else True)
        if qual.startswith("einops.") and qual[7:] in ("rearrange", "reduce", "repeat"):
            args = CallArgs(expr)
            x = self.fact(args.pos[0]) if args.pos else UNKNOWN
            if x.kind == TENSOR:
                return Fact(kind=TENSOR, device=x.device, grad=self._grad_of([x], True), dtype_kind=x.dtype_kind)
            return None
        return None

    def _nn_class(self, qual: str, name: str, expr: cst.Call) -> Optional[Fact]:
        if name in ("Parameter", "UninitializedParameter"):
            args = CallArgs(expr)
            data = self.fact(args.pos[0]) if args.pos else UNKNOWN
            rg = args.get(1, "requires_grad")
            grad = LEAF_REQUIRES_GRAD
            if rg is not None:
                v = self.fact(rg).value
                grad = NO_GRAD if v is False else (LEAF_REQUIRES_GRAD if v is True else None)
            return data.with_(kind=TENSOR, grad=grad, reduction=None, is_scalar_cpu=False)
        if name in ("Buffer", "UninitializedBuffer"):
            args = CallArgs(expr)  # a tensor marked to be registered as a buffer: the data itself
            data = self.fact(args.pos[0]) if args.pos else UNKNOWN
            return data.with_(kind=TENSOR, reduction=None, is_scalar_cpu=False) if data.kind == TENSOR \
                else Fact(kind=TENSOR)
        if name[:1].isupper() and not name.endswith("Options"):
            args = CallArgs(expr)
            params, holds, trainable = self._nn_contents(name, args)
            device = None
            if holds:
                device = self._device_kw(args) if "device" in args.kw else (
                    None if self.default_device_set else CPU)
                if name == "Sequential":
                    device = self._children_device(args)
            if trainable and self.params_frozen:
                trainable = None
            fact = Fact(kind=MODULE, qual="torch.nn." + name, device=device, params=params,
                        trainable=trainable)
            if name in ("Linear", "LazyLinear"):
                if name == "Linear":
                    fin, fout = args.get(0, "in_features"), args.get(1, "out_features")
                else:
                    fin, fout = None, args.get(0, "out_features")
                dims = tuple(self.fact(a).dim if a is not None else None for a in (fin, fout))
                fact = fact.with_(features=dims)
            return fact
        return None

    def _nn_contents(self, name: str, args: CallArgs) -> tuple:
        """What ``torch.nn.<name>(args)`` holds: ``(parameter names or None, holds parameters or
        buffers, holds parameters that require grad)``, the last two True/False/None."""
        if name in _NN_STATELESS:
            return (), False, False
        if name in _NN_LOSSES:
            plain = not args.starred and all(
                self.fact(a).kind in (INT, FLOAT, STR, BOOL) or (isinstance(a, cst.Name) and a.value == "None")
                for a in list(args.pos) + list(args.kw.values()))
            return ((), False, False) if plain else (None, None, None)
        if name == "Sequential":
            return self._sequential(args)
        layer = _NN_LAYERS.get(name)
        if layer is None:
            return None, None, None
        names, switch, position, default = layer
        if args.starred:
            return None, True if default else None, True if default else None
        if switch is None:
            on = True
        else:
            flag = args.get(position, switch)
            on = default if flag is None else self.fact(flag).value
        if name.startswith(("BatchNorm", "SyncBatchNorm", "LazyBatchNorm")) and on is False:
            return (), True, False  # the running statistics are buffers
        if on is False:
            return (), False, False
        if on is not True:
            return None, None, None
        if "bias" in args.kw or (name in _BIAS_POSITION and len(args.pos) > _BIAS_POSITION[name]):
            flag = args.get(_BIAS_POSITION.get(name, -1), "bias")
            has_bias = self.fact(flag).value
            if has_bias is not True:
                names = tuple(n for n in names if "bias" not in n)
        trainable = None if "_freeze" in args.kw or "_weight" in args.kw else True
        return names, True, trainable

    def _sequential(self, args: CallArgs) -> tuple:
        """``nn.Sequential(*layers)``: holds what its layers hold."""
        if args.starred or args.kw:
            return None, None, None
        holds: Optional[bool] = False
        trainable: Optional[bool] = False
        for a in args.pos:
            f = self.fact(a)
            h = module_holds(f) if f.kind == MODULE else None
            if h is True:
                holds = True
            elif h is None and holds is False:
                holds = None
            if f.kind == MODULE and f.trainable:
                trainable = True
            elif trainable is False and not (f.kind == MODULE and f.trainable is False):
                trainable = None
        return (None if holds is not False else ()), holds, trainable

    def _children_device(self, args: CallArgs) -> Optional[str]:
        """The device of the layers of a ``Sequential`` that hold parameters, when they agree."""
        devices = {f.device for f in (self.fact(a) for a in args.pos) if f.kind == MODULE and module_holds(f)}
        return devices.pop() if len(devices) == 1 else None

    def _torch_device(self, expr: cst.Call) -> Fact:
        args = CallArgs(expr)
        a = args.get(0, "type")
        dev = self._device_value(a) if a is not None else None
        return Fact(kind=DEVICE, device=dev)

    def _device_value(self, expr: cst.BaseExpression) -> Optional[str]:
        """The device an expression names (a string, ``torch.device``, ``x.device``, a device name)."""
        f = self.fact(expr)
        if f.kind in (DEVICE, STR):
            return f.device
        if f.kind == TENSOR:
            return None
        return None

    def _device_kw(self, args: CallArgs) -> Optional[str]:
        d = args.kw.get("device")
        if d is None:
            return None
        return self._device_value(d)

    def _dtype_value(self, expr: cst.BaseExpression) -> Optional[str]:
        qual = self.imports.resolve(expr)
        if qual is not None and qual.startswith("torch."):
            return O.DTYPE_KIND.get(qual[6:])
        if isinstance(expr, cst.Name) and expr.value in ("float", "int", "bool", "complex"):
            return expr.value
        return None

    # ---------------------------------------------------------- torch.* functions
    def _torch_function(self, name: str, expr: cst.Call) -> Optional[Fact]:
        if name in PYTHON_BOOL_RESULTS:
            return Fact(kind=BOOL)
        args = CallArgs(expr)
        if name in FACTORIES:
            return self._factory(name, args)
        if name in ("set_default_device",):
            return UNKNOWN
        if name == "einsum":
            return self._einsum_call(expr, "letters", False)
        if name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack"):
            return self._cat(name, args)
        if name == "where":
            if len(args.pos) == 3:
                ops = [self.fact(a) for a in args.pos]
                out = self._elementwise(ops[1:] + [ops[0]], op_name="where")
                return out.with_(dtype_kind=O.promote([ops[1].dtype_kind if ops[1].kind == TENSOR else _py_dtype(ops[1]),
                                                      ops[2].dtype_kind if ops[2].kind == TENSOR else _py_dtype(ops[2])]))
            return Fact(kind=TENSOR, grad=NO_GRAD, dtype_kind="int")
        if name in ("matmul", "mm", "bmm", "mv", "dot", "inner", "vdot"):
            if len(args.pos) >= 2:
                return self._matmul(self.fact(args.pos[0]), self.fact(args.pos[1]))
            return None
        if not args.pos:
            return None
        first = self.fact(args.pos[0])
        if first.kind not in (TENSOR, None):
            return None
        if name in ELEMENTWISE_BINARY or name in ELEMENTWISE_UNARY or name in REDUCTIONS or \
                name in ALWAYS_PAIR or name in _SHAPE_METHODS or name in ("clone", "detach", "inverse",
                                                                            "argsort", "flip", "roll"):
            return self._method_call(first, name, expr, func_form=True, recv_expr=args.pos[0])
        return None

    def _linalg(self, name: str, expr: cst.Call) -> Optional[Fact]:
        args = CallArgs(expr)
        if name in ("inv", "pinv") and args.pos:
            x = self.fact(args.pos[0])
            if x.kind == TENSOR:
                return O.plain_tensor(x.shape, device=x.device, grad=self._grad_of([x], True),
                                      dtype_kind=x.dtype_kind)
        if name in ("norm", "vector_norm", "matrix_norm"):
            return Fact(kind=TENSOR)
        return None

    def _functional(self, name: str, expr: cst.Call) -> Optional[Fact]:
        args = CallArgs(expr)
        if not args.pos:
            return None
        x = self.fact(args.pos[0])
        if x.kind not in (TENSOR,) and not (x.kind is None and x.perm is not None):
            return None
        if name in ELEMENTWISE_UNARY or name in ("normalize", "gumbel_softmax"):
            return x.with_(kind=x.kind, reduction=None, grad=self._grad_of([x], True),
                           is_scalar_cpu=False)
        if name == "linear":
            w = self.fact(args.get(1, "weight")) if args.get(1, "weight") is not None else UNKNOWN
            shape = None
            if x.shape is not None and x.shape.rank and w.shape is not None and w.shape.rank == 2:
                shape = Shape(x.shape.dims[:-1] + (w.shape.dims[0],))
            return O.plain_tensor(shape, device=x.device if w.device == x.device else None,
                                  grad=self._grad_of([x, w], True), dtype_kind=x.dtype_kind)
        if name in ("cross_entropy", "mse_loss", "nll_loss", "l1_loss", "binary_cross_entropy",
                    "binary_cross_entropy_with_logits", "smooth_l1_loss", "kl_div", "huber_loss"):
            red = args.kw.get("reduction")
            shape = Shape(()) if red is None else None
            ops = [self.fact(a) for a in args.pos[:2]]
            return O.plain_tensor(shape, device=x.device, grad=self._grad_of(ops, True), dtype_kind="float")
        return Fact(kind=TENSOR, device=x.device, grad=self._grad_of([x], True))

    def _factory(self, name: str, args: CallArgs) -> Fact:
        dtype = None
        if "dtype" in args.kw:
            dtype = self._dtype_value(args.kw["dtype"])
        device = self._device_kw(args)
        if "device" not in args.kw:
            device = None if self.default_device_set else CPU
        grad = NO_GRAD
        rg = args.kw.get("requires_grad")
        if rg is not None:
            v = self.fact(rg).value
            grad = LEAF_REQUIRES_GRAD if v is True else (NO_GRAD if v is False else None)
        shape: Optional[Shape] = None
        default_dtype = "float"
        like = None
        if args.starred:
            return Fact(kind=TENSOR, device=device, grad=grad, dtype_kind=dtype)
        if name in _LIKE:
            like = self.fact(args.pos[0]) if args.pos else UNKNOWN
            shape = like.shape
            if "device" not in args.kw:
                device = like.device
            if dtype is None:
                dtype = like.dtype_kind if name != "randint_like" else like.dtype_kind
            if name == "full_like" and dtype is None:
                dtype = like.dtype_kind
        elif name in ("zeros", "ones", "empty", "rand", "randn"):
            shape = self._size_args(args.pos, args.kw.get("size"))
        elif name == "full":
            size = args.get(0, "size")
            shape = self._size_args([size], None) if size is not None else None
            fill = args.get(1, "fill_value")
            if dtype is None and fill is not None:
                dtype = _py_dtype(self.fact(fill)) or None
                default_dtype = None
        elif name == "randint":
            size = args.kw.get("size")
            if size is None and args.pos:
                size = args.pos[-1]
            shape = self._size_args([size], None) if size is not None else None
            default_dtype = "int"
        elif name == "arange":
            shape, default_dtype = self._arange(args)
        elif name in ("linspace", "logspace"):
            steps = args.get(2, "steps")
            shape = Shape((self.fact(steps).dim,)) if steps is not None else None
        elif name == "eye":
            n = args.get(0, "n")
            m = args.get(1, "m")
            dn = self.fact(n).dim if n is not None else None
            dm = self.fact(m).dim if m is not None else dn
            shape = Shape((dn, dm))
        elif name in ("tensor", "as_tensor", "scalar_tensor"):
            data = args.get(0, "data")
            if name == "scalar_tensor":
                shape, default_dtype = Shape(()), "float"
            elif data is not None:
                shape, default_dtype = self._literal_shape(data)
            if name == "as_tensor" and "device" not in args.kw and data is not None:
                df = self.fact(data)
                if df.kind == TENSOR:
                    device = df.device
        elif name == "randperm":
            n = args.get(0, "n")
            shape = Shape((self.fact(n).dim,)) if n is not None else None
            default_dtype = "int"
        elif name == "from_numpy":
            device, default_dtype = CPU, None
        else:
            default_dtype = None
        if dtype is None:
            dtype = default_dtype
        out = O.plain_tensor(shape, device=device, grad=grad, dtype_kind=dtype,
                             is_scalar_cpu=shape is not None and shape.rank == 0 and device == CPU)
        if like is not None and like.kind == TENSOR:
            if like.strides is not None and shape is not None and shape.is_fully_known:
                from shapecheck.strides import dense_like
                out = out.with_(**O.layout_fields(shape, dense_like(shape.dims, like.strides)))
            elif like.layout != CONTIGUOUS:
                out = out.with_(layout=None, strides=None, perm=like.perm, moved_by=like.moved_by)
        return out

    def _arange(self, args: CallArgs):
        vals = [self.fact(a) for a in args.pos[:3]]
        for key in ("start", "end", "step"):
            if key in args.kw:
                return None, None
        nums = [v.value for v in vals]
        if not vals:
            return None, None
        if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in nums):
            kinds = [v.kind for v in vals]
            return Shape((None,)), ("int" if all(k == INT for k in kinds) else None)
        is_int = all(isinstance(v, int) for v in nums)
        if len(nums) == 1:
            start, end, step = 0, nums[0], 1
        elif len(nums) == 2:
            start, end, step = nums[0], nums[1], 1
        else:
            start, end, step = nums
        if step == 0:
            return None, None
        import math
        n = max(0, math.ceil((end - start) / step))
        return Shape((n,)), ("int" if is_int else "float")

    def _literal_shape(self, data: cst.BaseExpression):
        """Shape and dtype kind of ``torch.tensor(<nested literal>)``."""
        if isinstance(data, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in data.elements):
                return None, None
            if not data.elements:
                return Shape((0,)), "float"
            subs = [self._literal_shape(e.value) for e in data.elements]
            first = subs[0][0]
            if first is None or any(s[0] != first for s in subs):
                return None, _merge_kinds([s[1] for s in subs])
            return Shape((len(subs),) + first.dims), _merge_kinds([s[1] for s in subs])
        f = self.fact(data)
        if f.kind == INT:
            return Shape(()), "int"
        if f.kind == FLOAT:
            return Shape(()), "float"
        if f.kind == BOOL:
            return Shape(()), "bool"
        if f.kind == TENSOR:
            return f.shape, f.dtype_kind
        return None, None

    def _size_args(self, pos: Sequence, size_kw) -> Optional[Shape]:
        """The shape named by factory size arguments: ``(2, 3)``, ``((2, 3))``, ``(x.shape)``."""
        if size_kw is not None:
            pos = [size_kw]
        if not pos:
            return Shape(())
        if len(pos) == 1:
            f = self.fact(pos[0])
            if f.kind == SIZE:
                return f.shape
            if isinstance(pos[0], (cst.Tuple, cst.List)):
                return self._size_args(pos[0].elements and [e.value for e in pos[0].elements] or [], None) \
                    if not any(isinstance(e, cst.StarredElement) for e in pos[0].elements) else None
            if f.elems is not None:
                return Shape(tuple(e.dim for e in f.elems))
            if f.kind == INT:
                return Shape((f.dim,))
            return None
        dims = []
        for p in pos:
            f = self.fact(p)
            if f.kind != INT and f.kind is not None:
                return None
            dims.append(f.dim)
        return Shape(tuple(dims))

    def _cat(self, name: str, args: CallArgs) -> Fact:
        seq = args.get(0, "tensors")
        if seq is None:
            return Fact(kind=TENSOR)
        if not isinstance(seq, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in seq.elements):
            return Fact(kind=TENSOR)
        facts = [self.fact(e.value) for e in seq.elements]
        dim_expr = args.get(1, "dim")
        if dim_expr is None:
            dim_expr = args.kw.get("axis")
        axis = self.fact(dim_expr).value if dim_expr is not None else 0
        tensors = [f for f in facts if f.kind == TENSOR]
        fields = dict(kind=TENSOR, device=self._device_of(tensors, len(tensors) != len(facts)),
                      grad=self._grad_of(facts, True),
                      dtype_kind=O.promote([f.dtype_kind for f in facts]) if len(tensors) == len(facts) else None)
        if name not in ("cat", "concat", "concatenate", "stack") or not isinstance(axis, int) or not facts:
            return Fact(**fields)
        shapes = [f.shape for f in facts]
        if any(s is None or s.rank is None for s in shapes):
            return Fact(**fields)
        rank = shapes[0].rank
        if any(s.rank != rank for s in shapes):
            return Fact(**fields)
        if name == "stack":
            a = O.norm_axis(axis, rank + 1)
            if a is None:
                return Fact(**fields)
            dims = list(shapes[0].dims)
            for s in shapes[1:]:
                dims = [d if d == e else None for d, e in zip(dims, s.dims)]
            dims.insert(a, len(shapes))
        else:
            a = O.norm_axis(axis, rank)
            if a is None:
                return Fact(**fields)
            dims = []
            for i in range(rank):
                col = [s.dims[i] for s in shapes]
                if i == a:
                    dims.append(_sum_dims(col))
                else:
                    dims.append(col[0] if all(c == col[0] for c in col) else None)
        fields.pop("kind")
        return O.plain_tensor(Shape(tuple(dims)), **fields)

    def _einsum_call(self, expr: cst.Call, form: str, spec_last: bool) -> Fact:
        from shapecheck.einsum_parser import parse
        from shapecheck.errors import ShapeCheckError

        args = CallArgs(expr)
        if args.starred or not args.pos:
            return Fact(kind=TENSOR)
        spec_node = args.pos[-1] if spec_last else args.pos[0]
        operands = args.pos[:-1] if spec_last else args.pos[1:]
        if len(operands) == 1 and isinstance(operands[0], (cst.List, cst.Tuple)):
            operands = [e.value for e in operands[0].elements]
        facts = [self.fact(o) for o in operands]
        fields = dict(kind=TENSOR, device=self._device_of(facts, any(f.kind != TENSOR for f in facts)),
                      grad=self._grad_of(facts, True), dtype_kind=O.promote([f.dtype_kind for f in facts]))
        spec = self.fact(spec_node).value
        if not isinstance(spec, str):
            return Fact(**fields)
        try:
            parsed = parse(spec, form)
            shapes = [f.shape if f.shape is not None else Shape.unknown() for f in facts]
            shape = parsed.output_shape(*shapes)
        except (ShapeCheckError, ValueError, RuntimeError):
            return Fact(**fields)
        if shape.rank is None:
            shape = None
        return Fact(shape=shape, **fields)

    # ---------------------------------------------------------- methods
    def _method_call(self, recv: Fact, name: str, expr: cst.Call, func_form: bool = False,
                     recv_expr: Optional[cst.BaseExpression] = None) -> Fact:
        kind = recv.kind
        if kind == MODULE:
            return self._module_method(recv, name, expr)
        if kind == OPTIMIZER or kind == TUPLE or kind == DEVICE:
            return UNKNOWN
        if kind == SIZE:
            if name == "numel":
                return Fact(kind=INT)
            return UNKNOWN
        if kind not in (TENSOR, None):
            return UNKNOWN
        if name in PYTHON_BOOL_RESULTS:
            return Fact(kind=BOOL) if kind == TENSOR or func_form else UNKNOWN
        handler = _METHODS.get(name)
        if handler is None:
            return UNKNOWN
        args = CallArgs(expr)
        if func_form:
            args.pos = args.pos[1:]
            args.kw.pop("input", None)
        out = handler(self, recv, name, args)
        if out is None:
            return UNKNOWN
        if out.reduction is not None or out.kind == TUPLE:
            out = _name_reduction(out, recv_expr, expr)
        if kind is None and not func_form:
            if out.kind == TUPLE:
                # maybe not a tensor (numpy's max(1) is an array): only .values/.indices read it
                return Fact(elems=out.elems, qual="pair")
            if out.kind == TENSOR and name not in _TENSOR_ONLY_METHODS:
                out = out.with_(kind=None, device=None, grad=None)
        return out

    def _module_method(self, recv: Fact, name: str, expr: cst.Call) -> Fact:
        args = CallArgs(expr)
        if name in MODULE_METHODS_RETURNING_SELF:
            placed = module_holds(recv)
            if name == "cuda":
                return recv.with_(device=CUDA if placed else None)
            if name == "cpu":
                return recv.with_(device=CPU if placed else None)
            if name == "to":
                dev = self._to_device(args)
                return recv.with_(device=dev if placed else None) if dev is not False else recv
            if name == "requires_grad_":
                flag = args.get(0, "requires_grad")
                v = self.fact(flag).value if flag is not None else True
                if v is False:
                    return recv.with_(trainable=False)
                if recv.params == () and recv.trainable is False:
                    return recv  # it holds no parameter: nothing to switch
                if v is True and (recv.params or recv.trainable):
                    return recv.with_(trainable=True)
                return recv.with_(trainable=None)
            return recv
        if name == "forward":
            return self._module_call(recv, expr)
        return UNKNOWN

    def _to_device(self, args: CallArgs):
        """The device named by ``.to(...)`` args; ``False`` when no device is named."""
        if "device" in args.kw:
            return self._device_value(args.kw["device"])
        for a in args.pos[:1]:
            if self._dtype_value(a) is not None:
                return False
            f = self.fact(a)
            if f.kind in (DEVICE, STR):
                return f.device
            if f.kind == TENSOR:
                return f.device
            return None
        return False

    # -- individual tensor methods; each returns a Fact or None (unknown)
    def m_view(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """view/reshape: the new shape, and the layout the stride rule gives."""
        if args.starred:
            return None
        if name == "view" and len(args.pos) == 1 and self._dtype_value(args.pos[0]) is not None:
            return None
        if "dtype" in args.kw:
            return None
        target = self._target_dims(args.pos, args.kw.get("size") or args.kw.get("shape"))
        if target is None:
            return x.with_(kind=TENSOR if x.kind == TENSOR else None, shape=None, layout=None, strides=None,
                           perm=None, moved_by=None, reduction=None)
        out, possible = O.view_result(x, target, name == "view")
        if name == "reshape" and possible is False:
            out = out.with_(layout=CONTIGUOUS)
        if name == "reshape" and possible is None:
            out = out.with_(layout=None, strides=None, perm=None)
        return out.with_(grad=self._grad_of([x], True) if x.kind == TENSOR else None)

    def view_target(self, call: cst.Call) -> Optional[list[Dim]]:
        """The sizes asked of ``x.view(...)``/``x.reshape(...)`` (``-1`` kept; unknown sizes
        ``None``), or ``None`` when they cannot be read (starred args, a dtype view)."""
        args = CallArgs(call)
        if args.starred or "dtype" in args.kw:
            return None
        if len(args.pos) == 1 and self._dtype_value(args.pos[0]) is not None:
            return None
        return self._target_dims(args.pos, args.kw.get("size") or args.kw.get("shape"))

    def factory_sizes(self, call: cst.Call) -> Optional[tuple[str, list[Dim]]]:
        """For a call of a tensor factory that takes sizes (``torch.zeros``, ``x.new_zeros``,
        ``torch.eye``, ``torch.linspace``...): its name and the sizes it asks for as written
        (negative ones kept, unknown ones ``None``; ``[n, m]`` for ``eye``, ``[steps]`` for
        ``linspace``); ``None`` for any other call or when the sizes cannot be read."""
        args = CallArgs(call)
        if args.starred:
            return None
        func = call.func
        qual = self.imports.resolve(func)
        name = qual[6:] if qual is not None and qual.startswith("torch.") else None
        size: Optional[cst.BaseExpression] = None
        if name in ("zeros", "ones", "empty", "rand", "randn"):
            shape = self._size_args(args.pos, args.kw.get("size"))
            return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None
        if name in ("full", "empty_strided"):
            size = args.get(0, "size")
        elif name == "randint":
            size = args.kw.get("size")
            if size is None and len(args.pos) >= 2 and isinstance(args.pos[-1], (cst.Tuple, cst.List)):
                size = args.pos[-1]
        elif name in ("eye", "randperm", "linspace", "logspace"):
            keys = {"eye": ((0, "n"), (1, "m")), "randperm": ((0, "n"),),
                    "linspace": ((2, "steps"),), "logspace": ((2, "steps"),)}[name]
            dims: list[Dim] = []
            for index, keyword in keys:
                arg = args.get(index, keyword)
                dims.append(self.fact(arg).dim if arg is not None else None)
            return name, dims
        elif isinstance(func, cst.Attribute) and func.attr.value in ("new_zeros", "new_ones", "new_empty",
                                                                    "new_full") and name is None:
            if self.fact(func.value).kind not in (TENSOR, None):
                return None
            name = func.attr.value
            if name != "new_full":
                shape = self._size_args(args.pos, args.kw.get("size"))
                return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None
            size = args.get(0, "size")
        else:
            return None
        if size is None:
            return None
        shape = self._size_args([size], None)
        return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None

    def view_verdict(self, call: cst.Call) -> Optional[tuple[Fact, list, Optional[bool]]]:
        """For ``x.view(...)``: ``(fact of x, target sizes, possible)`` where ``possible`` is
        ``False`` only when the view is proven to fail (exact strides, or merged moved dims)."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        target = self.view_target(call)
        if target is None or target.count(-1) > 1 or any(O.is_negative(d) for d in target if d != -1):
            return None
        recv = self.fact(func.value)
        if recv.kind not in (TENSOR, None):
            return None
        _out, possible = O.view_result(recv, target, True)
        return recv, target, possible

    def _target_dims(self, pos: Sequence, kw) -> Optional[list[Dim]]:
        if kw is not None:
            pos = [kw]
        if len(pos) == 1:
            f = self.fact(pos[0])
            if f.kind == SIZE:
                if f.shape is None or f.shape.rank is None:
                    return None
                return list(f.shape.dims)
            if isinstance(pos[0], (cst.Tuple, cst.List)):
                if any(isinstance(e, cst.StarredElement) for e in pos[0].elements):
                    return None
                pos = [e.value for e in pos[0].elements]
            elif f.elems is not None:
                return [e.dim if e.kind == INT else None for e in f.elems]
            elif f.kind != INT:
                return None
        dims: list[Dim] = []
        for p in pos:
            f = self.fact(p)
            if f.kind == SIZE or f.elems is not None:
                return None
            if f.kind not in (INT, None):
                return None
            dims.append(f.dim)
        return dims

    def m_flatten(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """flatten(start, end): a reshape that merges a run of dims."""
        s = args.get(0, "start_dim")
        e = args.get(1, "end_dim")
        sv = self.fact(s).value if s is not None else 0
        ev = self.fact(e).value if e is not None else -1
        if not isinstance(sv, int) or not isinstance(ev, int):
            return None
        dims = O.merged_shape(x.shape, sv, ev)
        if dims is None:
            return None
        out, possible = O.view_result(x, dims, False)
        if possible is False:
            out = out.with_(layout=CONTIGUOUS)
        if possible is None:
            out = out.with_(layout=None, strides=None, perm=None)
        return out.with_(grad=self._grad_of([x], True))

    def m_transpose(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """transpose/swapaxes/permute/t/movedim: dims reordered, strides moved with them."""
        rank = x.rank
        if name == "t":
            if rank is not None and rank < 2:
                return x.with_(reduction=None)
            order = [1, 0] if rank == 2 else None
            text = ".t()"
        elif name == "permute":
            vals = self._int_list(args.pos, args.kw.get("dims"))
            if vals is None:
                return self._lost(x)
            if rank is None:
                rank = len(vals)
            order = [O.norm_axis(v, rank) for v in vals]
            if None in order or sorted(order) != list(range(rank)):
                return self._lost(x)
            text = ".permute(" + ", ".join(str(v) for v in vals) + ")"
        elif name in ("movedim", "moveaxis"):
            a, b = args.get(0, "source"), args.get(1, "destination")
            av = self.fact(a).value if a is not None else None
            bv = self.fact(b).value if b is not None else None
            if rank is None or not isinstance(av, int) or not isinstance(bv, int):
                return self._lost(x)
            s, d = O.norm_axis(av, rank), O.norm_axis(bv, rank)
            if s is None or d is None:
                return self._lost(x)
            order = [i for i in range(rank) if i != s]
            order.insert(d, s)
            text = f".{name}({av}, {bv})"
        else:
            a, b = args.get(0, "dim0"), args.get(1, "dim1")
            av = self.fact(a).value if a is not None else None
            bv = self.fact(b).value if b is not None else None
            if not isinstance(av, int) or not isinstance(bv, int):
                return self._lost(x)
            order = O.transpose_order(rank, av, bv)
            text = f".{name}({av}, {bv})"
        if order is None:
            return self._lost(x)
        out = O.moved(x, O.permute_shape(x.shape, order), order, text)
        return out.with_(grad=self._grad_of([x], True) if x.kind == TENSOR else None)

    def _lost(self, x: Fact) -> Fact:
        return x.with_(shape=None, layout=None, strides=None, perm=None, moved_by=None, reduction=None)

    def _int_list(self, pos: Sequence, kw) -> Optional[list[int]]:
        if kw is not None:
            pos = [kw]
        if len(pos) == 1 and isinstance(pos[0], (cst.Tuple, cst.List)):
            pos = [e.value for e in pos[0].elements]
        vals = []
        for p in pos:
            v = self.fact(p).value
            if not isinstance(v, int) or isinstance(v, bool):
                return None
            vals.append(v)
        return vals

    def m_unsqueeze(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """unsqueeze(dim): a new size-1 dim."""
        d = args.get(0, "dim")
        v = self.fact(d).value if d is not None else None
        if not isinstance(v, int):
            return self._lost(x)
        return O.unsqueeze_fact(x, v)

    def m_squeeze(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """squeeze(dim) / squeeze(): size-1 dims removed when they are known to be 1."""
        rank = x.rank
        d = args.get(0, "dim")
        if rank is None:
            return self._lost(x)
        if d is None:
            if x.shape.is_fully_known:
                return O.drop_axes(x, [i for i, s in enumerate(x.shape.dims) if s == 1])
            return self._lost(x)
        vals = self._int_list([d], None)
        if vals is None:
            return self._lost(x)
        axes = []
        for v in vals:
            a = O.norm_axis(v, rank)
            if a is None:
                return self._lost(x)
            size = x.shape.dims[a]
            if size == 1:
                axes.append(a)
            elif size is None:
                return self._lost(x)
        return O.drop_axes(x, axes)

    def m_expand(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """expand/expand_as: broadcast dims with stride 0."""
        if name == "expand_as":
            other = self.fact(args.pos[0]) if args.pos else UNKNOWN
            if other.shape is None or other.shape.rank is None:
                return self._lost(x)
            return O.expand_fact(x, list(other.shape.dims), ".expand_as()")
        target = self._target_dims(args.pos, args.kw.get("size"))
        if target is None:
            return self._lost(x)
        return O.expand_fact(x, target, ".expand(" + ", ".join("?" if t is None else str(t) for t in target) + ")")

    def m_repeat(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """repeat: a new contiguous tensor with multiplied sizes."""
        target = self._target_dims(args.pos, None)
        if target is None or x.rank is None or len(target) < x.rank:
            return O.plain_tensor(None, device=x.device, grad=self._grad_of([x], True), dtype_kind=x.dtype_kind)
        lead = len(target) - x.rank
        dims = list(target[:lead])
        for r, d in zip(target[lead:], x.shape.dims):
            dims.append(r * d if isinstance(r, int) and isinstance(d, int) else (d if r == 1 else None))
        return O.plain_tensor(Shape(tuple(dims)), device=x.device, grad=self._grad_of([x], True),
                              dtype_kind=x.dtype_kind)

    def m_contiguous(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """contiguous(): the same tensor laid out row-major."""
        sizes = O.known_sizes(x.shape)
        from shapecheck.strides import contiguous_strides
        return x.with_(layout=CONTIGUOUS, strides=contiguous_strides(sizes) if sizes is not None else None,
                       perm=None, moved_by=None, reduction=None)

    def m_keep(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """Ops that keep shape and layout: clone, elementwise unary ops, casts, device moves."""
        out = x.with_(reduction=None, kind=x.kind)
        known = x.strides is not None and x.shape is not None and x.shape.is_fully_known
        if name in _SAME_STORAGE or name.endswith("_"):
            pass  # the same tensor (or a view of it): the layout does not change
        elif name in _MAYBE_COPY:
            # a no-op when dtype and device already match, else a dense copy in the same dim
            # order: the two agree only when the input is dense
            from shapecheck.strides import is_dense
            if known and not is_dense(x.shape.dims, x.strides):
                out = out.with_(layout=None, strides=None, perm=None, moved_by=None)
            elif not known and x.perm is not None and O.compact_perm(x.perm) != tuple(x.perm):
                out = out.with_(layout=None, perm=None, moved_by=None)
        elif known:
            from shapecheck.strides import dense_like
            out = out.with_(**O.layout_fields(x.shape, dense_like(x.shape.dims, x.strides)))
            if out.layout != CONTIGUOUS:
                out = out.with_(perm=O.compact_perm(x.perm), moved_by=x.moved_by)
        elif x.perm is not None:
            perm = O.compact_perm(x.perm)
            out = out.with_(perm=perm, moved_by=x.moved_by if perm is not None else None,
                            layout=x.layout if perm is not None else None)
        if name in ("detach",):
            return out.with_(grad=NO_GRAD)
        if name == "detach_":
            return out.with_(grad=NO_GRAD)
        if name in O.CAST_METHODS:
            kind = O.CAST_METHODS[name]
            grad = NO_GRAD if kind in ("int", "bool") else self._grad_of([x], True)
            return out.with_(dtype_kind=kind, grad=grad if x.kind == TENSOR else None)
        if name in ("cuda", "cpu"):
            return out.with_(device=CUDA if name == "cuda" else CPU, grad=self._grad_of([x], True),
                             is_scalar_cpu=name == "cpu" and x.rank == 0)
        if name == "to" or name == "type":
            return self._to_result(out, x, args)
        if name == "requires_grad_":
            flag = args.get(0, "requires_grad")
            v = self.fact(flag).value if flag is not None else True
            if v is True:
                return out.with_(grad=LEAF_REQUIRES_GRAD if x.grad in (NO_GRAD, LEAF_REQUIRES_GRAD) else x.grad)
            return out.with_(grad=NO_GRAD if v is False and x.grad != NON_LEAF else None)
        if name == "type_as":
            other = self.fact(args.pos[0]) if args.pos else UNKNOWN
            return out.with_(dtype_kind=other.dtype_kind, device=other.device if other.kind == TENSOR else None)
        if name.endswith("_") and name != "requires_grad_":
            return out
        differentiable = name not in NON_DIFFERENTIABLE
        dtype = x.dtype_kind
        if name in COMPARISONS:
            dtype = "bool"
        elif name in ("sigmoid", "softmax", "log_softmax", "exp", "log", "sqrt", "rsqrt", "tanh") and dtype == "int":
            dtype = "float"
        return out.with_(grad=self._grad_of([x], differentiable) if x.kind == TENSOR else None, dtype_kind=dtype,
                         is_scalar_cpu=x.is_scalar_cpu)

    def _to_result(self, out: Fact, x: Fact, args: CallArgs) -> Fact:
        """``x.to(...)``/``x.type(...)``: a device, a dtype, both, or another tensor's."""
        dev = self._to_device(args)
        dtype = x.dtype_kind
        if "dtype" in args.kw:
            dtype = self._dtype_value(args.kw["dtype"])
        for a in args.pos[:2]:
            d = self._dtype_value(a)
            if d is not None:
                dtype = d
                continue
            f = self.fact(a)
            if f.kind == TENSOR:
                dtype = f.dtype_kind
            elif f.kind not in (DEVICE, STR):
                dtype = None  # a name that may hold a dtype
        changes: dict = {"grad": self._grad_of([x], True) if x.kind == TENSOR else None,
                         "dtype_kind": dtype}
        if dev is not False:
            changes["device"] = dev
            changes["is_scalar_cpu"] = dev == CPU and x.rank == 0
        return out.with_(**changes)

    def m_binary(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """Elementwise methods with another operand (add, mul, eq, maximum...)."""
        other_expr = args.get(0, "other")
        if other_expr is None:
            return None
        other = self.fact(other_expr)
        out = self._elementwise([x, other], op_name=name, div=name in ("div", "true_divide", "divide"))
        if name.endswith("_"):
            return x.with_(reduction=None)
        return out

    def m_reduce(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """Reductions: shape with or without keepdim, the (values, indices) pair, provenance."""
        if name in _DIM_NOT_FIRST:
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
        keepdim: Optional[bool] = False
        if keep_expr is not None:
            v = self.fact(keep_expr).value
            keepdim = v if isinstance(v, bool) else None
        axes: Optional[list[int]] = None
        if dim_expr is not None:
            df = self.fact(dim_expr)
            if name in ("max", "min") and df.kind == TENSOR:
                return self._elementwise([x, df], op_name="maximum")
            if isinstance(df.value, int) and not isinstance(df.value, bool):
                axes = [df.value]
            elif isinstance(df.value, tuple) and all(isinstance(v, int) for v in df.value):
                axes = list(df.value)
            elif df.kind is None and not isinstance(dim_expr, (cst.Tuple, cst.List)) and name in ("max", "min"):
                return Fact(kind=None)
            else:
                return self._reduced(x, name, None, None, axes_known=False)
        if keepdim is None:
            return self._reduced(x, name, None, None, axes_known=False)
        return self._reduced(x, name, axes, keepdim, axes_known=True, node_args=(dim_expr is not None))

    def _reduced(self, x: Fact, name: str, axes, keepdim, axes_known: bool, node_args: bool = False) -> Fact:
        dtype = x.dtype_kind
        if name in ("argmax", "argmin", "count_nonzero"):
            dtype = "int"
        elif name in ("any", "all"):
            dtype = "bool"
        elif name in ("mean", "std", "var", "norm", "logsumexp", "nanmean") and dtype in ("int", "bool"):
            dtype = "float"
        elif name in ("sum", "prod", "nansum") and dtype == "bool":
            dtype = "int"
        differentiable = name not in NON_DIFFERENTIABLE
        shape = O.reduce_shape(x.shape, axes, bool(keepdim)) if axes_known else None
        fields = dict(device=x.device if x.kind == TENSOR else None,
                      grad=self._grad_of([x], differentiable) if x.kind == TENSOR else None,
                      dtype_kind=dtype)
        out = O.plain_tensor(shape, **fields)
        if shape is not None and shape.rank is not None and shape.rank > 1:
            out = out.with_(layout=None, strides=None)
        if shape is None:
            out = out.with_(layout=None)
        out = out.with_(is_scalar_cpu=shape is not None and shape.rank == 0 and fields["device"] == CPU)
        if x.kind is None:
            out = out.with_(kind=None)
        if axes_known and axes is not None and keepdim is False:
            out = out.with_(reduction=Reduction(x, None, tuple(axes), None))
        if name in PAIR_WITH_DIM and axes is not None:
            values = out.with_(dtype_kind=x.dtype_kind)
            indices = out.with_(dtype_kind="int", grad=NO_GRAD if x.kind == TENSOR else None)
            return Fact(kind=TUPLE, shape=shape, elems=(values, indices))
        return out

    def m_pair(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """sort/topk/kthvalue/mode...: always a (values, indices) pair."""
        values = Fact(kind=TENSOR if x.kind == TENSOR else None, device=x.device, dtype_kind=x.dtype_kind,
                      grad=self._grad_of([x], True) if x.kind == TENSOR else None)
        indices = values.with_(dtype_kind="int", grad=NO_GRAD if x.kind == TENSOR else None)
        if name == "sort" and x.shape is not None:
            values = values.with_(shape=x.shape)
            indices = indices.with_(shape=x.shape)
        return Fact(kind=TUPLE, elems=(values, indices))

    def m_matmul(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """matmul/mm/bmm/mv/dot as methods."""
        other = args.get(0, "other") or args.get(0, "mat2") or args.get(0, "vec")
        if other is None:
            return None
        return self._matmul(x, self.fact(other))

    def m_new_factory(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """new_zeros/new_ones/new_empty/new_full/new_tensor: device and dtype of the receiver."""
        if name == "new_tensor":
            shape, dtype = self._literal_shape(args.pos[0]) if args.pos else (None, None)
        elif name == "new_full":
            size = args.get(0, "size")
            shape = self._size_args([size], None) if size is not None else None
            dtype = x.dtype_kind
        else:
            shape = self._size_args(args.pos, args.kw.get("size"))
            dtype = x.dtype_kind
        if "dtype" in args.kw:
            dtype = self._dtype_value(args.kw["dtype"])
        device = x.device if "device" not in args.kw else self._device_kw(args)
        grad = NO_GRAD
        if "requires_grad" in args.kw:
            v = self.fact(args.kw["requires_grad"]).value
            grad = LEAF_REQUIRES_GRAD if v is True else (NO_GRAD if v is False else None)
        return O.plain_tensor(shape, device=device, grad=grad, dtype_kind=dtype,
                              is_scalar_cpu=shape is not None and shape.rank == 0 and device == CPU)

    def m_size(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """size(): a torch.Size; size(d): an int (its value when known)."""
        d = args.get(0, "dim")
        if d is None:
            return Fact(kind=SIZE, shape=x.shape)
        v = self.fact(d).value
        if not isinstance(v, int) or x.shape is None or x.shape.rank is None:
            return Fact(kind=INT)
        a = O.norm_axis(v, x.shape.rank)
        if a is None:
            return Fact(kind=INT)
        dim = x.shape.dims[a]
        return Fact(kind=INT, dim=dim, value=dim if isinstance(dim, int) else None)

    def m_scalar(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """dim()/numel()/item(): Python numbers."""
        if name in ("dim", "ndimension"):
            r = x.rank
            return Fact(kind=INT, value=r, dim=r)
        if name == "numel":
            n = x.shape.numel() if x.shape is not None else None
            if n is not None and n > O.MAX_SIZE:
                n = None
            return Fact(kind=INT, value=n, dim=n)
        if name == "item":
            if x.dtype_kind == "float":
                return Fact(kind=FLOAT)
            if x.dtype_kind == "int":
                return Fact(kind=INT)
            return UNKNOWN
        return UNKNOWN

    def m_narrow(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """narrow(dim, start, length): a slice of one dim."""
        d, s, n = args.get(0, "dim"), args.get(1, "start"), args.get(2, "length")
        dv = self.fact(d).value if d is not None else None
        sv = self.fact(s).value if s is not None else None
        nv = self.fact(n).value if n is not None else None
        rank = x.rank
        if not isinstance(dv, int) or rank is None:
            return self._lost(x)
        a = O.norm_axis(dv, rank)
        if a is None:
            return self._lost(x)
        items: list = [("full", None)] * rank
        if isinstance(sv, int) and isinstance(nv, int):
            items[a] = ("slice", (sv, sv + nv, 1))
        else:
            items[a] = ("slice", ("?", "?", 1))
        out = O.index_fact(x, items)
        return out if out is not None else self._lost(x)

    def m_masked(self, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
        """masked ops that keep shape and layout."""
        return self.m_keep(x, name, args)


def module_holds(f: Fact) -> Optional[bool]:
    """For a module fact: True when it holds parameters or buffers (so its device matters),
    False when it holds none, ``None`` when unknown."""
    if f.device is not None or f.params or f.trainable:
        return True
    if f.params == ():
        return False
    return None


def _name_reduction(out: Fact, recv_expr, call: cst.Call) -> Fact:
    """Fill in the source name and the call node of a reduction's provenance."""
    name = dotted_name(recv_expr) if recv_expr is not None else None

    def fill(f: Fact) -> Fact:
        """One fact with the reduction's name and node filled in."""
        r = f.reduction
        if r is None:
            return f
        return f.with_(reduction=Reduction(r.source, name, r.axes, call))

    if out.kind == TUPLE and out.elems:
        return out.with_(elems=tuple(fill(e) for e in out.elems))
    return fill(out)


def _sum_dims(col: Sequence[Dim]) -> Dim:
    total = 0
    for c in col:
        if not isinstance(c, int):
            return None
        total += c
    return total


def _merge_kinds(kinds: Sequence[Optional[str]]) -> Optional[str]:
    if any(k is None for k in kinds):
        return None
    return O.promote(kinds)


def _py_dtype(f: Fact) -> Optional[str]:
    return {INT: "int", FLOAT: "float", BOOL: "bool"}.get(f.kind)


def _index_value(el: cst.SubscriptElement) -> Optional[int]:
    s = el.slice
    if isinstance(s, cst.Index):
        return int_literal(s.value)
    return None


def _device_string(value: str) -> Optional[str]:
    head = value.split(":", 1)[0].strip()
    if head in (CPU, CUDA, MPS):
        return head
    return None


#: constant folding gives up on ints longer than this (Python prints at most 4300 digits)
_MAX_FOLDED_BITS = 4096


def _fold_numbers(op, a: Fact, b: Fact) -> Fact:
    kind = FLOAT if FLOAT in (a.kind, b.kind) or isinstance(op, cst.Divide) else INT
    av, bv = a.value, b.value
    value = None
    if av is not None and bv is not None and not isinstance(av, bool) and not isinstance(bv, bool):
        try:
            if isinstance(op, cst.Add):
                value = av + bv
            elif isinstance(op, cst.Subtract):
                value = av - bv
            elif isinstance(op, cst.Multiply):
                value = av * bv
            elif isinstance(op, cst.FloorDivide) and bv:
                value = av // bv
            elif isinstance(op, cst.Divide) and bv:
                value = av / bv
            elif isinstance(op, cst.Modulo) and bv:
                value = av % bv
        except (TypeError, OverflowError):
            value = None
    if isinstance(value, int) and value.bit_length() > _MAX_FOLDED_BITS:
        value = None  # far beyond any size, and too long to print in a message
    if kind == INT:
        return Fact(kind=INT, value=value, dim=value if isinstance(value, int) else None)
    return Fact(kind=FLOAT, value=value)


def _tensor_result(base: Fact, **fields) -> Fact:
    return Fact(kind=TENSOR if base.kind == TENSOR else None,
                device=base.device if base.kind == TENSOR else None,
                dtype_kind=base.dtype_kind, **fields)


def _unify(pattern: Shape, actual: Optional[Shape], binding: dict) -> None:
    """Bind the named dims of ``pattern`` (a parameter annotation) to the dims of ``actual``."""
    if actual is None or actual.rank is None:
        return
    if pattern.rest_at is None:
        if len(pattern.dims) != actual.rank:
            return
        pairs = zip(pattern.dims, actual.dims)
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


def _substitute(ret: Shape, binding: dict) -> Optional[Shape]:
    """The return annotation with the call site's dims in place of the names."""
    dims = [binding.get(d) if isinstance(d, str) else d for d in ret.dims]
    if ret.rest_at is None:
        return Shape(tuple(dims))
    key = "*" + ret.rest_name if ret.rest_name else None
    if key is not None and key in binding:
        return Shape(tuple(dims[: ret.rest_at]) + tuple(binding[key]) + tuple(dims[ret.rest_at:]))
    return Shape(tuple(dims), ret.rest_at, None)


#: ops that return the same storage (layout unchanged)
_SAME_STORAGE = {"detach", "detach_", "requires_grad_"}
#: ops that return the input itself when nothing changes, else a copy
_MAYBE_COPY = set(O.CAST_METHODS) | {"to", "type", "type_as", "cuda", "cpu", "pin_memory"}

#: ``torch.nn`` layers that hold parameters: ``(the parameters they hold directly, the argument
#: that switches them all on or off, its position, its default)``. Read from torch 2.13.
_WEIGHT_BIAS = ("weight", "bias")
_NN_LAYERS: dict[str, tuple] = {
    **{n: (_WEIGHT_BIAS, None, None, True) for n in (
        "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
        "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
        "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d")},
    "Embedding": (("weight",), None, None, True),
    "EmbeddingBag": (("weight",), None, None, True),
    "PReLU": (("weight",), None, None, True),
    "LayerNorm": (_WEIGHT_BIAS, "elementwise_affine", 2, True),
    "RMSNorm": (("weight",), "elementwise_affine", 2, True),
    "GroupNorm": (_WEIGHT_BIAS, "affine", 3, True),
    **{n: (_WEIGHT_BIAS, "affine", 3, True) for n in (
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")},
    **{n: (("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"), None, None, True)
       for n in ("RNN", "LSTM", "GRU")},
    **{n: (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), None, None, True)
       for n in ("RNNCell", "LSTMCell", "GRUCell")},
    **{n: ((), None, None, True) for n in (
        "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer")},
}
#: where ``bias`` sits among the positional arguments, for the layers whose ``bias`` is often
#: passed by position
_BIAS_POSITION = {"Linear": 2, "Bilinear": 3}
#: ``torch.nn`` modules that hold no parameter or buffer, whatever their arguments
_NN_STATELESS = frozenset(
    """
    AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d
    AdaptiveMaxPool3d AlphaDropout AvgPool1d AvgPool2d AvgPool3d CELU ChannelShuffle
    CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d ConstantPad3d
    CosineSimilarity CrossMapLRN2d Dropout Dropout1d Dropout2d Dropout3d ELU FeatureAlphaDropout
    Flatten Fold FractionalMaxPool2d FractionalMaxPool3d GELU GLU Hardshrink Hardsigmoid
    Hardswish Hardtanh Identity LPPool1d LPPool2d LPPool3d LeakyReLU LocalResponseNorm
    LogSigmoid LogSoftmax MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d Mish
    PairwiseDistance PixelShuffle PixelUnshuffle RReLU ReLU ReLU6 ReflectionPad1d ReflectionPad2d
    ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d SELU SiLU Sigmoid Softmax
    Softmax2d Softmin Softplus Softshrink Softsign Tanh Tanhshrink Threshold Unflatten Unfold
    Upsample UpsamplingBilinear2d UpsamplingNearest2d ZeroPad1d ZeroPad2d ZeroPad3d
    """.split()
)
#: ``torch.nn`` losses that hold nothing unless given a tensor (``weight=``, ``pos_weight=``)
_NN_LOSSES = frozenset(
    """
    BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss
    HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss MSELoss MarginRankingLoss MultiLabelMarginLoss
    MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d PoissonNLLLoss SmoothL1Loss
    SoftMarginLoss TripletMarginLoss
    """.split()
)

_SHAPE_KEEPING_MODULES = {
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "LayerNorm", "Identity", "LeakyReLU",
    "ELU", "Softmax", "LogSoftmax", "Mish", "Hardswish", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "GroupNorm", "RMSNorm", "Softplus",
}

_SHAPE_METHODS = {"view", "reshape", "flatten", "transpose", "swapaxes", "swapdims", "permute", "t",
                  "movedim", "moveaxis", "unsqueeze", "squeeze", "narrow", "expand", "contiguous",
                  "masked_fill"}
#: methods no other common library has: their receiver is a tensor
_TENSOR_ONLY_METHODS = {"contiguous", "permute", "unsqueeze", "masked_fill", "requires_grad_",
                        "detach", "cuda", "expand", "expand_as", "new_zeros", "new_ones",
                        "new_empty", "new_full", "new_tensor", "type_as"}

_METHODS: dict[str, Callable] = {}
for _n in ("view", "reshape"):
    _METHODS[_n] = Evaluator.m_view
_METHODS["flatten"] = Evaluator.m_flatten
for _n in _MOVE_METHODS:
    _METHODS[_n] = Evaluator.m_transpose
_METHODS["unsqueeze"] = Evaluator.m_unsqueeze
_METHODS["squeeze"] = Evaluator.m_squeeze
_METHODS["expand"] = Evaluator.m_expand
_METHODS["expand_as"] = Evaluator.m_expand
_METHODS["repeat"] = Evaluator.m_repeat
_METHODS["contiguous"] = Evaluator.m_contiguous
for _n in ELEMENTWISE_UNARY | set(O.CAST_METHODS) | {"clone", "detach", "detach_", "cuda", "cpu", "to",
                                                     "type", "requires_grad_", "type_as", "pin_memory"}:
    _METHODS[_n] = Evaluator.m_keep
for _n in ELEMENTWISE_BINARY:
    _METHODS[_n] = Evaluator.m_binary
    _METHODS[_n + "_"] = Evaluator.m_binary
for _n in ELEMENTWISE_UNARY:
    _METHODS.setdefault(_n + "_", Evaluator.m_keep)
for _n in REDUCTIONS:
    _METHODS[_n] = Evaluator.m_reduce
for _n in ALWAYS_PAIR:
    _METHODS[_n] = Evaluator.m_pair
for _n in ("matmul", "mm", "bmm", "mv", "dot"):
    _METHODS[_n] = Evaluator.m_matmul
for _n in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
    _METHODS[_n] = Evaluator.m_new_factory
_METHODS["size"] = Evaluator.m_size
for _n in ("dim", "ndimension", "numel", "item"):
    _METHODS[_n] = Evaluator.m_scalar
_METHODS["narrow"] = Evaluator.m_narrow


_HANDLERS: dict = {
    cst.Name: Evaluator._name,
    cst.Integer: Evaluator._integer,
    cst.Float: Evaluator._float,
    cst.SimpleString: Evaluator._string,
    cst.Tuple: Evaluator._sequence,
    cst.List: Evaluator._sequence,
    cst.UnaryOperation: Evaluator._unary,
    cst.IfExp: Evaluator._ifexp,
    cst.Attribute: Evaluator._attribute,
    cst.Subscript: Evaluator._subscript,
    cst.BinaryOperation: Evaluator._binary,
    cst.Comparison: Evaluator._comparison,
    cst.Call: Evaluator._call,
}
