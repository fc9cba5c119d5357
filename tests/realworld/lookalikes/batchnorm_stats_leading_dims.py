"""Look-alike (correct code): manual batch-norm statistics over dims (0, 2, 3) with keepdim.

Source: https://discuss.pytorch.org/t/batchnorm1d-output-different-with-my-implementation/51877
Why it is correct: keepdim=True keeps (1, C, 1, 1) statistics that broadcast per channel
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def manual_batchnorm(x, eps=1e-5):
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    var = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def demo():
    x = torch.randn(4, 3, 5, 5)
    return torch.allclose(manual_batchnorm(x), nn.BatchNorm2d(3, affine=False)(x), atol=1e-4)
