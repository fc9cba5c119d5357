"""Bug case: six-view CNN concatenates its branch features along the batch axis.

Source: https://github.com/pytorch/pytorch/issues/139037
What goes wrong: `torch.cat(..., 0)` stacks the views as extra rows; the classifier expecting 6 * features per row
raises
The fix: concatenate along dim 1
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class MultiInputs(nn.Module):
    def __init__(self, feat=16, n_classes=4):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(3, feat, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.sec = nn.Sequential(nn.Linear(6 * feat, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, input1, input2, input3, input4, input5, input6):
        feats = [self.cnn(x) for x in (input1, input2, input3, input4, input5, input6)]
        all = torch.cat(feats, 0)
        return self.sec(all)


def demo():
    xs = [torch.randn(2, 3, 8, 8) for _ in range(6)]
    return tuple(MultiInputs()(*xs).shape) == (2, 4)
