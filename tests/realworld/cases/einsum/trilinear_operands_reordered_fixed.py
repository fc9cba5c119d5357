"""Fixed twin: trilinear interaction einsum with its operands in the wrong order.

Source: https://github.com/grimme-lab/dxtb/issues/67
What goes wrong: the spec "bi,ijk,bj->bk" expects (x, W, y) but the call passes (x, y, W); subscript sizes clash and
einsum raises
The fix: pass the operands in the spec's order
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class Trilinear(nn.Module):
    def __init__(self, dx, dy, dout):
        super().__init__()
        self.W = nn.Parameter(torch.randn(dx, dy, dout) * 0.1)

    def forward(self, x, y):
        return torch.einsum("bi,ijk,bj->bk", x, self.W, y)


def demo():
    out = Trilinear(3, 4, 2)(torch.randn(5, 3), torch.randn(5, 4))
    return tuple(out.shape) == (5, 2)
