"""Look-alike (correct code): attention probabilities masked with the out-of-place masked_fill.

Source: https://github.com/WOW5678/CompNet/issues/2
Why it is correct: `masked_fill` returns a new tensor; the softmax output saved for backward is untouched
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DotAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, q, k, v, mask):
        attn = F.softmax(torch.bmm(self.proj(q), k.transpose(1, 2)), dim=-1)
        attn = attn.masked_fill(mask, 0.0)
        return torch.bmm(attn, v)


def demo():
    m = DotAttention(4)
    mask = torch.zeros(2, 3, 5, dtype=torch.bool)
    m(torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4), mask).sum().backward()
    return m.proj.weight.grad is not None
