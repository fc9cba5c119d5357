"""@shapecheck.check, assert_shape and broadcast_shapes at run time."""

from __future__ import annotations

import asyncio
import sys
from typing import Optional

import pytest

torch = pytest.importorskip("torch")
jaxtyping = pytest.importorskip("jaxtyping")
beartype_mod = pytest.importorskip("beartype")

from beartype import beartype  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jaxtyping import Bool, Float, Float32, Int, Shaped, jaxtyped  # noqa: E402
from torch import Tensor  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck import check# noqa: E402
from shapecheck.errors import (  # noqa: E402
    BroadcastError, DeviceMismatchError, DtypeMismatchError, SignatureShapeError,
)

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@check
def matmul(x: Float[Tensor, "b c"], y: Float[Tensor, "c d"]) -> Float[Tensor, "b d"]:
    return x @ y


def test_accepts_fitting_call_and_returns_result():
    out = matmul(torch.randn(2, 3), torch.randn(3, 4))
    assert out.shape == (2, 4)
    assert matmul(x=torch.randn(2, 3), y=torch.randn(3, 4)).shape == (2, 4)
    assert matmul.__name__ == "matmul" and matmul.__wrapped__ is not None


def test_shape_error_names_function_argument_shapes_and_table():
    with pytest.raises(SignatureShapeError) as info:
        matmul(torch.randn(2, 3), torch.randn(4, 5))
    err = info.value
    assert isinstance(err, RuntimeError)
    text = str(err)
    assert err.reason.startswith("matmul(): argument 'y' has shape (4, 5), expected (c, d)")
    assert "c = 3 from argument 'x'" in err.reason
    assert "dims bound so far" in text and "b = 2" in text and "c = 3" in text
    assert "expected (c=3, d)" in text and "actual   (4, 5)" in text
    assert err.function == "matmul()" and err.argument == "argument 'y'"
    assert err.bindings == {"b": 2, "c": 3}
    assert "\n" not in err.reason


def test_rank_and_return_value_errors():
    with pytest.raises(SignatureShapeError, match="3 dims, not 2"):
        matmul(torch.randn(2, 3, 1), torch.randn(3, 4))

    @check
    def bad_return(x: Float[Tensor, "b c"]) -> Float[Tensor, "c b"]:
        return x

    with pytest.raises(SignatureShapeError) as info:
        bad_return(torch.randn(2, 3))
    assert "return value" in info.value.reason


def test_dtype_kinds():
    @check
    def f(x: Float[Tensor, "n"], i: Int[Tensor, "n"], m: Bool[Tensor, "n"], s: Shaped[Tensor, "n"]):
        return x

    n = torch.arange(3)
    f(torch.randn(3), n, n > 0, n)
    f(torch.randn(3, dtype=torch.float16), n.int(), n > 0, n > 0)
    with pytest.raises(DtypeMismatchError) as info:
        f(n, n, n > 0, n)
    assert "argument 'x' has dtype int64, expected Float" in info.value.reason
    assert isinstance(info.value, TypeError) and isinstance(info.value, RuntimeError)
    with pytest.raises(DtypeMismatchError):
        f(torch.randn(3), torch.randn(3), n > 0, n)

    @check
    def g(x: Float32[Tensor, "n"]):
        return x

    g(torch.randn(2))
    with pytest.raises(DtypeMismatchError):
        g(torch.randn(2, dtype=torch.float64))


