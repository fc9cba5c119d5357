"""Unpacking a tensor binds its rows (``q, k, v = qkv``); a number declared by a default or an
``__init__`` keeps a reduction a reduction through arithmetic (``torch.sum(x ** 2, 1) + eps``); a
value of unknown kind compared with a number is a mask of its shape."""

from __future__ import annotations

import textwrap

from semantic_probe import reveal
from shapecheck.shapes import format_shape

HEAD = "import torch\nimport torch.nn as nn\n"


def _shapes(code: str) -> list[str]:
    seen = reveal(HEAD + textwrap.dedent(code))
    return [format_shape(f.shape) if f.shape is not None else "unknown" for f, _flags in seen]


def test_unpacking_binds_rows():
    assert _shapes("""
        def f(x, h):
            b, n, c = x.shape
            q, k, v = x.reshape(b, n, 3, h, c // h).permute(2, 0, 3, 1, 4)
            reveal(q)
            reveal(v)
    """) == ["(b, h, n, c//h)", "(b, h, n, c//h)"]


def test_unpacking_a_tensor_of_another_count_binds_nothing_known():
    assert _shapes("""
        x = torch.rand(4, 5)
        a, b = x
        reveal(a)
        y = torch.rand(2, 5)
        c, d = y
        reveal(d)
    """) == ["unknown", "(5,)"]


def _reduced(code: str) -> list[bool]:
    return [f.reduction is not None for f, _flags in reveal(HEAD + textwrap.dedent(code))]


def test_number_default_keeps_the_reduction():
    assert _reduced("""
        def f(x, eps=1e-6, other=None):
            reveal(torch.sum(x ** 2, 1) + eps)
            reveal(x.sum(1).add(eps))
            reveal(x.sum(1) + other)
    """) == [True, True, False]


def test_rebound_default_is_not_a_number():
    assert _reduced("""
        def f(x, eps=1e-6):
            eps = torch.ones(3, 1)
            reveal(x.sum(1) + eps)
    """) == [False]


def test_default_rebound_by_a_with_is_not_a_number():
    assert _reduced("""
        def f(x, ctx, eps=1e-6):
            with ctx as eps:
                reveal(x.sum(1) + eps)
    """) == [False]


def test_attribute_set_from_a_number_default_in_init():
    assert _reduced("""
        class N(nn.Module):
            scale = 2.0
            def __init__(self, eps=1e-6, t=None):
                super().__init__()
                self.eps = eps
                self.t = t
            def forward(self, x):
                reveal(x.sum(1) + self.eps)
                reveal(x.sum(1) * self.scale)
                reveal(x.sum(1) + self.t)
    """) == [True, True, False]


def test_attribute_set_again_elsewhere_is_not_a_number():
    assert _reduced("""
        class N(nn.Module):
            def __init__(self, eps=1e-6):
                super().__init__()
                self.eps = eps
            def forward(self, x):
                reveal(x.sum(1) + self.eps)
            def reset(self, v):
                self.eps = v
    """) == [False]


def test_value_of_unknown_kind_compared_with_a_number_is_a_mask_of_its_shape():
    assert _shapes("""
        def f(idx, pad):
            B, T = idx.size()
            reveal(idx != 0)
            reveal(idx != pad)
    """) == ["(B, T)", "unknown"]
