"""Look-alike (correct code): training loop clears gradients with zero_grad(set_to_none=True) at the top.

Source: https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까
Why it is correct: the gradients are cleared before each backward pass
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def demo():
    model = nn.Linear(3, 1)
    before = model.weight.detach().clone()
    train(model, [(torch.randn(4, 3), torch.randn(4, 1))], torch.optim.SGD(model.parameters(), lr=0.1), nn.MSELoss())
    return not torch.equal(before, model.weight.detach())
