"""Every entry of ``shapecheck.semantic.torch_api``, probed against torch itself (2.13, CPU).

Probes that need CUDA are skipped when it is absent. Skipped altogether without torch.
"""

from __future__ import annotations

import inspect

import pytest

from shapecheck.semantic import torch_api as api

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional
T = torch.Tensor

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

# torch warns about beta and deprecated APIs that the probes call on purpose
pytestmark = pytest.mark.filterwarnings("ignore")


# --- shared inputs ------------------------------------------------------------------------------


def _sample() -> "torch.Tensor":
    """A 3x4 float tensor with both signs, magnitudes above and below 1, no integers, no zeros."""
    return torch.tensor([
        [-2.5, -1.5, -0.5, 0.25],
        [0.5, 1.5, 2.5, -3.5],
        [3.5, 0.75, -0.25, 1.25],
    ])


def _other() -> "torch.Tensor":
    """A positive 3x4 float tensor, different from :func:`_sample` everywhere."""
    return torch.arange(1.0, 13.0).reshape(3, 4) / 4 + 0.1


def _ints() -> "torch.Tensor":
    return torch.arange(1, 13).reshape(3, 4)


def _resolve(name: str):
    """The callable called ``name``: a Tensor method, else a torch function, else nn.functional."""
    for space in (T, torch, F):
        found = getattr(space, name, None)
        if found is not None:
            return found
    raise AssertionError(f"{name} is nowhere in torch")


def _dotted(root, path: str):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def _metadata(x) -> tuple:
    """Shape, strides and storage of ``x`` (shape alone for a sparse tensor)."""
    if x.layout != torch.strided:
        return (tuple(x.shape),)
    return tuple(x.shape), x.stride(), x.data_ptr()


def _same_values(a, b) -> bool:
    return a.shape == b.shape and torch.equal(a, b)


# --- dtypes -------------------------------------------------------------------------------------

_NO_ARITHMETIC_KIND = ("qint", "quint", "bits")


def _kind(dtype) -> str:
    if dtype is torch.bool:
        return "bool"
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating_point:
        return "float"
    return "int"


def test_dtype_kinds_name_every_torch_dtype_with_its_kind():
    dtypes = {name: value for name, value in vars(torch).items() if isinstance(value, torch.dtype)}
    arithmetic = {name for name in dtypes if not name.startswith(_NO_ARITHMETIC_KIND)}
    assert set(api.DTYPE_KINDS) == arithmetic
    for name, kind in api.DTYPE_KINDS.items():
        assert _kind(dtypes[name]) == kind, name


def test_dtype_kind_sets_split_the_kinds():
    assert api.INT_DTYPES | api.BOOL_DTYPES | api.FLOAT_DTYPES | api.COMPLEX_DTYPES == set(api.DTYPE_KINDS)
    assert {"long", "int64", "uint8"} <= api.INT_DTYPES and api.BOOL_DTYPES == {"bool"}
    assert "cfloat" in api.COMPLEX_DTYPES and "cfloat" not in api.FLOAT_DTYPES


def test_dtype_kind_order_is_the_promotion_order():
    one_of = {"bool": torch.tensor([True]), "int": torch.tensor([1]), "float": torch.tensor([1.0]),
              "complex": torch.tensor([1j])}
    assert set(api.DTYPE_KIND_ORDER) == set(one_of)
    for low, kind in enumerate(api.DTYPE_KIND_ORDER):
        for high in api.DTYPE_KIND_ORDER[low:]:
            assert _kind((one_of[kind] + one_of[high]).dtype) == high, (kind, high)


@pytest.mark.parametrize("method", sorted(api.CAST_METHODS))
def test_cast_methods_cast_to_their_kind_and_keep_the_receiver(method):
    x = _sample()
    out = getattr(x, method)()
    assert _kind(out.dtype) == api.CAST_METHODS[method]
    assert x.dtype == torch.float32 and out.shape == x.shape


# --- factories ----------------------------------------------------------------------------------

_FACTORY_ARGS = {
    "zeros": ((2, 3),), "ones": ((2, 3),), "empty": ((2, 3),), "full": ((2, 3), 1),
    "rand": ((2, 3),), "randn": ((2, 3),), "randint": (0, 5, (2, 3)), "randperm": (4,),
    "arange": (4,), "linspace": (0, 1, 5), "logspace": (0, 1, 5), "eye": (3,),
    "tensor": ([1.0, 2.0],), "as_tensor": ([1.0, 2.0],),
}


def test_every_factory_has_a_probe():
    assert set(_FACTORY_ARGS) == api.FACTORIES


@pytest.mark.parametrize("name", sorted(api.FACTORIES))
def test_factories_build_a_tensor_where_device_says(name):
    out = getattr(torch, name)(*_FACTORY_ARGS[name], device="cpu")
    assert isinstance(out, T) and out.device.type == "cpu"
    meta = getattr(torch, name)(*_FACTORY_ARGS[name], device="meta")
    assert meta.device.type == "meta"


@pytest.mark.parametrize("name", sorted(api.SIZE_ARGUMENT_FACTORIES))
def test_size_argument_factories_take_sizes_three_ways(name):
    f = getattr(torch, name)
    assert f(2, 3).shape == f((2, 3)).shape == f(size=(2, 3)).shape == (2, 3)


_NEGATIVE_SIZE_CALLS = {
    "zeros": lambda: torch.zeros(-1), "ones": lambda: torch.ones(2, -1),
    "empty": lambda: torch.empty(-2), "rand": lambda: torch.rand(-1), "randn": lambda: torch.randn(-1),
    "full": lambda: torch.full((-1,), 0.0), "randint": lambda: torch.randint(0, 5, (-1,)),
    "empty_strided": lambda: torch.empty_strided((-1,), (1,)), "randperm": lambda: torch.randperm(-1),
    "eye": lambda: torch.eye(-1), "linspace": lambda: torch.linspace(0, 1, -1),
    "logspace": lambda: torch.logspace(0, 1, -1),
    "new_zeros": lambda: _sample().new_zeros(-1), "new_ones": lambda: _sample().new_ones(-1),
    "new_empty": lambda: _sample().new_empty(-1), "new_full": lambda: _sample().new_full((-1,), 0.0),
}


def test_sized_factories_all_have_a_negative_size_probe():
    assert set(_NEGATIVE_SIZE_CALLS) == api.SIZED_FACTORIES | api.SIZED_NEW_TENSOR_METHODS


@pytest.mark.parametrize("name", sorted(_NEGATIVE_SIZE_CALLS))
def test_sized_factories_refuse_a_negative_size(name):
    with pytest.raises(RuntimeError):
        _NEGATIVE_SIZE_CALLS[name]()


@pytest.mark.parametrize("name", sorted(api.FACTORY_SIZE_PARAMETERS))
def test_factory_size_parameters_sit_where_the_table_says(name):
    parameters = api.FACTORY_SIZE_PARAMETERS[name]
    sizes = (2, 3)[:len(parameters)]
    leading = (0, 1)[:min(position for position, _ in parameters)]
    by_position = getattr(torch, name)(*leading, *sizes)
    by_keyword = getattr(torch, name)(*leading, **{keyword: size for (_, keyword), size in zip(parameters, sizes)})
    assert by_position.shape == by_keyword.shape == sizes
    assert [position for position, _ in parameters] == list(range(len(leading), len(leading) + len(sizes)))


@pytest.mark.parametrize("name", sorted(api.FLOAT_DEFAULT_FACTORIES))
def test_float_default_factories(name):
    assert getattr(torch, name)(*_FACTORY_ARGS[name]).dtype == torch.get_default_dtype()


