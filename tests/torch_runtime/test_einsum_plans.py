"""shapecheck.einsum's structural plans: values, gradients and strides against torch.einsum on
random specs, plans shared across shapes, the LRU plan cache, the list and sublist call forms."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck.errors import EinsumShapeError  # noqa: E402
from shapecheck.torch_runtime import check as runtime_check  # noqa: E402
from shapecheck.torch_runtime import einsum as runtime_einsum  # noqa: E402
from shapecheck.torch_runtime import layout  # noqa: E402


@st.composite
def einsum_calls(draw):
    """A spec of 1 to 5 operands with sizes (some 1) and layouts (contiguous, transposed,
    sliced, expanded) that torch.einsum accepts or rejects."""
    letters = "abcdef"[:draw(st.integers(1, 6))]
    size = {c: draw(st.integers(2, 4)) for c in letters}
    terms, shapes = [], []
    for _ in range(draw(st.integers(1, 5))):
        term = "".join(draw(st.lists(st.sampled_from(letters), max_size=3)))
        terms.append(term)
        shapes.append([1 if draw(st.booleans()) and draw(st.booleans()) else size[c] for c in term])
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
    spec = ",".join(terms) + ("->" + output if draw(st.booleans()) or not used else "")
    layouts = [draw(st.sampled_from(["contiguous", "transposed", "sliced", "expanded"])) for _ in shapes]
    dtype = draw(st.sampled_from([torch.float64, torch.float32]))
    return spec, shapes, layouts, dtype


def _operand(shape, how, dtype, gen):
    if how == "transposed" and len(shape) >= 2:
        return torch.randn(shape[::-1], dtype=dtype, generator=gen).permute(*reversed(range(len(shape))))
    if how == "sliced" and shape:
        return torch.randn(shape[:-1] + [2 * shape[-1]], dtype=dtype, generator=gen)[..., ::2]
    if how == "expanded" and shape and shape[0] > 1:
        return torch.randn([1] + shape[1:], dtype=dtype, generator=gen).expand(shape)
    return torch.randn(shape, dtype=dtype, generator=gen)


def _compare(spec, ops, grad=True):
    try:
        want = torch.einsum(spec, *ops)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            shapecheck.einsum(spec, *ops)
        return
    for _ in range(2):  # the compiling call, then the cached plan
        got = shapecheck.einsum(spec, *ops)
        assert got.shape == want.shape and got.dtype == want.dtype
        # a size-1 dim's stride never changes a view or is_contiguous(): the contract of
        # test_einsum_strides.py compares the others
        assert _strides_that_matter(got) == _strides_that_matter(want), (spec, [(o.shape, o.stride()) for o in ops])
        torch.testing.assert_close(got, want)
    if grad and want.numel() and any(o.requires_grad for o in ops):
        seed = torch.randn(want.shape, dtype=want.dtype)
        wanted = torch.autograd.grad(want, ops, seed, allow_unused=True)
        gotten = torch.autograd.grad(got, ops, seed, allow_unused=True)
        for w, g in zip(wanted, gotten):
            if w is not None and g is not None:
                torch.testing.assert_close(g, w)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsum_calls())
# found in CI: the implicit output's size-1 dim gets another stride than torch's (harmless)
@example(("bc,,a", [[2, 1], [], [2]], ["expanded", "contiguous", "contiguous"], torch.float64))
def test_random_specs_match_torch_values_grads_strides(call):
    spec, shapes, layouts, dtype = call
    gen = torch.Generator().manual_seed(0)
    ops = [_operand(list(s), how, dtype, gen).requires_grad_() for s, how in zip(shapes, layouts)]
    _compare(spec, ops)


@pytest.mark.parametrize("spec, shapes", [
    ("ir,jr,kr->ijk", [(5, 6), (5, 6), (6, 6)]),
    ("bij,bkj->bki", [(5, 2, 3), (5, 4, 3)]),
    ("bhij,hg->bgij", [(2, 8, 4, 16), (8, 8)]),
    ("...ij,...jk->...ik", [(4, 1, 8, 8), (1, 6, 8, 8)]),
    ("i,i->", [(1000,), (1000,)]),
    ("ij,ij->", [(30, 40), (30, 40)]),
    ("ab,bc,cd,de,ef->af", [(3, 4), (4, 5), (5, 6), (6, 7), (7, 2)]),
])
def test_listed_cases_have_torch_strides(spec, shapes):
    gen = torch.Generator().manual_seed(1)
    _compare(spec, [torch.randn(s, dtype=torch.float64, generator=gen, requires_grad=True) for s in shapes])
    _compare(spec, [torch.randn(s[::-1], dtype=torch.float64, generator=gen).permute(*reversed(range(len(s))))
                    for s in shapes], grad=False)


def test_full_contraction_runs_bmm_and_keeps_transposed_operands_as_views():
    a = torch.randn(300, 200, dtype=torch.float64).t()
    b = torch.randn(300, 200, dtype=torch.float64).t()
    source = shapecheck.plan_source("ij,ij->", a, b)
    assert "bmm(" in source and ".mm(" not in source
    # summed dims flattened in memory order (j, i): .mT makes each operand contiguous, so the
    # reshape that follows is a view, not a copy
    assert "t1 = x0.mT" in source and "t2 = x1.mT" in source
    assert shapecheck.plan_source("ij,ij->", a.t(), b.t()).count("mT") == 0
    torch.testing.assert_close(shapecheck.einsum("ij,ij->", a, b), torch.einsum("ij,ij->", a, b))
    assert "bmm(" in shapecheck.plan_source("i,i->", torch.randn(10), torch.randn(10))


def test_a_new_shape_reuses_the_structure_and_is_still_checked():
    shapecheck.clear_cache()
    for n in range(2, 12):
        a, b = torch.randn(2, n, 4), torch.randn(2, 4, 3)
        torch.testing.assert_close(shapecheck.einsum("bij,bjk->bik", a, b), torch.einsum("bij,bjk->bik", a, b))
    assert len(layout._STRUCTURES) == 1
    assert runtime_einsum.cache_size() == 10
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum("bij,bjk->bik", torch.randn(2, 5, 4), torch.randn(2, 7, 3))
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum("bij,bjk->bik", torch.randn(3, 5, 4), torch.randn(2, 4, 3))


def test_new_shapes_with_size_one_dims_reuse_the_structure():
    shapecheck.clear_cache()
    spec = "...ij,...jk->...ik"
    for b, n in [(2, 3), (5, 7), (3, 2), (4, 9)]:
        a, c = torch.randn(b, 1, n, 4), torch.randn(1, 2, 4, 3)
        got, want = shapecheck.einsum(spec, a, c), torch.einsum(spec, a, c)
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()
    assert len(layout._STRUCTURES) == 1
    assert runtime_einsum.cache_size() == 4
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum(spec, torch.randn(3, 1, 5, 4), torch.randn(1, 2, 6, 3))
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum(spec, torch.randn(3, 1, 5, 4), torch.randn(2, 2, 4, 3))


def test_a_size_one_dim_with_another_stride_keeps_torchs_strides():
    shapecheck.clear_cache()
    spec = "bhid,bhjd->bhij"
    for n in (3, 4):
        plain = torch.randn(1, 2, n, 8), torch.randn(1, 2, n, 8)
        # the same values and is_contiguous(), but the size-1 dim's stride is not row-major
        odd = tuple(t.as_strided(t.shape, (1,) + t.stride()[1:]) for t in plain)
        assert all(t.is_contiguous() for t in odd)
        for a, c in (plain, odd, plain):
            got, want = shapecheck.einsum(spec, a, c), torch.einsum(spec, a, c)
            torch.testing.assert_close(got, want)
            assert got.stride() == want.stride()


def _strides_that_matter(t) -> tuple:
    return tuple((d, stride) for d, (size, stride) in enumerate(zip(t.shape, t.stride())) if size > 1)


def test_new_shapes_of_one_structure_match_torch_on_random_specs():
    """Two operands, some dims of size 1 (fixed per spec, so later calls bind the cached
    structure to new sizes), with and without ``...``: torch's values, shape and strides."""
    rng = random.Random(7)
    checked = 0
    for _ in range(150):
        letters = "abcd"[:rng.randint(1, 4)]
        ellipsis = rng.random() < 0.4
        terms = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 3))) for _ in range(2)]
        if ellipsis:
            terms = ["..." + term for term in terms]
        used = sorted(set("".join(terms).replace(".", "")))
        spec = ",".join(terms) + "->" + ("..." if ellipsis else "") + "".join(
            c for c in used if rng.random() < 0.5)
        ones = {c: rng.random() < 0.3 for c in used}
        lead = [[rng.choice([True, False]) for _ in range(rng.randint(0, 2))] for _ in range(2)]
        for _ in range(3):
            size = {c: 1 if ones[c] else rng.randint(2, 5) for c in used}
            batch = [rng.randint(2, 3) for _ in range(2)]
            shapes = [[1 if one else batch[k] for k, one in enumerate(flags)] if ellipsis else []
                      for flags in lead]
            shapes = [pre + [size[c] for c in term.replace("...", "")] for pre, term in zip(shapes, terms)]
            ops = [torch.randn(shape, dtype=torch.float64) for shape in shapes]
            try:
                want = torch.einsum(spec, *ops)
            except RuntimeError:
                continue
            got = shapecheck.einsum(spec, *ops)
            checked += 1
            assert got.shape == want.shape, spec
            torch.testing.assert_close(got, want)
            assert _strides_that_matter(got) == _strides_that_matter(want), (spec, shapes)
    assert checked > 300


