"""Bug case: hand-written squared error between (N, 1) outputs and (N,) labels.

Source: https://github.com/TRI-ML/KP2D/pull/14
What goes wrong: `out - labels` broadcasts (N, 1) with (N,) to an (N, N) matrix; the mean runs over all pairs and
torch raises nothing
The fix: `out.view(-1) - labels`
Verified with torch 2.13 on CPU: demo() returns False (the result is wrong, torch raises nothing).
"""
import torch
import torch.nn as nn


def mse(out, labels):
    return ((out - labels) ** 2).mean()


def demo():
    out = torch.tensor([[1.0], [2.0], [3.0]])
    labels = torch.tensor([1.0, 2.0, 3.0])
    return float(mse(out, labels)) == 0.0
