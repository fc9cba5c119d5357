"""``squeeze()`` without a dim on a tensor of known rank with one size not known: that size is
generic (at least 2) and kept; with two or more unknown sizes the result stays unknown (a slice
of unknown bounds may be a size-1 dim squeezed on purpose). torch 2.13 agrees where the sizes
are known."""

from __future__ import annotations

import pytest

from tests.semantic.semantic_probe import shape


@pytest.mark.parametrize(("expr", "expected"), [
    ("torch.zeros(n, 1).squeeze()", "(?,)"),
    ("torch.zeros(n, 1, 3).squeeze()", "(?, 3)"),
    ("torch.zeros(1, n, 1).squeeze()", "(?,)"),
    ("torch.zeros(n, m, 1).squeeze()", "unknown"),
    ("torch.zeros(2, 1, 3).squeeze()", "(2, 3)"),
])
def test_squeeze_keeps_one_generic_size(expr, expected):
    assert shape(f"import torch\ndef f(n, m):\n    reveal({expr})\n") == expected


def test_the_known_case_matches_torch():
    torch = pytest.importorskip("torch")
    assert tuple(torch.zeros(5, 1, 3).squeeze().shape) == (5, 3)
    assert tuple(torch.zeros(1, 1, 3).squeeze().shape) == (3,)  # the exception: the size is 1


def test_an_unknown_kind_is_not_squeezed():
    # a NumPy array squeezes too: nothing says what `a` is
    assert shape("def f(a):\n    reveal(a.reshape(-1, 1).squeeze())\n") == "unknown"
