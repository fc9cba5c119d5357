"""Look-alike (correct code): training loop backpropagates a mean loss and logs loss.item().

Source: https://github.com/pytorch/examples/issues/498
Why it is correct: the default reduction gives a 0-dim loss: `backward()` needs no gradient argument and `.item()`
is defined
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion):
    history = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


def demo():
    model = nn.Linear(3, 2)
    h = train(model, [(torch.randn(4, 3), torch.randint(0, 2, (4,)))], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
    return len(h) == 1
