"""Bug case: robust centering of each trace by its median.

Source: https://github.com/Project-MONAI/MONAI/issues/8040
What goes wrong: `x.median(dim=1).values` is (N,); `x - med` raises for (N, L) unless N == L
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def robust_center(x):
    med = x.median(dim=1).values
    return x - med


def demo():
    y = robust_center(torch.randn(3, 7))
    return torch.allclose(y.median(dim=1).values, torch.zeros(3))
