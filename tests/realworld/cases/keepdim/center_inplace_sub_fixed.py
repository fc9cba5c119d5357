"""Fixed twin: centering each feature row in place before PCA.

Source: https://github.com/pytorch/pytorch/pull/48949
What goes wrong: `x.sub_(x.mean(dim=1))` subtracts a (N,) vector along the feature axis and raises unless N == F
The fix: `x.mean(dim=1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def pca_directions(x, k):
    x = x.clone()
    x.sub_(x.mean(dim=1, keepdim=True))
    u, s, v = torch.pca_lowrank(x, q=k, center=False)
    return v


def demo():
    return tuple(pca_directions(torch.randn(10, 6), 2).shape) == (6, 2)
