"""Fixed twin: hand-written multi-head attention permutes heads back and views.

Source: https://jishuzhan.net/article/1883339035431145474
What goes wrong: `out.permute(0, 2, 1, 3)` is non-contiguous; `.view(b, n, -1)` merges heads and dims and raises
The fix: `.contiguous().view(b, n, -1)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, _ = x.shape
        h = self.heads
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = [t.reshape(b, n, h, -1).permute(0, 2, 1, 3) for t in qkv]
        dots = torch.matmul(q, k.transpose(-1, -2)) * q.shape[-1] ** -0.5
        attn = dots.softmax(dim=-1)
        out = torch.matmul(attn, v)
        out = out.permute(0, 2, 1, 3).contiguous().view(b, n, -1)
        return self.to_out(out)


def demo():
    return tuple(MultiHeadAttention(16, 4)(torch.randn(2, 3, 16)).shape) == (2, 3, 16)
