"""Fixed twin: BatchNorm and ReLU modules constructed inside forward.

Source: https://github.com/syuu1987/geekTime-semantic-segmentation/issues/1
What goes wrong: `nn.BatchNorm2d(...)(x)` builds fresh parameters and running stats on every call; they are never
trained, saved or moved to the GPU
The fix: build the layers in `__init__`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class DoubleConv(nn.Module):
    def __init__(self, in_channels, features):
        super().__init__()
        self.features = features
        self.conv1 = nn.Conv2d(in_channels, features, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(features)

    def forward(self, input):
        x = self.conv1(input)
        x = self.bn1(x)
        return torch.relu(x)


def demo():
    model = DoubleConv(3, 4)
    model(torch.randn(2, 3, 5, 5))
    return "bn1.running_mean" in model.state_dict()
