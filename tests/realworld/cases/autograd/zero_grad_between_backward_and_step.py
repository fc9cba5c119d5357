"""Bug case: zero_grad placed between backward and step.

Source: https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까
What goes wrong: the gradients are wiped right before `optimizer.step()`, so the weights never change
The fix: zero the gradients before the backward pass
Verified with torch 2.13 on CPU: demo() returns False (the result is wrong, torch raises nothing).
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()


def demo():
    model = nn.Linear(3, 1)
    before = model.weight.detach().clone()
    train(model, [(torch.randn(4, 3), torch.randn(4, 1))], torch.optim.SGD(model.parameters(), lr=0.1), nn.MSELoss())
    return not torch.equal(before, model.weight.detach())
