"""Fixed twin: loss computed on `output.data` to "save memory".

Source: https://github.com/pytorch/examples/pull/779
What goes wrong: `.data` detaches the output from the graph; the loss has no grad_fn and `loss.backward()` raises
The fix: compute the loss on `output`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def train_step(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    output = model(x)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
    return loss.item()


def demo():
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, opt, nn.CrossEntropyLoss(), torch.randn(3, 4), torch.tensor([0, 1, 1]))
    return model.weight.grad is not None
