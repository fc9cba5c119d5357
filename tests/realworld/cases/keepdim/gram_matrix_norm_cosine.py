"""Bug case: cosine similarity matrix with norms from torch.linalg.norm.

Source: https://github.com/pytorch/pytorch/issues/109333
What goes wrong: `torch.linalg.norm(a, dim=1)` is (N,); `a / norms` broadcasts over the embedding axis and raises
unless N == D
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def cosine_matrix(a, b):
    a = a / torch.linalg.norm(a, dim=1)
    b = b / torch.linalg.norm(b, dim=1, keepdim=True)
    return a @ b.t()


def demo():
    a = torch.randn(4, 6)
    sim = cosine_matrix(a, a)
    return torch.allclose(sim.diag(), torch.ones(4), atol=1e-5)