def test_full_follows_its_fill_value_so_it_is_no_float_default_factory():
    assert torch.full((2,), 1).dtype == torch.int64 and torch.full((2,), True).dtype == torch.bool


@pytest.mark.parametrize("name", sorted(api.INT_DEFAULT_FACTORIES))
def test_int_default_factories(name):
    assert getattr(torch, name)(*_FACTORY_ARGS[name]).dtype == torch.int64


@pytest.mark.parametrize("name", sorted(api.LIKE_FACTORIES))
def test_like_factories_copy_shape_and_dtype(name):
    x = _sample().double()
    out = getattr(torch, name)(x, **({"high": 5} if name == "randint_like" else {}),
                               **({"fill_value": 2.0} if name == "full_like" else {}))
    assert out.shape == x.shape and out.dtype == x.dtype and out.device == x.device


def test_other_factories_build_tensors():
    numpy = pytest.importorskip("numpy")
    calls = {
        "scalar_tensor": lambda: torch.scalar_tensor(1.0), "from_numpy": lambda: torch.from_numpy(numpy.zeros(2)),
        "empty_strided": lambda: torch.empty_strided((2, 3), (3, 1)), "normal": lambda: torch.normal(0.0, 1.0, (2,)),
        "tril_indices": lambda: torch.tril_indices(3, 3), "triu_indices": lambda: torch.triu_indices(3, 3),
    }
    assert set(calls) == api.OTHER_FACTORIES
    for name, call in calls.items():
        assert isinstance(call(), T), name
    assert api.ALL_FACTORIES == api.FACTORIES | api.LIKE_FACTORIES | api.OTHER_FACTORIES


@pytest.mark.parametrize("name", sorted(api.LEGACY_TENSOR_CLASSES))
def test_legacy_tensor_classes_build_cpu_tensors(name):
    out = getattr(torch, name)(2, 3)
    assert isinstance(out, T) and out.shape == (2, 3) and out.device.type == "cpu"


@pytest.mark.parametrize("name", sorted(api.NEW_TENSOR_METHODS))
def test_new_tensor_methods_follow_the_receiver(name):
    x = _sample().double()
    out = getattr(x, name)([1.0, 2.0] if name == "new_tensor" else (2,), *((0.5,) if name == "new_full" else ()))
    assert out.dtype == x.dtype and out.shape == (2,)


# --- in-place methods ---------------------------------------------------------------------------


def _sparse():
    return torch.eye(3).to_sparse()


def _with_nan():
    x = _sample()
    x[0, 0] = float("nan")
    return x


_INDEX = torch.tensor([0, 2])
_ROW_INDEX = torch.zeros(1, 4, dtype=torch.long)
_MASK = _sample() > 0

#: method -> (receiver, arguments) that make it change the receiver
_INPLACE_PROBES: dict = {
    **{name: (_sample, lambda: (_other(),)) for name in (
        "add_", "sub_", "mul_", "div_", "divide_", "multiply_", "subtract_", "true_divide_",
        "atan2_", "arctan2_", "copysign_", "copy_", "eq_", "ge_", "gt_", "le_", "lt_", "ne_",
        "greater_", "greater_equal_", "less_", "less_equal_", "not_equal_", "floor_divide_",
        "fmod_", "heaviside_", "hypot_", "igamma_", "igammac_", "ldexp_", "logical_and_",
        "logical_or_", "logical_xor_", "nextafter_", "pow_", "remainder_", "xlogy_",
    )},
    **{name: (_ints, lambda: (_ints().flip(0),))
       for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "gcd_", "lcm_")},
    **{name: (_ints, lambda: (1,)) for name in ("bitwise_left_shift_", "bitwise_right_shift_")},
    "bitwise_not_": (_ints, tuple),
    **{name: (_sample, lambda: (-1.0, 1.0)) for name in ("clamp_", "clip_")},
    **{name: (_sample, lambda: (0.0,)) for name in ("clamp_min_", "clamp_max_", "fill_", "fill_diagonal_")},
    **{name: (_sample, lambda: (1,)) for name in ("cumsum_", "cumprod_", "mvlgamma_", "polygamma_")},
    "lerp_": (_sample, lambda: (_other(), 0.5)),
    **{name: (_sample, lambda: (_other(), _other())) for name in ("addcdiv_", "addcmul_")},
    "addmm_": (_sample, lambda: (torch.ones(3, 2), torch.ones(2, 4))),
    "addbmm_": (_sample, lambda: (torch.ones(2, 3, 2), torch.ones(2, 2, 4))),
    "baddbmm_": (lambda: torch.zeros(2, 3, 4), lambda: (torch.ones(2, 3, 2), torch.ones(2, 2, 4))),
    "addr_": (_sample, lambda: (torch.ones(3), torch.ones(4))),
    "addmv_": (lambda: torch.zeros(3), lambda: (torch.ones(3, 4), torch.ones(4))),
    "apply_": (_sample, lambda: (lambda v: v + 1,)),
    "map_": (_sample, lambda: (_other(), lambda a, b: a + b)),
    "map2_": (_sample, lambda: (_other(), _other(), lambda a, b, c: a + b + c)),
    "index_add_": (_sample, lambda: (0, _INDEX, torch.ones(2, 4))),
    "index_copy_": (_sample, lambda: (0, _INDEX, torch.ones(2, 4))),
    "index_fill_": (_sample, lambda: (0, _INDEX, 1.0)),
    "index_reduce_": (_sample, lambda: (0, _INDEX, torch.full((2, 4), 2.0), "prod")),
    "index_put_": (_sample, lambda: ((_INDEX,), torch.tensor(1.0))),
    "put_": (_sample, lambda: (_INDEX, torch.ones(2))),
    "scatter_": (_sample, lambda: (0, _ROW_INDEX, torch.ones(1, 4))),
    "scatter_add_": (_sample, lambda: (0, _ROW_INDEX, torch.ones(1, 4))),
    "scatter_reduce_": (_sample, lambda: (0, _ROW_INDEX, torch.ones(1, 4), "sum")),
    "masked_fill_": (_sample, lambda: (_MASK, 0.0)),
    "masked_scatter_": (_sample, lambda: (_MASK, torch.zeros(3, 4))),
    "renorm_": (_sample, lambda: (2, 0, 0.5)),
    "geometric_": (_sample, lambda: (0.5,)),
    "float_power_": (lambda: _sample().double(), lambda: (2.0,)),
    "conj_physical_": (lambda: torch.tensor([1.0 + 2.0j]), tuple),
    "nan_to_num_": (_with_nan, tuple),
    "set_": (_sample, tuple),
    "resize_": (_sample, lambda: (2, 2)),
    "resize_as_": (_sample, lambda: (torch.zeros(2, 2),)),
    "as_strided_": (_sample, lambda: ((2, 2), (1, 1))),
    **{name: (_sample, lambda: (0, 1)) for name in ("swapaxes_", "swapdims_", "transpose_")},
    "squeeze_": (lambda: torch.ones(3, 1), tuple),
    "unsqueeze_": (_sample, lambda: (0,)),
    "sparse_resize_": (_sparse, lambda: ((4, 4), 2, 0)),
    "sparse_resize_and_clear_": (_sparse, lambda: ((4, 4), 2, 0)),
    "resize_as_sparse_": (_sparse, lambda: (torch.eye(4).to_sparse(),)),
}
#: the remaining in-place methods change a float receiver with no argument
_INPLACE_PROBES.update(dict.fromkeys(api.INPLACE_METHODS - set(_INPLACE_PROBES), (_sample, tuple)))


