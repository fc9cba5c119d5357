"""Bug case: contraction whose output names an index no input has.

Source: https://github.com/spacetelescope/poppy/issues/403
What goes wrong: "bnd,de->bnf" asks for an output subscript f that appears in no operand; einsum raises
The fix: "bnd,de->bne"
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class Projection(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d_in, d_out) * 0.1)

    def forward(self, x):
        return torch.einsum("bnd,de->bnf", x, self.w)


def demo():
    return tuple(Projection(4, 6)(torch.randn(2, 3, 4)).shape) == (2, 3, 6)
