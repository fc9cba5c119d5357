"""Look-alike (correct code): conv features flattened with x.view(x.size(0), -1).

Source: https://github.com/pytorch/pytorch/issues/38469
Why it is correct: the conv output is contiguous and the inferred size follows from the batch size
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
        self.fc1 = nn.Linear(16 * 5 * 5, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return self.fc1(x)


def demo():
    return tuple(Net()(torch.randn(4, 3, 32, 32)).shape) == (4, 10)
