"""Bug case: max-subtraction before exp with `.values` of the named tuple.

Source: https://github.com/triton-lang/triton/issues/11406
What goes wrong: `scores.max(dim=-1).values` is (B, Tq); `scores - ...` with scores (B, Tq, Tk) raises unless B ==
Tq (silently wrong when equal)
The fix: `scores.max(dim=-1, keepdim=True).values`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, y):
        scores = self.q(x) @ self.k(y).transpose(1, 2)
        scores = scores - scores.max(dim=-1).values
        w = scores.exp()
        return w / w.sum(dim=-1, keepdim=True)


def demo():
    w = Attention(4)(torch.randn(2, 3, 4), torch.randn(2, 5, 4))
    return torch.allclose(w.sum(-1), torch.ones(2, 3))
