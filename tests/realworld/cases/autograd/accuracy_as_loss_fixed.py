"""Fixed twin: accuracy used as the training loss.

Source: https://github.com/hand10ryo/PyTorchCML/issues/46
What goes wrong: `argmax` and the comparison are not differentiable; `loss` has no grad_fn and `loss.backward()`
raises
The fix: train on the cross-entropy and only report the accuracy
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_epoch(model, loader, optimizer):
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()


def demo():
    model = nn.Linear(3, 4)
    train_epoch(model, [(torch.randn(5, 3), torch.randint(0, 4, (5,)))], torch.optim.SGD(model.parameters(), lr=0.1))
    return True
