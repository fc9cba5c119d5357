"""shapecheck.einsum's plans chosen per call's sizes: the step variants of chains weighed by the
kernel cost model, ``dot`` for strided vectors, opt_einsum's path found without
``contract_path``'s report, and the cheap structure lookup of a never-seen shape."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import shapecheck  # noqa: E402
from shapecheck import einsum_parser  # noqa: E402
from shapecheck.torch_runtime import einsum as runtime_einsum  # noqa: E402
from shapecheck.torch_runtime import layout  # noqa: E402


def _strides_that_matter(t) -> tuple:
    return tuple((d, s) for d, (n, s) in enumerate(zip(t.shape, t.stride())) if n > 1)


def _same_as_torch(got, want, ops, seed=None) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert _strides_that_matter(got) == _strides_that_matter(want)
    torch.testing.assert_close(got, want)
    if seed is not None:
        wanted = torch.autograd.grad(want, ops, seed, allow_unused=True, retain_graph=True)
        gotten = torch.autograd.grad(got, ops, seed, allow_unused=True)
        for w, g in zip(wanted, gotten):
            if w is not None and g is not None:
                torch.testing.assert_close(g, w)


def _structure_for(spec, ops):
    """The structure shapecheck.einsum compiled for this call (the most recent one)."""
    shapecheck.clear_cache()
    shapecheck.einsum(spec, *ops)
    return list(layout._STRUCTURES.values())[-1]


@st.composite
def chain_calls(draw):
    """Three or four operands of two or three labels each, sizes 2 to 5, in several layouts."""
    letters = "abcdefg"
    size = {c: draw(st.integers(2, 5)) for c in letters}
    terms = ["".join(draw(st.permutations(letters))[:draw(st.integers(2, 3))]) for _ in range(draw(st.integers(3, 4)))]
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.permutations(used))[:draw(st.integers(0, 3))])
    layouts = [draw(st.sampled_from(["contiguous", "transposed"])) for _ in terms]
    return "%s->%s" % (",".join(terms), output), [[size[c] for c in t] for t in terms], layouts


def _operand(shape, how, gen):
    if how == "transposed":
        return torch.randn(shape[::-1], dtype=torch.float64, generator=gen).permute(*reversed(range(len(shape))))
    return torch.randn(shape, dtype=torch.float64, generator=gen)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(chain_calls())
def test_every_step_variant_matches_torch(call):
    """Whichever variant the cost model picks, each one gives torch's values, gradients and
    strides on the call's own operands (not only on the probes it was checked on)."""
    spec, shapes, layouts = call
    gen = torch.Generator().manual_seed(0)
    ops = [_operand(s, how, gen).requires_grad_() for s, how in zip(shapes, layouts)]
    try:
        want = torch.einsum(spec, *ops)
    except RuntimeError:
        return
    structure = _structure_for(spec, ops)
    binds = structure.bind.variants() if hasattr(structure.bind, "variants") else [structure.bind]
    seed = torch.randn(want.shape, dtype=want.dtype)
    for bind in binds:
        _same_as_torch(bind([tuple(op.shape) for op in ops])(*ops), want, ops, seed)
    _same_as_torch(shapecheck.einsum(spec, *ops), want, ops, seed)
    shapecheck.clear_cache()


def test_the_cost_model_picks_the_product_that_reads_a_weight_in_place():
    """``bi,oij,bj->bo`` (bilinear): the plan with the fewest calls flattens ``o j`` of
    ``oij`` (a copy) and multiplies a [1, j] row per batch by a strided [j, o]; the cost model
    takes ``[b, i] x [o, i, j]`` (a transposed view: ``# mirrored``) once it is large."""
    shapecheck.clear_cache()
    gen = torch.Generator().manual_seed(0)
    x, w, y = (torch.randn(s, generator=gen) for s in [(256, 128), (64, 128, 128), (256, 128)])
    structure = _structure_for("bi,oij,bj->bo", [x, w, y])
    assert len(structure.bind.variants()) >= 2
    source = shapecheck.plan_source("bi,oij,bj->bo", x, w, y)
    assert "# mirrored" in source, source
    small = [t[:4, :4] for t in (x, y)]  # a call the model rates under a millisecond: the fewest calls
    assert "# mirrored" not in shapecheck.plan_source("bi,oij,bj->bo", small[0], w[:4, :4, :4], small[1])
    _same_as_torch(shapecheck.einsum("bi,oij,bj->bo", x, w, y), torch.einsum("bi,oij,bj->bo", x, w, y), None)
    shapecheck.clear_cache()