def test_inplace_methods_are_every_public_underscore_method():
    public = {m for m in dir(T) if m.endswith("_") and not m.startswith("_")}
    assert api.INPLACE_METHODS | api.NOT_VALUE_CHANGING_UNDERSCORE_METHODS == public
    assert not api.INPLACE_METHODS & api.NOT_VALUE_CHANGING_UNDERSCORE_METHODS


@pytest.mark.parametrize("method,args", [
    ("add_", (1,)), ("mul_", (2,)), ("zero_", ()), ("fill_", (0.0,)), ("relu_", ()), ("clamp_", (0, 1)),
    ("normal_", ()), ("uniform_", ()), ("copy_", None), ("t_", ()),
])
def test_inplace_methods_refuse_a_leaf_that_requires_grad_unless_grad_is_off(method, args):
    w = torch.randn(2, 2, requires_grad=True)
    args = (torch.zeros(2, 2),) if args is None else args
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(w, method)(*args)
    with torch.no_grad():
        getattr(w, method)(*args)


@pytest.mark.parametrize("method", sorted(api.NOT_VALUE_CHANGING_UNDERSCORE_METHODS))
def test_not_value_changing_underscore_methods_are_fine_on_a_leaf(method):
    getattr(torch.randn(2, 2, requires_grad=True), method)()


def test_inplace_subsets():
    assert api.INPLACE_RESHAPING_METHODS <= api.INPLACE_METHODS
    assert api.INPLACE_FILLING_METHODS <= api.INPLACE_SHAPE_KEEPING_METHODS
    assert api.INPLACE_SHAPE_KEEPING_METHODS == api.INPLACE_METHODS - api.INPLACE_RESHAPING_METHODS


@pytest.mark.parametrize("method", sorted(api.INPLACE_METHODS))
def test_inplace_methods_change_their_receiver_and_return_it(method):
    make_receiver, make_args = _INPLACE_PROBES[method]
    x = make_receiver()
    before, layout = x.clone(), _metadata(x)
    out = getattr(x, method)(*make_args())
    assert out is x
    reshaped = _metadata(x)[:2] != layout[:2]
    assert reshaped == (method in api.INPLACE_RESHAPING_METHODS)
    assert reshaped or _metadata(x) != layout or not _same_values(x, before)


@pytest.mark.parametrize("method", sorted(api.INPLACE_FILLING_METHODS))
def test_filling_methods_ignore_the_old_values(method):
    _, make_args = _INPLACE_PROBES[method]
    torch.manual_seed(0)
    a = getattr(_sample(), method)(*make_args())
    torch.manual_seed(0)
    b = getattr(_other(), method)(*make_args())
    assert torch.equal(a, b)


@pytest.mark.parametrize("method", sorted(api.NOT_VALUE_CHANGING_UNDERSCORE_METHODS))
def test_not_value_changing_underscore_methods_leave_values_and_layout(method):
    x = _sample().requires_grad_() if method == "detach_" else _sample()
    before, layout = x.detach().clone(), _metadata(x)
    assert getattr(x, method)() is x
    assert _metadata(x)[:2] == layout[:2] and _same_values(x.detach(), before)  # share_memory_ moves the storage


def test_functional_inplace_kw_is_every_function_with_an_inplace_argument():
    with_inplace = set()
    for name in dir(F):
        value = getattr(F, name)
        if name.startswith("_") or not callable(value):
            continue
        try:
            parameters = inspect.signature(value).parameters
        except (TypeError, ValueError):
            continue
        if "inplace" in parameters:
            with_inplace.add(name)
    assert with_inplace == api.FUNCTIONAL_INPLACE_KW


def test_functional_inplace_is_every_underscore_function():
    assert {n for n in dir(F) if n.endswith("_") and not n.startswith("_")} == api.FUNCTIONAL_INPLACE


_FUNCTIONAL_INPUTS = {"dropout1d": (2, 3, 4), "dropout2d": (2, 3, 4, 4), "dropout3d": (2, 3, 2, 2, 2)}
_FUNCTIONAL_ARGS = {"threshold": (0.1, 20.0), "threshold_": (0.1, 20.0)}
_FUNCTIONAL_KW = {"alpha_dropout": {"training": True}, "feature_alpha_dropout": {"training": True}}


@pytest.mark.parametrize("name", sorted(api.FUNCTIONAL_INPLACE_KW | api.FUNCTIONAL_INPLACE))
def test_functional_inplace_forms_change_their_input(name):
    shape = _FUNCTIONAL_INPUTS.get(name)
    x = torch.randn(*shape) + 3 if shape else _sample() * 3
    before = x.clone()
    kw = dict(_FUNCTIONAL_KW.get(name, {}))
    if name in api.FUNCTIONAL_INPLACE_KW:
        kw["inplace"] = True
    torch.manual_seed(0)
    out = getattr(F, name)(x, *_FUNCTIONAL_ARGS.get(name, ()), **kw)
    assert out.data_ptr() == x.data_ptr() and not _same_values(x, before)


# --- comparisons and boolean results ------------------------------------------------------------


@pytest.mark.parametrize("alias", sorted(api.COMPARISON_ALIASES))
def test_comparison_aliases_spell_their_comparison(alias):
    a, b = _sample(), _sample().flip(1)
    canonical = api.COMPARISON_ALIASES[alias]
    assert torch.equal(getattr(torch, alias)(a, b), getattr(torch, canonical)(a, b))
    assert torch.equal(getattr(a, alias)(b), getattr(a, canonical)(b))
    assert alias + "_" in api.INPLACE_METHODS and canonical + "_" in api.INPLACE_METHODS


@pytest.mark.parametrize("name", sorted(api.BOOL_RESULT_ELEMENTWISE))
def test_bool_result_elementwise_ops_return_bool_tensors(name):
    a, b = _sample(), _sample().flip(1)
    args = (b,) if name in api.ELEMENTWISE_BINARY else ()
    assert getattr(torch, name)(a, *args).dtype == torch.bool
    assert getattr(a, name)(*args).dtype == torch.bool
    assert name in api.COMPARISONS or name not in api.COMPARISON_ALIASES


def test_bool_result_elementwise_ops_are_every_such_tensor_method():
    a, b = _sample(), _sample().flip(1)
    found = set()
    for name in dir(T):
        if name.startswith("_") or name.endswith("_") or name in ("bool", "share_memory", "backward"):
            continue
        for args in ((), (b,)):
            try:
                out = getattr(a.clone(), name)(*args)
            except Exception:  # most methods want other arguments: not one of these
                continue
            if isinstance(out, T) and out.dtype == torch.bool and out.shape == a.shape:
                found.add(name)
    assert found == api.BOOL_RESULT_ELEMENTWISE


def test_comparisons_are_binary():
    assert api.COMPARISONS <= api.ELEMENTWISE_BINARY and api.COMPARISONS <= api.BOOL_RESULT_ELEMENTWISE


_BOOL_CALL_ARGS = {"equal": "xx", "allclose": "xx", "is_same_size": "xx", "is_set_to": "xx", "is_nonzero": "one"}


