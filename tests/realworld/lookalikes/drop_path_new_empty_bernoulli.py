"""Look-alike (correct code): stochastic depth mask drawn with x.new_empty(shape).bernoulli_.

Source: https://github.com/jmclong/random-fourier-features-pytorch/pull/4
Why it is correct: `new_empty` allocates on the input's device; the in-place bernoulli_ fills a fresh tensor that
autograd does not track
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.2):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
        return x * random_tensor / keep_prob


def demo():
    block = nn.Sequential(nn.Linear(4, 4), DropPath()).cuda()
    try:
        out = block(torch.randn(3, 4).cuda())
    except NotImplementedError:
        return True
    return out.device.type == "meta"
