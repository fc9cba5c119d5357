"""Tables of torch behaviour that the autograd, device and pitfall rules read.

Every table here was read from torch itself (torch 2.13, CPU); the test
``tests/test_rules_autograd_saved_table.py`` probes torch again and fails when a table and torch
disagree. The linter never imports torch: these are plain literals.
"""

from __future__ import annotations

from typing import Optional

#: torch functions and Tensor methods that return a Python ``bool``, not a tensor: a table of the
#: inference (their facts have kind ``"bool"``), re-exported here with the other torch tables
from shapecheck.semantic.evaluator import PYTHON_BOOL_RESULTS  # noqa: F401

#: Tensor methods that change their receiver's data (or its metadata) in place. All public
#: ``torch.Tensor`` methods whose name ends in ``_``, except those that only change autograd
#: bookkeeping (``requires_grad_``, ``detach_``) or the storage's sharing (``share_memory_``).
INPLACE_METHODS = frozenset(
    """
    abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ apply_
    arccos_ arccosh_ arcsin_ arcsinh_ arctan2_ arctan_ arctanh_ as_strided_ asin_ asinh_ atan2_
    atan_ atanh_ baddbmm_ bernoulli_ bitwise_and_ bitwise_left_shift_ bitwise_not_ bitwise_or_
    bitwise_right_shift_ bitwise_xor_ cauchy_ ceil_ clamp_ clamp_max_ clamp_min_ clip_
    conj_physical_ copy_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ digamma_ div_ divide_
    eq_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ exponential_ fill_ fill_diagonal_ fix_
    float_power_ floor_ floor_divide_ fmod_ frac_ gcd_ ge_ geometric_ greater_ greater_equal_
    gt_ heaviside_ hypot_ i0_ igamma_ igammac_ index_add_ index_copy_ index_fill_ index_put_
    index_reduce_ lcm_ ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_ log2_ log_
    log_normal_ logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ map2_ map_
    masked_fill_ masked_scatter_ mul_ multiply_ mvlgamma_ nan_to_num_ ne_ neg_ negative_
    nextafter_ normal_ not_equal_ polygamma_ pow_ put_ rad2deg_ random_ reciprocal_ relu_
    remainder_ renorm_ resize_ resize_as_ resize_as_sparse_ round_ rsqrt_ scatter_
    scatter_add_ scatter_reduce_ set_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sparse_resize_
    sparse_resize_and_clear_ sqrt_ square_ squeeze_ sub_ subtract_ swapaxes_ swapdims_ t_ tan_
    tanh_ transpose_ tril_ triu_ true_divide_ trunc_ uniform_ unsqueeze_ xlogy_ zero_
    """.split()
)

#: Public ``torch.Tensor`` methods ending in ``_`` that do not modify the tensor's values.
NOT_INPLACE_UNDERSCORE = frozenset({"requires_grad_", "detach_", "share_memory_"})

