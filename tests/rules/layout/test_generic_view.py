"""The stride rule on generic sizes (shapecheck.strides.generic_view) against torch itself: sizes
are distinct primes (independent, at least 2), and each exception it names (a size being 1) is
run too."""

from __future__ import annotations

import itertools
import math
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule
from shapecheck.shapes import Generic, dims_product
from shapecheck.strides import generic_view, generic_view_exceptions

SC101 = get_rule("SC101")
PRIMES = (2, 3, 5, 7, 11)
NAMES = "abcde"


def _torch_view_works(torch, base, perm, target) -> bool:
    x = torch.empty(base).permute(perm)
    try:
        x.view(target)
    except RuntimeError:
        return False
    return True


@st.composite
def _case(draw):
    """A permuted tensor of symbolic sizes and a view target that groups (or repeats) its dims."""
    rank = draw(st.integers(1, 4))
    perm = draw(st.permutations(list(range(rank))))
    sizes = [Generic(NAMES[p]) for p in perm]
    ones = draw(st.sets(st.sampled_from(NAMES[:rank]), max_size=1))
    sizes = [1 if s in ones else s for s in sizes]
    order = draw(st.permutations(list(range(rank)))) if draw(st.booleans()) else list(range(rank))
    cuts = sorted(draw(st.sets(st.integers(1, max(rank - 1, 1)), max_size=rank - 1)))
    groups = [order[i:j] for i, j in zip([0] + cuts, cuts + [rank]) if i < j]
    target = [dims_product([sizes[i] for i in g]) for g in groups]
    if draw(st.booleans()) and target:
        target[draw(st.integers(0, len(target) - 1))] = -1
    return sizes, perm, target


def _concrete(d, values):
    if d == -1 or isinstance(d, int):
        return d
    return math.prod(values[a] for a in str(d).split("*"))


@settings(max_examples=300, deadline=None)
@given(_case())
def test_generic_view_agrees_with_torch(case):
    torch = pytest.importorskip("torch")
    sizes, perm, target = case
    verdict = generic_view(sizes, _positions(perm, sizes), target)
    values = dict(zip(NAMES, PRIMES))
    base = [1 if 1 in sizes and NAMES[i] not in [str(s) for s in sizes] else values[NAMES[i]]
            for i in range(len(perm))]
    concrete = [_concrete(t, values) for t in target]
    works = _torch_view_works(torch, base, perm, concrete)
    if verdict is not None:
        assert verdict == works
    if verdict is False:
        for group in generic_view_exceptions(sizes, _positions(perm, sizes), target) or []:
            ones = dict(values, **dict.fromkeys(group, 1))
            base1 = [ones[NAMES[i]] if NAMES[i] in [str(s) for s in sizes] else 1 for i in range(len(perm))]
            assert _torch_view_works(torch, base1, perm, [_concrete(t, ones) for t in target])


@settings(max_examples=100, deadline=None)
@given(_case())
def test_sizes_taken_to_be_one_agree_with_torch(case):
    torch = pytest.importorskip("torch")
    sizes, perm, target = case
    atoms = [str(s) for s in sizes if s != 1]
    positions = _positions(perm, sizes)
    for k in range(len(atoms) + 1):
        for ones in itertools.combinations(atoms, k):
            verdict = generic_view(sizes, positions, target, frozenset(ones))
            if verdict is None:
                continue
            values = {n: (1 if n in ones else p) for n, p in zip(NAMES, PRIMES)}
            base = [values[NAMES[i]] if NAMES[i] in atoms else 1 for i in range(len(perm))]
            assert verdict == _torch_view_works(torch, base, perm, [_concrete(t, values) for t in target]), ones


def _positions(perm, sizes):
    """The perm field of a permuted plain tensor, as the inference builds it: size-1 dims
    marked, the others numbered by their place among the base's dims that are not 1."""
    base_is_one = {p: s == 1 for p, s in zip(perm, sizes)}
    rank = {p: sum(1 for q in range(p) if not base_is_one[q]) for p in perm}
    return tuple(-2 if s == 1 else rank[p] for p, s in zip(perm, sizes))


def test_exceptions_are_the_sizes_whose_being_one_lets_the_view_work():
    torch = pytest.importorskip("torch")
    b, n, h, d = (Generic(s) for s in "bnhd")
    # (b, n, h, d).transpose(1, 2).view(b, h, n * d)
    sizes, perm, target = (b, h, n, d), (0, 2, 1, 3), [b, h, dims_product([n, d])]
    assert generic_view(sizes, perm, target) is False
    found = generic_view_exceptions(sizes, perm, target)
    assert found == [("h",), ("n",), ("d",)]
    for name in "bnhd":
        vals = {k: (1 if k == name else v) for k, v in zip("bnhd", (2, 3, 5, 7))}
        x = torch.empty(vals["b"], vals["n"], vals["h"], vals["d"]).transpose(1, 2)
        works = _try(x, (vals["b"], vals["h"], vals["n"] * vals["d"]))
        assert works == ((name,) in found)


def _try(x, target) -> bool:
    try:
        x.view(target)
    except RuntimeError:
        return False
    return True


def _diags(code: str):
    return [(d.line, d.condition, d.message) for d in lint_text(textwrap.dedent(code), [SC101])]