@pytest.mark.parametrize("name", sorted(api.PYTHON_BOOL_RESULTS))
def test_python_bool_results_return_python_bools(name):
    x = _sample()
    form = _BOOL_CALL_ARGS.get(name, "x")
    receiver = torch.ones(1) if form == "one" else x
    args = (x,) if form == "xx" else ()
    if hasattr(torch, name):
        assert type(getattr(torch, name)(receiver, *args)) is bool
    if hasattr(T, name):
        assert type(getattr(receiver, name)(*args)) is bool
    assert hasattr(torch, name) or hasattr(T, name)


@pytest.mark.parametrize("path", sorted(api.TORCH_BOOL_FUNCTIONS))
def test_torch_bool_functions_return_python_bools(path):
    assert type(_dotted(torch, path)()) is bool


def test_tensor_bool_attributes_are_every_is_property():
    x = _sample()
    properties = {n for n in dir(T) if n.startswith("is_") and not inspect.isroutine(getattr(x, n))}
    assert api.TENSOR_BOOL_ATTRIBUTES == properties | {"requires_grad"}
    for name in api.TENSOR_BOOL_ATTRIBUTES:
        assert type(getattr(x, name)) is bool, name


# --- elementwise ops ----------------------------------------------------------------------------

_UNARY_ARGS = {
    "clamp": (-1, 1), "clip": (-1, 1), "clamp_min": (0.0,), "clamp_max": (0.0,), "dropout": (0.5, False),
    "alpha_dropout": (0.5, False), "softmax": (-1,), "log_softmax": (-1,), "cumsum": (-1,), "cumprod": (-1,),
    "masked_fill": (torch.tensor([True, False, True, False]), 0.0),
}


def _unary(name: str, x):
    return _resolve(name)(x, *_UNARY_ARGS.get(name, ()))


@pytest.mark.parametrize("name", sorted(api.ELEMENTWISE_UNARY))
def test_elementwise_unary_ops_work_element_by_element(name):
    x = _ints() if name == "bitwise_not" else _sample()
    out = _unary(name, x)
    assert out.shape == x.shape
    assert torch.allclose(out[:, 1:2], _unary(name, x[:, 1:2].clone()), equal_nan=True)


@pytest.mark.parametrize("name", sorted(api.SHAPE_KEEPING_NOT_ELEMENTWISE))
def test_shape_keeping_ops_that_are_not_elementwise(name):
    x = _sample()
    out = _unary(name, x)
    assert out.shape == x.shape
    if name != "masked_fill":
        assert not torch.allclose(out[:, 1:2], _unary(name, x[:, 1:2].clone()))
    assert api.SHAPE_KEEPING_UNARY == api.ELEMENTWISE_UNARY | api.SHAPE_KEEPING_NOT_ELEMENTWISE


@pytest.mark.parametrize("name", sorted(api.NEVER_INTEGER_UNARY))
def test_never_integer_unary_ops_give_floats_or_raise_on_integers(name):
    try:
        out = _unary(name, _ints())
    except RuntimeError:
        return
    assert out.dtype == torch.get_default_dtype()


def _binary_operands(name: str):
    if name.startswith("bitwise"):
        return torch.arange(3).reshape(3, 1), torch.arange(4).reshape(1, 4)
    return _sample()[:, :1], _other()[:1, :]


@pytest.mark.parametrize("name", sorted(api.ELEMENTWISE_BINARY))
def test_elementwise_binary_ops_broadcast(name):
    a, b = _binary_operands(name)
    out = getattr(torch, name)(a, b)
    assert out.shape == (3, 4)
    assert torch.allclose(getattr(a, name)(b).double(), out.double(), equal_nan=True)
    part = getattr(torch, name)(a[1:2], b[:, 2:3])
    assert torch.allclose(out[1:2, 2:3].double(), part.double(), equal_nan=True)


def test_where_broadcasts_too():
    assert api.BROADCASTING_FUNCTIONS == api.ELEMENTWISE_BINARY | {"where"}
    assert torch.where(torch.ones(3, 1, dtype=torch.bool), torch.zeros(1, 4), 1.0).shape == (3, 4)


_MATRIX_OPERANDS = {"matmul": ((3, 2), (2, 4)), "mm": ((3, 2), (2, 4)), "bmm": ((5, 3, 2), (5, 2, 4)),
                    "mv": ((3, 2), (2,)), "dot": ((3,), (3,))}


@pytest.mark.parametrize("name", sorted(api.MATRIX_PRODUCTS))
def test_matrix_products_multiply(name):
    a, b = (torch.ones(*shape) for shape in _MATRIX_OPERANDS[name])
    out = getattr(torch, name)(a, b)
    assert torch.equal(getattr(a, name)(b), out)
    assert float(out.flatten()[0]) == a.shape[-1]


@pytest.mark.parametrize("path", sorted(api.MATRIX_INVERSES))
def test_matrix_inverses_invert(path):
    assert torch.allclose(_dotted(torch, path)(torch.eye(2) * 2), torch.eye(2) / 2)
    if "." not in path:
        assert torch.allclose((torch.eye(2) * 2).inverse(), torch.eye(2) / 2)


def test_einsum_functions_are_torch_einsum():
    for qualified in api.EINSUM_FUNCTIONS:
        assert _dotted(torch, qualified.removeprefix("torch.")) is torch.einsum, qualified


# --- reductions ---------------------------------------------------------------------------------


def _values(out):
    """The values of a ``(values, indices)`` pair, or the tensor itself."""
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", sorted(api.REDUCTIONS))
def test_reductions_reduce_the_dim_they_are_given(name):
    x = torch.randn(2, 3, 4)
    positional = (2, 1) if name in api.REDUCTIONS_DIM_SECOND else (1,)
    assert _values(getattr(x, name)(*positional)).shape == (2, 4)
    assert _values(getattr(torch, name)(x, *positional)).shape == (2, 4)
    if name != "count_nonzero":  # the one reduction without keepdim
        assert _values(getattr(x, name)(*positional, keepdim=True)).shape == (2, 1, 4)


@pytest.mark.parametrize("name", sorted(api.REDUCTIONS_DIM_SECOND))
def test_a_single_positional_argument_is_not_the_dim(name):
    assert getattr(torch.randn(2, 3), name)(1).shape == ()


@pytest.mark.parametrize("name", sorted(api.VALUES_INDICES_WITH_DIM))
def test_values_indices_with_dim(name):
    x = _sample()
    pair = getattr(x, name)(1)
    assert pair.indices.dtype == torch.int64 and pair.values.dtype == x.dtype and pair[1] is pair.indices
    assert isinstance(getattr(x, name)(), T)
    assert name in api.REDUCTIONS


_ALWAYS_PAIR_ARGS = {"topk": (2,), "kthvalue": (1,), "cummax": (1,), "cummin": (1,)}


@pytest.mark.parametrize("name", sorted(api.VALUES_INDICES_ALWAYS))
def test_values_indices_always(name):
    x = _sample()
    pair = getattr(x, name)(*_ALWAYS_PAIR_ARGS.get(name, ()))
    assert pair.indices.dtype == torch.int64 and pair.values.dtype == x.dtype
    assert api.VALUES_INDICES_OPS == api.VALUES_INDICES_WITH_DIM | api.VALUES_INDICES_ALWAYS


@pytest.mark.parametrize("name", sorted(api.MIN_MAX_PAIR_OPS))
def test_min_max_pairs_hold_no_indices(name):
    pair = getattr(_sample(), name)()
    assert not hasattr(pair, "indices") and pair.min.dtype == pair.max.dtype == torch.float32
    assert name not in api.VALUES_INDICES_OPS