def test_variadic_ellipsis_broadcastable_fixed_anonymous():
    @check
    def f(x: Float[Tensor, "*batch c"], y: Float[Tensor, "*batch c"], z: Float[Tensor, "... 3"],
          w: Float[Tensor, "#c"], a: Float[Tensor, "_ c"]) -> Float[Tensor, "*batch c"]:
        return x + y

    f(torch.randn(2, 5, 4), torch.randn(2, 5, 4), torch.randn(3), torch.randn(1), torch.randn(9, 4))
    f(torch.randn(4), torch.randn(4), torch.randn(7, 7, 3), torch.randn(4), torch.randn(1, 4))
    with pytest.raises(SignatureShapeError, match=r"\*batch is \(2, 6\) here"):
        f(torch.randn(2, 5, 4), torch.randn(2, 6, 4), torch.randn(3), torch.randn(1), torch.randn(9, 4))
    with pytest.raises(SignatureShapeError, match="dim 1 is 2, not 3"):
        f(torch.randn(4), torch.randn(4), torch.randn(7, 2), torch.randn(1), torch.randn(9, 4))
    with pytest.raises(SignatureShapeError, match="c = 4"):
        f(torch.randn(4), torch.randn(4), torch.randn(3), torch.randn(2), torch.randn(9, 4))


def test_symbolic_dims():
    @check
    def pad(x: Float[Tensor, "n"]) -> Float[Tensor, "n+1"]:
        return torch.cat([x, x[:1]])

    @check
    def bad(x: Float[Tensor, "n"]) -> Float[Tensor, "2*n"]:
        return x

    assert pad(torch.randn(4)).shape == (5,)
    with pytest.raises(SignatureShapeError, match=r"2\*n = 8"):
        bad(torch.randn(4))


def test_symbolic_dims_in_varargs():
    @check
    def f(x: Float[Tensor, "n"], *rest: Float[Tensor, "n+1"]):
        return x

    f(torch.randn(2), torch.randn(3), torch.randn(3))
    with pytest.raises(SignatureShapeError, match=r"argument 'rest\[1\]'.*n\+1 = 3"):
        f(torch.randn(2), torch.randn(3), torch.randn(4))


def test_numpy_annotations_go_to_beartype():
    np = pytest.importorskip("numpy")

    def f(x, a):
        return x

    f.__annotations__ = {"x": Float[Tensor, "n"], "a": Float[np.ndarray, "m"]}
    f = check(f)
    f(torch.randn(2), np.zeros(3))
    with pytest.raises(Exception) as info:
        f(torch.randn(2), np.zeros((3, 3)))
    assert type(info.value).__name__.startswith("Beartype")


def test_fixed_size_with_name():
    @check
    def f(x: Float[Tensor, "b c=3"]):
        return x

    f(torch.randn(2, 3))
    with pytest.raises(SignatureShapeError):
        f(torch.randn(2, 4))


def test_optional_defaults_kwargs_varargs_and_keyword_only():
    @check
    def f(x: Float[Tensor, "n"], mask: Optional[Bool[Tensor, "n"]] = None, *rest: Float[Tensor, "n"],
          scale: Float[Tensor, "n"] | None = None, **extra: Float[Tensor, "m"]):
        return x

    x = torch.randn(3)
    f(x)
    f(x, None)
    f(x, x > 0, x, x, scale=x, a=torch.randn(5), b=torch.randn(5))
    with pytest.raises(SignatureShapeError, match=r"argument 'rest\[1\]'"):
        f(x, None, x, torch.randn(4))
    with pytest.raises(SignatureShapeError, match="argument 'scale'"):
        f(x, scale=torch.randn(4))
    with pytest.raises(SignatureShapeError, match="argument 'b'"):
        f(x, a=torch.randn(5), b=torch.randn(6))
    with pytest.raises(TypeError, match="argument 'x' is a list"):
        f([1.0, 2.0])


def test_devices_one_device_unless_told_otherwise():
    cpu = torch.randn(2, 3)
    meta = torch.empty(3, 4, device="meta")
    with pytest.raises(DeviceMismatchError) as info:
        matmul(cpu, meta)
    assert "argument 'x' on cpu" in info.value.reason and "argument 'y' on meta" in info.value.reason
    assert isinstance(info.value, RuntimeError)

    @check(devices=False)
    def loose(x: Float[Tensor, "b c"], y: Float[Tensor, "c d"]):
        return None

    loose(cpu, meta)

    @check
    def with_scalar(x: Float[Tensor, "n"], s: Float[Tensor, ""]):
        return None

    with_scalar(torch.empty(3, device="meta"), torch.tensor(2.0))


