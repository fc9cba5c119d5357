"""Fixed twin: binarising activations against each row's mean with torch.where.

Source: https://lawwu.github.io/transcripts/transcript_PaCmpygFfXo.html
What goes wrong: `x.mean(1)` is (N,); in `torch.where(x > thr, ...)` it is compared along the feature axis, which
fits silently for square inputs
The fix: `x.mean(1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def binarize(x):
    thr = x.mean(1, keepdim=True)
    return torch.where(x > thr, torch.ones_like(x), torch.zeros_like(x))


def demo():
    x = torch.tensor([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0], [5.0, 6.0, 7.0]])
    expected = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    return torch.equal(binarize(x), expected)
