"""Fixed twin: clone() added "to be safe" before a view of a transposed feature map.

Source: https://github.com/sergeywong/cp-vton/issues/30
What goes wrong: `.clone()` keeps the strides of the transposed tensor, so `h.view(h.size(0), -1)` still raises
The fix: `.contiguous()` instead of `.clone()` (or reshape)
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class FeatureHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 5 * 6, 2)

    def forward(self, x):
        h = self.conv(x)
        h = h.transpose(2, 3).contiguous()
        h = h.view(h.size(0), -1)
        return self.fc(h)


def demo():
    return tuple(FeatureHead()(torch.randn(2, 3, 6, 5)).shape) == (2, 2)