def test_wrapper_with_the_functions_own_parameters():
    # plain parameters (positional-or-keyword, no default): the wrapper takes them itself;
    # parameters named like the check's locals (b, d, s, v, dev) must not be clobbered
    @check
    def f(b: Float[Tensor, "n n"], d: Float[Tensor, "n"], s, v: Float[Tensor, "m"], dev) -> Float[Tensor, "n"]:
        return b @ d + s * v.sum() + dev

    eye, ones = torch.eye(3), torch.ones(3)
    assert f(eye, ones, 2.0, torch.ones(4), 1.0).tolist() == [10.0, 10.0, 10.0]
    assert f(eye, ones, s=0.0, v=torch.ones(2), dev=0.0).tolist() == [1.0, 1.0, 1.0]
    assert f(dev=0.0, v=torch.ones(2), s=0.0, d=ones, b=eye).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match=r"^test_wrapper_with_the_functions_own_parameters\.<locals>\.f\(\) "
                                        r"missing 1 required positional argument: 'dev'"):
        f(eye, ones, 2.0, torch.ones(4))
    with pytest.raises(TypeError, match="unexpected keyword argument 'e'"):
        f(eye, ones, 2.0, torch.ones(4), 1.0, e=1)
    with pytest.raises(SignatureShapeError, match=r"argument 'b' has shape \(2, 3\), expected \(n, n\)"):
        f(torch.randn(2, 3), ones, 2.0, torch.ones(4), 1.0)
    with pytest.raises(SignatureShapeError, match="argument 'd'"):
        f(eye, torch.ones(4), 2.0, torch.ones(4), 1.0)
    with pytest.raises(SignatureShapeError, match="return value"):
        _bad_return(eye)


@check
def _bad_return(x: Float[Tensor, "n n"]) -> Float[Tensor, "n"]:
    return x[0, :2]


def test_non_tensor_annotations_go_to_beartype():
    from beartype.roar import BeartypeCallHintViolation

    @check
    def f(x: Float[Tensor, "n"], k: int, name: str = "a") -> Float[Tensor, "n"]:
        return x * k

    assert f(torch.randn(3), 2).shape == (3,)
    with pytest.raises(BeartypeCallHintViolation):
        f(torch.randn(3), "two")
    with pytest.raises(SignatureShapeError):
        f(torch.randn(3, 1), 2)


def test_disable_returns_function_unchanged(monkeypatch):
    def f(x: Float[Tensor, "n"]):
        return x

    monkeypatch.setenv("SHAPECHECK_DISABLE", "1")
    assert check(f) is f
    assert check(devices=False)(f) is f
    t = torch.randn(2, 2)
    assert shapecheck.assert_shape(t, "a") is t
    monkeypatch.setenv("SHAPECHECK_DISABLE", "0")
    assert check(f) is not f


def test_assert_shape_shares_bindings():
    @check
    def f(x: Float[Tensor, "b c"]) -> Float[Tensor, "b h"]:
        h = x.sum(-1, keepdim=True).expand(-1, 5)
        shapecheck.assert_shape(h, "b h")
        shapecheck.assert_shape(x, "b c")
        assert shapecheck.current_bindings() == {"b": 2, "c": 3, "h": 5}
        return h

    f(torch.randn(2, 3))

    @check
    def g(x: Float[Tensor, "b c"]):
        shapecheck.assert_shape(x.T, "b c")

    with pytest.raises(SignatureShapeError) as info:
        g(torch.randn(2, 3))
    assert "assert_shape('b c')" in info.value.reason
    assert "b = 2   from argument 'x'" in str(info.value)

    @check
    def h(x: Float[Tensor, "b c"]) -> Float[Tensor, "b k"]:
        shapecheck.assert_shape(torch.zeros(2, 7), "b k")
        return torch.zeros(2, 8)

    with pytest.raises(SignatureShapeError, match="return value"):
        h(torch.randn(2, 3))


