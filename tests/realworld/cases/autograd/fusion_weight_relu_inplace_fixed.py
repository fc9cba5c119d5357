"""Fixed twin: BiFPN fast-normalised fusion applies an in-place ReLU to its weight parameter.

Source: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503
What goes wrong: `F.relu(self.weight, inplace=True)` modifies the leaf parameter in place and raises
The fix: the out-of-place `F.relu(self.weight)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FuseFeature(nn.Module):
    def __init__(self, e=1e-4):
        super().__init__()
        self.e = e
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)

    def forward(self, x):
        weight = F.relu(self.weight)
        weight = weight / (torch.sum(weight, dim=0) + self.e)
        return weight[0] * x[0] + weight[1] * x[1]


def demo():
    out = FuseFeature()([torch.ones(2, 3), torch.ones(2, 3)])
    return torch.allclose(out, torch.ones(2, 3), atol=1e-3)
