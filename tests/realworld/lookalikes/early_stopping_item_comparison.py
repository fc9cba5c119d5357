"""Look-alike (correct code): early stopping compares Python floats obtained with .item().

Source: https://github.com/yxgeee/MMT/issues/35
Why it is correct: `.item()` of a 0-dim validation loss is a float, so `if` and `<` are plain Python
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


def validate(model, loader, criterion):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += criterion(model(x), y).item()
    return total / len(loader)


def should_stop(model, loader, criterion, best, patience_left):
    val = validate(model, loader, criterion)
    if val < best:
        return False, val, 3
    return patience_left <= 1, best, patience_left - 1


def demo():
    stop, best, left = should_stop(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1))], nn.MSELoss(), float("inf"), 3)
    return stop is False and left == 3
