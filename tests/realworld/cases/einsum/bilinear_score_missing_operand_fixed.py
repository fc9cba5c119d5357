"""Fixed twin: bilinear scoring einsum called without its second vector.

Source: https://github.com/dgasmith/opt_einsum/issues/130
What goes wrong: the equation names three operands but only two are passed; einsum raises "fewer operands were
provided than specified"
The fix: pass `y` as well
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Bilinear(nn.Module):
    def __init__(self, dx, dy):
        super().__init__()
        self.W = nn.Parameter(torch.randn(dx, dy) * 0.1)

    def forward(self, x, y):
        return torch.einsum("bi,ij,bj->b", x, self.W, y)


def demo():
    return tuple(Bilinear(3, 4)(torch.randn(5, 3), torch.randn(5, 4)).shape) == (5,)