@pytest.mark.parametrize("sizes", list(itertools.product((1, 3), (1, 4), (1, 5))))
def test_unannotated_permute_then_flatten_names_its_exception(sizes):
    torch = pytest.importorskip("torch")
    got = _diags("def f(batch):\n    return batch.permute(0, 2, 1).view(-1)\n")
    assert [(line, cond) for line, cond, _ in got] == [
        (2, "dim 1 or 2 of `batch.permute(0, 2, 1)` is 1")]
    assert "raises at run time unless dim 1 or 2 of" in got[0][2]
    works = _try(torch.empty(sizes).permute(0, 2, 1), (-1,))
    assert works == (sizes[1] == 1 or sizes[2] == 1)


@pytest.mark.parametrize(
    "body, line, condition",
    [
        ("b, n, h, d = x.shape\nreturn x.transpose(1, 2).view(b, h, n * d)", 3, "`h`, `n` or `d` is 1"),
        ("b, n, h, d = x.shape\nreturn x.transpose(1, 2).view(b, n, h, d)", 3, "`h` or `n` is 1"),
        ("b, n, h, d = x.shape\nreturn x.transpose(1, 2).view(b * h, n, d)", 3, "`b`, `h` or `n` is 1"),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).reshape(b, h * w, c)", None, None),
        ("b, c, h, w = x.shape\nreturn x.view(b, c, h * w)", None, None),
        ("b, n, d = x.shape\nreturn x.transpose(0, 1).view(n, b, d)", None, None),
        ("b, n, h, d = x.shape\nreturn x.transpose(1, 2).view(b, h, n, d, 1)", None, None),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).view(b, h, w, c)", None, None),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).view(b, h * w, c)", None, None),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).view(b, -1, c)", None, None),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).view(b, h, -1)", 3, "`w` or `c` is 1"),
        ("b, c, h, w = x.shape\nreturn x.permute(0, 2, 3, 1).view(-1, c)", 3,
         "`b` is 1, `c` is 1 or `h` and `w` are 1"),
    ],
)
def test_symbolic_views(body, line, condition):
    torch = pytest.importorskip("torch")
    code = "def f(x):\n" + textwrap.indent(body, "    ") + "\n"
    got = [(ln, cond) for ln, cond, _ in _diags(code)]
    assert got == ([] if line is None else [(line, condition)])
    names = body.split(" = ")[0].split(", ")
    scope: dict = {}
    exec(code, scope)
    for one in [None] + names:
        sizes = [1 if n == one else p for n, p in zip(names, PRIMES)]
        works = _runs(scope["f"], torch.empty(sizes))
        expected = line is None or one is not None and _alone(one, condition)
        assert works == expected, (one, sizes)


def _alone(name: str, condition: str) -> bool:
    """Whether ``condition`` says that ``name`` alone being 1 lets the view work."""
    if " are 1" in condition:
        return f"`{name}` is 1" in condition
    return f"`{name}`" in condition


def _runs(f, x) -> bool:
    try:
        f(x)
    except RuntimeError:
        return False
    return True


SC103 = get_rule("SC103")


@pytest.mark.parametrize(
    "body, condition",
    [
        ("b, c, h, w = x.shape\nreturn x.view(b, c * h)", "`w` is 1"),
        ("b, c, h, w = x.shape\nreturn x.reshape(b, h)", "`c` and `w` are 1"),
        ("b, c, h, w = x.shape\nreturn x.view(b, c * h * w)", None),
        ("b, c, h, w = x.shape\nreturn x.view(b, 2, c // 2, h, w)", None),
        ("b, c, h, w = x.shape\nreturn x.view(b, c, -1)", None),
        ("b, c, h, w = x.shape\nreturn x.view(b, 2 * c * h * w)", None),  # an empty x fits
    ],
)
def test_generic_element_counts(body, condition):
    torch = pytest.importorskip("torch")
    code = "def f(x):\n" + textwrap.indent(body, "    ") + "\n"
    got = [d.condition for d in lint_text(code, [SC103])]
    assert got == ([] if condition is None else [condition])
    if condition is None:
        return
    scope: dict = {}
    exec(code, scope)
    named = [n for n in "bchw" if f"`{n}`" in condition]
    for ones in [(), ("c",), ("w",), ("c", "w")]:
        sizes = [1 if n in ones else p for n, p in zip("bchw", (2, 6, 5, 7))]
        assert _runs(scope["f"], torch.empty(sizes)) == all(n in ones for n in named), ones


def test_a_bug_found_in_real_code():
    """transformers' phi4_multimodal ``unfold_tensor`` (paraphrased): the permuted tensor merges
    its batch with the windows, which raises whenever both are above 1."""
    torch = pytest.importorskip("torch")
    code = textwrap.dedent("""
        import torch.nn.functional as F
        def unfold_tensor(tensor, max_seq_len):
            _, _, D = tensor.shape
            tensor = tensor.transpose(-1, -2)
            tensor = F.unfold(tensor[..., None, :], kernel_size=(1, max_seq_len), stride=(1, max_seq_len))
            new_bsz, _, slen = tensor.shape
            tensor = tensor.view(new_bsz, -1, max_seq_len, slen)
            tensor = tensor.permute(0, 3, 2, 1)
            return tensor.view(-1, max_seq_len, D)
    """)
    got = [(d.line, d.condition) for d in lint_text(code, [SC101])]
    assert got == [(10, "`new_bsz` or `slen` is 1 or dim 3 of `tensor` is 1")]
    scope: dict = {}
    exec(code, scope)
    assert not _runs(lambda x: scope["unfold_tensor"](x, 4), torch.randn(2, 8, 5))
    assert _runs(lambda x: scope["unfold_tensor"](x, 4), torch.randn(1, 8, 5))  # new_bsz is 1
    assert _runs(lambda x: scope["unfold_tensor"](x, 4), torch.randn(2, 4, 5))  # slen is 1
