"""Look-alike (correct code): evaluation under torch.no_grad() converts outputs to NumPy.

Source: https://github.com/zhuangdizhu/FedGen/issues/15
Why it is correct: tensors computed with grad mode off do not require grad, so numpy() is allowed on CPU tensors
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import numpy as np
import torch
import torch.nn as nn


def evaluate(model, loader):
    model.eval()
    outs = []
    with torch.no_grad():
        for x in loader:
            outs.append(model(x).numpy())
    return np.concatenate(outs)


def demo():
    return evaluate(nn.Linear(3, 2), [torch.randn(4, 3), torch.randn(2, 3)]).shape == (6, 2)