#: ``torch.nn.functional`` functions that take ``inplace=True``.
FUNCTIONAL_INPLACE_KW = frozenset(
    {
        "relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "rrelu", "silu",
        "mish", "hardswish", "hardsigmoid", "threshold", "dropout", "dropout1d", "dropout2d",
        "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    }
)

#: ``torch.nn.functional`` functions that are in place by name.
FUNCTIONAL_INPLACE = frozenset(
    {"relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "rrelu_", "threshold_"}
)

# --- which tensors an op saves for backward ------------------------------------------------
# Read from ``out.grad_fn._saved_*`` on torch 2.13 (see the test named above).

SELF = "self"
OTHER = "other"
RESULT = "result"

#: Unary ops (torch function, Tensor method or nn.functional function of the same name) when
#: their input requires grad: the roles they save. Ops absent here are not tracked.
UNARY_SAVES: dict[str, frozenset[str]] = {
    **{name: frozenset({RESULT}) for name in (
        "exp", "exp2", "expm1", "sigmoid", "tanh", "relu", "sqrt", "rsqrt", "reciprocal",
        "softmax", "log_softmax", "tan",
    )},
    **{name: frozenset({SELF}) for name in (
        "log", "log2", "log10", "log1p", "sin", "cos", "sinh", "cosh", "asin", "atan", "abs",
        "erf", "square", "clamp", "gelu", "silu", "mish", "elu", "leaky_relu", "softplus",
        "hardtanh", "relu6", "logsigmoid",
    )},
    **{name: frozenset() for name in ("neg", "sum", "mean", "sign")},
}

# For binary ops: saved roles keyed by (self requires grad, other requires grad).
_BOTH_NEEDED = {
    (True, True): frozenset({SELF, OTHER}),
    (True, False): frozenset({OTHER}),
    (False, True): frozenset({SELF}),
}
_ALWAYS_BOTH = {key: frozenset({SELF, OTHER}) for key in _BOTH_NEEDED}
_NONE = {key: frozenset() for key in _BOTH_NEEDED}

#: Binary ops between two tensors: the roles they save, by which operands require grad.
BINARY_SAVES: dict[str, dict[tuple[bool, bool], frozenset[str]]] = {
    "mul": _BOTH_NEEDED,
    "multiply": _BOTH_NEEDED,
    "matmul": _BOTH_NEEDED,
    "mm": _BOTH_NEEDED,
    "bmm": _BOTH_NEEDED,
    "dot": _BOTH_NEEDED,
    "div": {
        (True, True): frozenset({SELF, OTHER}),
        (True, False): frozenset({OTHER}),
        (False, True): frozenset({SELF, OTHER}),
    },
    "pow": {key: frozenset({SELF, OTHER, RESULT}) for key in _BOTH_NEEDED},
    "maximum": _ALWAYS_BOTH,
    "minimum": _ALWAYS_BOTH,
    "atan2": _ALWAYS_BOTH,
    "add": _NONE,
    "sub": _NONE,
}
BINARY_SAVES["divide"] = BINARY_SAVES["true_divide"] = BINARY_SAVES["div"]

#: A tensor op a Python number (``x * 2``, ``x ** 2``): the roles saved when ``x`` requires grad.
SCALAR_SAVES: dict[str, frozenset[str]] = {
    "mul": frozenset(),
    "div": frozenset(),
    "add": frozenset(),
    "sub": frozenset(),
    "pow": frozenset({SELF}),
}

#: Python operators and the op they call.
OPERATOR_OPS = {"Multiply": "mul", "Divide": "div", "Add": "add", "Subtract": "sub",
                "MatrixMultiply": "matmul", "Power": "pow"}


def saved_roles(op: str, self_grad: Optional[bool], other_grad: Optional[bool],
                other_is_number: bool = False) -> Optional[frozenset[str]]:
    """The roles (``self``, ``other``, ``result``) that ``op`` saves, or ``None`` when unknown.

    ``self_grad``/``other_grad`` say whether each operand requires grad (``None``: unknown).
    For a unary op pass ``other_grad=None`` and ``other_is_number=False``. Nothing is saved when
    no operand requires grad.
    """
    if op in UNARY_SAVES and other_grad is None and not other_is_number:
        if self_grad is None:
            return None
        return UNARY_SAVES[op] if self_grad else frozenset()
    if other_is_number:
        if op not in SCALAR_SAVES or self_grad is None:
            return None
        return SCALAR_SAVES[op] if self_grad else frozenset()
    table = BINARY_SAVES.get(op)
    if table is None or self_grad is None or other_grad is None:
        return None
    if not (self_grad or other_grad):
        return frozenset()
    return table[(self_grad, other_grad)]


# --- devices, dtypes, factories ---------------------------------------------------------------

#: torch functions that create a tensor and accept ``device=``.
FACTORIES = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
        "linspace", "logspace", "eye", "tensor", "as_tensor",
    }
)

#: Factories whose positional arguments are sizes (``torch.zeros(2, 3)``).
SIZE_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})

#: Tensor methods that return a moved or converted copy and leave the receiver unchanged.
MOVE_METHODS = frozenset(
    {"cuda", "cpu", "to", "float", "double", "half", "bfloat16", "long", "int", "short", "bool",
     "byte", "char", "mps", "type"}
)

#: dtype attribute names of the ``torch`` module, by kind.
INT_DTYPES = frozenset(
    {"long", "int", "short", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
     "uint64"}
)
BOOL_DTYPES = frozenset({"bool"})
FLOAT_DTYPES = frozenset(
    {"float", "double", "half", "float16", "float32", "float64", "bfloat16", "complex64",
     "complex128", "cfloat", "cdouble"}
)

#: Ops whose result has no useful gradient: indices (none at all) or step functions (zero).
NON_DIFFERENTIABLE_OPS = frozenset({"argmax", "argmin", "argsort", "round", "floor", "ceil",
                                    "trunc", "sign"})
#: Ops that return ``(values, indices)``: their ``.indices`` (or ``[1]``) are integers.
INDEX_PAIR_OPS = frozenset({"max", "min", "topk", "sort", "kthvalue", "mode", "median"})
COMPARISON_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "greater", "less",
                            "greater_equal", "less_equal", "not_equal"})

#: ``torch.nn.functional`` losses (first argument: the prediction).
FUNCTIONAL_LOSSES = frozenset(
    {
        "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
        "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
        "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
        "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_loss", "ctc_loss",
    }
)
