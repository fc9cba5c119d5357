"""Bug case: Fourier layer's complex multiplication with weights stored (out, in, modes).

Source: https://github.com/pytorch/pytorch/issues/58380
What goes wrong: `einsum("bix,iox->box", x, w)` needs `w` as (in, out, modes); the weights were created (out, in,
modes), so subscript i has two sizes and einsum raises
The fix: create the weights as (in_channels, out_channels, modes)
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.modes = modes
        self.out_channels = out_channels
        scale = 1 / (in_channels * out_channels)
        self.weights1 = nn.Parameter(scale * torch.rand(out_channels, in_channels, modes, dtype=torch.cfloat))

    def compl_mul1d(self, input, weights):
        return torch.einsum("bix,iox->box", input, weights)

    def forward(self, x):
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(x.size(0), self.out_channels, x.size(-1) // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, : self.modes] = self.compl_mul1d(x_ft[:, :, : self.modes], self.weights1)
        return torch.fft.irfft(out_ft, n=x.size(-1))


def demo():
    layer = SpectralConv1d(3, 5, 4)
    return tuple(layer(torch.randn(2, 3, 16)).shape) == (2, 5, 16)
