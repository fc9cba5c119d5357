"""Look-alike (correct code): feature centering by the mean over the batch (leading) axis.

Source: https://github.com/SKaiNET-developers/SKaiNET/issues/864
Why it is correct: reducing the leading axis without keepdim leaves a (F,) vector that broadcasts against (N, F)
exactly as intended
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def center(x):
    return x - x.mean(0)


def demo():
    y = center(torch.randn(7, 3))
    return torch.allclose(y.mean(0), torch.zeros(3), atol=1e-6)
