"""Look-alike (correct code): learnable offsets from torch.arange with a float dtype.

Source: https://github.com/pytorch/tutorials/pull/3717
Why it is correct: floating-point tensors may require gradients
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def make_offsets(n):
    return torch.arange(n, dtype=torch.float32, requires_grad=True)


def demo():
    offsets = make_offsets(4)
    (offsets * 2).sum().backward()
    return torch.equal(offsets.grad, torch.full((4,), 2.0))
