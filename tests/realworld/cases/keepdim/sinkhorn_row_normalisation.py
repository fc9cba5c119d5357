"""Bug case: Sinkhorn iterations alternate row and column normalisation of a square cost kernel.

Source: https://github.com/flagos-ai/FlagGems/pull/59
What goes wrong: the row step `K / K.sum(dim=1)` divides column j by row j's sum; the square kernel hides the
mistake and the rows never sum to 1
The fix: `K.sum(dim=1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() returns False (the result is wrong, torch raises nothing).
"""
import torch


def sinkhorn(cost, n_iters=20, eps=0.1):
    K = torch.exp(-cost / eps)
    for _ in range(n_iters):
        K = K / K.sum(dim=1)
        K = K / K.sum(dim=0)
    return K


def demo():
    K = sinkhorn(torch.rand(5, 5))
    return torch.allclose(K.sum(0), torch.ones(5), atol=1e-4) and torch.allclose(K.sum(1), torch.ones(5), atol=1e-2)
