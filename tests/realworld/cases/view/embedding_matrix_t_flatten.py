"""Bug case: flattening the transpose of an embedding table for a histogram.

Source: https://iifx.dev/en/articles/422546222
What goes wrong: `weight.t()` is non-contiguous; `.view(-1)` on it raises
The fix: `.reshape(-1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def column_major_values(embedding):
    w = embedding.weight.detach()
    return w.t().view(-1)


def demo():
    emb = nn.Embedding(5, 3)
    vals = column_major_values(emb)
    return torch.equal(vals[:5], emb.weight.detach()[:, 0])
