"""Look-alike (correct code): dense layer written as x @ W + b.

Source: https://github.com/XLabs-AI/x-flux-comfyui/issues/153
Why it is correct: (N, in) @ (in, out) has matching inner sizes
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_in, n_out) * 0.1)
        self.b = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.W + self.b


def demo():
    return tuple(Dense(5, 3)(torch.randn(4, 5)).shape) == (4, 3)
