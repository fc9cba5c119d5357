"""Fixed twin: per-class loss weights built from label counts made trainable.

Source: https://github.com/source-separation/tutorial/issues/18
What goes wrong: `torch.bincount` returns an int64 tensor; `.requires_grad_()` on it raises
The fix: convert to float before asking for gradients
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn.functional as F


def learnable_class_weights(labels, n_classes):
    counts = torch.bincount(labels, minlength=n_classes)
    w = counts.float().requires_grad_()
    return w


def demo():
    labels = torch.tensor([0, 1, 1, 2])
    w = learnable_class_weights(labels, 3)
    per_sample = F.cross_entropy(torch.randn(4, 3), labels, reduction="none")
    loss = (w[labels] * per_sample).sum() / w[labels].sum()
    loss.backward()
    return w.grad is not None
