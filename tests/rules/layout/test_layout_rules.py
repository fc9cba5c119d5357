"""SC101-SC103: the stride rule against torch itself, views through names and statements, the
unknown-shape rule of attention code, and the seed pitfalls with their fixed forms."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.engine.runner import fix_text, lint_text
from shapecheck.rules.catalog import get_rule
from shapecheck.strides import contiguous_strides, view_possible_by_perm, view_strides

SC101, SC102, SC103 = (get_rule(c) for c in ("SC101", "SC102", "SC103"))
LAYOUT = [SC101, SC102, SC103]


def codes(code: str, rules=LAYOUT) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_text(textwrap.dedent(code), rules)]


@st.composite
def _case(draw):
    rank = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    perm = draw(st.permutations(list(range(rank))))
    numel = 1
    for s in sizes:
        numel *= s
    target = []
    rest = numel
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        target.append(d)
        rest //= d
    target.append(rest)
    return sizes, perm, target


@settings(max_examples=300, deadline=None)
@given(_case())
def test_view_strides_agree_with_torch(case):
    torch = pytest.importorskip("torch")
    sizes, perm, target = case
    x = torch.empty(sizes).permute(perm)
    try:
        expected = tuple(x.view(target).stride())
    except RuntimeError:
        expected = None
    got = view_strides(tuple(x.shape), tuple(x.stride()), target)
    assert (got is None) == (expected is None)
    if got is not None:
        assert all(g == e for g, e, n in zip(got, expected, target) if n != 1)


def test_contiguous_strides():
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)


def test_perm_rule_for_unknown_sizes():
    unknown = (None,) * 4
    assert not view_possible_by_perm((0, 2, 1, 3), unknown, 3)
    assert view_possible_by_perm((1, 0, 2, 3), unknown, 3)
    assert view_possible_by_perm((0, 2, 1, 3), unknown, 4)
    assert view_possible_by_perm((0, 2, 1, 3), (None, 1, None, None), 3)


@pytest.mark.parametrize(
    "body, flagged",
    [
        ("x = torch.rand(32, 32, 3).permute(2, 0, 1)\ny = x.view(3, -1)", False),
        ("x = torch.rand(32, 32, 3).permute(2, 0, 1)\ny = x.view(-1)", True),
        ("x = torch.rand(6, 4).t()\ny = x.view(2, 2, 6)", False),
        ("x = torch.rand(6, 4).t()\ny = (x * 2).view(-1)", True),
        ("x = torch.rand(6, 4).t()\ny = x.clone().view(-1)", True),
        ("x = torch.rand(6, 4).t()\ny = x.double().view(-1)", True),
        ("x = torch.rand(6, 4).t()\ny = x.contiguous().view(-1)", False),
        ("x = torch.rand(6, 4).t()\nz = x\nw = z + 1\ny = w.view(24)", True),
        ("x = torch.rand(1, 4).expand(3, 4)\ny = x.view(12)", True),
        ("x = torch.rand(3, 1).expand(3, 4)\ny = x.view(3, 2, 2)", False),
        ("x = torch.rand(4, 6)[:, :3]\ny = x.view(12)", True),
        ("x = torch.rand(4, 6)[1:3]\ny = x.view(12)", False),
    ],
)
def test_sc101_with_known_shapes(body, flagged):
    torch = pytest.importorskip("torch")
    code = "import torch\n" + body + "\n"
    assert bool(codes(code, [SC101])) == flagged
    try:
        exec(code, {"torch": torch})
        raised = False
    except RuntimeError:
        raised = True
    assert raised == flagged


def test_sc101_unknown_shapes_attention_pattern():
    code = """
    class Attention:
        def merge(self, x, b, t):
            x = x.view(b, t, self.heads, self.dim)
            x = x.transpose(1, 2)
            x = torch.exp(x)
            return x.view(b, t, -1)
    """
    assert codes("import torch\n" + textwrap.dedent(code), [SC101]) == [(8, "SC101")]


def test_sc101_softmax_result_is_contiguous():
    """softmax (like cumsum, masked_fill, tril) allocates a row-major result: the view is legal."""
    code = """
    class Attention:
        def merge(self, x, b, t):
            x = x.view(b, t, self.heads, self.dim)
            x = x.transpose(1, 2)
            x = torch.softmax(x, dim=-1)
            return x.view(b, t, -1)
    """
    assert codes("import torch\n" + textwrap.dedent(code), [SC101]) == []


def test_sc101_unknown_shapes_splits_are_legal():
    code = """
    def f(x, b, t, h, d):
        y = x.view(b, t, h, d).permute(0, 2, 1, 3)
        z = y.view(b, h, t, d, 1)
        return y.reshape(b, t, -1), z
    """
    assert codes(code, [SC101]) == []


def test_sc101_fix_rewrites_to_reshape():
    code = "import torch\nx = torch.rand(3, 4).t()\ny = x.view(12)\n"
    fixed, n = fix_text(code, [SC101])
    assert n == 1 and fixed.endswith("y = x.reshape(12)\n")


def test_seed_pitfalls_layout():
    assert codes("import torch\nx = torch.arange(6).view(2, 3)\ny = x.T\nz = y.view(6)\n") == [(4, "SC101")]
    assert codes("import torch\nx = torch.arange(6).view(2, 3)\nz = x.T.reshape(6)\n") == []
    assert codes("import torch\nx = torch.arange(6)\ny = x.view(-1, -1)\n") == [(3, "SC102")]
    assert codes("import torch\nx = torch.arange(6)\ny = x.view(-1, 2)\n") == []
    assert codes("import torch\ny = torch.arange(6).view(4, 2)\n") == [(2, "SC103")]
    assert codes("import torch\ny = torch.arange(6).view(3, 2)\n") == []


def test_messages_name_the_shapes():
    (d,) = lint_text("import torch\nx = torch.arange(6)\ny = x.view(4, 2)\n", [SC103])
    assert "(6,)" in d.message and "8 elements" in d.message
    (d,) = lint_text("import torch\nx = torch.rand(3, 4).t()\ny = x.view(12)\n", [SC101])
    assert ".t()" in d.message and "strides (1, 4)" in d.message
