"""Look-alike (correct code): ResNet basic block adds the identity in place before the final ReLU.

Source: https://github.com/JDAI-CV/LIO/issues/9
Why it is correct: `out += identity` modifies the BatchNorm output, which autograd did not save
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def demo():
    block = BasicBlock(4)
    block(torch.randn(2, 4, 5, 5)).sum().backward()
    return block.conv1.weight.grad is not None
