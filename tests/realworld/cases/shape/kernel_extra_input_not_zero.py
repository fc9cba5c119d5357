"""Bug case: kernel evaluation branches on `not (extra_input == 0)`.

Source: https://github.com/RussellTsuchida/snefy/issues/1
What goes wrong: `extra_input == 0` is elementwise; `not` on a multi-element tensor raises
The fix: `if torch.any(extra_input != 0):`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def evaluate_kernel(x, extra_input):
    k = torch.exp(-x ** 2)
    if not (extra_input == 0):
        k = k * torch.exp(-extra_input ** 2)
    return k


def demo():
    return tuple(evaluate_kernel(torch.randn(4), torch.randn(4)).shape) == (4,)
