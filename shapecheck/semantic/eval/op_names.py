"""The names of torch ops the evaluator groups by behaviour (bare names: ``"add"`` is
``torch.add`` and ``Tensor.add``)."""

from __future__ import annotations

from shapecheck.semantic.shape_ops import CAST_METHODS

REDUCTIONS = {
    "sum", "mean", "prod", "std", "var", "norm", "logsumexp", "amax", "amin", "max", "min",
    "median", "nansum", "nanmean", "any", "all", "argmax", "argmin", "count_nonzero", "nanmedian",
}
#: reductions that return a (values, indices) pair when given a dim
PAIR_WITH_DIM = {"max", "min", "median", "nanmedian", "mode"}
#: ops that always return a (values, indices) pair
ALWAYS_PAIR = {"sort", "topk", "kthvalue", "mode", "cummax", "cummin", "aminmax"}
#: reductions whose first positional argument is not the dim
DIM_NOT_FIRST = {"norm"}

ELEMENTWISE_UNARY = {
    "abs", "neg", "exp", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh",
    "relu", "gelu", "silu", "sin", "cos", "tan", "floor", "ceil", "round", "sign", "clamp", "clip",
    "reciprocal", "square", "erf", "erfc", "exp2", "expm1", "logical_not", "bitwise_not",
    "nan_to_num", "softmax", "log_softmax", "trunc", "frac", "sinh", "cosh", "asin", "acos",
    "atan", "clamp_min", "clamp_max", "masked_fill", "leaky_relu", "elu", "softplus", "mish",
    "hardtanh", "relu6", "selu", "celu", "hardswish", "hardsigmoid", "softsign", "logsigmoid",
    "dropout", "alpha_dropout", "tanhshrink", "cumsum", "cumprod", "isnan", "isinf",
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
LIKE_FACTORIES = {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                  "randint_like"}
MOVE_METHODS = {"transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis"}

#: torch functions and Tensor methods that return a Python ``bool``, not a tensor
PYTHON_BOOL_RESULTS = frozenset(
    {"equal", "allclose", "is_tensor", "is_storage", "is_floating_point", "is_complex",
     "is_nonzero", "is_same_size", "is_contiguous", "is_pinned", "is_shared", "is_signed",
     "is_inference", "is_set_to", "is_conj", "is_neg"}
)
#: other ``torch.*`` functions (dotted after ``torch.``) that return a Python ``bool``
TORCH_BOOL_FUNCTIONS = frozenset(
    {"is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled",
     "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
     "is_anomaly_enabled", "is_warn_always_enabled", "cuda.is_available", "cuda.is_initialized",
     "backends.mps.is_available", "backends.cudnn.is_available", "distributed.is_available",
     "distributed.is_initialized", "jit.is_scripting", "jit.is_tracing", "compiler.is_compiling",
     "onnx.is_in_onnx_export"}
)
#: Tensor attributes that are Python bools
BOOL_ATTRS = frozenset(
    {"is_cuda", "requires_grad", "is_leaf", "is_sparse", "is_quantized", "is_meta", "is_cpu",
     "is_mps", "is_nested", "is_xpu", "is_mkldnn"}
)

MODULE_METHODS_RETURNING_SELF = {"to", "cuda", "cpu", "train", "eval", "float", "double", "half",
                                 "bfloat16", "requires_grad_", "type", "apply", "share_memory",
                                 "to_empty", "zero_grad"}

#: tensor methods that ``torch.<name>(x, ...)`` computes like ``x.<name>(...)``
SHAPE_METHODS = {"view", "reshape", "flatten", "transpose", "swapaxes", "swapdims", "permute", "t",
                 "movedim", "moveaxis", "unsqueeze", "squeeze", "narrow", "expand", "contiguous",
                 "masked_fill"}
#: methods no other common library has: their receiver is a tensor
TENSOR_ONLY_METHODS = {"contiguous", "permute", "unsqueeze", "masked_fill", "requires_grad_",
                       "detach", "cuda", "expand", "expand_as", "new_zeros", "new_ones",
                       "new_empty", "new_full", "new_tensor", "type_as"}
#: ops that return the same storage (layout unchanged)
SAME_STORAGE = {"detach", "detach_", "requires_grad_"}
#: ops that return the input itself when nothing changes, else a copy
MAYBE_COPY = set(CAST_METHODS) | {"to", "type", "type_as", "cuda", "cpu", "pin_memory"}
#: ``Tensor.new_*`` methods: a new tensor with the receiver's dtype and device
NEW_FACTORIES = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor")
#: matrix products, as methods and as ``torch`` functions
MATRIX_PRODUCTS = ("matmul", "mm", "bmm", "mv", "dot")
