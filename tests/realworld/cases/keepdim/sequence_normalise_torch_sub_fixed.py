"""Fixed twin: normalising signals along time with torch.sub and torch.std.

Source: https://github.com/SKaiNET-developers/SKaiNET/issues/864
What goes wrong: `torch.mean(x, 2)` is (N, C); `torch.sub(x, mean)` with x (N, C, L) raises unless C == L... and is
wrong when it fits
The fix: `keepdim=True`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def normalize_signals(x):
    mean = torch.mean(x, 2, keepdim=True)
    std = torch.std(x, 2, keepdim=True)
    return torch.div(torch.sub(x, mean), std)


def demo():
    y = normalize_signals(torch.randn(2, 3, 7))
    return torch.allclose(y.mean(2), torch.zeros(2, 3), atol=1e-5)
