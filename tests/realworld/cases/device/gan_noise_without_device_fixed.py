"""Fixed twin: DCGAN sampling loop draws its noise on the CPU.

Source: https://github.com/rotem-shalev/Ham2Pose/pull/6
What goes wrong: `torch.randn(n, nz)` without `device=` feeds a CPU tensor to a generator moved to the GPU, which
raises
The fix: `torch.randn(n, nz, device=device)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True (CUDA simulated: verify.py maps .cuda() to the
meta device).
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz, nout):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, nout), nn.Tanh())

    def forward(self, z):
        return self.main(z)


def sample(netG, n, nz, device):
    netG.eval()
    with torch.no_grad():
        noise = torch.randn(n, nz, device=device)
        return netG(noise)


def demo():
    device = torch.device("meta")
    netG = Generator(8, 5).to(device)
    sample(netG, 4, 8, device)
    return True
