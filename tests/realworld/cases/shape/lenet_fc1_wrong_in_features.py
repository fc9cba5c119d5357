"""Bug case: LeNet written for 32x32 inputs trained on 28x28 MNIST.

Source: https://github.com/pytorch/examples/issues/210
What goes wrong: two conv(5)+pool stages leave 16x4x4 features on 28x28 images; `fc1` was declared for 16*5*5 and
the matmul raises "mat1 and mat2 shapes cannot be multiplied"
The fix: `nn.Linear(16 * 4 * 4, 120)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def demo():
    return tuple(Net()(torch.randn(2, 1, 28, 28)).shape) == (2, 10)
