"""Fixed twin: mixture-of-experts gate weights renormalised over the top experts.

Source: https://theneuralbase.com/pytorch/learn/beginner/reduction-operations-sum-mean-max/
What goes wrong: the top-k gate values (N, k) are divided by their sum over k computed without keepdim, which raises
unless N == k
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TopKGate(nn.Module):
    def __init__(self, dim, n_experts, k):
        super().__init__()
        self.w = nn.Linear(dim, n_experts)
        self.k = k

    def forward(self, x):
        probs = F.softmax(self.w(x), dim=-1)
        topv, topi = probs.topk(self.k, dim=-1)
        topv = topv / topv.sum(dim=-1, keepdim=True)
        return topv, topi


def demo():
    v, i = TopKGate(8, 6, 2)(torch.randn(5, 8))
    return torch.allclose(v.sum(-1), torch.ones(5))
