"""Shapes the inference gives literal programs: factories, views, indexing, reductions,
matrix products, einsum, cat/stack, broadcasting."""

from __future__ import annotations

import pytest

from semantic_probe import shape


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
