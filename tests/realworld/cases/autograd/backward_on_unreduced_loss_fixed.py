"""Fixed twin: per-element loss (reduction='none') backpropagated directly.

Source: https://github.com/xxlong0/SparseNeuS/issues/42
What goes wrong: the loss has one value per sample; `loss.backward()` raises "grad can be implicitly created only
for scalar outputs"
The fix: reduce with `.mean()` first
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer):
    criterion = nn.MSELoss(reduction="none")
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.mean().backward()
        optimizer.step()


def demo():
    model = nn.Linear(3, 1)
    loader = [(torch.randn(4, 3), torch.randn(4, 1))]
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    return True
