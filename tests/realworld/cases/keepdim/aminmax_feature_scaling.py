"""Bug case: min-max feature scaling with torch.aminmax over each row.

Source: https://theneuralbase.com/pytorch/learn/beginner/reduction-operations-sum-mean-max/
What goes wrong: `torch.aminmax(x, dim=1)` returns (N,) tensors; `(x - mn)` broadcasts them along the feature axis
and raises unless N == F
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def scale_rows(x):
    mn, mx = torch.aminmax(x, dim=1)
    return (x - mn) / (mx - mn)


def demo():
    y = scale_rows(torch.randn(4, 6))
    return torch.allclose(y.amin(1), torch.zeros(4)) and torch.allclose(y.amax(1), torch.ones(4))
