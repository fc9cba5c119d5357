"""Fixed twin: zeroing a channel of a ReLU output in place.

Source: https://github.com/NVlabs/FUNIT/issues/23
What goes wrong: relu saves its result for backward; `out[:, 0] = 0` modifies it in place and backward raises
The fix: multiply by a channel mask instead
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
        out = F.relu(self.conv(x))
        keep = torch.ones(1, out.size(1), 1, 1, device=out.device)
        keep[:, 0] = 0
        out = out * keep
        return out


def demo():
    b = Block()
    b(torch.randn(2, 3, 5, 5)).sum().backward()
    return b.conv.weight.grad is not None
