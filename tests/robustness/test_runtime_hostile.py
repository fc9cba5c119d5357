"""The runtime layer against hostile calls (issue 9, items 13-15).

- item 13: a spec that reads validly both as torch's letters and as named axes, where the
  operands fit the letters, is ambiguous: an error shows both readings and how to choose;
- item 14: ``@check`` on async functions, generators and async generators (their bodies see the
  call's bindings; an async return value is checked), annotations that cannot be resolved (a
  warning naming the function), and ``torch.compile(fullgraph=True)``;
- item 15: ``shapecheck.einsum`` behaves as ``torch.einsum`` for every dtype, mixed pair, 0-d
  operand and spec: same value, dtype and shape, and it raises exactly where torch raises.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("jaxtyping")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jaxtyping import Float  # noqa: E402
from torch import Tensor  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck.errors import (  # noqa: E402
    DtypeMismatchError, EinsumSyntaxError, SignatureShapeError,
)
from shapecheck.torch_runtime.check import UnresolvedAnnotationWarning  # noqa: E402

# --- item 15: the differential test over dtypes -----------------------------------------------

DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
]

#: letters specs: sums that reduce to ints, diagonals, outer products, 0-d operands, chains
SPECS = [
    "i,j->j", "i,j->ij", "i->", "ij->i", "ij->", "ii->i", "ii->", "iij,jk->ik", "ij,jk->ik",
    "bij,bjk->bik", "i,i->", "ij,ij->ij", "ij,ji->", "i,->i", ",->", ",i->i", "->", "ij,j",
    "ba,ab", "...ij,...jk->...ik", "...i,...i->...", "ij,kl->ijkl", "ab,bc,cd->ad", "i,i,i->i",
    "ij,jk,kl->", "a,ab,b->",
]


def _values(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    low = 0 if dtype == torch.uint8 else -3
    return torch.randint(low, 4, shape, generator=gen).to(dtype)


def _shapes(spec, sizes, ellipsis):
    shapes = []
    for term in spec.split("->")[0].split(","):
        shape, rest = [], term
        while rest:
            if rest.startswith("..."):
                shape += ellipsis
                rest = rest[3:]
            else:
                shape.append(sizes[rest[0]])
                rest = rest[1:]
        shapes.append(tuple(shape))
    return shapes


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as err:  # every exception type is compared below
        return "error", err


def assert_same_as_torch(spec, ops):
    """Both succeed with the same value, dtype and shape, or both raise, ours an instance of
    the type torch raised."""
    want_kind, want = _outcome(lambda: torch.einsum(spec, *ops))
    got_kind, got = _outcome(lambda: shapecheck.einsum(spec, *ops))
    where = (spec, [(tuple(op.shape), op.dtype) for op in ops])
    assert got_kind == want_kind, (where, want, got)
    if want_kind == "error":
        assert isinstance(got, type(want)), (where, want, got)
        return
    assert got.dtype == want.dtype, where
    assert got.shape == want.shape, where
    if want.dtype.is_floating_point or want.dtype.is_complex:
        torch.testing.assert_close(got, want, equal_nan=True)
    else:
        assert torch.equal(got, want), where


@st.composite
def dtype_cases(draw):
    """A spec, operands of drawn dtypes (often mixed) and sizes (0 and 1 included)."""
    spec = draw(st.sampled_from(SPECS))
    sizes = {c: draw(st.integers(0, 3)) for c in "abcdijkl"}
    ellipsis = draw(st.lists(st.integers(0, 3), max_size=2))
    shapes = _shapes(spec, sizes, ellipsis)
    if draw(st.integers(0, 7)) == 0 and shapes and shapes[0]:  # a wrong size: both reject it
        shapes[0] = shapes[0][:-1] + (shapes[0][-1] + 1,)
    first = draw(st.sampled_from(DTYPES))
    dtypes = [first if draw(st.booleans()) else draw(st.sampled_from(DTYPES)) for _ in shapes]
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    return spec, [_values(s, d, gen) for s, d in zip(shapes, dtypes)]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(dtype_cases())
def test_einsum_matches_torch_over_dtypes(case):
    spec, ops = case
    assert_same_as_torch(spec, ops)
    assert_same_as_torch(spec, ops)  # again, through the cached plan


@pytest.mark.parametrize("first", DTYPES, ids=str)
@pytest.mark.parametrize("second", DTYPES, ids=str)
def test_every_dtype_pair_matches_torch(first, second):
    gen = torch.Generator().manual_seed(0)
    for spec, shapes in [("ij,jk->ik", [(2, 3), (3, 4)]), ("i,j->j", [(3,), (4,)]),
                         ("i,->i", [(3,), ()]), ("ii,i->", [(3, 3), (3,)])]:
        ops = [_values(shapes[0], first, gen), _values(shapes[1], second, gen)]
        assert_same_as_torch(spec, ops)


def test_the_reported_dtype_cases():
    i32 = torch.arange(3, dtype=torch.int32)
    assert shapecheck.einsum("i,j->j", i32, i32).dtype == torch.einsum("i,j->j", i32, i32).dtype
    f32 = torch.ones(3)
    f64 = torch.tensor(2.0, dtype=torch.float64)
    got = shapecheck.einsum("i,->i", f32, f64)
    assert got.dtype == torch.einsum("i,->i", f32, f64).dtype == torch.float64
    assert torch.equal(got, torch.full((3,), 2.0, dtype=torch.float64))


def test_dtypes_torch_rejects_are_explained():
    a = torch.randn(2, 3)
    b = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        torch.einsum("ij,jk->ik", a, b)
    with pytest.raises(DtypeMismatchError) as info:
        shapecheck.einsum("ij,jk->ik", a, b)
    assert info.value.reason == (
        'einsum "ij,jk->ik": torch.einsum cannot combine these dtypes (operand 0 is float32, '
        "operand 1 is float64); cast the operands to one dtype first")
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize("args", [
    (123, torch.ones(2)), (None, torch.ones(2)), (["i"], torch.ones(2)),
    ("i,i", torch.ones(2), 3.0), ("i", [1.0, 2.0]), ("i,i", [torch.ones(2), "x"]),
    ("i", torch.ones(2), [1]),
], ids=["int-spec", "none-spec", "list-spec", "float-operand", "list-of-floats", "str-in-list",
        "list-operand"])
def test_wrong_types_are_type_errors_like_torch(args):
    with pytest.raises(TypeError):
        torch.einsum(*args)
    with pytest.raises(TypeError):
        shapecheck.einsum(*args)


@pytest.mark.parametrize("args", [
    (b"i->i", torch.arange(3.0)), ("i", (torch.arange(3.0),)), (torch.arange(3.0), [0], [0]),
], ids=["bytes-spec", "tuple-of-operands", "sublist"])
def test_call_forms_torch_accepts(args):
    want = torch.einsum(*args)
    for _ in range(2):
        assert torch.equal(shapecheck.einsum(*args), want)


def test_integer_and_mixed_plans_are_torch_einsum():
    i32 = torch.arange(3, dtype=torch.int32)
    source = shapecheck.plan_source("i,j->j", i32, i32)
    assert source == "def run(x0, x1):\n    return torch.einsum('i,j->j', x0, x1)\n"
    f = torch.ones(2, 2)
    assert "torch.einsum" not in shapecheck.plan_source("ij,jk->ik", f, f)


# --- item 13: ambiguous specs -------------------------------------------------------------------

AMBIGUOUS = "... ab c, b c -> c"


def test_ambiguous_spec_shows_both_readings():
    x, y = torch.randn(2, 3, 4, 5), torch.randn(4, 5)
    with pytest.raises(EinsumSyntaxError) as info:
        shapecheck.einsum(AMBIGUOUS, x, y)
    assert str(info.value) == textwrap.dedent('''\
        einsum "... ab c, b c -> c" is ambiguous: it reads validly both as torch's letters and as named axes, with different meanings
            ... ab c, b c -> c
                ^^
            read as torch's letters (what torch.einsum computes): "...abc,bc->c"
            read as named axes (ab is one axis): "... ab c, b c -> c"
            the operands' ranks fit both; for the letters write the terms without spaces ("...abc,bc->c"), for named axes pass form="named"''')  # noqa: E501


def test_each_choice_gives_its_reading():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, 5, generator=gen, dtype=torch.float64)
    y = torch.randn(4, 5, generator=gen, dtype=torch.float64)
    letters = shapecheck.einsum("...abc,bc->c", x, y)
    torch.testing.assert_close(letters, torch.einsum(AMBIGUOUS, x, y))
    torch.testing.assert_close(shapecheck.einsum(AMBIGUOUS, x, y, form="letters"), letters)
    named = shapecheck.einsum(AMBIGUOUS, x, y, form="named")  # "ab" is dim -2 of x, "b" is y's
    torch.testing.assert_close(named, torch.einsum("...xc,bc->c", x, y))
    assert not torch.allclose(named, letters)


@pytest.mark.parametrize("spec, shapes", [
    ("batch i d, batch j d -> batch i j", [(2, 3, 4), (2, 5, 4)]),  # letters need rank 7
    ("a b, b c -> a c", [(2, 3), (3, 4)]),  # single letters read the same both ways
    ("d_model h, h", [(2, 3), (3,)]),  # not letters at all
    ("ab c, c", [(2, 3), (3,)]),  # letters "abc" need rank 3
])
def test_specs_that_read_one_way_are_not_ambiguous(spec, shapes):
    ops = [torch.randn(s) for s in shapes]
    shapecheck.einsum(spec, *ops)


def test_ambiguity_is_not_cached_away():
    x, y = torch.randn(2, 3), torch.randn(3)
    shapecheck.einsum("ab c, c", x, y)  # named: fits only that way
    for _ in range(2):
        with pytest.raises(EinsumSyntaxError, match="ambiguous"):
            shapecheck.einsum("ab c, c", torch.randn(2, 2, 3), y)


def test_form_must_be_known():
    with pytest.raises(ValueError, match="form must be"):
        shapecheck.einsum("ij", torch.ones(2, 2), form="words")


def test_linter_reads_the_form_keyword(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(textwrap.dedent('''\
        import shapecheck
        import torch

        x = torch.randn(2, 3, 4)
        y = torch.randn(3, 4)
        a = shapecheck.einsum("ab c, b c -> ab", x, y, form="letters")
        b = shapecheck.einsum("ab c, b c -> ab", x, y)
        c = shapecheck.einsum("ab c, b c -> ab", x, y, form=mode)
        '''))
    proc = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--select", "SC5", "--output-format",
                           "concise", "--no-cache", "model.py"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.stdout.splitlines()[:-1] == [
        'model.py:7:24: SC503 error: einsum "ab c, b c -> ab": operand 0 has 3 dims (2, 3, 4) but its '
        'term "ab c" has 2 axes'], proc.stdout + proc.stderr
    assert proc.returncode == 1


# --- item 14: @check on coroutines and generators ------------------------------------------------


def test_async_return_value_is_checked():
    @shapecheck.check
    async def halve(x: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
        await asyncio.sleep(0)
        return x[: x.shape[0] // 2]

    with pytest.raises(SignatureShapeError) as info:
        asyncio.run(halve(torch.ones(4)))
    assert info.value.reason == (
        "test_async_return_value_is_checked.<locals>.halve(): return value has shape (2,), "
        "expected (n,): dim 0 (n) is 2, but n = 4 from argument 'x'")


def test_async_arguments_are_checked_at_the_call():
    @shapecheck.check
    async def ident(x: Float[Tensor, "n 2"]) -> Float[Tensor, "n 2"]:
        return x

    with pytest.raises(SignatureShapeError, match="argument 'x'"):
        ident(torch.ones(3))
    assert asyncio.run(ident(torch.ones(3, 2))).shape == (3, 2)


def test_coroutine_body_sees_the_call_bindings():
    seen = []

    @shapecheck.check
    async def body(x: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
        await asyncio.sleep(0)
        seen.append(shapecheck.current_bindings())
        shapecheck.assert_shape(torch.ones(5), "n")
        return x

    async def main():
        return await asyncio.gather(body(torch.ones(5)), body(torch.ones(2)), return_exceptions=True)

    first, second = asyncio.run(main())
    assert first.shape == (5,)
    assert isinstance(second, SignatureShapeError)
    assert "but n = 2 from argument 'x'" in second.reason
    assert sorted(b["n"] for b in seen) == [2, 5]


def test_generator_body_sees_bindings_and_the_protocol_is_kept():
    log = []

    @shapecheck.check
    def gen(x: Float[Tensor, "n"]):
        log.append(dict(shapecheck.current_bindings()))
        got = yield 1
        log.append((got, shapecheck.current_bindings()["n"]))
        try:
            yield 2
        except KeyError:
            yield "caught"
        shapecheck.assert_shape(torch.ones(3), "n")
        return "done"

    it = gen(torch.ones(3))
    assert next(it) == 1
    assert shapecheck.current_bindings() is None  # not leaked to the caller between steps
    assert it.send("hello") == 2
    assert it.throw(KeyError("k")) == "caught"
    with pytest.raises(StopIteration) as stop:
        next(it)
    assert stop.value.value == "done"
    assert log == [{"n": 3}, ("hello", 3)]

    bad = gen(torch.ones(2))
    next(bad)
    bad.send(None)
    bad.throw(KeyError("k"))
    with pytest.raises(SignatureShapeError, match="but n = 2 from argument 'x'"):
        next(bad)


def test_interleaved_generators_keep_their_own_bindings():
    @shapecheck.check
    def gen(x: Float[Tensor, "n"]):
        for _ in range(3):
            yield shapecheck.current_bindings()["n"]

    a, b = gen(torch.ones(2)), gen(torch.ones(7))
    assert [v for pair in zip(a, b) for v in pair] == [2, 7, 2, 7, 2, 7]


def test_closing_a_generator_runs_its_cleanup_with_bindings():
    cleanup = []

    @shapecheck.check
    def gen(x: Float[Tensor, "n"]):
        try:
            yield 1
        finally:
            cleanup.append(shapecheck.current_bindings())

    it = gen(torch.ones(4))
    next(it)
    it.close()
    assert cleanup == [{"n": 4}]


def test_async_generator_body_sees_bindings():
    @shapecheck.check
    async def agen(x: Float[Tensor, "n"]):
        for _ in range(2):
            await asyncio.sleep(0)
            yield shapecheck.current_bindings()["n"]
        shapecheck.assert_shape(torch.ones(9), "n")

    async def main(n):
        return [v async for v in agen(torch.ones(n))]

    assert asyncio.run(main(9)) == [9, 9]
    with pytest.raises(SignatureShapeError, match="but n = 4 from argument 'x'"):
        asyncio.run(main(4))


# --- item 14: annotations that cannot be resolved ------------------------------------------------

UNRESOLVED = '''\
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import torch
import shapecheck

if TYPE_CHECKING:
    from jaxtyping import Float
    from torch import Tensor


@shapecheck.check
def scale(x: Float[Tensor, "b c"], w: Float[Tensor, "c"]) -> Float[Tensor, "b c"]:
    return x * w


@shapecheck.check
def shift(x: Later[Tensor2, "b c"], w: Later[Tensor2, "c"]) -> Later[Tensor2, "b c"]:
    return x + w


from jaxtyping import Float as Later  # noqa: E402  (defined after shift: resolved at its call)
from torch import Tensor as Tensor2  # noqa: E402

scale(torch.ones(2, 3), torch.ones(3))
scale(torch.ones(2, 3), torch.ones(1))
shift(torch.ones(2, 3), torch.ones(3))
try:
    shift(torch.ones(2, 3), torch.ones(1))
except shapecheck.SignatureShapeError as err:
    print(err.reason)
'''


def test_unresolved_annotations_warn_once_naming_the_function(tmp_path):
    path = tmp_path / "user_module.py"
    path.write_text(UNRESOLVED)
    proc = subprocess.run([sys.executable, "-W", "default", str(path)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # shift's names exist by its first call: it is checked, and not warned about
    assert proc.stdout == (
        "shift(): argument 'w' has shape (1,), expected (c,): dim 0 (c) is 1, but c = 3 from "
        "argument 'x'\n")
    warned = [line for line in proc.stderr.splitlines() if "Warning" in line]
    assert warned == [
        "%s:14: UnresolvedAnnotationWarning: shapecheck.check: scale() has annotations that "
        "cannot be resolved (NameError: name 'Float' is not defined), so 'x', 'w', return value "
        "are not checked; a name imported only under 'if TYPE_CHECKING:' does not exist at run "
        "time: import it normally" % path]


def test_unresolved_warning_is_our_own_category():
    assert issubclass(UnresolvedAnnotationWarning, UserWarning)
    namespace = {}
    exec(compile("from __future__ import annotations\n"
                 "def f(x: Missing) -> None:\n    return None\n", "<m>", "exec"), namespace)
    wrapped = shapecheck.check(namespace["f"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrapped(1)
        wrapped(2)
    assert [w.category for w in caught] == [UnresolvedAnnotationWarning]
    assert "f() has annotations that cannot be resolved" in str(caught[0].message)


# --- item 14: torch.compile(fullgraph=True) ------------------------------------------------------


@shapecheck.check
def _matmul_checked(x: Float[Tensor, "b c"], y: Float[Tensor, "c d"]) -> Float[Tensor, "b d"]:
    shapecheck.assert_shape(x, "b c")
    return shapecheck.einsum("b c, c d -> b d", x, y)


@pytest.mark.parametrize("dynamic", [False, True])
def test_checked_function_and_einsum_compile_fullgraph(dynamic):
    compiled = torch.compile(_matmul_checked, fullgraph=True, backend="eager", dynamic=dynamic)
    for n in (2, 3):
        x, y = torch.randn(n, 3), torch.randn(3, 4)
        torch.testing.assert_close(compiled(x, y), x @ y)
    # the checks ran at trace time: a fault stops the compilation with the function's name
    with pytest.raises(RuntimeError, match=r"_matmul_checked\(\): a tensor does not fit"):
        compiled(torch.randn(2, 3), torch.randn(5, 4))
    # and eager calls still explain it in full
    with pytest.raises(SignatureShapeError, match="argument 'y' has shape"):
        _matmul_checked(torch.randn(2, 3), torch.randn(5, 4))


@pytest.mark.parametrize("spec, shapes, dtype", [
    ("ij,jk->ik", [(2, 3), (3, 4)], torch.float32),
    ("i,j->j", [(3,), (4,)], torch.int32),
    ("batch i d, batch j d -> batch i j", [(2, 3, 4), (2, 5, 4)], torch.float64),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)], torch.float32),
])
def test_einsum_inside_compiled_code_matches_torch(spec, shapes, dtype):
    ops = [_values(s, dtype, torch.Generator().manual_seed(1)) for s in shapes]
    compiled = torch.compile(lambda *xs: shapecheck.einsum(spec, *xs) * 1, fullgraph=True,
                             backend="eager")
    got = compiled(*ops)
    want = shapecheck.einsum(spec, *ops)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want)


def test_ambiguous_spec_is_rejected_while_tracing():
    compiled = torch.compile(lambda a, b: shapecheck.einsum(AMBIGUOUS, a, b), fullgraph=True,
                             backend="eager")
    with pytest.raises(RuntimeError, match="is ambiguous"):
        compiled(torch.ones(2, 3, 4, 5), torch.ones(4, 5))
