"""Shapes the inference gives literal programs: factories, views, indexing, reductions,
matrix products, einsum, cat/stack, broadcasting."""

from __future__ import annotations

import pytest

from semantic_probe import reveal, shape

from shapecheck.shapes import is_generic


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("torch.zeros(2, 3)", "(2, 3)"),
        ("torch.ones((4, 5))", "(4, 5)"),
        ("torch.randn([6])", "(6,)"),
        ("torch.full((2, 2), 7.0)", "(2, 2)"),
        ("torch.arange(6)", "(6,)"),
        ("torch.arange(1, 10, 2)", "(5,)"),
        ("torch.linspace(0, 1, 11)", "(11,)"),
        ("torch.eye(3)", "(3, 3)"),
        ("torch.tensor([[1, 2, 3], [4, 5, 6]])", "(2, 3)"),
        ("torch.tensor(3.0)", "()"),
        ("torch.randint(0, 10, (4, 2))", "(4, 2)"),
        ("torch.zeros_like(torch.zeros(5, 1))", "(5, 1)"),
        ("torch.zeros(2, 3).view(3, 2)", "(3, 2)"),
        ("torch.zeros(2, 3).view(-1)", "(6,)"),
        ("torch.zeros(2, 3, 4).reshape(2, -1)", "(2, 12)"),
        ("torch.zeros(2, 3, 4).flatten(1)", "(2, 12)"),
        ("torch.zeros(2, 3, 4).transpose(0, 2)", "(4, 3, 2)"),
        ("torch.zeros(2, 3, 4).permute(2, 0, 1)", "(4, 2, 3)"),
        ("torch.zeros(2, 3).T", "(3, 2)"),
        ("torch.zeros(5, 2, 3).mT", "(5, 3, 2)"),
        ("torch.zeros(2, 3).t()", "(3, 2)"),
        ("torch.zeros(2, 3).unsqueeze(0)", "(1, 2, 3)"),
        ("torch.zeros(2, 3).unsqueeze(-1)", "(2, 3, 1)"),
        ("torch.zeros(2, 1, 3).squeeze()", "(2, 3)"),
        ("torch.zeros(2, 1, 3).squeeze(1)", "(2, 3)"),
        ("torch.zeros(1, 3).expand(4, 3)", "(4, 3)"),
        ("torch.zeros(2, 3).repeat(2, 2)", "(4, 6)"),
        ("torch.zeros(4, 5)[0]", "(5,)"),
        ("torch.zeros(4, 5)[:, 1:3]", "(4, 2)"),
        ("torch.zeros(4, 5)[None, ..., 0]", "(1, 4)"),
        ("torch.zeros(4, 5).sum()", "()"),
        ("torch.zeros(4, 5).sum(dim=1)", "(4,)"),
        ("torch.zeros(4, 5).mean(1, keepdim=True)", "(4, 1)"),
        ("torch.zeros(4, 5, 6).sum(dim=(0, 2))", "(5,)"),
        ("torch.zeros(4, 5).max(dim=1).values", "(4,)"),
        ("torch.zeros(4, 5) @ torch.zeros(5, 6)", "(4, 6)"),
        ("torch.matmul(torch.zeros(7, 4, 5), torch.zeros(5, 6))", "(7, 4, 6)"),
        ("torch.einsum('bij,bjk->bik', torch.zeros(2, 3, 4), torch.zeros(2, 4, 5))", "(2, 3, 5)"),
        ("torch.cat([torch.zeros(2, 3), torch.zeros(4, 3)])", "(6, 3)"),
        ("torch.stack([torch.zeros(2, 3), torch.zeros(2, 3)], dim=1)", "(2, 2, 3)"),
        ("torch.zeros(2, 3) + torch.zeros(3)", "(2, 3)"),
        ("torch.zeros(2, 1) * torch.zeros(1, 4)", "(2, 4)"),
    ],
)
def test_shapes_of_literal_programs(expr, expected):
    assert shape(f"import torch\nreveal({expr})\n") == expected


def test_unpacked_sizes_are_generic_symbols():
    seen = [f for f, _ in reveal(
        "def f(x, g):\n"
        "    b, c, h, w = x.shape\n"
        "    reveal(x)\n"
        "    reveal(h * w)\n"
        "    reveal(x.view(b, -1))\n"
        "    reveal(x.view(b, g, c // g, h, w))\n"
        "    reveal(x.flatten(2))\n"
        "    reveal(x.permute(0, 2, 3, 1))\n"
    )]
    assert seen[0].shape.dims == ("b", "c", "h", "w") and all(is_generic(d) for d in seen[0].shape.dims)
    assert seen[1].dim == "h*w"
    assert seen[2].shape.dims == ("b", "c*h*w")
    assert seen[3].shape.dims == ("b", "g", "c//g", "h", "w")
    assert seen[4].shape.dims == ("b", "c", "h*w")
    assert seen[5].shape.dims == ("b", "h", "w", "c") and seen[5].perm == (0, 2, 3, 1)


def test_permute_fixes_the_rank_of_an_unknown_tensor():
    seen = [f for f, _ in reveal("def f(batch):\n    reveal(batch.permute(0, 2, 1))\n")]
    assert seen[0].shape.rank == 3 and seen[0].perm == (0, 2, 1)


def test_a_name_unpacked_again_names_a_new_symbol():
    seen = [f for f, _ in reveal(
        "def f(x, conv):\n"
        "    b, c = x.shape\n"
        "    y = conv(x)\n"
        "    b, c = y.shape\n"
        "    reveal(x)\n"
        "    reveal(y)\n"
        "    reveal(c)\n"
        "    b, c = y.shape\n"
        "    reveal(y)\n"
    )]
    assert seen[0].shape.dims == ("b", "c")
    assert seen[1].shape.dims == ("b'", "c'") and seen[2].dim == "c'"
    assert seen[3].shape.dims == ("b'", "c'")  # the same tensor unpacked again: the same sizes


def test_sizes_passed_as_names_are_symbols():
    seen = [f for f, _ in reveal(
        "def f(x, b, t, self):\n"
        "    reveal(x.view(b, t, self.heads, -1))\n"
        "    reveal(x.view(b * t, -1))\n"
    )]
    assert seen[0].shape.dims == ("b", "t", "self.heads", None)
    assert seen[1].shape.dims == ("b*t", None)


@pytest.mark.parametrize(
    "body, expected",
    [
        # squeeze(1) needs a dim 1, and removes at most that one: at least one dim is left
        ("y = torch.sigmoid(model(x)).squeeze(1)", "(?, ...)"),
        ("y = torch.sigmoid(model(x)).squeeze(2)", "(?, ?, ...)"),
        ("y = torch.sigmoid(model(x)).squeeze(0)", "unknown"),  # a 1-D input gives a 0-dim result
        ("y = torch.sigmoid(model(x)).squeeze(-1)", "unknown"),
    ],
)
def test_squeeze_of_an_unknown_rank_leaves_a_rank_bound(body, expected):
    assert shape(f"import torch\ndef f(model, x):\n    {body}\n    reveal(y)\n") == expected
