"""Look-alike (correct code): in-place add on the result of a multiplication by a Python scalar.

Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
Why it is correct: `x * 2` saves no tensor for backward, so modifying its output in place is safe
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def scaled_shift(layer, x):
    y = layer(x) * 2
    y.add_(1)
    return y


def demo():
    layer = nn.Linear(3, 4)
    scaled_shift(layer, torch.randn(5, 3)).sum().backward()
    return layer.weight.grad is not None
