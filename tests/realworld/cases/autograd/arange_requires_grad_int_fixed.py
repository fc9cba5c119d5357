"""Fixed twin: learnable offsets created with torch.arange(..., requires_grad=True).

Source: https://github.com/pytorch/tutorials/pull/3717
What goes wrong: `torch.arange(n)` is int64; asking it to require grad raises "Only Tensors of floating point and
complex dtype can require gradients"
The fix: pass `dtype=torch.float32`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def make_offsets(n):
    return torch.arange(n, dtype=torch.float32, requires_grad=True)


def demo():
    offsets = make_offsets(4)
    (offsets * 2).sum().backward()
    return torch.equal(offsets.grad, torch.full((4,), 2.0))