@pytest.mark.parametrize("name", sorted(api.REDUCING_PAIR_OPS))
def test_reducing_pairs_drop_the_last_dim_by_default(name):
    x = torch.randn(2, 3, 4)
    k = (2,) if name == "kthvalue" else ()
    assert getattr(x, name)(*k).values.shape == (2, 3)
    assert getattr(torch, name)(x, *k).values.shape == (2, 3)
    assert getattr(x, name)(*k, 1).values.shape == (2, 4)
    assert getattr(x, name)(*k, 1, True).values.shape == (2, 1, 4)
    assert name in api.VALUES_INDICES_ALWAYS


@pytest.mark.parametrize("name", sorted(api.REDUCTION_PAIR_FUNCTIONS))
def test_reduction_pair_functions_return_the_statistic_and_the_mean(name):
    x = torch.randn(2, 3, 4)
    stat, mean = getattr(torch, name)(x, 1)
    assert stat.shape == mean.shape == (2, 4) and torch.allclose(mean, x.mean(1))
    assert torch.allclose(stat, getattr(x, name.split("_")[0])(1))
    assert getattr(torch, name)(x, 1, True, True)[1].shape == (2, 1, 4)  # (dim, unbiased, keepdim)
    assert getattr(torch, name)(x, 1, keepdim=True)[1].shape == (2, 1, 4)
    assert getattr(torch, name)(x)[1].shape == ()
    assert not hasattr(x, name) and name not in api.REDUCTIONS


@pytest.mark.parametrize("name", sorted(api.MIN_MAX_PAIR_OPS))
def test_min_max_pairs_reduce_a_keyword_dim(name):
    x = torch.randn(2, 3, 4)
    assert getattr(x, name)(dim=1).min.shape == (2, 4)
    assert getattr(torch, name)(x, dim=1, keepdim=True).max.shape == (2, 1, 4)
    assert getattr(x, name)().min.shape == ()
    with pytest.raises(TypeError):
        getattr(x, name)(1)  # the dim is keyword-only


def test_linalg_norms_reduce_dim_third():
    x = torch.randn(2, 3, 4)
    assert torch.linalg.norm(x, 2, 1).shape == (2, 4)  # (input, ord, dim)
    assert torch.linalg.vector_norm(x, 2, 1, True).shape == (2, 1, 4)
    assert torch.linalg.vector_norm(x).shape == torch.linalg.norm(x).shape == ()


# --- autograd -----------------------------------------------------------------------------------


def _requiring_grad():
    return _sample().requires_grad_() * 1


@pytest.mark.parametrize("name", sorted(api.NO_GRAD_RESULT_OPS))
def test_no_grad_result_ops_cut_the_graph(name):
    y = _requiring_grad()
    args = (y.flip(1),) if name in api.ELEMENTWISE_BINARY else ()
    for out in (getattr(torch, name)(y, *args), getattr(y, name)(*args)):
        assert not out.requires_grad
        with pytest.raises(RuntimeError):
            out.float().sum().backward()


@pytest.mark.parametrize("name", sorted(api.ZERO_GRADIENT_OPS))
def test_zero_gradient_ops_require_grad_but_give_zeros(name):
    x = _sample().requires_grad_()
    out = getattr(torch, name)(x)
    assert out.requires_grad
    (grad,) = torch.autograd.grad(out.sum(), x)
    assert torch.equal(grad, torch.zeros_like(x))
    assert api.NON_DIFFERENTIABLE_OPS == api.NO_GRAD_RESULT_OPS | api.ZERO_GRADIENT_OPS


def test_backward_functions_and_parameter_classes():
    for path in api.BACKWARD_FUNCTIONS:
        assert callable(_dotted(torch, path)), path
    for path in api.PARAMETER_CLASSES:
        assert _dotted(torch, path) is nn.Parameter, path


def _saved(out, named: dict) -> frozenset:
    """The roles in ``named`` whose tensor ``out.grad_fn`` holds in one of its ``_saved_*`` slots."""
    roles = set()
    for attr in dir(out.grad_fn):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(out.grad_fn, attr)
        except RuntimeError:
            continue
        if isinstance(value, T):
            roles.update(role for role, tensor in named.items()
                         if value.data_ptr() == tensor.data_ptr() and value.shape == tensor.shape)
    return frozenset(roles)


def _operand(requires_grad: bool, shape=(3, 3)):
    """A positive tensor; one that requires grad is a non-leaf, so that it can be told apart."""
    base = torch.rand(*shape) + 0.5
    return base.requires_grad_() * 1 if requires_grad else base


_UNARY_SAVE_ARGS = {"softmax": (-1,), "log_softmax": (-1,), "clamp": (0.6, 1.2)}


@pytest.mark.parametrize("op", sorted(api.UNARY_SAVES))
def test_unary_saves(op):
    x = _operand(True)
    fn = getattr(torch, op, None) or getattr(torch.linalg, op, None) or getattr(F, op)
    out = fn(x, *_UNARY_SAVE_ARGS.get(op, ()))
    assert _saved(out, {api.SELF: x, api.RESULT: out}) == api.UNARY_SAVES[op]


@pytest.mark.parametrize("op", sorted(api.BINARY_SAVES))
def test_binary_saves(op):
    shape = {"bmm": (2, 3, 3), "dot": (3,)}.get(op, (3, 3))
    assert set(api.BINARY_SAVES[op]) == {(True, True), (True, False), (False, True)}
    for (self_grad, other_grad), expected in api.BINARY_SAVES[op].items():
        a, b = _operand(self_grad, shape), _operand(other_grad, shape)
        out = getattr(torch, op)(a, b)
        assert _saved(out, {api.SELF: a, api.OTHER: b, api.RESULT: out}) == expected, (self_grad, other_grad)


@pytest.mark.parametrize("op", sorted(api.SCALAR_SAVES))
def test_scalar_saves(op):
    x = _operand(True)
    out = getattr(torch, op)(x, 2.0)
    assert _saved(out, {api.SELF: x, api.RESULT: out}) == api.SCALAR_SAVES[op]


def test_operators_call_their_ops():
    import operator

    by_name = {"Multiply": operator.mul, "Divide": operator.truediv, "Add": operator.add,
               "Subtract": operator.sub, "MatrixMultiply": operator.matmul, "Power": operator.pow}
    assert set(api.OPERATOR_OPS) == set(by_name)
    a, b = _operand(True), _operand(True)
    for operator_name, op in api.OPERATOR_OPS.items():
        via_operator = by_name[operator_name](a, b)
        via_function = getattr(torch, op)(a, b)
        assert type(via_operator.grad_fn) is type(via_function.grad_fn), operator_name


# --- casts and moves ----------------------------------------------------------------------------


def test_tensor_and_module_device_methods_exist():
    assert all(hasattr(T, name) for name in api.TENSOR_DEVICE_METHODS)
    assert all(hasattr(nn.Module, name) for name in api.MODULE_DEVICE_METHODS)
    x = _sample()
    assert x.cpu() is x and x.to("cpu") is x


_CPU_CONVERSIONS = {"to": (torch.float64,), "type": (torch.float64,), "cpu": ()}


@pytest.mark.parametrize("name", sorted(api.CONVERTING_METHODS))
def test_converting_methods_leave_the_receiver(name):
    assert hasattr(T, name)
    if name not in api.CAST_METHODS and name not in _CPU_CONVERSIONS:
        return  # another device: see the CUDA probe
    x = _sample()
    out = getattr(x, name)(*_CPU_CONVERSIONS.get(name, ()))
    assert isinstance(out, T) and x.dtype == torch.float32 and x.device.type == "cpu"


