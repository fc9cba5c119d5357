"""Bug case: loss converted to a Python number before backward.

Source: https://github.com/pytorch/examples/issues/498
What goes wrong: `.item()` returns a float; `loss.backward()` on it raises AttributeError
The fix: keep the tensor for backward and log `loss.item()` separately
Verified with torch 2.13 on CPU: demo() raises AttributeError.
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion):
    history = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y).item()
        loss.backward()
        history.append(loss)
        optimizer.step()
    return history


def demo():
    model = nn.Linear(3, 2)
    h = train(model, [(torch.randn(4, 3), torch.randint(0, 2, (4,)))], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
    return len(h) == 1
