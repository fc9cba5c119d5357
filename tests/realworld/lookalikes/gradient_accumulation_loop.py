"""Look-alike (correct code): gradient accumulation zeroes the gradients every few steps.

Source: https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/
Why it is correct: accumulating gradients across `accum_steps` batches is intentional; they are cleared after each
optimizer step
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion, accum_steps=2):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def demo():
    model = nn.Linear(3, 1)
    before = model.weight.detach().clone()
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), nn.MSELoss())
    return not torch.equal(before, model.weight.detach())
