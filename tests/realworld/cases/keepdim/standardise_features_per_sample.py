"""Bug case: per-sample standardisation of tabular features.

Source: https://github.com/SKaiNET-developers/SKaiNET/issues/864
What goes wrong: `x.mean(1)` and `x.std(1)` have shape (N,); `(x - mean) / std` broadcasts them over the feature
axis and raises unless N == F
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def standardize(x):
    mean = x.mean(1)
    std = x.std(1)
    return (x - mean) / (std + 1e-6)


def demo():
    z = standardize(torch.randn(8, 5))
    return torch.allclose(z.mean(1), torch.zeros(8), atol=1e-5)
