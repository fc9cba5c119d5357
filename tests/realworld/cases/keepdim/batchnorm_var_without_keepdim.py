"""Bug case: manual batch-norm check with keepdim on the mean but not on the variance.

Source: https://discuss.pytorch.org/t/batchnorm1d-output-different-with-my-implementation/51877
What goes wrong: `input.var(dim=[0, 2])` is (C,); dividing the (N, C, L) centred input aligns C with L and raises
unless L == C
The fix: `keepdim=True` on the variance too
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def manual_batchnorm(input, eps=1e-5):
    mean = input.mean(dim=[0, 2], keepdim=True)
    var = input.var(dim=[0, 2], unbiased=False)
    return (input - mean) / torch.sqrt(var + eps)


def demo():
    conv = nn.Conv1d(4, 16, 1)
    x = conv(torch.rand(32, 4, 3))
    bn = nn.BatchNorm1d(16, affine=False)
    return torch.allclose(manual_batchnorm(x), bn(x), atol=1e-4)
