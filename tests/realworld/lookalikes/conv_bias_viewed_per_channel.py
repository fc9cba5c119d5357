"""Look-alike (correct code): per-channel bias reshaped to (1, C, 1, 1) before adding.

Source: https://github.com/wavefrontshaping/complexPyTorch/issues/16
Why it is correct: the reshaped bias broadcasts over batch and spatial dims
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WSConv2d(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k) * 0.1)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        w = self.weight - self.weight.mean(dim=(1, 2, 3), keepdim=True)
        return F.conv2d(x, w, padding=1) + self.bias.view(1, -1, 1, 1)


def demo():
    return tuple(WSConv2d(3, 4, 3)(torch.randn(2, 3, 6, 6)).shape) == (2, 4, 6, 6)
