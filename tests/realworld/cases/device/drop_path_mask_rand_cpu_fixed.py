"""Fixed twin: stochastic-depth mask drawn with torch.rand(shape) inside forward.

Source: https://github.com/jmclong/random-fourier-features-pytorch/pull/4
What goes wrong: `torch.rand(shape)` is created on the CPU; multiplying the GPU activations by it raises
The fix: `torch.rand(shape, dtype=x.dtype, device=x.device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.1):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
        random_tensor.floor_()
        return x.div(keep_prob) * random_tensor


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop_path = DropPath(0.2)

    def forward(self, x):
        return x + self.drop_path(self.fc(x))


def demo():
    block = Block(4).cuda()
    try:
        block(torch.randn(3, 4).cuda())
    except NotImplementedError:
        return True
    return True
