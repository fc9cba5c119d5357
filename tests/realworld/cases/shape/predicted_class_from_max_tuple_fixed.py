"""Fixed twin: evaluation compares the named tuple of output.max(1) with the targets.

Source: https://github.com/flatironinstitute/deepblast/issues/93
What goes wrong: `output.max(1)` returns (values, indices); `pred.eq(target)` raises AttributeError on the named
tuple
The fix: `_, pred = output.max(1)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def test(model, loader):
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            _, pred = output.max(1)
            correct += pred.eq(target).sum().item()
    return correct


def demo():
    return test(nn.Linear(4, 3), [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]) >= 0
