"""Bug case: Conv1d features put time-major and flattened before summing.

Source: https://github.com/pytorch/pytorch/issues/764
What goes wrong: after `y.transpose(0, 1)` the tensor is non-contiguous and `y.view(-1)` raises
The fix: `y.reshape(-1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def time_major_features(x, conv):
    x = torch.transpose(x, 1, 2)
    y = conv(x)
    y = y.transpose(0, 1)
    return y.view(-1)


def demo():
    conv = nn.Conv1d(in_channels=5, out_channels=10, kernel_size=2)
    x = torch.randn(4, 6, 5, requires_grad=True)
    result = time_major_features(x, conv).sum()
    result.backward()
    return x.grad is not None
