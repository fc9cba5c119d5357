"""Look-alike (correct code): column-major flattening with t().contiguous().view(-1).

Source: https://iifx.dev/en/articles/422546222
Why it is correct: `.contiguous()` re-lays the transposed matrix out, so `view(-1)` is legal
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def column_major_values(embedding):
    return embedding.weight.detach().t().contiguous().view(-1)


def demo():
    emb = nn.Embedding(5, 3)
    return torch.equal(column_major_values(emb)[:5], emb.weight.detach()[:, 0])
