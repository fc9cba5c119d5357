"""shapecheck.einsum against torch.einsum: values, accept/reject, gradients, cache, devices."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck.torch_runtime import einsum as runtime_einsum# noqa: E402
from shapecheck.errors import (  # noqa: E402
    DeviceMismatchError, DtypeMismatchError, EinsumOperandCountError, EinsumShapeError,
    EinsumSyntaxError, ShapeCheckError,
)

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _ops(*shapes, dtype=torch.float64, grad=False):
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(s, dtype=dtype, generator=gen, requires_grad=grad) for s in shapes]


def _same(spec, *shapes, dtype=torch.float64):
    ops = _ops(*shapes, dtype=dtype)
    got = shapecheck.einsum(spec, *ops)
    want = torch.einsum(spec, *ops)
    assert got.shape == want.shape, (spec, shapes)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)
    return got


CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)),
    ("ij,jk", (2, 3), (3, 4)),
    ("bij,bjk->bik", (5, 2, 3), (5, 3, 4)),
    ("bij,bkj->bki", (5, 2, 3), (5, 4, 3)),
    ("bhid,bhjd->bhij", (2, 3, 4, 5), (2, 3, 6, 5)),
    ("ii->i", (3, 3)),
    ("ii", (3, 3)),
    ("iij->j", (2, 2, 3)),
    ("iji->ij", (2, 3, 2)),
    ("iiii->i", (2, 2, 2, 2)),
    ("ij,ij->ij", (1, 3), (2, 1)),
    ("ij,jk->ik", (2, 1), (3, 4)),
    ("i,i->", (3,), (1,)),
    ("...ij,...jk->...ik", (5, 2, 3), (3, 4)),
    ("...ij,...jk", (5, 2, 3), (1, 3, 4)),
    ("i...,i...->...", (2, 3), (2, 1, 3)),
    ("...->", (2, 3, 4)),
    ("a...b,...->...", (2, 5, 3), (1,)),
    ("->", ()),
    (",ij->ij", (), (2, 3)),
    ("i,j->ij", (2,), (3,)),
    ("ij->ji", (2, 3)),
    ("ij->ij", (2, 3)),
    ("ba,ab", (2, 3), (3, 2)),
    ("Ab,bC->AC", (2, 3), (3, 4)),
    ("i,i->i", (0,), (0,)),
    ("ij,jk->ik", (2, 0), (0, 4)),
    ("ab,ab,ab->", (2, 1), (1, 3), (2, 3)),
    ("ab,bc,cd,de,ef->af", (2, 3), (3, 4), (4, 5), (5, 6), (6, 7)),
    ("ijk,ikl,ilm->jm", (2, 3, 4), (2, 4, 5), (2, 5, 6)),
    ("ij,jk,kl,lm->", (2, 3), (3, 4), (4, 5), (5, 2)),
    ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] or "empty" for c in CASES])
def test_values_match_torch(case):
    spec, *shapes = case
    _same(spec, *shapes)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64])
def test_dtypes(dtype):
    ops = [torch.randint(-3, 4, (2, 3, 4)).to(dtype), torch.randint(-3, 4, (2, 4, 5)).to(dtype)]
    got = shapecheck.einsum("bij,bjk->bik", *ops)
    want = torch.einsum("bij,bjk->bik", *ops)
    assert got.dtype == dtype
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("spec", ["ij,jk->ik", "bij,bjk->bik", "ij->ij", "ii->i", "bij,bkj->bik",
                                  "ij,ij->", "...j,jk->...k", "bhid,bhjd->bhij"])
def test_plans_ignore_strides(spec):
    """A plan compiled for contiguous operands serves transposed, sliced and expanded ones of
    the same shapes (the cache key has no strides)."""
    lhs = spec.split("->")[0].split(",")
    sizes = {"i": 3, "j": 3, "k": 3, "b": 2, "h": 2, "d": 3, ".": 2}

    def shape(term):
        return tuple(sizes[c] for c in term.replace("...", "."))

    plain = _ops(*[shape(t) for t in lhs])
    shapecheck.einsum(spec, *plain)
    variants = [
        [op.mT.contiguous().mT if op.dim() >= 2 else op for op in plain],
        [torch.cat([op, op], dim=-1)[..., ::2] for op in plain],
        [op[..., :1].expand(op.shape) for op in plain],
    ]
    for ops in variants:
        for op, ref in zip(ops, plain):
            assert op.shape == ref.shape
        torch.testing.assert_close(shapecheck.einsum(spec, *ops), torch.einsum(spec, *ops))


def test_named_axes_form():
    q, k = _ops((2, 3, 4, 5), (2, 3, 6, 5))
    got = shapecheck.einsum("batch head i d, batch head j d -> batch head i j", q, k)
    torch.testing.assert_close(got, torch.einsum("bhid,bhjd->bhij", q, k))


def test_sublist_form_and_list_of_operands():
    a, b = _ops((2, 3), (3, 4))
    want = torch.einsum("ij,jk->ik", a, b)
    torch.testing.assert_close(shapecheck.einsum(a, [0, 1], b, [1, 2], [0, 2]), want)
    torch.testing.assert_close(shapecheck.einsum(a, [0, 1], b, [1, 2]), torch.einsum(a, [0, 1], b, [1, 2]))
    torch.testing.assert_close(shapecheck.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]), want)
    torch.testing.assert_close(shapecheck.einsum("ij,jk->ik", [a, b]), want)
    torch.testing.assert_close(shapecheck.einsum("ij,jk->ik", (a, b)), want)


def test_shape_error_names_index_operands_and_sizes():
    a, b = _ops((2, 3), (4, 5))
    with pytest.raises(EinsumShapeError) as info:
        shapecheck.einsum("ij,jk->ik", a, b)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.index == "j"
    assert set(err.operands) == {0, 1}
    assert set(err.sizes) == {3, 4}
    assert "index j" in err.reason and "operand 0" in err.reason and "operand 1" in err.reason


def test_rank_operand_count_and_syntax_errors():
    a, b = _ops((2, 3), (3, 4))
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum("ijk,jk->ik", a, b)
    with pytest.raises(EinsumOperandCountError) as info:
        shapecheck.einsum("ij,jk->ik", a)
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(EinsumSyntaxError) as info:
        shapecheck.einsum("ij,jk->i$", a, b)
    assert isinstance(info.value, ValueError)
    with pytest.raises(EinsumSyntaxError):
        shapecheck.einsum("ij,jk->ikk", a, b)


def test_non_tensor_operand_is_a_clear_type_error():
    a, _ = _ops((2, 3), (3, 4))
    with pytest.raises(TypeError, match="operand 1 is a list"):
        shapecheck.einsum("ij,jk->ik", a, [[1.0]])


def test_mixed_dtypes_are_rejected_clearly():
    a = torch.randn(2, 3)
    b = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(DtypeMismatchError) as info:
        shapecheck.einsum("ij,jk->ik", a, b)
    assert isinstance(info.value, RuntimeError)
    assert "float32" in info.value.reason and "float64" in info.value.reason
    with pytest.raises(RuntimeError):
        torch.einsum("ij,jk->ik", a, b)


def test_device_mismatch_names_operands_and_devices():
    a = torch.randn(2, 3)
    b = torch.empty(3, 4, device="meta")
    with pytest.raises(DeviceMismatchError) as info:
        shapecheck.einsum("ij,jk->ik", a, b)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert "operand 0 on cpu" in err.reason and "operand 1 on meta" in err.reason
    assert ("operand 1 (jk)", "meta") in err.devices


def test_meta_tensors_run_without_data():
    a = torch.empty(2, 3, 4, device="meta")
    b = torch.empty(2, 4, 5, device="meta")
    out = shapecheck.einsum("bij,bjk->bik", a, b)
    assert out.device.type == "meta" and out.shape == (2, 3, 5)


def test_cache_hit_does_no_validation(monkeypatch):
    a, b = _ops((2, 3), (3, 4))
    first = shapecheck.einsum("ij,jk->ik", a, b)

    def boom(*args, **kwargs):
        raise AssertionError("validation ran on a cache hit")

    monkeypatch.setattr(runtime_einsum, "validate", boom)
    monkeypatch.setattr(runtime_einsum, "_build", boom)
    monkeypatch.setattr(runtime_einsum.einsum_parser, "parse", boom)
    again = shapecheck.einsum("ij,jk->ik", a, b)
    torch.testing.assert_close(first, again)
    c, d, e = _ops((2, 3), (3, 4), (4, 5))
    monkeypatch.undo()
    shapecheck.einsum("ij,jk,kl->il", c, d, e)
    monkeypatch.setattr(runtime_einsum, "validate", boom)
    shapecheck.einsum("ij,jk,kl->il", c, d, e)


def test_new_shapes_are_validated_again():
    a, b = _ops((2, 3), (3, 4))
    shapecheck.einsum("ij,jk->ik", a, b)
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum("ij,jk->ik", a, torch.randn(5, 4, dtype=torch.float64))


def test_two_operand_plan_has_no_torch_einsum():
    a, b = _ops((5, 2, 3), (5, 4, 3))
    source = shapecheck.plan_source("bij,bkj->bki", a, b)
    assert "einsum" not in source and "bmm" in source
    assert "mm(" in shapecheck.plan_source("ij,jk->ik", *_ops((2, 3), (3, 4)))


def test_chain_uses_opt_einsum_order():
    opt_einsum = pytest.importorskip("opt_einsum")
    shapes = [(2, 30), (30, 40), (40, 2), (2, 50)]
    ops = _ops(*shapes)
    path, _ = opt_einsum.contract_path("ab,bc,cd,de->ae", *shapes, shapes=True, optimize="auto")
    parsed = runtime_einsum.einsum_parser.parse("ab,bc,cd,de->ae")
    assert runtime_einsum.contraction_path(parsed, shapes) == [tuple(p) for p in path]
    _same("ab,bc,cd,de->ae", *shapes)
    assert ops[0].shape == (2, 30)


def test_chain_without_opt_einsum_uses_the_algebra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_opt_einsum(name, *args, **kwargs):
        if name == "opt_einsum":
            raise ImportError("hidden for the test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opt_einsum)
    parsed = runtime_einsum.einsum_parser.parse("ab,bc,cd->ad")
    shapes = [(2, 30), (30, 40), (40, 2)]
    path = runtime_einsum.contraction_path(parsed, shapes)
    assert path == list(parsed.contraction_order(*shapes).path)


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(runtime_einsum, "_MAX_PLANS", 3)
    shapecheck.clear_cache()
    for n in range(1, 8):
        shapecheck.einsum("i->", torch.randn(n))
        assert runtime_einsum.cache_size() <= 3


GRAD_CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)),
    ("bij,bkj->bki", (2, 2, 3), (2, 4, 3)),
    ("ii->i", (3, 3)),
    ("iji->j", (2, 3, 2)),
    ("ij,ij->ij", (1, 3), (2, 1)),
    ("ij,jk->ik", (2, 1), (3, 4)),
    ("...ij,...jk->...ik", (2, 2, 3), (3, 2)),
    ("i,i->", (3,), (3,)),
    (",ij->", (), (2, 3)),
    ("ab,bc,cd->ad", (2, 3), (3, 4), (4, 2)),
    ("i,j->ij", (2,), (3,)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients(case):
    spec, *shapes = case
    ops = tuple(_ops(*shapes, grad=True))
    assert torch.autograd.gradcheck(lambda *xs: shapecheck.einsum(spec, *xs), ops)
    got = torch.autograd.grad(shapecheck.einsum(spec, *ops).sum(), ops)
    want = torch.autograd.grad(torch.einsum(spec, *ops).sum(), ops)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


# --- generated specs ------------------------------------------------------------------------

LETTERS = "abcdeA"


@st.composite
def einsum_cases(draw):
    """A spec (letters), operand shapes, and the form to call it in; mostly valid, sometimes
    with a wrong size, rank or output label so both accept and reject are exercised."""
    n_ops = draw(st.integers(1, 4))
    base = {c: draw(st.integers(1, 3)) for c in LETTERS}
    ell_base = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    terms, shapes = [], []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=4))
        with_ell = draw(st.integers(0, 4)) == 0
        shape = []
        for c in labels:
            roll = draw(st.integers(0, 19))
            shape.append(1 if roll == 0 else (base[c] + 1 if roll == 1 else base[c]))
        term = "".join(labels)
        if with_ell:
            at = draw(st.integers(0, len(labels)))
            k = draw(st.integers(0, len(ell_base)))
            ell = [1 if draw(st.integers(0, 5)) == 0 else d for d in ell_base[len(ell_base) - k:]]
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + ell + shape[at:]
        if draw(st.integers(0, 29)) == 0:
            shape = shape + [2]
        terms.append(term)
        shapes.append(tuple(shape))
    used = sorted({c for t in terms for c in t if c != "."})
    spec = ",".join(terms)
    if draw(st.integers(0, 3)) != 0:
        out = draw(st.permutations(used))
        out = "".join(out[: draw(st.integers(0, len(out)))])
        if any("..." in t for t in terms) and draw(st.booleans()):
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        if draw(st.integers(0, 29)) == 0:
            out += "z"
        spec += "->" + out
    form = draw(st.sampled_from(["letters"] * 6 + ["named", "sublist"]))
    return spec, shapes, form


def _named(spec):
    words = {c: ("ax_" + c.lower() + ("u" if c.isupper() else "")) for c in LETTERS + "z"}

    def term(t):
        pieces = []
        rest = t
        while rest:
            if rest.startswith("..."):
                pieces.append("...")
                rest = rest[3:]
            else:
                pieces.append(words[rest[0]])
                rest = rest[1:]
        return " ".join(pieces)

    if "->" in spec:
        lhs, rhs = spec.split("->")
        return ", ".join(term(t) for t in lhs.split(",")) + " -> " + term(rhs)
    return None


def _reads_named(spec):
    """Whether the "auto" form reads ``spec`` as named axes (it needs whitespace between two
    axes of one term; a spec of single-axis terms reads as letters)."""
    try:
        return runtime_einsum.einsum_parser.parse(spec, form="auto").form == "named"
    except EinsumSyntaxError:
        return False


def _sublist(spec, ops):
    index = {c: i for i, c in enumerate(sorted(LETTERS + "z"))}

    def sub(t):
        out, rest = [], t
        while rest:
            if rest.startswith("..."):
                out.append(Ellipsis)
                rest = rest[3:]
            else:
                out.append(index[rest[0]])
                rest = rest[1:]
        return out

    lhs, _, rhs = spec.partition("->")
    args = []
    for op, t in zip(ops, lhs.split(",")):
        args += [op, sub(t)]
    if "->" in spec:
        args.append(sub(rhs))
    return args


def _outcome(fn):
    try:
        return "ok", fn()
    except (RuntimeError, ValueError) as err:
        return "error", err


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsum_cases())
def test_generated_specs_match_torch(case):
    spec, shapes, form = case
    ops = _ops(*shapes)
    want_kind, want = _outcome(lambda: torch.einsum(spec, *ops))
    if form == "named" and _named(spec) is not None and _reads_named(_named(spec)):
        got_kind, got = _outcome(lambda: shapecheck.einsum(_named(spec), *ops))
    elif form == "sublist" and "." not in spec.replace("...", ""):
        got_kind, got = _outcome(lambda: shapecheck.einsum(*_sublist(spec, ops)))
    else:
        got_kind, got = _outcome(lambda: shapecheck.einsum(spec, *ops))
    assert got_kind == want_kind, (spec, shapes, form, want, got)
    if want_kind == "ok":
        assert got.shape == want.shape, (spec, shapes)
        torch.testing.assert_close(got, want)
    else:
        assert isinstance(got, ShapeCheckError), (spec, shapes, got)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsum_cases())
def test_generated_gradients_match_torch(case):
    spec, shapes, _ = case
    ops = tuple(_ops(*shapes, grad=True))
    try:
        want = torch.einsum(spec, *ops)
    except (RuntimeError, ValueError):
        return
    got = shapecheck.einsum(spec, *ops)
    seed = torch.randn(want.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    g_want = torch.autograd.grad((want * seed).sum(), ops, allow_unused=True)
    g_got = torch.autograd.grad((got * seed).sum(), ops, allow_unused=True)
    for a, b, op in zip(g_got, g_want, ops):
        a = torch.zeros_like(op) if a is None else a
        b = torch.zeros_like(op) if b is None else b
        torch.testing.assert_close(a, b)


# --- CUDA -----------------------------------------------------------------------------------


@CUDA
def test_cuda_execution_matches_torch():
    a = torch.randn(4, 8, 16, device="cuda")
    b = torch.randn(4, 16, 32, device="cuda")
    got = shapecheck.einsum("bij,bjk->bik", a, b)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got, torch.einsum("bij,bjk->bik", a, b))
    ops = [torch.randn(3, 3, device="cuda") for _ in range(5)]
    torch.testing.assert_close(
        shapecheck.einsum("ab,bc,cd,de,ef->af", *ops), torch.einsum("ab,bc,cd,de,ef->af", *ops))


@CUDA
def test_cuda_device_mismatch():
    a = torch.randn(2, 3, device="cuda")
    b = torch.randn(3, 4)
    with pytest.raises(DeviceMismatchError) as info:
        shapecheck.einsum("ij,jk->ik", a, b)
    assert "cuda:0" in info.value.reason and "cpu" in info.value.reason
