"""Indexing a tensor with an index of unknown kind (``x[:, i]``): the leading ``:`` dims stay
first, whatever ``i`` is (an int, a slice, ``None``, a list or a tensor of indices)."""

from __future__ import annotations

import pytest

from semantic_probe import HEAD, shape


@pytest.mark.parametrize(
    "code, expected",
    [
        ("x = torch.randn(5, 3)\ndef f(i):\n    reveal(x[:, i])\n", "(5, ...)"),
        ("x = torch.randn(5, 4, 3)\ndef f(i):\n    reveal(x[:, :, i])\n", "(5, 4, ...)"),
        ("def f(w, i):\n    y = nn.Linear(4, 3)(w)\n    reveal(y[:, i])\n", "(?, ...)"),
        ("def f(w):\n    y = nn.Linear(4, 3)(w)\n    reveal(y[:, 0])\n", "(?, ...)"),
        # a slice keeps its dim (of unknown size): `pe[:n]` of a tensor of rank at least 1
        ("def f(w, n):\n    y = nn.Linear(4, 3)(w)\n    reveal(y[:n])\n", "(?, ...)"),
        ("def f(w, n):\n    y = nn.Linear(4, 3)(w)\n    reveal(y[1:, i])\n", "(?, ...)"),
        ("def f(w, n):\n    y = nn.Linear(4, 3)(w)\n    reveal(y[:, :n])\n", "(?, ?, ...)"),
        # an index before the unknown one that is not `:`: nothing is said
        ("x = torch.randn(5, 3)\ndef f(i):\n    reveal(x[0, i])\n", "unknown"),
        ("x = torch.randn(5, 3)\ndef f(i):\n    reveal(x[i])\n", "unknown"),
    ],
)
def test_leading_dims_kept(code, expected):
    assert shape(HEAD + code) == expected
