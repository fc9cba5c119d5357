"""Bug case: sigmoid attention map zeroed in place before the loss.

Source: https://github.com/Jee-King/TSAN/issues/3
What goes wrong: `torch.sigmoid` saves its output for backward; `att[mask] = 0` bumps its version and
`loss.backward()` raises
The fix: `att = att.masked_fill(mask, 0)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, 1, 1)

    def forward(self, x, mask):
        att = torch.sigmoid(self.conv(x))
        att[mask] = 0
        return x * att


def demo():
    gate = Gate(3)
    x = torch.randn(2, 3, 4, 4)
    mask = torch.rand(2, 1, 4, 4) > 0.5
    loss = gate(x, mask).sum()
    loss.backward()
    return gate.conv.weight.grad is not None
