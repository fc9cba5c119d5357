"""Fixed twin: hand-written squared error backpropagated without a reduction.

Source: https://github.com/carpedm20/ENAS-pytorch/issues/58
What goes wrong: `(pred - y) ** 2` has the batch's shape; `.backward()` on it raises
The fix: `.mean()` the error first
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def fit(model, x, y, epochs=2, lr=0.01):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(epochs):
        opt.zero_grad()
        pred = model(x)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        opt.step()
    return model


def demo():
    fit(nn.Linear(2, 1), torch.randn(8, 2), torch.randn(8, 1))
    return True