@pytest.mark.parametrize("spec, shapes", [
    ("bhij,hg->bgij", [(2, 3, 4, 5), (3, 2)]),
    ("hij,hg->gij", [(3, 4, 5), (3, 2)]),
    ("hij,hg->ijg", [(3, 4, 5), (3, 2)]),
])
def test_summed_dims_between_own_dims_multiply_a_transposed_view(spec, shapes):
    a, w = (torch.randn(shape, dtype=torch.float64, requires_grad=True) for shape in shapes)
    source = shapecheck.plan_source(spec, a, w)
    assert ".mT" in source and "permute(0, 2, 3, 1)" not in source, source
    got, want = shapecheck.einsum(spec, a, w), torch.einsum(spec, a, w)
    torch.testing.assert_close(got, want)
    assert _strides_that_matter(got) == _strides_that_matter(want)
    grads = torch.autograd.grad(got.sum(), (a, w))
    torch.testing.assert_close(grads, torch.autograd.grad(want.sum(), (a, w)))


def test_operands_of_rank_above_64_run_like_torch():
    for shape in ([0] * 70, [0] * 69 + [1], [2] + [1] * 69):
        a = torch.zeros(shape)
        for _ in range(2):
            got, want = shapecheck.einsum("...,...->...", a, a), torch.einsum("...,...->...", a, a)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert got.reshape(-1).tolist() == want.reshape(-1).tolist()


