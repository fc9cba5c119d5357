"""Fixed twin: einsum for a batched projection given the bias as an extra operand.

Source: https://github.com/dgasmith/opt_einsum/pull/236
What goes wrong: the equation has two operands; passing `self.bias` as a third makes einsum raise
The fix: add the bias after the einsum
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class HeadProjection(nn.Module):
    def __init__(self, dim, heads, head_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, heads, head_dim) * 0.02)
        self.bias = nn.Parameter(torch.zeros(heads, head_dim))

    def forward(self, x):
        return torch.einsum("btd,dhk->bthk", x, self.weight) + self.bias


def demo():
    return tuple(HeadProjection(8, 2, 4)(torch.randn(2, 3, 8)).shape) == (2, 3, 2, 4)
