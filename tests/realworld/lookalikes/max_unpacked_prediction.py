"""Look-alike (correct code): predicted class from `_, pred = output.max(1)`.

Source: https://github.com/flatironinstitute/deepblast/issues/93
Why it is correct: unpacking the (values, indices) named tuple gives the index tensor
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def test(model, loader):
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            _, pred = model(data).max(1)
            correct += pred.eq(target).sum().item()
    return correct


def demo():
    return test(nn.Linear(4, 3), [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]) >= 0
