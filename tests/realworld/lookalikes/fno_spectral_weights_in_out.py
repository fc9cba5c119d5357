"""Look-alike (correct code): Fourier layer with weights stored (in, out, modes).

Source: https://github.com/pytorch/pytorch/issues/58380
Why it is correct: the weight layout matches "bix,iox->box"
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch
import torch.nn as nn


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.modes = modes
        self.out_channels = out_channels
        self.weights1 = nn.Parameter(torch.rand(in_channels, out_channels, modes, dtype=torch.cfloat) / (in_channels * out_channels))

    def forward(self, x):
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(x.size(0), self.out_channels, x.size(-1) // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, : self.modes] = torch.einsum("bix,iox->box", x_ft[:, :, : self.modes], self.weights1)
        return torch.fft.irfft(out_ft, n=x.size(-1))


def demo():
    return tuple(SpectralConv1d(3, 5, 4)(torch.randn(2, 3, 16)).shape) == (2, 5, 16)
