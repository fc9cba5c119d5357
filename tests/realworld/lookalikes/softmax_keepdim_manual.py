"""Look-alike (correct code): manual softmax with keepdim=True.

Source: https://theorempath.com/labs/proof-tasks/softmax-axis
Why it is correct: keepdim keeps the class axis as size 1, so the division broadcasts per row
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def softmax(logits):
    e = torch.exp(logits - logits.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)


def demo():
    p = softmax(torch.randn(5, 3))
    return torch.allclose(p.sum(1), torch.ones(5))
