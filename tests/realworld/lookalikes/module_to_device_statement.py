"""Look-alike (correct code): training function moves the model with a bare `model.to(device)`.

Source: https://dev-solve.com/posts/3f078da
Why it is correct: modules move in place; the batch is reassigned from `.to(device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, device, train_loader, optimizer, epoch):
    model.to(device)
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
    return loss


def demo():
    model = nn.Linear(4, 3)
    loss = train(model, torch.device("cpu"), [(torch.randn(5, 4), torch.randint(0, 3, (5,)))], torch.optim.SGD(model.parameters(), lr=0.1), 1)
    return loss.dim() == 0
