"""Look-alike (correct code): attention written with einsum over matching key and query layouts.

Source: https://github.com/facebookresearch/atlas/issues/9
Why it is correct: both specs contract the shared subscripts of operands whose shapes agree
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * (c // self.heads) ** -0.5
        return torch.einsum("bhqk,bhkd->bhqd", scores.softmax(dim=-1), v)


def demo():
    return tuple(Attention(8, 2)(torch.randn(2, 5, 8)).shape) == (2, 2, 5, 4)
