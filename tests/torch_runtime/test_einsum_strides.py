"""shapecheck.einsum returns what torch.einsum returns, strides included (issue 15).

A seeded generator writes thousands of specs (1 to 4 operands, repeated labels, size-1
broadcasting, ``...``, implicit and explicit outputs) and lays each operand out contiguous,
transposed, permuted, sliced with a step or expanded (stride 0). For every call torch accepts,
shapecheck's output must have torch's shape, values and strides: a later ``.view()`` that works
on torch's result must work on shapecheck's. Strides are compared on the dims of size above 1
(the stride of a size-1 dim never changes what a view can do).
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

import shapecheck  # noqa: E402

LETTERS = "abcdef"
SPECS = 3000
LAYOUTS = ("contiguous", "contiguous", "transposed", "permuted", "sliced", "expanded")


def _term(rng: random.Random, rank: int, ellipsis: bool) -> str:
    labels = [rng.choice(LETTERS[:rng.randint(2, len(LETTERS))]) for _ in range(rank)]
    if ellipsis:
        labels.insert(rng.randint(0, len(labels)), "...")
    return "".join(labels)


def _labels(term: str) -> list:
    return list(term.replace("...", ""))


def _output(rng: random.Random, terms: list, ellipsis: bool) -> str:
    seen = sorted({c for t in terms for c in _labels(t)})
    kept = [c for c in seen if rng.random() < 0.5]
    rng.shuffle(kept)
    if ellipsis and rng.random() < 0.9:
        kept.insert(rng.randint(0, len(kept)), "...")
    return "".join(kept)


def _shape(rng: random.Random, term: str, sizes: dict, batch: list) -> tuple:
    shape = []
    before, dots, after = term.partition("...")
    for label in before:
        shape.append(1 if rng.random() < 0.1 else sizes[label])
    if dots:
        rank = rng.randint(0, len(batch))
        shape += [1 if rng.random() < 0.3 else d for d in batch[len(batch) - rank:]]
    for label in after:
        shape.append(1 if rng.random() < 0.1 else sizes[label])
    return tuple(shape)


def _lay_out(rng: random.Random, shape: tuple, layout: str, dtype, gen):
    """A tensor of ``shape`` whose strides follow ``layout``."""
    rank = len(shape)
    if layout == "transposed" and rank >= 2:
        swapped = shape[:-2] + (shape[-1], shape[-2])
        return torch.randn(swapped, dtype=dtype, generator=gen).transpose(-1, -2)
    if layout == "permuted" and rank >= 2:
        order = list(range(rank))
        rng.shuffle(order)
        base = torch.randn([shape[i] for i in order], dtype=dtype, generator=gen)
        return base.permute([order.index(i) for i in range(rank)])
    if layout == "sliced" and rank >= 1:
        dim = rng.randrange(rank)
        wide = list(shape)
        wide[dim] *= 2
        return torch.randn(wide, dtype=dtype, generator=gen)[(slice(None),) * dim + (slice(None, None, 2),)]
    if layout == "expanded" and rank >= 1:
        dim = rng.randrange(rank)
        narrow = list(shape)
        narrow[dim] = 1
        return torch.randn(narrow, dtype=dtype, generator=gen).expand(shape)
    return torch.randn(shape, dtype=dtype, generator=gen)


def generated_cases(count: int = SPECS, seed: int = 15) -> list:
    """``count`` calls torch.einsum accepts: ``(spec, operands, layouts)``, from a fixed seed."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    cases: list = []
    while len(cases) < count:
        n_ops = rng.choice((1, 2, 2, 2, 3, 3, 4))
        ellipsis = rng.random() < 0.25
        terms = [_term(rng, rng.randint(0, 4 if n_ops <= 2 else 3), ellipsis and rng.random() < 0.8)
                 for _ in range(n_ops)]
        has_ellipsis = any("..." in t for t in terms)
        spec = ",".join(terms)
        if rng.random() < 0.8:
            spec += "->" + _output(rng, terms, has_ellipsis)
        sizes = {c: rng.randint(1, 4) for c in LETTERS}
        batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
        dtype = rng.choice((torch.float64, torch.float64, torch.float32))
        layouts = [rng.choice(LAYOUTS) for _ in terms]
        ops = [_lay_out(rng, _shape(rng, t, sizes, batch), layout, dtype, gen)
               for t, layout in zip(terms, layouts)]
        try:
            torch.einsum(spec, *ops)
        except RuntimeError:
            continue
        cases.append((spec, ops, layouts))
    return cases


