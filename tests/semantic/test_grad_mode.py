"""Grad provenance and grad mode: leaves, non-leaves, ``detach``, ``no_grad``/``inference_mode``/
``set_grad_enabled`` blocks and decorators, a file that switches grad mode off."""

from __future__ import annotations

import pytest

from semantic_probe import facts, reveal

from shapecheck.semantic.facts import NO_GRAD, NON_LEAF


def test_grad_facts_and_grad_mode():
    code = """
    import torch
    import torch.nn as nn
    w = torch.randn(3, requires_grad=True)
    reveal(w)
    y = w * 2
    reveal(y)
    reveal(y.detach())
    reveal(torch.zeros(3))
    p = nn.Parameter(torch.zeros(2))
    reveal(p)
    with torch.no_grad():
        reveal(w * 3)
    x = torch.zeros(3)
    x.requires_grad_()
    reveal(x)
    reveal(torch.argmax(w))
    """
    seen = reveal(code)
    assert [f.grad for f, _ in seen] == [
        "leaf-requiring-grad", "non-leaf", "no-grad", "no-grad", "leaf-requiring-grad", "no-grad",
        "leaf-requiring-grad", "no-grad"]
    assert [flags["grad_enabled"] for _, flags in seen][5] is False


@pytest.mark.parametrize(
    "header, expected",
    [
        ("with torch.no_grad():", False),
        ("with torch.inference_mode():", False),
        ("with torch.set_grad_enabled(False):", False),
        ("with torch.enable_grad():", True),
        ("with torch.set_grad_enabled(flag):", None),
    ],
)
def test_grad_mode_blocks(header, expected):
    code = f"import torch\nflag = bool(1)\n{header}\n    reveal(1)\n"
    assert reveal(code)[0][1]["grad_enabled"] is expected


def test_grad_mode_decorators():
    code = """
    import torch

    @torch.no_grad()
    def evaluate(x):
        reveal(x)

    @torch.inference_mode()
    def infer(x):
        reveal(x)

    def train(x):
        reveal(x)
    """
    assert [flags["grad_enabled"] for _, flags in reveal(code)] == [False, False, True]


def test_a_plain_set_grad_enabled_false_makes_grad_mode_unknown():
    code = """
    torch.set_grad_enabled(False)
    m = nn.Linear(3, 2)
    w = torch.randn(3, requires_grad=True)
    reveal(m(torch.randn(2, 3)))
    reveal(w * 2)
    def f():
        reveal(m(torch.randn(2, 3)))
    with torch.enable_grad():
        reveal(w * 2)
    """
    assert [f.grad for f in facts(code)] == [None, None, None, NON_LEAF]


FUNCTION = """
import torch
from torch.autograd import Function


class Rev(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.flip(0)


class Pair(Function):
    @staticmethod
    def forward(ctx, x):
        out = (x, x * 2)
        return out


w = torch.randn(3, requires_grad=True)
reveal(Rev.apply(w))
reveal(Rev.apply(torch.zeros(3)))
with torch.no_grad():
    reveal(Rev.apply(w))
reveal(Pair.apply(w))
"""


def test_the_apply_of_an_autograd_function_is_a_tensor_unless_forward_returns_several():
    seen = [(f.kind, f.grad) for f, _ in reveal(FUNCTION)]
    assert seen == [("tensor", NON_LEAF), ("tensor", None), ("tensor", NO_GRAD), (None, None)]
