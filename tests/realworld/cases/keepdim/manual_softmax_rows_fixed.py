"""Fixed twin: softmax written by hand for a classifier's logits.

Source: https://theorempath.com/labs/proof-tasks/softmax-axis
What goes wrong: `exp.sum(dim=1)` drops the class axis; dividing (N, C) by (N,) broadcasts along the wrong axis and
raises unless N == C (then the rows are silently wrong)
The fix: `exp.sum(dim=1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def softmax(logits):
    exp = torch.exp(logits - logits.max())
    return exp / exp.sum(dim=1, keepdim=True)


def predict(model, x):
    return softmax(model(x))


def demo():
    probs = predict(nn.Linear(4, 3), torch.randn(5, 4))
    return torch.allclose(probs.sum(1), torch.ones(5))
