"""Fixed twin: attention scores with an einsum whose key operand was already transposed.

Source: https://github.com/facebookresearch/atlas/issues/9
What goes wrong: `k` is transposed to (b, h, d, n) for a matmul elsewhere; `einsum("bhqd,bhkd->bhqk", q, k)` then
sees d and n swapped and raises unless n == d
The fix: use the untransposed keys
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
        k_t = k.transpose(-2, -1)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
        attn = scores.softmax(dim=-1)
        return torch.einsum("bhqk,bhkd->bhqd", attn, v)


def demo():
    out = Attention(8, 2)(torch.randn(2, 5, 8))
    return tuple(out.shape) == (2, 2, 5, 4)
