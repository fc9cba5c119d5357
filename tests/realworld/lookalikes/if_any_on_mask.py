"""Look-alike (correct code): branch on `(x != 0).any()`.

Source: https://github.com/RussellTsuchida/snefy/issues/1
Why it is correct: `.any()` reduces to a single-element bool tensor, whose truth value is defined
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def evaluate_kernel(x, extra_input):
    k = torch.exp(-x ** 2)
    if (extra_input != 0).any():
        k = k * torch.exp(-extra_input ** 2)
    return k


def demo():
    return tuple(evaluate_kernel(torch.randn(4), torch.randn(4)).shape) == (4,)
