"""Look-alike (correct code): a 0-dim CPU statistic scales a GPU activation.

Source: https://github.com/tatp22/multidim-positional-encoding/issues/33
Why it is correct: 0-dim CPU tensors mix with tensors on any device, like Python scalars
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


class Rescale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, stats):
        return self.fc(x) * stats.sum()


def demo():
    model = Rescale().cuda()
    out = model(torch.randn(2, 4).cuda(), torch.tensor([0.5, 0.25]))
    return out.device.type == "meta"