def test_assert_shape_outside_a_checked_function():
    t = torch.randn(2, 3)
    assert shapecheck.assert_shape(t, "a b") is t
    shapecheck.assert_shape(t, "... 3")
    with pytest.raises(SignatureShapeError, match="dim 1 is 3, not 4"):
        shapecheck.assert_shape(t, "a 4")
    with pytest.raises(SignatureShapeError, match="a = 2"):
        shapecheck.assert_shape(torch.randn(2, 3), "a a")
    assert shapecheck.current_bindings() is None


def test_methods_staticmethods_classmethods():
    class Layer:
        @check
        def forward(self, x: Float[Tensor, "b d"]) -> Float[Tensor, "b d"]:
            return x

        @check
        @staticmethod
        def twice(x: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
            return x * 2

        @check
        @classmethod
        def make(cls, x: Float[Tensor, "n"]) -> Float[Tensor, "n n"]:
            return x[:, None] * x

    layer = Layer()
    layer.forward(torch.randn(2, 3))
    Layer.twice(torch.randn(3))
    Layer.make(torch.randn(3))
    with pytest.raises(SignatureShapeError, match="forward"):
        layer.forward(torch.randn(2))


def test_tuple_return_and_generators():
    @check
    def split(x: Float[Tensor, "b c"]) -> tuple[Float[Tensor, "b"], Float[Tensor, "c"]]:
        return x.sum(1), x.sum(0)

    split(torch.randn(2, 3))

    @check
    def wrong(x: Float[Tensor, "b c"]) -> tuple[Float[Tensor, "b"], Float[Tensor, "b"]]:
        return x.sum(1), x.sum(0)

    with pytest.raises(SignatureShapeError, match=r"return value \[1\]"):
        wrong(torch.randn(2, 3))

    @check
    def gen(x: Float[Tensor, "n"]):
        yield x

    assert len(list(gen(torch.randn(2)))) == 1
    with pytest.raises(SignatureShapeError):
        gen(torch.randn(2, 2))

    @check
    async def coro(x: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
        return x

    assert asyncio.run(coro(torch.randn(2))).shape == (2,)


def test_string_annotations_resolve():
    namespace = {}
    code = (
        "from __future__ import annotations\n"
        "from jaxtyping import Float\n"
        "from torch import Tensor\n"
        "def f(x: Float[Tensor, 'a b']) -> Float[Tensor, 'b a']:\n"
        "    return x.T\n"
    )
    exec(compile(code, "<string-annotations>", "exec"), namespace)
    g = check(namespace["f"])
    g(torch.randn(2, 3))
    with pytest.raises(SignatureShapeError):
        g(torch.randn(2))


def test_check_rejects_non_functions():
    with pytest.raises(TypeError, match="decorates functions"):
        check(42)


def test_broadcast_shapes_at_run_time():
    got = shapecheck.broadcast_shapes(torch.randn(2, 1), (3,), torch.Size([1, 1, 3]))
    assert got == torch.Size([1, 2, 3])
    assert shapecheck.broadcast_shapes(4) == torch.Size([4])
    with pytest.raises(BroadcastError) as info:
        shapecheck.broadcast_shapes(torch.randn(2, 3), torch.randn(4, 2))
    assert isinstance(info.value, RuntimeError)
    assert "(2, 3) and (4, 2)" in info.value.reason and "^" in str(info.value)


# --- agreement with jaxtyped(typechecker=beartype) on generated signatures --------------------

DIM_TOKENS = ["a", "b", "c", "2", "3", "#a", "#b", "_", "*batch", "...", "*#batch"]


@st.composite
def signatures(draw):
    """Annotations for two or three arguments and a return value, and shapes for a call."""
    n_args = draw(st.integers(1, 3))
    annots, shapes = [], []
    sizes = {"a": draw(st.integers(1, 3)), "b": draw(st.integers(1, 3)), "c": draw(st.integers(2, 3))}
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    for _ in range(n_args + 1):
        tokens = draw(st.lists(st.sampled_from(DIM_TOKENS), max_size=3))
        variadic = [t for t in tokens if t.startswith("*") or t == "..."]
        for extra in variadic[1:]:
            tokens.remove(extra)
        shape = []
        for t in tokens:
            roll = draw(st.integers(0, 9))
            if t in ("*batch", "*#batch", "..."):
                dims = list(batch)
                if roll == 0 and dims:
                    dims[0] = 1
                elif roll == 1:
                    dims = dims[1:]
                shape += dims
                continue
            if t.isdigit():
                size = int(t)
            elif t == "_":
                size = draw(st.integers(1, 3))
            else:
                size = sizes[t.lstrip("#")]
            if roll == 0:
                size = 1
            elif roll == 1:
                size += 1
            shape.append(size)
        if draw(st.integers(0, 19)) == 0:
            shape.append(2)
        annots.append(" ".join(tokens))
        shapes.append(tuple(shape))
    return annots, shapes


def _make(annots):
    params = ", ".join("x%d: Float[Tensor, %r]" % (i, a) for i, a in enumerate(annots[:-1]))
    code = "def f(%s, out) -> Float[Tensor, %r]:\n    return out\n" % (params, annots[-1])
    namespace = {"Float": Float, "Tensor": Tensor}
    exec(compile(code, "<generated>", "exec"), namespace)
    return namespace["f"]


def _verdict(fn, args):
    try:
        fn(*args)
        return True
    except Exception as err:
        if type(err).__name__ == "AnnotationError":
            return None
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(signatures())
def test_generated_signatures_agree_with_jaxtyping(case):
    annots, shapes = case
    tensors = [torch.zeros(s) for s in shapes]
    ours = check(_make(annots))
    theirs = jaxtyped(typechecker=beartype)(_make(annots))
    want = _verdict(theirs, tensors)
    if want is None:
        return
    got = _verdict(ours, tensors)
    assert got == want, (annots, shapes)
    checker = ours.__shapecheck_checker__
    try:
        checker.bind(tuple(tensors), {}, tensors[-1])
        explained = True
    except Exception:
        explained = False
    assert explained == got, (annots, shapes)


# --- CUDA -----------------------------------------------------------------------------------


@CUDA
def test_cuda_device_mismatch_and_execution():
    out = matmul(torch.randn(2, 3, device="cuda"), torch.randn(3, 4, device="cuda"))
    assert out.device.type == "cuda"
    with pytest.raises(DeviceMismatchError) as info:
        matmul(torch.randn(2, 3, device="cuda"), torch.randn(3, 4))
    assert "cuda:0" in info.value.reason and "cpu" in info.value.reason

    @check
    def scaled(x: Float[Tensor, "n"], s: Float[Tensor, ""]) -> Float[Tensor, "n"]:
        return x * s

    assert scaled(torch.randn(3, device="cuda"), torch.tensor(2.0)).device.type == "cuda"


def test_import_shapecheck_does_not_import_torch():
    import subprocess

    code = "import sys, shapecheck, shapecheck.torch_runtime.pytest_plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


DIM_STRINGS = ["b c", "*batch c", "... c", "#b c", "3 c", "_ c", "c=3", "n dim+1", "*#batch 2",
               "_name x", "", "#3", "*_ d", "2*n"]


@pytest.mark.parametrize("text", DIM_STRINGS)
def test_runtime_reads_dims_as_the_linter_does(text):
    """The runtime reads jaxtyping's own parse; the algebra's parse_dims (the linter's) must
    mean the same thing, dim by dim."""
    from shapecheck.torch_runtime.annotations import dims_spec
    from shapecheck.shapes import parse_dims

    ours = dims_spec(text).dims
    linter = parse_dims(text)
    assert len(ours) == len(linter)
    for a, b in zip(ours, linter):
        name = a.name if a.kind in ("named", "variadic") else None
        assert (a.kind, name, a.size, a.broadcastable, a.expr) == (
            b.kind, b.name, b.size, b.broadcastable, b.expression), (text, b)
