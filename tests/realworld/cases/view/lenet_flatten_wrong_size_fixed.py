"""Fixed twin: LeNet on 32x32 CIFAR images flattens with the MNIST feature size.

Source: https://github.com/pytorch/pytorch/issues/38469
What goes wrong: after two conv+pool stages a 32x32 input has 16x5x5 = 400 features per image, not 16*4*4 = 256; 4 *
400 elements do not split into rows of 256 and the view raises
The fix: flatten with `x.view(x.size(0), 16 * 5 * 5)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(x.size(0), 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def demo():
    return tuple(Net()(torch.randn(4, 3, 32, 32)).shape) == (4, 10)
