"""Bug case: word language model updates parameters with p.add_ after backward.

Source: https://github.com/pytorch/examples/pull/779
What goes wrong: `p.add_(p.grad, alpha=-lr)` is an in-place op on a leaf parameter outside no_grad and raises
The fix: wrap the update loop in `torch.no_grad()`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def train_step(model, criterion, data, targets, lr):
    model.zero_grad()
    output = model(data)
    loss = criterion(output, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.add_(p.grad, alpha=-lr)
    return loss.item()


def demo():
    model = nn.Linear(4, 3)
    before = model.weight.detach().clone()
    train_step(model, nn.CrossEntropyLoss(), torch.randn(5, 4), torch.randint(0, 3, (5,)), 0.5)
    return not torch.equal(before, model.weight.detach())
