"""Bug case: attention scores with torch.bmm(q, k) instead of k transposed.

Source: https://github.com/Mikubill/sd-webui-controlnet/issues/498
What goes wrong: q and k are both (B, T, D); `torch.bmm(q, k)` needs k as (B, D, T) and raises unless T == D
The fix: `torch.bmm(q, k.transpose(1, 2))`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = torch.bmm(q, k) / q.size(-1) ** 0.5
        return torch.bmm(F.softmax(scores, dim=-1), v)


def demo():
    return tuple(SelfAttention(8)(torch.randn(2, 5, 8)).shape) == (2, 5, 8)
