"""Bug case: per-channel bias added to a feature map without reshaping.

Source: https://github.com/wavefrontshaping/complexPyTorch/issues/16
What goes wrong: `bias` has shape (C,); adding it to (N, C, H, W) aligns it with W and raises unless W == C
The fix: `self.bias.view(1, -1, 1, 1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
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
        out = F.conv2d(x, w, padding=1)
        return out + self.bias


def demo():
    return tuple(WSConv2d(3, 4, 3)(torch.randn(2, 3, 6, 6)).shape) == (2, 4, 6, 6)