@pytest.fixture(scope="module")
def cases():
    return generated_cases()


@pytest.fixture(scope="module")
def results(cases):
    """``(spec, operands, layouts, torch's result, shapecheck's result or the error it raised)``."""
    out = []
    for spec, ops, layouts in cases:
        want = torch.einsum(spec, *ops)
        try:
            got = shapecheck.einsum(spec, *ops)
        except Exception as err:  # reported by test_shapes_and_values_match_torch
            got = err
        out.append((spec, ops, layouts, want, got))
    return out


def _strides_that_matter(t) -> tuple:
    """The strides of the dims of size above 1, by dim (what ``.view()`` depends on)."""
    return tuple((dim, stride) for dim, (size, stride) in enumerate(zip(t.shape, t.stride())) if size > 1)


def _describe(spec: str, ops: list, layouts: list) -> str:
    return "%s on %s" % (spec, ", ".join("%s%s %s" % (tuple(op.shape), op.stride(), layout)
                                         for op, layout in zip(ops, layouts)))


def test_generator_covers_the_case_set(cases):
    specs = [spec for spec, _, _ in cases]
    assert len(cases) == SPECS
    assert {len(ops) for _, ops, _ in cases} == {1, 2, 3, 4}
    assert sum("..." in s for s in specs) > SPECS // 10
    assert sum("->" not in s for s in specs) > SPECS // 10
    assert sum(any(len(set(t.replace("...", ""))) < len(t.replace("...", "")) for t in s.split("->")[0].split(","))
               for s in specs) > SPECS // 10
    assert {layout for _, _, layouts in cases for layout in layouts} == set(LAYOUTS)


def test_shapes_and_values_match_torch(results):
    for spec, ops, layouts, want, got in results:
        where = _describe(spec, ops, layouts)
        assert isinstance(got, torch.Tensor), (where, got)
        assert got.shape == want.shape, where
        assert got.dtype == want.dtype, where
        torch.testing.assert_close(got, want, msg=lambda m, w=where: w + ": " + m)


def test_strides_match_torch(results):
    """The contract of issue 15: torch's strides on every generated call."""
    wrong = ["%s: strides %s, torch %s" % (_describe(spec, ops, layouts), got.stride(), want.stride())
             for spec, ops, layouts, want, got in results
             if isinstance(got, torch.Tensor) and _strides_that_matter(got) != _strides_that_matter(want)]
    assert not wrong, "%d of %d specs give other strides than torch.einsum, e.g.\n%s" % (
        len(wrong), len(results), "\n".join(wrong[:10]))


ISSUE_CASES = [
    ("ir,jr,kr->ijk", [(3, 5), (4, 5), (6, 5)]),
    ("abc,ia,jb,kc->ijk", [(2, 3, 4), (5, 2), (6, 3), (7, 4)]),
    ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhij,hg->bgij", [(2, 3, 4, 5), (3, 2)]),
    ("i,i->", [(7,), (7,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 6)]),
    ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 6), (6, 7)]),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize(("spec", "shapes"), ISSUE_CASES, ids=[c[0] for c in ISSUE_CASES])
def test_named_specs_give_torch_strides(spec, shapes, layout):
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(0)
    ops = [_lay_out(rng, s, layout, torch.float64, gen) for s in shapes]
    want = torch.einsum(spec, *ops)
    got = shapecheck.einsum(spec, *ops)
    torch.testing.assert_close(got, want)
    assert _strides_that_matter(got) == _strides_that_matter(want), (got.stride(), want.stride())
    if want.is_contiguous():
        assert got.view(-1).shape == want.view(-1).shape


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize(("spec", "shapes"), ISSUE_CASES, ids=[c[0] for c in ISSUE_CASES])
def test_named_specs_give_torch_strides_on_cuda(spec, shapes, layout):
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(0)
    ops = [_lay_out(rng, s, layout, torch.float32, gen).cuda() for s in shapes]
    want = torch.einsum(spec, *ops)
    got = shapecheck.einsum(spec, *ops)
    torch.testing.assert_close(got, want)
    assert _strides_that_matter(got) == _strides_that_matter(want), (got.stride(), want.stride())