def _graph_ops(t) -> set:
    """The names of the autograd nodes that made ``t``."""
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(fn for fn, _ in node.next_functions)
    return {type(node).__name__ for node in seen}


def test_a_grad_call_takes_the_plan_the_model_prefers_with_the_backward():
    """``bi,oij,bj->bo`` at b256 i128 j128 o64: weighed forward only, the model takes the
    mirrored ``[b, i] x [o, i, j]``, whose intermediate the last ``bmm`` reads permuted (its
    gradient is copied matrix by matrix); weighed with the backward products and copies, it takes
    ``[b, i] x [i, o j]`` (one ``mm``). A call autograd records runs the second, a call it does not
    (no_grad, or no operand requiring grad) the first; both give torch's values, gradients and
    strides."""
    shapecheck.clear_cache()
    gen = torch.Generator().manual_seed(0)
    ops = [torch.randn(s, generator=gen, dtype=torch.float64).requires_grad_()
           for s in [(256, 128), (64, 128, 128), (256, 128)]]
    structure = _structure_for("bi,oij,bj->bo", ops)
    shapes = [tuple(op.shape) for op in ops]
    binds = structure.bind.variants()
    forward, backward = structure.bind.choose(shapes), structure.bind.choose(shapes, True)
    assert forward[1] is min(binds, key=lambda b: b.cost(shapes))
    assert backward[1] is min(binds, key=lambda b: b.grad_cost(shapes))
    assert "# mirrored" in forward[2] and "# mirrored" not in backward[2] and ".mm(" in backward[2]
    want = torch.einsum("bi,oij,bj->bo", *ops)
    seed = torch.randn(want.shape, generator=gen, dtype=torch.float64)
    got = shapecheck.einsum("bi,oij,bj->bo", *ops)
    assert "MmBackward0" in _graph_ops(got) and "ExpandBackward0" not in _graph_ops(got)
    _same_as_torch(got, want, ops, seed)
    with torch.no_grad():
        plain = shapecheck.einsum("bi,oij,bj->bo", *ops)
    _same_as_torch(plain, want.detach(), None)
    loose = [op.detach() for op in ops]
    _same_as_torch(shapecheck.einsum("bi,oij,bj->bo", *loose), want.detach(), None)
    assert "# mirrored" in shapecheck.plan_source("bi,oij,bj->bo", *loose)
    shapecheck.clear_cache()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_a_strided_vector_product_runs_dot(dtype):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(200, generator=gen).to(dtype)[::2].requires_grad_()
    b = torch.randn(100, generator=gen).to(dtype).requires_grad_()
    assert ".dot(" in shapecheck.plan_source("i,i->", a, b)
    assert ".dot(" not in shapecheck.plan_source("i,i->", a.detach().contiguous(), b)  # contiguous: torch's bmm
    seed = torch.randn((), dtype=dtype)
    _same_as_torch(shapecheck.einsum("i,i->", a, b), torch.einsum("i,i->", a, b), (a, b), seed)
    _same_as_torch(shapecheck.einsum("i,i", b, a), torch.einsum("i,i", b, a), (a, b), seed)


@pytest.mark.parametrize("strategy", ["auto", "greedy", "optimal"])
def test_the_path_is_the_one_contract_path_gives_torch(strategy, monkeypatch):
    opt_einsum = pytest.importorskip("opt_einsum")
    monkeypatch.setattr(torch.backends.opt_einsum, "strategy", strategy)
    rng = random.Random(0)
    for _ in range(150):
        letters = "abcdefgh"[:rng.randint(3, 8)]
        terms = ["".join(rng.sample(letters, rng.randint(1, 3))) for _ in range(rng.randint(3, 6))]
        used = sorted(set("".join(terms)))
        spec = ",".join(terms) + "->" + "".join(rng.sample(used, rng.randint(0, min(3, len(used)))))
        size = {c: rng.choice([1, 2, 3, 7, 16, 64]) for c in letters}
        shapes = [tuple(size[c] for c in t) for t in terms]
        want, _ = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize=strategy)
        assert runtime_einsum.contraction_path(einsum_parser.parse(spec), shapes) == [tuple(s) for s in want], spec


