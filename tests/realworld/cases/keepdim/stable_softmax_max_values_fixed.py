"""Fixed twin: numerically stable softmax subtracting the row max returned by torch.max.

Source: https://theneuralbase.com/pytorch/learn/beginner/reduction-operations-sum-mean-max/
What goes wrong: `m, _ = torch.max(v, dim=-1)` drops the last axis; `v - m` broadcasts along the wrong axis and
raises for (B, T, T) scores unless B == T
The fix: `torch.max(v, dim=-1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def attention_weights(q, k):
    v = q @ k.transpose(-2, -1)
    m, _ = torch.max(v, dim=-1, keepdim=True)
    e = torch.exp(v - m)
    return e / e.sum(dim=-1, keepdim=True)


def demo():
    w = attention_weights(torch.randn(2, 5, 4), torch.randn(2, 5, 4))
    return torch.allclose(w.sum(-1), torch.ones(2, 5))
