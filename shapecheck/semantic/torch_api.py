"""What torch does, as plain data: the one table of torch behaviour that the inference and the
rules read.

Every entry was read from torch 2.13 (CPU) and is probed again by ``tests/semantic/test_torch_api.py``,
which fails when an entry and torch disagree. Names are bare torch names: ``"zeros"`` is
``torch.zeros``, ``"add_"`` is ``Tensor.add_``; dotted names (``"linalg.inv"``) are relative to
``torch``. The linter never imports torch: this module holds literals only and imports nothing
outside the standard library.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

# --- dtypes ---------------------------------------------------------------------------------

#: Every ``torch.<name>`` dtype with an arithmetic kind: ``"bool"``, ``"int"``, ``"float"`` or
#: ``"complex"``. Left out: the quantized (``qint8``...) and raw-bits (``bits8``...) dtypes.
DTYPE_KINDS: Mapping[str, str] = MappingProxyType({
    "bool": "bool",
    **dict.fromkeys("""
        int8 int16 int32 int64 uint8 uint16 uint32 uint64 long int short int1 int2 int3 int4 int5
        int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7 bit
        """.split(), "int"),
    **dict.fromkeys("""
        float16 float32 float64 bfloat16 half float double float8_e4m3fn float8_e5m2
        float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2
        """.split(), "float"),
    **dict.fromkeys(("complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble"), "complex"),
})
INT_DTYPES = frozenset(name for name, kind in DTYPE_KINDS.items() if kind == "int")
BOOL_DTYPES = frozenset(name for name, kind in DTYPE_KINDS.items() if kind == "bool")
FLOAT_DTYPES = frozenset(name for name, kind in DTYPE_KINDS.items() if kind == "float")
COMPLEX_DTYPES = frozenset(name for name, kind in DTYPE_KINDS.items() if kind == "complex")
#: The dtype kinds in torch's promotion order: an elementwise op of tensors of two kinds gives the
#: later kind (``int`` with ``float`` gives ``float``).
DTYPE_KIND_ORDER = ("bool", "int", "float", "complex")

# --- factories ------------------------------------------------------------------------------

#: ``torch`` functions that build a new tensor from sizes, a range or data, on the default device
#: unless given ``device=`` (they all take ``device=`` and ``dtype=``).
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
    "logspace", "eye", "tensor", "as_tensor",
})
#: Factories whose sizes are the positional arguments or one sequence (``torch.zeros(2, 3)``,
#: ``torch.zeros((2, 3))``, ``torch.zeros(size=(2, 3))``).
SIZE_ARGUMENT_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})
#: ``torch`` factories with a size argument (a shape, ``n`` or ``steps``) that raises on a
#: negative value.
SIZED_FACTORIES = frozenset({
    "zeros", "ones", "empty", "rand", "randn", "full", "randint", "empty_strided", "randperm",
    "eye", "linspace", "logspace",
})
#: Factories whose sizes are separate arguments: the (position, keyword) of each
#: (``torch.eye(n, m)``, ``torch.randperm(n)``, ``torch.linspace(start, end, steps)``).
FACTORY_SIZE_PARAMETERS: Mapping[str, tuple[tuple[int, str], ...]] = MappingProxyType({
    "eye": ((0, "n"), (1, "m")), "randperm": ((0, "n"),), "linspace": ((2, "steps"),),
    "logspace": ((2, "steps"),),
})
#: Factories whose result has the default float dtype when no ``dtype=`` is given.
#: ``full`` is not one: its dtype follows the fill value (``torch.full((2,), 1)`` is int64).
FLOAT_DEFAULT_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn", "linspace", "logspace", "eye"})
#: Factories whose result is int64 when no ``dtype=`` is given.
INT_DEFAULT_FACTORIES = frozenset({"randint", "randperm"})
#: ``torch.*_like`` factories: the shape, and unless told otherwise the dtype and device, of
#: their first argument.
LIKE_FACTORIES = frozenset({
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
})
#: Other ``torch`` functions that build a new tensor.
OTHER_FACTORIES = frozenset({"scalar_tensor", "from_numpy", "empty_strided", "normal", "tril_indices", "triu_indices"})
#: Every ``torch`` function above that builds a tensor.
ALL_FACTORIES = FACTORIES | LIKE_FACTORIES | OTHER_FACTORIES
#: Legacy tensor classes of ``torch`` that build a CPU tensor when called.
LEGACY_TENSOR_CLASSES = frozenset({"Tensor", "FloatTensor", "LongTensor"})
#: the calls that make a new tensor on the default device unless told otherwise: the
#: :data:`FACTORIES` and the legacy constructors (CPU only)
FACTORIES_AND_LEGACY = FACTORIES | LEGACY_TENSOR_CLASSES
#: ``Tensor.new_*`` methods: a new tensor with the receiver's dtype and device.
NEW_TENSOR_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
#: ``Tensor.new_*`` methods whose first argument is a size (not data).
SIZED_NEW_TENSOR_METHODS = NEW_TENSOR_METHODS - {"new_tensor"}

# --- in-place methods -----------------------------------------------------------------------

#: ``Tensor`` methods that change their receiver's values (or its shape, strides or storage) in
#: place and return it: every public method whose name ends in ``_`` except
#: :data:`NOT_VALUE_CHANGING_UNDERSCORE_METHODS`. ``torch.<name>`` functions of these names do the
#: same to their first argument.
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
#: Public ``Tensor`` methods ending in ``_`` that leave the values, shape and storage alone: they
#: change autograd bookkeeping or the storage's sharing only.
NOT_VALUE_CHANGING_UNDERSCORE_METHODS = frozenset({"requires_grad_", "detach_", "share_memory_"})
#: In-place methods that change the receiver's shape or strides (or swap its storage).
INPLACE_RESHAPING_METHODS = frozenset({
    "as_strided_", "resize_", "resize_as_", "resize_as_sparse_", "set_", "sparse_resize_",
    "sparse_resize_and_clear_", "squeeze_", "unsqueeze_", "swapaxes_", "swapdims_", "t_",
    "transpose_",
})
#: In-place methods that keep the receiver's shape and strides.
INPLACE_SHAPE_KEEPING_METHODS = INPLACE_METHODS - INPLACE_RESHAPING_METHODS
#: In-place methods that overwrite every value without reading the old ones (constants, random
#: draws).
INPLACE_FILLING_METHODS = frozenset({
    "fill_", "zero_", "normal_", "uniform_", "bernoulli_", "random_", "exponential_", "cauchy_",
    "log_normal_", "geometric_",
})
#: ``torch.nn.functional`` functions that change their input in place when given ``inplace=True``.
FUNCTIONAL_INPLACE_KW = frozenset({
    "relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "rrelu", "silu", "mish",
    "hardswish", "hardsigmoid", "threshold", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout",
})
#: ``torch.nn.functional`` functions that change their input in place by name.
FUNCTIONAL_INPLACE = frozenset({"relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "rrelu_", "threshold_"})

# --- comparisons and other boolean results --------------------------------------------------

#: Each comparison alias and the comparison it spells.
COMPARISON_ALIASES: Mapping[str, str] = MappingProxyType({
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
})
#: Elementwise comparisons (torch functions and Tensor methods), aliases included: a bool tensor.
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"}) | frozenset(COMPARISON_ALIASES)
#: Elementwise ops whose result is a bool tensor whatever the input dtype.
BOOL_RESULT_ELEMENTWISE = COMPARISONS | {
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "isclose",
    "logical_not", "logical_and", "logical_or", "logical_xor",
}
#: torch functions and Tensor methods that return a Python ``bool``, not a tensor.
PYTHON_BOOL_RESULTS = frozenset({
    "equal", "allclose", "is_tensor", "is_storage", "is_floating_point", "is_complex",
    "is_nonzero", "is_same_size", "is_contiguous", "is_pinned", "is_shared", "is_signed",
    "is_inference", "is_set_to", "is_conj", "is_neg",
})
#: Other functions of ``torch`` (dotted after ``torch.``) that take no argument and return a
#: Python ``bool``.
TORCH_BOOL_FUNCTIONS = frozenset({
    "is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "is_anomaly_enabled", "is_warn_always_enabled", "cuda.is_available", "cuda.is_initialized",
    "backends.mps.is_available", "backends.cudnn.is_available", "distributed.is_available",
    "distributed.is_initialized", "jit.is_scripting", "jit.is_tracing", "compiler.is_compiling",
    "onnx.is_in_onnx_export",
})
#: Tensor attributes (not methods) that are Python bools.
TENSOR_BOOL_ATTRIBUTES = frozenset({
    "requires_grad", "is_leaf", "is_cpu", "is_cuda", "is_ipu", "is_maia", "is_meta", "is_mkldnn",
    "is_mps", "is_mtia", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan",
    "is_xla", "is_xpu",
})

# --- elementwise ops ------------------------------------------------------------------------

#: One-tensor ops (Tensor method, torch function or ``nn.functional`` function of that name)
#: whose every output element depends on the input element at the same place only.
ELEMENTWISE_UNARY = frozenset({
    "abs", "neg", "exp", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh",
    "relu", "gelu", "silu", "sin", "cos", "tan", "floor", "ceil", "round", "sign", "clamp",
    "clip", "reciprocal", "square", "erf", "erfc", "exp2", "expm1", "logical_not", "bitwise_not",
    "nan_to_num", "trunc", "frac", "sinh", "cosh", "asin", "acos", "atan", "clamp_min",
    "clamp_max", "leaky_relu", "elu", "softplus", "mish", "hardtanh", "relu6", "selu", "celu",
    "hardswish", "hardsigmoid", "softsign", "logsigmoid", "dropout", "alpha_dropout",
    "tanhshrink", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "sgn",
    "deg2rad", "rad2deg", "positive", "conj",
})
#: Ops whose result has the shape of their first tensor but that are not elementwise: along a
#: dim (``softmax``, ``cumsum``) or with a mask (``masked_fill``).
SHAPE_KEEPING_NOT_ELEMENTWISE = frozenset({
    "softmax", "log_softmax", "cumsum", "cumprod", "masked_fill", "tril", "triu",
})
#: Every one-tensor op whose result has its input's shape.
SHAPE_KEEPING_UNARY = ELEMENTWISE_UNARY | SHAPE_KEEPING_NOT_ELEMENTWISE
#: One-tensor ops that never give an integer tensor: on one they give a float tensor (or raise,
#: as ``softmax`` does).
NEVER_INTEGER_UNARY = frozenset({"sigmoid", "softmax", "log_softmax", "exp", "log", "sqrt", "rsqrt", "tanh"})
#: Elementwise ops of two operands (torch function and Tensor method): the result has their
#: broadcast shape.
ELEMENTWISE_BINARY = frozenset({
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
    "maximum", "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "atan2", "hypot", "subtract", "multiply", "divide", "fmax", "fmin", "xlogy",
    "isclose",
}) | COMPARISONS
#: ``torch`` functions that broadcast all their tensor arguments together.
BROADCASTING_FUNCTIONS = ELEMENTWISE_BINARY | {"where"}
#: Ops that take two matrices (or batches, vectors) and multiply them.
MATRIX_PRODUCTS = frozenset({"matmul", "mm", "bmm", "mv", "dot"})
#: torch functions (dotted after ``torch.``) and Tensor methods that invert a matrix.
MATRIX_INVERSES = frozenset({"inverse", "linalg.inv"})
#: Qualified names of torch's einsum.
EINSUM_FUNCTIONS = frozenset({"torch.einsum", "torch.functional.einsum"})

# --- reductions -----------------------------------------------------------------------------

#: Ops (torch function and Tensor method) that reduce over the dims they are given, or over all.
REDUCTIONS = frozenset({
    "sum", "mean", "prod", "std", "var", "norm", "logsumexp", "amax", "amin", "max", "min",
    "median", "nansum", "nanmean", "any", "all", "argmax", "argmin", "count_nonzero", "nanmedian",
})
#: Reductions whose first positional argument is not the dim (``x.norm(p, dim)``).
REDUCTIONS_DIM_SECOND = frozenset({"norm"})
#: Reductions that return a ``(values, indices)`` pair when given a dim, one tensor without.
VALUES_INDICES_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
#: Ops that always return a ``(values, indices)`` pair.
VALUES_INDICES_ALWAYS = frozenset({"sort", "topk", "kthvalue", "mode", "cummax", "cummin"})
#: Every op that can return a ``(values, indices)`` pair: its ``.indices`` (``[1]``) are int64.
VALUES_INDICES_OPS = VALUES_INDICES_WITH_DIM | VALUES_INDICES_ALWAYS
#: Ops that return a ``(min, max)`` pair of values (no indices).
MIN_MAX_PAIR_OPS = frozenset({"aminmax"})
#: Ops of :data:`VALUES_INDICES_ALWAYS` that reduce: they drop their dim (``-1`` when not
#: given) unless ``keepdim=True``.
REDUCING_PAIR_OPS = frozenset({"mode", "kthvalue"})
#: ``torch`` functions (no Tensor method) that return a ``(std or var, mean)`` pair, both
#: reduced over the dims they are given (every dim when none).
REDUCTION_PAIR_FUNCTIONS = frozenset({"std_mean", "var_mean"})

# --- autograd -------------------------------------------------------------------------------

#: Ops whose result does not require grad even when their input does: indices, counts and
#: booleans.
NO_GRAD_RESULT_OPS = BOOL_RESULT_ELEMENTWISE | {
    "argmax", "argmin", "argsort", "count_nonzero", "any", "all", "nonzero",
}
#: ``torch`` functions whose result is an ``int64`` tensor of indices or counts (``bincount``
#: without ``weights``), verified on torch 2.13.
INT64_RESULT_FUNCTIONS = frozenset({"bincount", "bucketize", "searchsorted", "multinomial"})
#: Step functions: their result requires grad, but the gradient is zero everywhere.
ZERO_GRADIENT_OPS = frozenset({"round", "floor", "ceil", "trunc", "sign"})
#: Ops whose result gives its input no useful gradient: none at all, or zero.
NON_DIFFERENTIABLE_OPS = NO_GRAD_RESULT_OPS | ZERO_GRADIENT_OPS
#: ``torch`` functions (dotted) that run backward.
BACKWARD_FUNCTIONS = frozenset({"autograd.backward", "autograd.grad"})
#: Dotted names under ``torch`` of the parameter class.
PARAMETER_CLASSES = frozenset({"nn.Parameter", "nn.parameter.Parameter"})

# Which tensors an op saves for backward, read from ``out.grad_fn._saved_*``: the operand it is
# called on (``self``), the other operand (``other``) or its own result (``result``).
SELF = "self"
OTHER = "other"
RESULT = "result"
#: the role of a module's own parameters, saved by a call of the module (see
#: :mod:`~shapecheck.semantic.backward_saves`)
WEIGHTS = "weights"

#: One-tensor ops (torch function, Tensor method or ``nn.functional`` function of that name)
#: when their input requires grad: the roles they save. Ops absent here are not tracked.
UNARY_SAVES: Mapping[str, frozenset[str]] = MappingProxyType({
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
    # norms save their input and their result (`_saved_self`, `_saved_result`)
    **{name: frozenset({SELF, RESULT}) for name in ("norm", "vector_norm")},
})

#: ``nn`` layers (class names) that save their input for the gradient of their weight: the input
#: is saved whenever the layer's parameters require grad, whether or not the input does
#: (verified on torch 2.13: changing the input in place after the call makes backward raise).
WEIGHT_LAYERS_SAVING_INPUT = frozenset({
    "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "PReLU",
})
#: ``nn`` layers that save their input when the input requires grad
LAYERS_SAVING_INPUT = frozenset({
    "GELU", "SiLU", "Mish", "ELU", "LeakyReLU", "Softplus", "Hardswish", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", *WEIGHT_LAYERS_SAVING_INPUT,
})
#: ``nn`` layers that save their output when their input requires grad
LAYERS_SAVING_RESULT = frozenset({"ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax"})
#: ``nn.functional`` functions that save their input for the gradient of a weight argument:
#: the position of that argument (also accepted as ``weight=``)
FUNCTIONS_SAVING_INPUT_FOR_WEIGHT: Mapping[str, int] = MappingProxyType({
    "nn.functional.linear": 1, "nn.functional.conv1d": 1, "nn.functional.conv2d": 1,
    "nn.functional.conv3d": 1, "nn.functional.layer_norm": 2, "nn.functional.group_norm": 2,
})

# binary saves, keyed by (self requires grad, other requires grad)
_SavedByGrads = Mapping[tuple[bool, bool], frozenset[str]]
_EACH_NEEDS_THE_OTHER: _SavedByGrads = MappingProxyType({
    (True, True): frozenset({SELF, OTHER}),
    (True, False): frozenset({OTHER}),
    (False, True): frozenset({SELF}),
})
_DIV: _SavedByGrads = MappingProxyType({
    (True, True): frozenset({SELF, OTHER}),
    (True, False): frozenset({OTHER}),
    (False, True): frozenset({SELF, OTHER}),
})
_BOTH: _SavedByGrads = MappingProxyType({key: frozenset({SELF, OTHER}) for key in _EACH_NEEDS_THE_OTHER})
_NOTHING: _SavedByGrads = MappingProxyType({key: frozenset() for key in _EACH_NEEDS_THE_OTHER})

#: Ops of two tensors: the roles they save, keyed by ``(self requires grad, other requires
#: grad)``; nothing is saved when neither does.
BINARY_SAVES: Mapping[str, _SavedByGrads] = MappingProxyType({
    "mul": _EACH_NEEDS_THE_OTHER,
    "multiply": _EACH_NEEDS_THE_OTHER,
    "matmul": _EACH_NEEDS_THE_OTHER,
    "mm": _EACH_NEEDS_THE_OTHER,
    "bmm": _EACH_NEEDS_THE_OTHER,
    "dot": _EACH_NEEDS_THE_OTHER,
    "div": _DIV,
    "divide": _DIV,
    "true_divide": _DIV,
    "pow": MappingProxyType({key: frozenset({SELF, OTHER, RESULT}) for key in _EACH_NEEDS_THE_OTHER}),
    "maximum": _BOTH,
    "minimum": _BOTH,
    "atan2": _BOTH,
    "add": _NOTHING,
    "sub": _NOTHING,
})
#: A tensor op a Python number (``x * 2``, ``x ** 2``): the roles saved when the tensor requires
#: grad.
SCALAR_SAVES: Mapping[str, frozenset[str]] = MappingProxyType({
    "mul": frozenset(), "div": frozenset(), "add": frozenset(), "sub": frozenset(),
    "pow": frozenset({SELF}),
})
#: Python operators (libcst class names) and the torch op they call.
OPERATOR_OPS: Mapping[str, str] = MappingProxyType({
    "Multiply": "mul", "Divide": "div", "Add": "add", "Subtract": "sub",
    "MatrixMultiply": "matmul", "Power": "pow",
})

# --- casts and moves ------------------------------------------------------------------------

#: Tensor methods that cast to a dtype, and the kind of that dtype.
CAST_METHODS: Mapping[str, str] = MappingProxyType({
    "float": "float", "double": "float", "half": "float", "bfloat16": "float",
    "long": "int", "int": "int", "short": "int", "byte": "int", "char": "int", "bool": "bool",
    "cfloat": "complex", "cdouble": "complex", "chalf": "complex",
})
#: Tensor methods that return a copy on another device (``to`` also casts).
TENSOR_DEVICE_METHODS = frozenset({"to", "cuda", "cpu", "xpu", "ipu", "mtia"})
#: Tensor methods that return a converted tensor and leave the receiver as it was.
CONVERTING_METHODS = frozenset(CAST_METHODS) | TENSOR_DEVICE_METHODS | {"type"}
#: Tensor methods that return the receiver itself when its dtype and device already match, a
#: converted copy otherwise.
SELF_IF_UNCHANGED_METHODS = frozenset(CAST_METHODS) | {"to", "type", "type_as", "cuda", "cpu", "pin_memory"}
#: Tensor methods whose result shares the receiver's storage unchanged.
SAME_STORAGE_METHODS = frozenset({"detach", "detach_", "requires_grad_"})
#: ``nn.Module`` methods that move its parameters and buffers to another device in place.
MODULE_DEVICE_METHODS = frozenset({"to", "cuda", "cpu", "xpu", "ipu", "mtia", "to_empty"})
#: ``nn.Module`` methods that return the module itself.
MODULE_METHODS_RETURNING_SELF = frozenset({
    "to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16", "requires_grad_",
    "type", "apply", "share_memory", "to_empty",
})

# --- tensor attributes and layout methods ---------------------------------------------------

#: Tensor attributes that are properties: assigning one fails or does something else than
#: rebinding (``x.real = y`` copies into ``x``, ``x.data = y`` swaps its storage).
TENSOR_PROPERTIES = frozenset({
    "T", "mT", "H", "mH", "real", "imag", "data", "grad", "grad_fn", "shape", "device", "dtype",
    "layout", "is_leaf", "requires_grad",
})
#: Tensor attributes that describe it without reading its values.
TENSOR_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout"})
#: Tensor methods that describe it without reading its values; none returns a tensor.
TENSOR_METADATA_METHODS = frozenset({
    "size", "dim", "numel", "nelement", "stride", "data_ptr", "element_size", "is_contiguous",
    "storage_offset", "get_device", "__len__",
})
#: Tensor methods that return its values as Python or numpy objects.
TENSOR_TO_PYTHON_METHODS = frozenset({"item", "tolist", "numpy"})
#: Tensor methods that take a target shape with at most one ``-1``.
RESHAPE_METHODS = frozenset({"view", "reshape"})
#: Tensor methods (and torch functions) that reorder the dims and return a view.
DIM_PERMUTING_METHODS = frozenset({"transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis"})
#: Tensor methods that ``numpy.ndarray`` lacks: a receiver that has them is a tensor.
TENSOR_ONLY_METHODS = frozenset({
    "contiguous", "permute", "unsqueeze", "masked_fill", "requires_grad_", "detach", "cuda",
    "expand", "expand_as", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
    "type_as",
})

# --- devices --------------------------------------------------------------------------------

#: ``torch`` functions whose tensor arguments must be on one device.
DEVICE_MATCHING_FUNCTIONS = frozenset({
    "add", "sub", "mul", "div", "matmul", "mm", "bmm", "dot", "where", "maximum", "minimum",
    "cdist", "outer", "cross", "lerp", "addmm", "baddbmm", "einsum",
})
#: Tensor methods whose tensor argument must be on the receiver's device.
DEVICE_MATCHING_METHODS = frozenset({
    "add", "sub", "mul", "div", "matmul", "mm", "bmm", "dot", "add_", "sub_", "mul_", "div_",
    "maximum", "minimum", "lerp", "lerp_",
})
#: Tensor methods whose first argument is a mask that must sit on the receiver's device.
MASK_METHODS = frozenset({"masked_fill", "masked_fill_"})
#: ``torch`` functions (and the Tensor methods of the same name) taking an index tensor that must sit
#: on the input's device: name -> (the index's position in the function form, its keyword); the
#: method form has it one position earlier
INDEX_ARGUMENT_OPS: Mapping[str, tuple[int, str]] = MappingProxyType({
    "gather": (2, "index"), "take_along_dim": (1, "indices"), "index_select": (2, "index"),
})
#: ``torch`` functions that join a sequence of tensors (one device for all).
CONCAT_FUNCTIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"})

# --- nn layers ------------------------------------------------------------------------------

_WEIGHT_BIAS = ("weight", "bias")
#: ``torch.nn`` layers and the parameters they hold directly (not through a submodule), built
#: with their default arguments.
NN_LAYER_PARAMETERS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    **dict.fromkeys("""
        Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d
        ConvTranspose3d LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d
        LazyConvTranspose3d LayerNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm
        """.split(), _WEIGHT_BIAS),
    **dict.fromkeys(("Embedding", "EmbeddingBag", "PReLU", "RMSNorm"), ("weight",)),
    **dict.fromkeys(("RNN", "LSTM", "GRU"), ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")),
    **dict.fromkeys(("RNNCell", "LSTMCell", "GRUCell"), ("weight_ih", "weight_hh", "bias_ih", "bias_hh")),
    "MultiheadAttention": ("in_proj_weight", "in_proj_bias"),
    **dict.fromkeys(("TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer"), ()),
})
#: Layers of :data:`NN_LAYER_PARAMETERS` with a constructor argument (default ``True``) that
#: leaves out all their direct parameters when false: its name and position.
NN_PARAMETER_SWITCHES: Mapping[str, tuple[str, int]] = MappingProxyType({
    "LayerNorm": ("elementwise_affine", 2),
    "RMSNorm": ("elementwise_affine", 2),
    "GroupNorm": ("affine", 3),
    **dict.fromkeys(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"), ("affine", 3)),
})
#: Layers whose ``bias`` argument is often passed by position: that position.
NN_BIAS_POSITIONS: Mapping[str, int] = MappingProxyType({"Linear": 2, "Bilinear": 3})
#: ``torch.nn`` modules that hold no parameter or buffer, whatever their arguments.
NN_STATELESS_MODULES = frozenset(
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
#: ``torch.nn`` losses that hold nothing unless given a tensor (``weight=``, ``pos_weight=``).
NN_LOSS_MODULES = frozenset(
    """
    BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss
    HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss MSELoss MarginRankingLoss MultiLabelMarginLoss
    MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d PoissonNLLLoss SmoothL1Loss
    SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss
    """.split()
)
#: ``torch.nn`` losses that register a tensor they are given as a buffer: ``{loss: {argument:
#: position}}`` (``nn.BCEWithLogitsLoss(weight, size_average, reduce, reduction, pos_weight)``)
NN_LOSS_WEIGHTS = {
    "BCELoss": {"weight": 0}, "BCEWithLogitsLoss": {"weight": 0, "pos_weight": 4},
    "CrossEntropyLoss": {"weight": 0}, "NLLLoss": {"weight": 0}, "NLLLoss2d": {"weight": 0},
    "MultiLabelSoftMarginLoss": {"weight": 0}, "MultiMarginLoss": {"weight": 2},
}
#: ``torch.nn.functional`` losses' tensor keyword arguments that must share the input's device
FUNCTIONAL_LOSS_WEIGHTS = frozenset({"weight", "pos_weight"})
#: ``torch.nn`` modules whose output has the shape of their input.
NN_SHAPE_KEEPING_MODULES = frozenset({
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "LayerNorm", "Identity", "LeakyReLU",
    "ELU", "Softmax", "LogSoftmax", "Mish", "Hardswish", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "GroupNorm", "RMSNorm", "Softplus",
})
#: Parameter names that ``torch.nn`` layers hold (``layer.weight``, ``layer.bias``).
LAYER_PARAMETER_NAMES = frozenset({"weight", "bias"})
#: ``torch.nn.functional`` losses; their first argument is the prediction.
FUNCTIONAL_LOSSES = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "ctc_loss",
})

# --- evidence: uses that only a tensor allows ------------------------------------------------

#: Tensor methods that ``numpy.ndarray``, ``nn.Module``, ``str``, ``list`` and ``dict`` all lack:
#: whatever they are called on is a tensor (whatever the arguments). Left out, although tensors
#: alone among those have them: names common elsewhere (``clone``: yacs configs; ``detach``: io
#: streams; ``scatter``: matplotlib axes; ``gather``, ``multinomial``: numpy's Generator;
#: ``expand``: sympy).
TENSOR_EVIDENCE_METHODS = frozenset({
    "contiguous", "permute", "unsqueeze", "unsqueeze_", "masked_fill", "masked_fill_", "expand_as",
    "type_as", "numel", "nelement", "softmax", "log_softmax", "masked_select", "index_select",
    "narrow", "bmm", "mm", "mv", "matmul", "chunk", "unbind", "long", "int", "bool", "byte", "numpy",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "add_", "sub_", "mul_", "div_",
    "zero_", "fill_", "copy_", "clamp_", "normal_", "uniform_", "masked_scatter", "scatter_add",
    "index_add", "index_fill", "index_copy", "unfold", "bernoulli",
})
#: Tensor methods that are evidence only with some arguments: ``view`` with int sizes,
#: ``transpose`` with two dims, ``size`` with a dim, ``split`` with an int size or ``dim=``,
#: ``flatten`` with int dims, ``backward`` without a gradient, ``dim()``.
TENSOR_EVIDENCE_BY_ARGUMENTS = frozenset({"view", "transpose", "size", "split", "flatten", "backward", "dim"})
#: Tensor methods whose result is a tensor when their receiver is one (for a receiver that a
#: tensor-only use proves to be one).
TENSOR_RESULT_METHODS = frozenset({
    "view", "reshape", "transpose", "permute", "contiguous", "unsqueeze", "squeeze", "flatten",
    "expand", "expand_as", "masked_fill", "softmax", "log_softmax", "type_as", "detach", "clone",
    "narrow", "matmul", "bmm", "mm", "mv", "long", "int", "bool", "byte", "float", "double",
    "half", "to", "cuda", "cpu", "index_select", "gather", "masked_select",
})
#: ``torch.nn.functional`` functions whose result is one tensor of the rank of their first
#: argument (unless given ``return_indices=True``).
FUNCTIONAL_RANK_KEEPING = frozenset({
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate", "pad", "layer_norm", "batch_norm",
    "group_norm", "instance_norm", "local_response_norm", "rms_norm", "dropout1d", "dropout2d",
    "dropout3d", "glu", "normalize", "pixel_shuffle", "pixel_unshuffle", "softmin",
    "gumbel_softmax", "hardshrink", "softshrink",
})
#: Which dims of their input the functions of :data:`FUNCTIONAL_RANK_KEEPING` keep (others
#: keep none): ``"all"`` (the whole shape), ``"batch_channel"`` (dims 0 and 1 of a batched input,
#: dim 0 of an unbatched one: pools, ``interpolate``), ``"batch"`` (dim 0 of a batched input:
#: convolutions, pixel shuffles). A batched input has the op's spatial dims (``2d``: 2) plus two;
#: ``interpolate`` takes batched inputs only.
FUNCTIONAL_KEPT_DIMS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys("""
        layer_norm batch_norm group_norm instance_norm local_response_norm rms_norm dropout1d dropout2d
        dropout3d normalize softmin gumbel_softmax hardshrink softshrink
        """.split(), "all"),
    **dict.fromkeys("""
        max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d
        adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d interpolate
        """.split(), "batch_channel"),
    **dict.fromkeys("""
        conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d pixel_shuffle pixel_unshuffle
        """.split(), "batch"),
})
#: ``torch.nn.functional`` functions whose result has one dim more than their first argument.
FUNCTIONAL_RANK_ADDING = frozenset({"embedding", "one_hot"})
#: ``torch.nn`` layers whose output has the rank of their input (its sizes may change).
NN_RANK_KEEPING_MODULES = frozenset({
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "Upsample", "Dropout1d", "Dropout2d", "Dropout3d", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "PixelShuffle", "PixelUnshuffle",
    "ZeroPad2d", "ReflectionPad2d", "ReplicationPad2d", "ConstantPad2d",
})
#: Which dims of their input the layers of :data:`NN_RANK_KEEPING_MODULES` keep, as
#: :data:`FUNCTIONAL_KEPT_DIMS` says it (``Upsample`` takes batched inputs only).
NN_KEPT_DIMS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys("""
        Dropout1d Dropout2d Dropout3d InstanceNorm1d InstanceNorm2d InstanceNorm3d LocalResponseNorm
        """.split(), "all"),
    **dict.fromkeys("""
        AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d Upsample ZeroPad2d
        ReflectionPad2d ReplicationPad2d ConstantPad2d
        """.split(), "batch_channel"),
    **dict.fromkeys("""
        Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d PixelShuffle PixelUnshuffle
        """.split(), "batch"),
})
#: ``torch.nn`` layers whose output has one dim more than their input.
NN_RANK_ADDING_MODULES = frozenset({"Embedding"})

#: How the ``F`` functions of :data:`FUNCTIONAL_RANK_KEEPING` lay out their result when their
#: input is not a plain tensor (verified on torch 2.13, CPU): ``"contiguous"`` whatever the input;
#: ``"strides"``: the input's strides (elementwise-like); ``"format"``: torch's suggested memory
#: format, a 4-d input laid out channels-last gives a channels-last result, any other order a
#: contiguous one (a 3-d input: see :data:`FORMAT_CONTIGUOUS_3D`).
#: A function not listed (``glu``) gives a layout the linter does not know.
FUNCTIONAL_RESULT_LAYOUT: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys("linear layer_norm instance_norm softmax log_softmax softmin gumbel_softmax".split(),
                    "contiguous"),
    **dict.fromkeys("local_response_norm dropout1d dropout2d dropout3d normalize hardshrink softshrink".split(),
                    "strides"),
    **dict.fromkeys("""
        conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d max_pool1d max_pool2d
        max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
        adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d interpolate pad batch_norm group_norm
        rms_norm pixel_shuffle pixel_unshuffle
        """.split(), "format"),
})
#: the ``"format"`` functions whose 3-d result is contiguous whatever the input's order
FORMAT_CONTIGUOUS_3D = frozenset("conv1d conv_transpose1d max_pool1d interpolate pad".split())
#: the ``F`` function of :data:`FUNCTIONAL_RESULT_LAYOUT` that a ``torch.nn`` layer's ``forward``
#: calls on its input, so its output is laid out as that function's (verified on torch 2.13, CPU)
NN_LAYER_FUNCTION: Mapping[str, str] = MappingProxyType({
    **{f"{layer}{n}d": f"{function}{n}d" for n in (1, 2, 3) for layer, function in (
        ("Conv", "conv"), ("ConvTranspose", "conv_transpose"), ("MaxPool", "max_pool"), ("AvgPool", "avg_pool"),
        ("AdaptiveAvgPool", "adaptive_avg_pool"), ("AdaptiveMaxPool", "adaptive_max_pool"), ("Dropout", "dropout"))
        if f"{function}{n}d" in FUNCTIONAL_RESULT_LAYOUT},
    **{f"{layer}{n}d": function for n in (1, 2, 3) for layer, function in (
        ("BatchNorm", "batch_norm"), ("InstanceNorm", "instance_norm"))},
    "LayerNorm": "layer_norm", "GroupNorm": "group_norm", "RMSNorm": "rms_norm", "Softmax": "softmax",
    "LogSoftmax": "log_softmax", "Softmin": "softmin", "Upsample": "interpolate", "PixelShuffle": "pixel_shuffle",
    "PixelUnshuffle": "pixel_unshuffle", "LocalResponseNorm": "local_response_norm",
})