def test_plan_cache_is_lru(monkeypatch):
    monkeypatch.setattr(runtime_einsum, "_MAX_PLANS", 3)
    shapecheck.clear_cache()
    keep = torch.randn(1)
    for n in range(2, 8):
        shapecheck.einsum("i->", keep)  # used on every round: never the least recent
        shapecheck.einsum("i->", torch.randn(n))
        assert runtime_einsum.cache_size() <= 3
    assert any(key[1] == keep.shape for key in runtime_einsum._PLANS)


def test_list_and_sublist_forms_reach_the_cached_plan():
    shapecheck.clear_cache()
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    # the plan's own result: torch.einsum may run another kernel (bmm, not mm) and round otherwise
    want = shapecheck.einsum("ij,jk->ik", a, b)
    torch.testing.assert_close(want, torch.einsum("ij,jk->ik", a, b))
    shapecheck.clear_cache()
    assert torch.equal(shapecheck.einsum("ij,jk->ik", [a, b]), want)
    assert torch.equal(shapecheck.einsum("ij,jk->ik", (a, b)), want)
    assert runtime_einsum.cache_size() == 1
    assert torch.equal(shapecheck.einsum(a, [0, 1], b, [1, 2], [0, 2]), want)
    assert torch.equal(shapecheck.einsum(a, [0, 1], b, [1, 2], [0, 2]), want)
    assert torch.equal(shapecheck.einsum(a, [0, 1], b, [1, 2]), want)
    assert runtime_einsum._SUBLISTS
    with pytest.raises(EinsumShapeError):
        shapecheck.einsum(a, [0, 1], torch.randn(5, 4), [1, 2], [0, 2])


def test_chain_frees_intermediates():
    ops = [torch.randn(4, 4) for _ in range(5)]
    source = shapecheck.plan_source("ab,bc,cd,de,ef->af", *ops)
    assert "del " in source


def test_assert_shape_reads_the_environment_once(monkeypatch):
    t = torch.randn(2, 3)
    monkeypatch.setenv("SHAPECHECK_DISABLE", "1")
    assert runtime_check.disabled()
    assert shapecheck.assert_shape(t, "a") is t  # disabled: no check
    monkeypatch.setenv("SHAPECHECK_DISABLE", "0")
    assert shapecheck.assert_shape(t, "a") is t  # not read again until refreshed
    assert not runtime_check.disabled()
    with pytest.raises(shapecheck.SignatureShapeError):
        shapecheck.assert_shape(t, "a")


