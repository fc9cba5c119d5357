"""Fixed twin: `a and b or c` idiom choosing between two tensors in forward.

Source: https://github.com/Atcold/pytorch-CortexNet/issues/10
What goes wrong: `self.first and bottom_up or ...` asks for the truth value of the `bottom_up` tensor and raises
The fix: an explicit `if self.first:` branch
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn
import torch.nn.functional as f


class DiscriminativeCell(nn.Module):
    def __init__(self, c_in, c_out, first):
        super().__init__()
        self.first = first
        self.from_bottom = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, bottom_up):
        if self.first:
            input_projection = bottom_up
        else:
            input_projection = f.relu(f.max_pool2d(self.from_bottom(bottom_up), 2, 2))
        return input_projection


def demo():
    out = DiscriminativeCell(3, 3, True)(torch.randn(1, 3, 4, 4))
    return tuple(out.shape) == (1, 3, 4, 4)
