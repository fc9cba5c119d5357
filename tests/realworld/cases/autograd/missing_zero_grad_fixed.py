"""Fixed twin: classic training loop without optimizer.zero_grad().

Source: https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/
What goes wrong: gradients accumulate across batches, so every step uses the sum of all previous gradients
The fix: call `optimizer.zero_grad()` before `loss.backward()`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def demo():
    model = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
    train(model, "cpu", [(x, y), (x, y)], optimizer, 1)
    model.zero_grad()
    F.nll_loss(model(x), y).backward()
    single = model[0].weight.grad.clone()
    model.zero_grad()
    train(model, "cpu", [(x, y), (x, y)], optimizer, 1)
    return torch.allclose(model[0].weight.grad, single)
