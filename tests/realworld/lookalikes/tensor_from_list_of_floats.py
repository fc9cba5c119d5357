"""Look-alike (correct code): epoch losses collected as floats and turned into a tensor.

Source: https://github.com/CRIPAC-DIG/DGSR/issues/14
Why it is correct: the list holds Python floats from `.item()`, which `torch.tensor` accepts
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def epoch_losses(model, loader, criterion):
    losses = []
    with torch.no_grad():
        for x, y in loader:
            losses.append(criterion(model(x), y).item())
    return torch.tensor(losses)


def demo():
    out = epoch_losses(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1))] * 3, nn.MSELoss())
    return tuple(out.shape) == (3,)
