"""Look-alike (correct code): conv-bn-relu block with nn.ReLU(inplace=True).

Source: https://github.com/quark0/darts/issues/109
Why it is correct: BatchNorm's backward does not need its output, so the in-place ReLU on it is safe
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class ConvBNReLU(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


def demo():
    block = ConvBNReLU(3, 4)
    block(torch.randn(2, 3, 5, 5)).sum().backward()
    return block.conv.weight.grad is not None
