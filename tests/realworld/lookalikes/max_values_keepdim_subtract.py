"""Look-alike (correct code): stable softmax subtracting `.max(dim=-1, keepdim=True).values`.

Source: https://github.com/triton-lang/triton/issues/11406
Why it is correct: keepdim keeps the reduced axis, and `.values` selects the tensor out of the named tuple
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def stable_softmax(scores):
    scores = scores - scores.max(dim=-1, keepdim=True).values
    w = scores.exp()
    return w / w.sum(dim=-1, keepdim=True)


def demo():
    w = stable_softmax(torch.randn(2, 3, 5))
    return torch.allclose(w.sum(-1), torch.ones(2, 3))