@pytest.mark.parametrize("spec, shapes, other_order", [
    # head mixing: the direct plan multiplies [b, i j, h] x [h, g] (tall, N = g = 8); the other
    # order [g, h] x [b, h, i j] (wide) plus a copy into torch's layout is cheaper once large
    ("bhij,hg->bgij", [(4, 8, 64, 64), (8, 8)], True),
    ("bhij,hg->bgij", [(2, 8, 4, 4), (8, 8)], False),  # tiny: the copy's call costs more
    ("hij,hg->ijg", [(8, 128, 128), (8, 4)], True),
    ("hij,hg->gij", [(8, 128, 128), (8, 4)], False),  # torch's layout is the wide product's: one plan
    ("bhid,bhjd->bhij", [(2, 2, 64, 8), (2, 2, 64, 8)], False),  # no order avoids a copy: one plan
])
def test_the_kernel_cost_model_picks_the_order(spec, shapes, other_order):
    a, w = (torch.randn(shape, dtype=torch.float64, requires_grad=True) for shape in shapes)
    source = shapecheck.plan_source(spec, a, w)
    assert ("# mirrored" in source) == other_order, source
    assert (".contiguous()" in source) == other_order
    got, want = shapecheck.einsum(spec, a, w), torch.einsum(spec, a, w)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    grads = torch.autograd.grad(got.sum(), (a, w))
    torch.testing.assert_close(grads, torch.autograd.grad(want.sum(), (a, w)))


def test_the_kernel_cost_model_ranks_tall_products_above_wide_ones():
    from shapecheck.torch_runtime.kernel_costs import copy_cost, mm_cost
    # bhij,hg->bgij at b4 h8 i64 j64 g8: the tall direct product against the wide one plus copy
    direct, other = mm_cost(4, 64 * 64, 8, 8), mm_cost(4, 8, 8, 64 * 64) + copy_cost(4 * 8 * 64 * 64)
    assert other < direct
    # at b2 h8 i4 j4 g8 the copy's fixed cost decides the other way
    assert mm_cost(2, 16, 8, 8) < mm_cost(2, 8, 8, 16) + copy_cost(2 * 8 * 16)


@st.composite
def two_operand_calls(draw):
    """Two operands whose labels often sit around a summed label in the second (the pattern
    where the other order multiplies without copying an operand), in various layouts."""
    letters = "abcde"
    size = {c: draw(st.integers(2, 4)) for c in letters}
    if draw(st.booleans()):  # outer, summed, inner in the first; summed and own in the second
        order = draw(st.permutations(letters))
        n_outer, n_summed, n_inner = draw(st.integers(0, 1)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
        outer, summed = order[:n_outer], order[n_outer:n_outer + n_summed]
        inner, own = order[n_outer + n_summed:n_outer + n_summed + n_inner], order[n_outer + n_summed + n_inner:][:1]
        first = "".join(outer + summed + inner)
        second = "".join(draw(st.permutations(summed + own)))
        output = "".join(draw(st.permutations(outer + inner + own)))
        shapes = [[size[c] for c in first], [size[c] for c in second]]
        layouts = [draw(st.sampled_from(["contiguous", "transposed", "sliced"])) for _ in shapes]
        return "%s,%s->%s" % (first, second, output), shapes, layouts
    first = "".join(draw(st.permutations(letters))[:draw(st.integers(1, 3))])
    second = "".join(draw(st.permutations(letters))[:draw(st.integers(1, 4))])
    used = sorted(set(first + second))
    output = "".join(draw(st.permutations(used))[:draw(st.integers(1, len(used)))])
    shapes = [[size[c] for c in first], [size[c] for c in second]]
    layouts = [draw(st.sampled_from(["contiguous", "transposed", "sliced"])) for _ in shapes]
    return "%s,%s->%s" % (first, second, output), shapes, layouts


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(two_operand_calls())
@example(("bhij,hg->bgij", [[2, 3, 4, 2], [3, 2]], ["contiguous", "contiguous"]))
@example(("bhij,hg->bgij", [[2, 3, 4, 2], [3, 2]], ["transposed", "contiguous"]))
def test_the_other_order_matches_torch_whenever_it_is_taken(call):
    spec, shapes, layouts = call
    from shapecheck.torch_runtime import plan
    saved = plan.copy_cost
    plan.copy_cost = lambda elements: -1e12  # the cost model then always takes the other order
    try:
        shapecheck.clear_cache()
        gen = torch.Generator().manual_seed(0)
        ops = [_operand(list(s), how, torch.float64, gen).requires_grad_() for s, how in zip(shapes, layouts)]
        _compare(spec, ops)
    finally:
        plan.copy_cost = saved
        shapecheck.clear_cache()


def test_the_other_order_is_taken_when_the_model_says_so(monkeypatch):
    from shapecheck.torch_runtime import plan
    monkeypatch.setattr(plan, "copy_cost", lambda elements: -1e12)
    shapecheck.clear_cache()
    p, w = torch.randn(2, 3, 4, 2, dtype=torch.float64), torch.randn(3, 2, dtype=torch.float64)
    assert "# mirrored" in shapecheck.plan_source("bhij,hg->bgij", p, w)
    got, want = shapecheck.einsum("bhij,hg->bgij", p, w), torch.einsum("bhij,hg->bgij", p, w)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    shapecheck.clear_cache()
