"""Fixed twin: regression loss between (N, 1) predictions and (N,) targets.

Source: https://github.com/ekosman/AnomalyDetectionCVPR2018-Pytorch/issues/229
What goes wrong: `F.mse_loss(pred, y)` broadcasts (N, 1) against (N,) to (N, N): torch only warns and the loss
compares every prediction with every target
The fix: `pred.squeeze(1)` (or targets of shape (N, 1))
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


def evaluate(model, x, y):
    with torch.no_grad():
        pred = model(x)
        return F.mse_loss(pred.squeeze(1), y)


def demo():
    model = nn.Linear(3, 1)
    x, y = torch.randn(6, 3), torch.randn(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = evaluate(model, x, y)
    expected = ((model(x).detach()[:, 0] - y) ** 2).mean()
    return torch.allclose(loss, expected)
