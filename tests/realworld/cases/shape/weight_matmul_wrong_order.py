"""Bug case: hand-written dense layer multiplies weight @ input.

Source: https://github.com/XLabs-AI/x-flux-comfyui/issues/153
What goes wrong: `self.W @ x` multiplies (in, out) by (batch, in); the inner sizes differ and matmul raises
The fix: `x @ self.W`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_in, n_out) * 0.1)
        self.b = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return self.W @ x + self.b


def demo():
    return tuple(Dense(5, 3)(torch.randn(4, 5)).shape) == (4, 3)