def test_the_path_of_a_named_spec_is_contract_paths_on_its_symbols():
    opt_einsum = pytest.importorskip("opt_einsum")
    parsed = einsum_parser.parse("batch i, i j, j k, k out -> batch out")
    shapes = [(2, 30), (30, 40), (40, 2), (2, 50)]
    want, _ = opt_einsum.contract_path("ab,bc,cd,de->ae", *shapes, shapes=True, optimize="auto")
    assert runtime_einsum.contraction_path(parsed, shapes) == [tuple(s) for s in want]


def _ones_reference(shape, strides):
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if stride != step:
            return None
        step *= size
    return tuple(size == 1 for size in shape)


def test_the_unrolled_size_one_test_agrees_with_the_loop():
    rng = random.Random(0)
    for _ in range(3000):
        shape = tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(1, 6)))
        if 1 not in shape:
            continue
        base = torch.empty(shape)
        strides = list(base.stride())
        if rng.random() < 0.5:  # another stride on one dim (a size-1 dim's is free in a contiguous tensor)
            strides[rng.randrange(len(shape))] = rng.choice([0, 1, 2, 5])
        assert runtime_einsum._ones(shape, tuple(strides)) == _ones_reference(shape, strides), (shape, strides)


def test_never_seen_shapes_with_size_one_dims_take_the_structure_and_match_torch():
    """Each call below has a new shape; after the first of a structure none compiles."""
    shapecheck.clear_cache()
    gen = torch.Generator().manual_seed(0)
    compiled = []
    original = layout._compile

    def counting(*args, **kwargs):
        compiled.append(args[0].text)
        return original(*args, **kwargs)
    layout._compile = counting
    try:
        for n in range(2, 12):
            a, b = torch.randn(3, 1, n, 4, generator=gen), torch.randn(1, 2, 4, 5, generator=gen)
            got, want = shapecheck.einsum("...ij,...jk->...ik", a, b), torch.einsum("...ij,...jk->...ik", a, b)
            _same_as_torch(got, want, None)
            a = a.as_strided(a.shape, (n * 4, 7, 4, 1))  # contiguous, the size-1 dim's stride not row-major
            got, want = shapecheck.einsum("...ij,...jk->...ik", a, b), torch.einsum("...ij,...jk->...ik", a, b)
            _same_as_torch(got, want, None)
    finally:
        layout._compile = original
    assert len(compiled) <= 4
    shapecheck.clear_cache()


@pytest.mark.parametrize("spec, shapes, transposed, product", [
    ("bhij,hg->bgij", [(2, 8, 64, 64), (8, 8)], False, ".expand(s0, s4, s1).bmm("),
    ("bhij,hg->bgij", [(2, 8, 64, 64), (8, 8)], True, ".expand(s0, s4, s1).bmm("),
    ("bhij,hg->bgij", [(2, 8, 16, 16), (8, 4)], False, ".bmm(x1.expand(s0, s1, s4))"),
    ("bnd,de->bne", [(3, 16, 8), (8, 5)], True, ".bmm(x1.expand(s0, s2, s3))"),
])
def test_a_matrix_times_a_batch_runs_bmm_on_an_expanded_view(spec, shapes, transposed, product):
    # matmul would fold the batch into rows when an operand requires grad, copying it transposed
    gen = torch.Generator().manual_seed(3)
    ops = [torch.randn(shape, dtype=torch.float64, generator=gen) for shape in shapes]
    if transposed:
        ops = [op.mT.contiguous().mT for op in ops]
    ops = [op.requires_grad_() for op in ops]
    source = shapecheck.plan_source(spec, *ops)
    assert product in source and "matmul(" not in source, source
    got, want = shapecheck.einsum(spec, *ops), torch.einsum(spec, *ops)
    _same_as_torch(got, want, ops, torch.randn(want.shape, dtype=torch.float64, generator=gen))
