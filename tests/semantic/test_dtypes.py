"""Dtype kinds of factories, casts, comparisons and random tensors."""

from __future__ import annotations

from semantic_probe import reveal


def test_dtype_kinds():
    code = """
    import torch
    reveal(torch.tensor([1, 2]))
    reveal(torch.tensor([1.0, 2.0]))
    reveal(torch.arange(5))
    reveal(torch.randint(0, 3, (2,)))
    reveal(torch.zeros(2, dtype=torch.long))
    reveal(torch.zeros(2) > 0)
    reveal(torch.zeros(2).long())
    reveal(torch.randn(2))
    """
    assert [f.dtype_kind for f, _ in reveal(code)] == [
        "int", "float", "int", "int", "int", "bool", "int", "float"]
