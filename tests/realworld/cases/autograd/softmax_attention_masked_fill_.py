"""Bug case: attention probabilities zeroed with masked_fill_ after softmax.

Source: https://github.com/WOW5678/CompNet/issues/2
What goes wrong: softmax saves its output; `attn.masked_fill_(mask, 0)` modifies it and backward raises
The fix: mask the scores before softmax (or use the out-of-place `masked_fill`)
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DotAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, q, k, v, mask):
        scores = torch.bmm(self.proj(q), k.transpose(1, 2))
        attn = F.softmax(scores, dim=-1)
        attn.masked_fill_(mask, 0.0)
        return torch.bmm(attn, v)


def demo():
    m = DotAttention(4)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    mask = torch.zeros(2, 3, 5, dtype=torch.bool)
    mask[:, :, -1] = True
    m(q, k, v, mask).sum().backward()
    return m.proj.weight.grad is not None