@needs_cuda
def test_cuda_moves_copy_and_leave_the_receiver():
    x = _sample()
    for out in (x.cuda(), x.to("cuda")):
        assert out.device.type == "cuda" and x.device.type == "cpu"
    y = x.cuda()
    assert y.cuda() is y
    pinned = x.pin_memory()
    assert pinned.pin_memory() is pinned


@pytest.mark.parametrize("name", sorted(api.SELF_IF_UNCHANGED_METHODS - {"cuda", "pin_memory"}))
def test_self_if_unchanged_methods_return_the_receiver_when_nothing_changes(name):
    x = _sample()
    if name in api.CAST_METHODS:
        x = getattr(x, name)()
        args = ()
    else:
        args = {"to": (torch.float32,), "type": (torch.float32,), "type_as": (x,), "cpu": ()}[name]
    assert getattr(x, name)(*args) is x


@pytest.mark.parametrize("name", sorted(api.SAME_STORAGE_METHODS))
def test_same_storage_methods_share_the_storage(name):
    x = _sample()
    assert getattr(x, name)().data_ptr() == x.data_ptr()


_MODULE_CALLS = {"to": ("cpu",), "type": (torch.float32,), "apply": (lambda m: None,), "to_empty": ()}


@pytest.mark.parametrize("name", sorted(api.MODULE_METHODS_RETURNING_SELF))
def test_module_methods_returning_self(name):
    module = nn.Linear(2, 2)
    if name == "cuda" and not torch.cuda.is_available():
        assert hasattr(module, "cuda")
        return
    kw = {"device": "cpu"} if name == "to_empty" else {}
    assert getattr(module, name)(*_MODULE_CALLS.get(name, ()), **kw) is module


def test_zero_grad_returns_none_so_it_is_no_module_method_returning_self():
    assert nn.Linear(2, 2).zero_grad() is None and "zero_grad" not in api.MODULE_METHODS_RETURNING_SELF


@pytest.mark.parametrize("name", sorted(api.MODULE_DEVICE_METHODS & {"to", "cpu", "to_empty"}))
def test_module_device_methods_move_in_place(name):
    module = nn.Linear(2, 2)
    assert getattr(module, name)(**({"device": "cpu"} if name != "cpu" else {})) is module


# --- tensor attributes and layout methods -------------------------------------------------------


@pytest.mark.parametrize("name", sorted(api.TENSOR_PROPERTIES))
def test_tensor_properties_are_data_descriptors(name):
    static = inspect.getattr_static(_sample().requires_grad_(), name)
    assert hasattr(static, "__set__") and not inspect.isroutine(static)


@pytest.mark.parametrize("name", sorted(api.TENSOR_METADATA_ATTRIBUTES))
def test_metadata_attributes_are_no_tensors(name):
    value = getattr(_sample(), name)
    assert not inspect.isroutine(value) and not isinstance(value, T)


@pytest.mark.parametrize("name", sorted(api.TENSOR_METADATA_METHODS | api.TENSOR_TO_PYTHON_METHODS))
def test_metadata_and_python_methods_return_no_tensors(name):
    x = _sample()[:1, :1] if name == "item" else _sample()
    value = getattr(x, name)()
    assert not isinstance(value, T)


