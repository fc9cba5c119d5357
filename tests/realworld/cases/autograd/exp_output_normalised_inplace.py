"""Bug case: softmax by hand divides the exp output in place.

Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
What goes wrong: `exp` saves its result for backward; `e /= e.sum(...)` modifies it and backward raises
The fix: `e = e / e.sum(...)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


def soft_assign(logits):
    e = torch.exp(logits - logits.max())
    e /= e.sum(dim=-1, keepdim=True)
    return e


def demo():
    layer = nn.Linear(3, 4)
    p = soft_assign(layer(torch.randn(5, 3)))
    loss = -(p[:, 0].log()).mean()
    loss.backward()
    return layer.weight.grad is not None
