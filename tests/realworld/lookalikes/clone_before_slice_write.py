"""Look-alike (correct code): ReLU output cloned before a channel is zeroed in place.

Source: https://github.com/Jee-King/TSAN/issues/3
Why it is correct: the write goes to the clone, not to the tensor relu saved for backward
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        out = F.relu(self.conv(x)).clone()
        out[:, 0] = 0
        return out


def demo():
    b = Block()
    b(torch.randn(2, 3, 5, 5)).sum().backward()
    return b.conv.weight.grad is not None