@pytest.mark.parametrize("name", sorted(api.RESHAPE_METHODS))
def test_reshape_methods_infer_one_size(name):
    x = _sample()
    assert getattr(x, name)(-1, 2).shape == (6, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        getattr(x, name)(-1, -1)


_PERMUTING_ARGS = {"permute": ((1, 0),), "t": ()}


@pytest.mark.parametrize("name", sorted(api.DIM_PERMUTING_METHODS))
def test_dim_permuting_methods_return_views_with_dims_reordered(name):
    x = _sample()
    for out in (getattr(x, name)(*_PERMUTING_ARGS.get(name, (0, 1))),
                getattr(torch, name)(x, *_PERMUTING_ARGS.get(name, (0, 1)))):
        assert out.shape == (4, 3) and out.data_ptr() == x.data_ptr()


def test_tensor_only_methods_are_missing_from_numpy():
    numpy = pytest.importorskip("numpy")
    for name in api.TENSOR_ONLY_METHODS:
        assert hasattr(T, name) and not hasattr(numpy.ndarray, name), name


# --- devices ------------------------------------------------------------------------------------

_MISMATCH_CALLS = {
    "add": "f(a, b)", "sub": "f(a, b)", "mul": "f(a, b)", "div": "f(a, b)", "matmul": "f(a, b)",
    "mm": "f(a, b)", "bmm": "f(a[None], b[None])", "dot": "f(a[0], b[0])", "maximum": "f(a, b)",
    "minimum": "f(a, b)", "cdist": "f(a, b)", "outer": "f(a[0], b[0])", "cross": "f(a, b, dim=0)",
    "lerp": "f(a, b, 0.5)", "addmm": "f(a, b, b)", "baddbmm": "f(a[None], b[None], b[None])",
    "where": "f(a > 0, a, b)", "einsum": "f('ij,jk->ik', a, b)",
    "add_": "f(b)", "sub_": "f(b)", "mul_": "f(b)", "div_": "f(b)", "lerp_": "f(b, 0.5)",
}


def test_device_matching_ops_exist():
    assert all(hasattr(torch, name) for name in api.DEVICE_MATCHING_FUNCTIONS | api.CONCAT_FUNCTIONS)
    assert all(hasattr(T, name) for name in api.DEVICE_MATCHING_METHODS)
    for name in api.CONCAT_FUNCTIONS:
        assert getattr(torch, name)([torch.ones(2, 2), torch.ones(2, 2)]).numel() == 8


@needs_cuda
def test_device_matching_ops_refuse_two_devices():
    a, b = torch.ones(3, 3), torch.ones(3, 3, device="cuda")
    for name in api.DEVICE_MATCHING_FUNCTIONS:
        call = _MISMATCH_CALLS[name]
        with pytest.raises(RuntimeError):
            eval(call, {"f": getattr(torch, name), "a": a, "b": b})
    for name in api.DEVICE_MATCHING_METHODS:
        call = _MISMATCH_CALLS.get(name, "f(b)")
        with pytest.raises(RuntimeError):
            eval(call, {"f": getattr(a.clone(), name), "a": a, "b": b})
    for name in api.CONCAT_FUNCTIONS:
        with pytest.raises(RuntimeError):
            getattr(torch, name)([a, b])


# --- nn layers ----------------------------------------------------------------------------------

_LAYER_ARGS = {
    "Linear": (2, 3), "Bilinear": (2, 2, 3), "LazyLinear": (3,), "Embedding": (5, 2),
    "EmbeddingBag": (5, 2), "PReLU": (), "LayerNorm": (4,), "RMSNorm": (4,), "GroupNorm": (2, 4),
    "MultiheadAttention": (4, 2),
    "TransformerEncoderLayer": (4, 2, 8), "TransformerDecoderLayer": (4, 2, 8),
    "Transformer": (4, 2, 1, 1, 8),
}


def _layer(name: str, **kw):
    if name in _LAYER_ARGS:
        args = _LAYER_ARGS[name]
    elif name.startswith(("RNN", "LSTM", "GRU")):
        args = (2, 3)
    elif name.startswith("Lazy"):
        args = (3, 2)
    elif "Conv" in name:
        args = (2, 3, 1)
    else:
        args = (4,)
    return getattr(nn, name)(*args, **kw)


@pytest.mark.parametrize("name", sorted(api.NN_LAYER_PARAMETERS))
def test_layers_hold_their_parameters_directly(name):
    layer = _layer(name)
    direct = tuple(n for n, _ in layer.named_parameters(recurse=False))
    assert direct == api.NN_LAYER_PARAMETERS[name]
    assert list(layer.parameters())


@pytest.mark.parametrize("name", sorted(api.NN_PARAMETER_SWITCHES))
def test_parameter_switches_turn_every_direct_parameter_off(name):
    argument, position = api.NN_PARAMETER_SWITCHES[name]
    parameters = list(inspect.signature(getattr(nn, name)).parameters.values())
    assert parameters[position].name == argument and parameters[position].default is True
    assert not list(_layer(name, **{argument: False}).parameters(recurse=False))


@pytest.mark.parametrize("name", sorted(api.NN_BIAS_POSITIONS))
def test_bias_positions(name):
    parameters = list(inspect.signature(getattr(nn, name)).parameters)
    assert parameters[api.NN_BIAS_POSITIONS[name]] == "bias"
    assert "bias" not in dict(_layer(name, bias=False).named_parameters())


_REQUIRED = {
    "kernel_size": 2, "output_size": 1, "padding": 1, "value": 0.0, "groups": 2, "size": 2,
    "upscale_factor": 2, "downscale_factor": 2, "threshold": 0.1, "dim": 1, "unflattened_size": (2, 2),
    "norm_type": 2, "scale_factor": 2,
}


@pytest.mark.parametrize("name", sorted(api.NN_STATELESS_MODULES))
def test_stateless_modules_hold_nothing(name):
    cls = getattr(nn, name)
    required = {p.name: _REQUIRED[p.name] for p in inspect.signature(cls).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD}
    if name.startswith(("Upsampl", "FractionalMaxPool")):
        required["scale_factor" if name.startswith("Upsampl") else "output_size"] = 2
    module = cls(**required)
    assert not list(module.parameters()) and not list(module.buffers())


def test_loss_modules_are_every_loss_without_parameters():
    holding = {"AdaptiveLogSoftmaxWithLoss": (4, 10, [5]), "LinearCrossEntropyLoss": (4, 10)}
    for name in holding:
        assert list(getattr(nn, name)(*holding[name]).parameters()), name
    losses = {n for n in dir(nn) if n.endswith("Loss") or n == "NLLLoss2d"}
    assert api.NN_LOSS_MODULES == losses - set(holding)
    for name in api.NN_LOSS_MODULES:
        module = getattr(nn, name)()
        assert not list(module.parameters()) and not list(module.buffers()), name


_SHAPE_KEEPING_INPUTS = {"BatchNorm2d": (2, 4, 3, 3), "BatchNorm3d": (2, 4, 2, 2, 2), "GroupNorm": (2, 4, 3)}


@pytest.mark.parametrize("name", sorted(api.NN_SHAPE_KEEPING_MODULES))
def test_shape_keeping_modules(name):
    if name in ("Softmax", "LogSoftmax"):
        module = getattr(nn, name)(dim=-1)
    elif name in _LAYER_ARGS or name.startswith("BatchNorm"):
        module = _layer(name)
    else:
        module = getattr(nn, name)()
    x = torch.randn(*_SHAPE_KEEPING_INPUTS.get(name, (2, 4)))
    assert module(x).shape == x.shape


def test_layer_parameter_names():
    assert {n for n, _ in nn.Linear(2, 2).named_parameters()} == api.LAYER_PARAMETER_NAMES


def test_functional_losses_are_every_loss_function():
    named = {n for n in dir(F) if n.endswith("_loss")}
    assert named <= api.FUNCTIONAL_LOSSES
    assert all(callable(getattr(F, name)) for name in api.FUNCTIONAL_LOSSES)
    assert api.FUNCTIONAL_LOSSES - named == {"cross_entropy", "binary_cross_entropy",
                                              "binary_cross_entropy_with_logits", "kl_div"}


def test_the_table_imports_nothing_outside_the_standard_library():
    import ast
    import sys

    tree = ast.parse(inspect.getsource(api))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            roots = [(node.module or "").split(".")[0]]
        else:
            continue
        assert all(root in sys.stdlib_module_names or root == "__future__" for root in roots), roots


# --- evidence: uses that only a tensor allows ----------------------------------------------------


def test_tensor_evidence_methods_belong_to_tensors_alone():
    numpy = pytest.importorskip("numpy")
    for name in api.TENSOR_EVIDENCE_METHODS:
        assert hasattr(T, name), name
        for other in (numpy.ndarray, nn.Module, str, list, dict):
            assert not hasattr(other, name), (name, other)


def test_evidence_by_arguments_is_what_numpy_and_str_refuse():
    numpy = pytest.importorskip("numpy")
    assert all(hasattr(T, name) for name in api.TENSOR_EVIDENCE_BY_ARGUMENTS)
    a = numpy.ones((2, 3, 4), dtype=numpy.float32)
    refused = ["a.view(-1)", "a.view(2, 3, 4)", "a.transpose(1, 2)", "a.sum(dim=1)", "a.mean(1, keepdim=True)",
               "a.flatten(1)", "a.size(1)", "'a,b'.split(3)"]
    for text in refused:
        with pytest.raises((TypeError, ValueError)):
            eval(text, {"a": a})
    # a matrix transpose by two dims is numpy's too: no evidence
    assert a[0].transpose(1, 0).shape == (4, 3) and a[0].transpose(-1, -2).shape == (4, 3)
    x = torch.ones(2, 3, 4)
    for text in refused[:-1]:
        eval(text, {"a": x})


def test_torch_functions_that_evidence_reads_refuse_numpy_arrays():
    numpy = pytest.importorskip("numpy")
    a = numpy.ones((2, 3), dtype=numpy.float32)
    names = api.ELEMENTWISE_BINARY | api.SHAPE_KEEPING_UNARY | api.REDUCTIONS | api.MATRIX_PRODUCTS \
        | api.DIM_PERMUTING_METHODS | {"unsqueeze", "squeeze", "flatten"}
    for name in names:
        f = getattr(torch, name, None)
        if f is None:
            continue  # an F-only name
        with pytest.raises((TypeError, AttributeError)):
            f(a) if name in api.REDUCTIONS | api.SHAPE_KEEPING_UNARY else f(a, 1)
    for name in api.FUNCTIONAL_LOSSES:
        with pytest.raises((TypeError, AttributeError)):
            getattr(F, name)(a, torch.ones(2, 3))
    for name in api.FUNCTIONAL_RANK_KEEPING:
        shape, text = _RANK_KEEPING_CALLS[name]
        with pytest.raises((TypeError, AttributeError)):
            eval(text, {"f": getattr(F, name), "x": numpy.ones(shape, dtype=numpy.float32), "torch": torch})


_RESULT_ARGS = {
    "view": "(-1,)", "reshape": "(-1,)", "transpose": "(0, 1)", "permute": "(1, 0)", "unsqueeze": "(0,)",
    "expand": "(3, 4)", "expand_as": "(x,)", "masked_fill": "(x > 0, 0.0)", "softmax": "(0,)",
    "log_softmax": "(0,)", "type_as": "(x,)", "narrow": "(0, 0, 1)", "matmul": "(x.T,)", "mm": "(x.T,)",
    "mv": "(x[0],)", "to": "('cpu',)", "index_select": "(0, torch.tensor([0]))",
    "gather": "(0, torch.zeros(1, 4, dtype=torch.long))", "masked_select": "(x > 0,)",
}


@pytest.mark.parametrize("name", sorted(api.TENSOR_RESULT_METHODS - {"cuda"}))
def test_tensor_result_methods_return_tensors(name):
    x = _other()
    if name == "bmm":
        out = x[None].bmm(x.T[None])
    else:
        out = getattr(x, name)(*eval(_RESULT_ARGS.get(name, "()"), {"x": x, "torch": torch}))
    assert isinstance(out, torch.Tensor)


_X3, _X4, _X5 = (2, 4, 8), (2, 4, 8, 8), (2, 4, 4, 4, 4)
_RANK_KEEPING_CALLS = {
    "linear": (_X3, "f(x, torch.randn(5, 8))"), "conv1d": (_X3, "f(x, torch.randn(6, 4, 3))"),
    "conv2d": (_X4, "f(x, torch.randn(6, 4, 3, 3))"), "conv3d": (_X5, "f(x, torch.randn(6, 4, 3, 3, 3))"),
    "conv_transpose1d": (_X3, "f(x, torch.randn(4, 6, 3))"),
    "conv_transpose2d": (_X4, "f(x, torch.randn(4, 6, 3, 3))"),
    "conv_transpose3d": (_X5, "f(x, torch.randn(4, 6, 3, 3, 3))"),
    "max_pool1d": (_X3, "f(x, 2)"), "max_pool2d": (_X4, "f(x, 2)"), "max_pool3d": (_X5, "f(x, 2)"),
    "avg_pool1d": (_X3, "f(x, 2)"), "avg_pool2d": (_X4, "f(x, 2)"), "avg_pool3d": (_X5, "f(x, 2)"),
    "adaptive_avg_pool1d": (_X3, "f(x, 2)"), "adaptive_avg_pool2d": (_X4, "f(x, 2)"),
    "adaptive_avg_pool3d": (_X5, "f(x, 2)"), "adaptive_max_pool1d": (_X3, "f(x, 2)"),
    "adaptive_max_pool2d": (_X4, "f(x, 2)"), "interpolate": (_X4, "f(x, scale_factor=2)"),
    "pad": (_X4, "f(x, (1, 1))"), "layer_norm": (_X3, "f(x, (8,))"),
    "batch_norm": (_X4, "f(x, torch.zeros(4), torch.ones(4))"), "group_norm": (_X4, "f(x, 2)"),
    "instance_norm": (_X4, "f(x)"), "local_response_norm": (_X4, "f(x, 2)"), "rms_norm": (_X3, "f(x, (8,))"),
    "dropout1d": (_X3, "f(x)"), "dropout2d": (_X4, "f(x)"), "dropout3d": (_X5, "f(x)"), "glu": (_X3, "f(x, -1)"),
    "normalize": (_X3, "f(x)"), "pixel_shuffle": (_X4, "f(x, 2)"), "pixel_unshuffle": (_X4, "f(x, 2)"),
    "softmin": (_X3, "f(x, -1)"), "gumbel_softmax": (_X3, "f(x)"), "hardshrink": (_X3, "f(x)"),
    "softshrink": (_X3, "f(x)"),
}


@pytest.mark.parametrize("name", sorted(api.FUNCTIONAL_RANK_KEEPING))
def test_functional_rank_keeping(name):
    shape, text = _RANK_KEEPING_CALLS[name]
    x = torch.randn(*shape)
    out = eval(text, {"f": getattr(F, name), "x": x, "torch": torch})
    assert isinstance(out, torch.Tensor) and out.dim() == x.dim()


def test_functional_rank_adding():
    assert api.FUNCTIONAL_RANK_ADDING == {"embedding", "one_hot"}
    idx = torch.tensor([[0, 1, 2], [2, 1, 0]])
    assert F.embedding(idx, torch.randn(3, 5)).dim() == 3 and F.one_hot(idx).dim() == 3


_RANK_KEEPING_LAYERS = {
    "Conv1d": ("(4, 6, 3)", _X3), "Conv2d": ("(4, 6, 3)", _X4), "Conv3d": ("(4, 6, 3)", _X5),
    "ConvTranspose1d": ("(4, 6, 3)", _X3), "ConvTranspose2d": ("(4, 6, 3)", _X4),
    "ConvTranspose3d": ("(4, 6, 3)", _X5), "AvgPool1d": ("(2,)", _X3), "AvgPool2d": ("(2,)", _X4),
    "AvgPool3d": ("(2,)", _X5), "AdaptiveAvgPool1d": ("(2,)", _X3), "AdaptiveAvgPool2d": ("(2,)", _X4),
    "AdaptiveAvgPool3d": ("(2,)", _X5), "Upsample": ("dict(scale_factor=2)", _X4), "Dropout1d": ("()", _X3),
    "Dropout2d": ("()", _X4), "Dropout3d": ("()", _X5), "InstanceNorm1d": ("(4,)", _X3),
    "InstanceNorm2d": ("(4,)", _X4), "InstanceNorm3d": ("(4,)", _X5), "LocalResponseNorm": ("(2,)", _X4),
    "PixelShuffle": ("(2,)", _X4), "PixelUnshuffle": ("(2,)", _X4), "ZeroPad2d": ("(1,)", _X4),
    "ReflectionPad2d": ("(1,)", _X4), "ReplicationPad2d": ("(1,)", _X4), "ConstantPad2d": ("(1, 0.0)", _X4),
}


@pytest.mark.parametrize("name", sorted(api.NN_RANK_KEEPING_MODULES))
def test_nn_rank_keeping_modules(name):
    args, shape = _RANK_KEEPING_LAYERS[name]
    given = eval(args)
    layer = getattr(nn, name)(**given) if isinstance(given, dict) else getattr(nn, name)(*given)
    x = torch.randn(*shape)
    assert layer(x).dim() == x.dim()


def test_nn_rank_adding_modules():
    assert api.NN_RANK_ADDING_MODULES == {"Embedding"}
    assert nn.Embedding(4, 3)(torch.tensor([[0, 1], [2, 3]])).dim() == 3


@pytest.mark.parametrize("name", sorted(api.FUNCTIONAL_KEPT_DIMS))
def test_functional_kept_dims(name):
    assert name in api.FUNCTIONAL_RANK_KEEPING
    shape, text = _RANK_KEEPING_CALLS[name]
    x = torch.randn(*shape)
    out = eval(text, {"f": getattr(F, name), "x": x, "torch": torch})
    kept = {"all": range(x.dim()), "batch_channel": (0, 1), "batch": (0,)}[api.FUNCTIONAL_KEPT_DIMS[name]]
    assert all(out.shape[i] == x.shape[i] for i in kept)
    if api.FUNCTIONAL_KEPT_DIMS[name] == "batch_channel" and name != "interpolate":
        unbatched = torch.randn(*shape[1:])  # (C, spatial...): the channel dim is kept
        assert eval(text, {"f": getattr(F, name), "x": unbatched, "torch": torch}).shape[0] == shape[1]


@pytest.mark.parametrize("name", sorted(api.NN_KEPT_DIMS))
def test_nn_kept_dims(name):
    assert name in api.NN_RANK_KEEPING_MODULES
    args, shape = _RANK_KEEPING_LAYERS[name]
    given = eval(args)
    layer = getattr(nn, name)(**given) if isinstance(given, dict) else getattr(nn, name)(*given)
    x = torch.randn(*shape)
    kept = {"all": range(x.dim()), "batch_channel": (0, 1), "batch": (0,)}[api.NN_KEPT_DIMS[name]]
    assert all(layer(x).shape[i] == x.shape[i] for i in kept)
